"""Every script under examples/ runs as a standalone program and exits 0.

Each example checks its own results against torch and exits non-zero on a mismatch, so a zero
return code means every kernel in it computed the right numbers. The scripts are started
concurrently (one per CPU) when the first test of this module runs, so the whole set takes
about as long as the slowest few scripts rather than their sum.
"""
import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.examples

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(p.relative_to(EXAMPLES_DIR).as_posix() for p in EXAMPLES_DIR.rglob("*.py"))
EXTRA_RUNS = {  # (script, extra args) that exercise the command line beyond the default run
    "hello_world --run_mode npu": ("00_hello_world/hello_world.py", ["--run_mode", "npu"]),
    "softmax one example": ("02_intermediate/operators/softmax/softmax.py",
                            ["softmax::test_softmax"]),
    "softmax --swimlane": ("02_intermediate/operators/softmax/softmax.py",
                           ["test_builtin_softmax", "--swimlane"]),
}
TIMEOUT_S = 120


def _run(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, str(EXAMPLES_DIR / script), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future]:
    """Start every example run at once; each test waits for its own."""
    root = tmp_path_factory.mktemp("examples")
    jobs = {s: (s, []) for s in SCRIPTS} | EXTRA_RUNS
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    futures = {key: pool.submit(_run, script, args, root / f"run{i}")
               for i, (key, (script, args)) in enumerate(jobs.items())}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def _check(proc: subprocess.CompletedProcess) -> None:
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, report
    # a tuning case whose model documents why it disagrees with the guide prints "~"
    assert ("✓" in proc.stdout or "\n~ " in "\n" + proc.stdout) and "✗" not in proc.stdout, \
        report


def test_examples_found() -> None:
    """The examples directory mirrors PyPTO's layout and holds every expected example."""
    expected = {
        "00_hello_world/hello_world.py",
        "01_beginner/basic/basic_ops.py",
        "01_beginner/elementwise/elementwise.py",
        "01_beginner/reduce/reduce.py",
        "01_beginner/matmul/matmul.py",
        "01_beginner/tiling/tiling_config.py",
        "01_beginner/transform/transform.py",
        "02_intermediate/operators/softmax/softmax.py",
        "02_intermediate/operators/layer_norm/layer_norm.py",
        "02_intermediate/operators/ffn/ffn.py",
        "02_intermediate/operators/activation/activation.py",
        "02_intermediate/controlflow/loop/loop.py",
        "02_intermediate/controlflow/condition/condition.py",
        "02_intermediate/dynamic/dynamic.py",
        "03_advanced/attention/attention.py",
    }
    assert expected <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_passes(script: str, runs: dict[str, Future]) -> None:
    """Running the script checks every kernel in it against torch; it must exit 0."""
    _check(runs[script].result(timeout=TIMEOUT_S + 30))


@pytest.mark.parametrize("key", sorted(EXTRA_RUNS))
def test_example_command_line(key: str, runs: dict[str, Future]) -> None:
    """`--run_mode npu`, a single positional example_id and `--swimlane` are accepted."""
    proc = runs[key].result(timeout=TIMEOUT_S + 30)
    _check(proc)
    if "one example" in key:
        assert proc.stdout.count("✓") == 1, proc.stdout
    if "--swimlane" in key:     # one kernel call: one run folder, printed
        wrote = [ln for ln in proc.stdout.splitlines() if ln.startswith("wrote ")]
        assert len(wrote) == 1 and wrote[0].startswith("wrote output/output_"), proc.stdout


def test_failing_example_exits_nonzero(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture) -> None:
    """main() reports a failing example with ✗ and returns 1; an unknown id returns 2."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "hello_world_example", EXAMPLES_DIR / "00_hello_world" / "hello_world.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def broken(device: str = "cpu") -> None:
        raise AssertionError("mismatch")

    monkeypatch.setattr(module, "EXAMPLES", {"hello_world::test_broken": broken,
                                             **module.EXAMPLES})
    assert module.main([]) == 1
    out = capsys.readouterr().out
    assert "✗ hello_world::test_broken failed" in out
    assert "✓ hello_world::test_add passed" in out
    assert module.main(["no_such_example"]) == 2
    assert module.main(["--list"]) == 0
    assert "hello_world::test_add" in capsys.readouterr().out
