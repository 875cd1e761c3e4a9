"""`benchmarks/models.py --size reduced`: one variant per model at its test size, timing only,
writes a table with every column, and no run beats its lower bounds (the full size is the
benchmark suite's: minutes)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {"glm_attention", "moe_routing", "gated_deltanet", "indexer_prolog", "matmul_6144",
          "swiglu_ffn"}


def test_reduced_models_table(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "models.py"),
                           "--size", "reduced", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (js,) = [p for p in os.listdir(tmp_path) if p.endswith("_models_reduced.json")]
    rows = json.loads((tmp_path / js).read_text())["rows"]
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from models import COLUMNS
    assert {r["model"] for r in rows} == MODELS and len(rows) == len(MODELS)
    for r in rows:
        assert set(COLUMNS) <= set(r), r
        assert r["recommended"] and r["tasks"] > 0 and r["instances"] >= 1
        assert 0 < r["roofline_us"] <= r["kernel_us"] and 0 < r["chain_us"] <= r["kernel_us"]
        assert r["ratio"] >= 1.0 and r["larger"] in ("roofline", "chain")
    md = (tmp_path / js.replace(".json", ".md")).read_text()
    assert "| model | variant | kernel µs |" in md
    # every run folder a summary line printed is still there to open
    printed = [line.rsplit(" -> ", 1)[1] for line in (proc.stdout + proc.stderr).splitlines()
               if line.startswith("[pypto] ") and " -> " in line]
    assert printed and all(os.path.exists(os.path.join(tmp_path, p)) for p in printed), printed


def test_a_build_bound_kernel_names_its_window_builds():
    """The cause text names the control AICPU's window builds when the builds after the first
    take at least half the kernel (the glm benchmark kernel at stitch 128), and stays silent
    when they do not."""
    from types import SimpleNamespace

    from pypto.machine.result import AicpuRun
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from models import _build_bound

    def result(build_cycles):
        builds = [AicpuRun(0, f"build window {w}", w * build_cycles, (w + 1) * build_cycles,
                           {"instances": 128, "cross_edges": 2300}) for w in range(9)]
        return SimpleNamespace(aicpu=builds + [AicpuRun(1, "dispatch", 0, 5, {})],
                               us=lambda c: c / 1800)
    text = _build_bound(result(1800 * 285), 2467.0)
    assert "builds the 9 windows one after another, 285 us each (128 instances" in text
    assert "the builds after the first take 2,280 us of the 2,467 us kernel" in text
    assert _build_bound(result(1800 * 100), 2467.0) == ""
