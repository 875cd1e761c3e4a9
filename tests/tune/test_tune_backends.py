"""Where the tuner's evaluations run and what they skip (`tune.backends`, the "optuna"
strategy): a local process pool and Ray give the same search as this process, settings whose
schedule-free bound exceeds the best time are pruned soundly, and Optuna is seeded."""
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest
import torch

import pypto
from pypto.errors import PyptoValueError
from pypto.tune import backends

from marker_lines import marker_line

HERE = os.path.basename(__file__)


@pypto.frontend.jit
def _mixed(x: pypto.Tensor([], pypto.DT_FP32), w: pypto.Tensor([], pypto.DT_FP16),
           y: pypto.Tensor([], pypto.DT_FP32), z: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)                              # VEC_SITE
    y[:] = pypto.exp(x) * 2.0
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    z[:] = pypto.matmul(pypto.cast(x, pypto.DT_FP16), w, pypto.DT_FP32)


def _call():
    x, w = torch.rand(128, 256), torch.rand(256, 128).half()
    _mixed(x, w, torch.zeros(128, 256), torch.zeros(128, 128))


def _trace(result):
    return [(e.config, e.value_us, e.error, e.pruned) for e in result.evaluations]


@pytest.mark.parametrize("strategy", ["descent", "optuna"])
def test_a_process_pool_searches_exactly_as_this_process_does(strategy):
    _call()
    here = _mixed.tune(budget=20, strategy=strategy, workers=1, progress=False)
    pool = _mixed.tune(budget=20, strategy=strategy, workers=2, progress=False)
    assert "1 process" in here.strategy and "2 local processes" in pool.strategy
    assert len(pool.evaluations) <= 20 and _trace(pool) == _trace(here)


def test_optuna_starts_from_the_kernels_own_setting_and_is_seeded():
    _call()
    runs = [_mixed.tune(budget=32, strategy="optuna", seed=s, workers=1, progress=False)
            for s in (5, 5, 6)]
    assert runs[0].strategy.startswith("Optuna TPE over")
    assert runs[0].evaluations[0].config == {}
    assert _trace(runs[0]) == _trace(runs[1])
    assert _trace(runs[0]) != _trace(runs[2])
    for run in runs:
        assert run.best.value_us <= run.baseline.value_us
        # the put-back passes ended before the budget: the answer keeps only knobs that pay
        assert len(run.evaluations) < 32
        for x in run.explain():
            assert x.without_us is None or x.without_us > run.best.value_us


def test_a_setting_whose_bound_exceeds_the_best_is_pruned_and_could_not_have_won():
    _call()
    base = backends.evaluate(_mixed, {}, "kernel_cycles", None)
    assert base.value_us >= base.bound_us > 0   # the bound is below the simulated time
    skipped = backends.evaluate(_mixed, {}, "kernel_cycles", base.bound_us / 2)
    assert skipped.pruned and skipped.value_us is None and skipped.bound_us == base.bound_us
    # a search: every pruned setting, simulated after all, is slower than the search's best
    result = _mixed.tune(budget=30, workers=1, progress=False)
    for e in result.evaluations:
        if e.value_us is not None:
            assert e.bound_us <= e.value_us
        if e.pruned:
            full = backends.evaluate(_mixed, e.config, "kernel_cycles", None)
            assert full.value_us >= e.bound_us > result.best.value_us


def test_explain_runs_each_winning_knob_alone_and_put_back():
    _call()
    result = _mixed.tune(budget=24, workers=1, progress=False)
    effects = result.explain()
    assert effects and [x.knob for x in effects] == list(result.best.config)
    for x in effects:
        alone = _mixed.whatif({x.knob: x.value}).after
        assert x.alone_us == pytest.approx(alone.us(alone.stats["kernel_cycles"]))
        # the descent's last check put back every knob that did not pay
        assert x.without_us is None or x.without_us > result.best.value_us


