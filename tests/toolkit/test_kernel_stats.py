"""Kernel statistics (`analyses.kernel_stats`) and scheduling overhead (`analyses.sched_overhead`):
hand-built traces whose answers are known by construction, a real small kernel whose totals
must equal `analyze`'s and whose overhead must equal its file's SchedOverhead counters, the CLI,
and PyPTO's own files (no cost inputs, bytes or window builds)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import pypto
from pypto.cli import main
from pypto.machine.spec import load as load_spec
from pypto.profiling.overhead_counters import step_integral
from pypto.toolkit.analyses import kernel_stats, sched_overhead
from pypto.toolkit.analyze import analyze
from pypto.toolkit.trace import load

from _traces import build, task, write

SAMPLES = Path(__file__).parents[1] / "data" / "pypto_samples"
CLOCK = 1800.0                  # _traces.build's clock_mhz


def _events(obj: dict, *extra: dict) -> dict:
    obj["traceEvents"] += list(extra)
    return obj


def _counter(name: str, ts: float, size: int) -> dict:
    return {"name": name, "pid": 1, "tid": 1, "ph": "C", "ts": ts, "args": {"size": size}}


def _build(window: int, start: float, dur: float, closed_by: str, workspace: int) -> dict:
    return {"args": {"closed_by": closed_by, "workspace_bytes": workspace}, "cat": "event",
            "id": 900 + window, "name": f"build window {window}", "ph": "X", "pid": 1,
            "tid": 5000, "ts": start, "dur": dur}


def two_core_trace(counters: bool = True) -> dict:
    """2 AIV cores. AIV_1 runs t0 [0, 4); AIV_2 runs t1 [0, 1) and t2 [3, 4). Ready AIV
    tasks: 1 from 0.5, 3 from 1 (more than the idle cores), none from 3. So one core (AIV_2)
    idles from 1 to 3 while work is ready: 2 core-us of 2 cores x 4 us = 25 %."""
    vec = {"vector_cycles": 500, "mte2_bytes": 1000, "mte3_bytes": 1000}
    tasks = [task("AIV_1", 0, 4, leaf="A", window=0, instance=0, call=0, cost=vec,
                  hbm_bytes=300, l2_hit_bytes=100),
             task("AIV_2", 0, 1, leaf="A", window=0, instance=1, call=0, cost=vec,
                  hbm_bytes=300, l2_hit_bytes=100),
             task("AIV_2", 3, 1, leaf="B", window=1, instance=0, call=0, cost={"empty": True},
                  hbm_bytes=0, l2_hit_bytes=0)]
    obj = build(tasks, aic=0, aiv=2)
    obj["traceEvents"].append({"args": {"name": "AICPU_CTRL"}, "cat": "__metadata",
                               "name": "thread_name", "ph": "M", "pid": 1, "tid": 5000})
    _events(obj, _build(0, 0, 2, "instances", 64), _build(1, 2, 0.5, "end", 128))
    if counters:
        _events(obj, _counter("ReadyCount_AIV", 0.5, 1), _counter("ReadyCount_AIV", 1, 3),
                _counter("ReadyCount_AIV", 3, 0))
    return obj


# ---- hand-built: known answers -------------------------------------------------------------

def test_leaf_and_core_statistics_are_exact(tmp_path):
    data = load(write(tmp_path / "t.json", two_core_trace()))
    ks = kernel_stats.report(data)
    a, b = ks.leaves
    assert (a.name, a.core, a.tasks, a.lanes, a.total, a.mean) == ("A", "AIV", 2, 2, 5.0, 2.5)
    assert (a.p50, a.p95, a.min, a.max) == pytest.approx((2.5, 1 + 0.95 * 3, 1.0, 4.0))
    assert a.share_pct == pytest.approx(100 * 5 / 6) and b.share_pct == pytest.approx(100 / 6)
    assert a.bytes == {"hbm": 600, "l2_hit": 200, "mte2": 2000, "mte3": 2000}
    assert a.l2_hit_pct == pytest.approx(25.0)
    assert b.l2_hit_pct is None                          # no reads
    (aiv,) = ks.cores
    assert (aiv.name, aiv.tasks, aiv.total, aiv.lanes) == ("AIV", 3, 6.0, 2)
    assert ks.busy == 6.0 and a.line is None


def test_cost_terms_split_each_task_by_the_cost_model(tmp_path):
    """A 1 us vector task (1800 cycles): head, the first load's and last store's latencies,
    500 vector cycles, the rest the load (1000 B at the GM->UB rate outlasts 1000 B out); an
    empty task pays only the head (the rest of an over-long empty task is no term)."""
    spec = load_spec()
    head, fill = spec.task["head_cycles_aiv"], spec.dma["gm_to_ub"]["latency"]
    drain = spec.dma["ub_to_gm"]["latency"]
    ks = kernel_stats.report(load(write(tmp_path / "t.json", two_core_trace())))
    b = ks.leaves[1]
    assert b.terms == pytest.approx({k: head / CLOCK if k == "head" else 0.0 for k in b.terms})
    a = ks.leaves[0]             # 4 us + 1 us, the same inputs
    pipe = 5 * CLOCK - 2 * (head + fill + drain)
    want = {"head": 2 * head, "latency": 2 * (fill + drain), "vector": 2 * 500,
            "mte2": pipe - 2 * 500, "cube": 0, "mte1": 0, "mte3": 0, "fixpipe": 0}
    assert a.terms == pytest.approx({k: v / CLOCK for k, v in want.items()})
    assert ks.spec == "a2a3"


def test_windows_take_builds_workspace_and_close_reason(tmp_path):
    ks = kernel_stats.report(load(write(tmp_path / "t.json", two_core_trace())))
    w0, w1 = ks.windows
    assert (w0.window, w0.instances, w0.tasks, w0.build_us, w0.workspace_bytes, w0.closed_by,
            w0.start, w0.span) == (0, 2, 2, 2.0, 64.0, "instances", 0.0, 4.0)
    assert (w1.window, w1.instances, w1.tasks, w1.build_us, w1.closed_by, w1.span) == (
        1, 1, 1, 0.5, "end", 1.0)
    assert ks.builds == 2


def test_overhead_is_idle_cores_while_tasks_were_ready(tmp_path):
    data = load(write(tmp_path / "t.json", two_core_trace()))
    oh = sched_overhead.report(data)
    (aiv,) = oh.cores
    assert (aiv.core, aiv.cores, aiv.tasks) == ("AIV", 2, 3)
    assert aiv.idle_ready_core_us == pytest.approx(2.0)
    assert aiv.denominator_core_us == pytest.approx(8.0)
    assert aiv.overhead_pct == pytest.approx(25.0)
    assert (aiv.busy_core_us, aiv.idle_core_us) == pytest.approx((6.0, 2.0))
    assert aiv.idle_ready_share_pct == pytest.approx(100.0)
    assert aiv.samples() == [(1.0, 1), (3.0, 0)]
    assert oh.reason == ""


def test_overhead_without_ready_counters_says_why(tmp_path):
    data = load(write(tmp_path / "t.json", two_core_trace(counters=False)))
    oh = sched_overhead.report(data)
    assert oh.cores == () and "ReadyCount_AIV" in oh.reason
    assert "no figure" in sched_overhead.format_text(oh)
    assert sched_overhead.to_json(oh)["reason"] == oh.reason


def test_a_leafs_line_is_the_one_it_spends_most_time_on(tmp_path):
    obj = two_core_trace()
    obj["otherData"]["shared_args"] = {"lines": {"A": [["k.py", 7, {"vector": 0.3}],
                                                       ["k.py", 9, {"vector": 0.5, "mte2": 0.2}]]}}
    ks = kernel_stats.report(load(write(tmp_path / "t.json", obj)))
    assert [g.line for g in ks.leaves] == ["k.py:9", None]


def test_cli_text_and_json(tmp_path, capsys):
    path = write(tmp_path / "t.json", two_core_trace())
    assert main(["analyze", "--stats", "--overhead", str(path)]) == 0
    out = capsys.readouterr().out
    for head in ("Per core type", "Per leaf function", "Time by cost-model term",
                 "Bytes moved", "Windows (2; 2 build events)", "AIV: 25.0% = 2.000 core-us"):
        assert head in out, head
    assert main(["analyze", "--stats", "--overhead", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["overhead"]["cores"][0]["overhead_pct"] == 25.0
    assert [g["name"] for g in doc["stats"]["leaves"]] == ["A", "B"]
    assert doc["stats"]["windows"][0]["span"] == 4.0


# ---- a real kernel --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """12 loop iterations, 4 root instances per window: 3 windows, each built by the control
    AICPU."""
    import os
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("run"))
    try:
        @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1},
                            runtime_options={"stitch_function_max_num": 4})
        def k(x: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32),
              y: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 16, 512)
            for i in pypto.loop(x.shape[0]):
                t = pypto.exp(x[i:i + 1])
                y[i:i + 1] = t + pypto.amax(t, -1, keepdim=True)
        x = torch.rand(12, 64, 512)
        k(x, torch.zeros_like(x))
        return sorted(Path.cwd().glob("output/output_*"))[-1]
    finally:
        os.chdir(here)


def test_real_kernel_totals_match_analyze(run_folder):
    data = load(run_folder)
    ks = kernel_stats.report(data, str(run_folder))
    a = analyze(data)
    assert [(g.key, g.tasks, g.total) for g in ks.leaves] == \
        [(lf.key, lf.tasks, lf.total) for lf in a.leaves]
    assert sum(g.tasks for g in ks.cores) == a.tasks["total"]
    for g in (*ks.cores, *ks.leaves):           # the terms account for all of the time
        assert sum(g.terms.values()) == pytest.approx(g.total, rel=1e-9)
        assert g.terms["vector"] > 0
    builds = [n for n in data.aicpu_columns.name if str(n).startswith("build window")]
    assert len(ks.windows) == len(builds) == ks.builds == 3
    assert sum(w.instances for w in ks.windows) == 12 == a.instances
    assert all(w.build_us > 0 and w.closed_by for w in ks.windows)


def test_real_kernel_overhead_equals_the_files_counters(run_folder):
    """The analysis's series is the SchedOverhead_AIV counter our writer put in the file, and
    its figure that counter's integral over the kernel span."""
    data = load(run_folder)
    oh = sched_overhead.report(data)
    (aiv,) = oh.cores
    written = data.counters["SchedOverhead_AIV"]
    assert [(t, int(v)) for t, v in written] == aiv.samples()
    times, values = zip(*written)
    assert aiv.idle_ready_core_us == pytest.approx(
        step_integral(times, values, oh.span_start, oh.span_end), abs=1e-9)
    assert 0 < aiv.overhead_pct < 100
    assert aiv.denominator_core_us == pytest.approx(48 * oh.span)


# ---- PyPTO's files --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax", "glm_moe_fusion"])
def test_pypto_samples_give_what_they_can(name, capsys):
    path = SAMPLES / f"{name}_merged_swimlane.json"
    data = load(path)
    ks = kernel_stats.report(data)
    assert ks.spec is None and all(g.terms is None and g.bytes is None for g in ks.leaves)
    assert sum(g.tasks for g in ks.leaves) == len(data.task_columns)
    assert ks.windows and all(w.build_us is None for w in ks.windows)
    oh = sched_overhead.report(data)
    assert oh.cores and all(0 <= c.overhead_pct <= 100 for c in oh.cores)
    assert "PyPTO's ready queue" in oh.ready_meaning
    assert main(["analyze", "--stats", "--overhead", str(path)]) == 0
    assert "Per leaf function" in capsys.readouterr().out