def test_a_cached_trace_still_counts_the_site_knobs_it_met():
    """Two what-ifs with the same tile site and different runtime options share one trace
    (runtime options are not in the compile-cache key); the second must not report the site
    as matching no call."""
    _call()
    site = f"vec_tile@{HERE}:{marker_line(__file__, 'VEC_SITE')}"
    a = _mixed.whatif({site: (32, 64)}, stitch_function_max_num=32)
    b = _mixed.whatif({site: (32, 64)}, stitch_function_max_num=64)
    assert a.after.stats["tasks"] == b.after.stats["tasks"]


def test_bad_backend_requests_are_named(monkeypatch):
    _call()
    with pytest.raises(PyptoValueError, match="workers must be an int >= 1"):
        _mixed.tune(workers=0, progress=False)
    with pytest.raises(PyptoValueError, match="strategy must be one of"):
        _mixed.tune(strategy="annealing", progress=False)
    monkeypatch.setitem(sys.modules, "ray", None)      # import ray -> ImportError
    with pytest.raises(PyptoValueError, match=r"Ray is not installed; pip install 'openpto\[ray\]'"):
        _mixed.tune(ray="local", progress=False)
    monkeypatch.setitem(sys.modules, "optuna", None)
    with pytest.raises(PyptoValueError, match="Optuna is not installed"):
        _mixed.tune(strategy="optuna", progress=False)


SCRIPT = '''
import torch
import pypto

@pypto.frontend.jit
def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 128)
    y[:] = pypto.exp(x) + 1.0

def main():
    k(torch.rand(64, 512), torch.zeros(64, 512))
'''


def _tune_cli(tmp_path, name, *more):
    script = tmp_path / "tune_me.py"
    script.write_text(textwrap.dedent(SCRIPT))
    db = tmp_path / f"{name}.sqlite3"
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "tune", f"{script}::main",
                           "--budget", "12", "--db", str(db), "-o", str(tmp_path / name), *more],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT config, value_us, baseline_us, evaluations FROM entries")
        return proc.stdout, rows.fetchall()


def test_tune_on_a_local_ray_cluster_stores_what_the_process_pool_stores(tmp_path):
    if os.environ.get("CI") != "true":
        pytest.importorskip("ray", reason="Ray is the optional 'ray' extra (dev installs it)")
    pool_out, pool_rows = _tune_cli(tmp_path, "pool", "--workers", "2")
    ray_out, ray_rows = _tune_cli(tmp_path, "ray", "--ray", "local:2")
    assert "2 local processes" in pool_out and "2 Ray workers" in ray_out
    assert len(ray_rows) == 1 and ray_rows == pool_rows
    assert "Why the best setting wins" in (tmp_path / "ray" / "0_k" / "report.html").read_text()


def test_a_terminal_sees_a_progress_bar(monkeypatch):
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    _call()
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    _mixed.tune(budget=8, workers=1)
    lines = term.getvalue().split("\r")
    assert lines[-1].startswith("tune _mixed [####################] 8/8, best ")
    assert any("[" + "#" * 2 + "." * 18 + "]" in x for x in lines)   # 1 or 2 of 8 done


def test_a_worker_that_dies_fails_the_search_by_name(monkeypatch):
    """A worker killed mid-evaluation (the kernel runs out of memory, say) must end the
    search with an error naming what happened, not hang it."""
    _call()
    monkeypatch.setattr(backends, "evaluate",
                        lambda *a: os._exit(9) if a[1] else backends.Outcome(1.0))
    with pytest.raises(PyptoValueError, match="a worker process died"):
        _mixed.tune(budget=6, workers=2, progress=False)


def test_no_ray_cluster_to_join_is_named(monkeypatch):
    if os.environ.get("CI") != "true":
        pytest.importorskip("ray", reason="Ray is the optional 'ray' extra (dev installs it)")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    _call()
    with pytest.raises(PyptoValueError, match=r"tune\(ray='auto'\): Ray could not start or "
                                              r"join that cluster: Could not find any running"):
        _mixed.tune(ray="auto", progress=False)
