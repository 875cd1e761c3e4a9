"""Gaps and blockers (`analyses.blockers`) and static vs observed critical paths
(`analyses.paths`), on a hand-built trace where every cause is planted and on a real run:
exact segments and causes, per-cause sums that add up to the idle time, the static path equal
to `profiling.bounds`' chain, the decomposition of the observed path, the CLI, and a PyPTO
trace that has no AICPU lanes."""
from __future__ import annotations

import glob
import json
import os

import pytest
import torch

import pypto
from pypto.cli import main
from pypto.profiling.bounds import lower_bounds
from pypto.toolkit.analyses import blockers, paths
from pypto.toolkit.trace import load

from _traces import build, task, write

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "data", "pypto_samples",
                      "softmax_merged_swimlane.json")


def planted() -> dict:
    """AIC_1, AIC_2, AIV_3, AIV_4 (unused); kernel span 3 -> 17 us. Window 0: A (AIC_1 3-5)
    -> B (AIV_3 6-8), C (AIC_2 3-4); window 1 (built 2 -> 10): D (AIC_1 12-13); window 2
    (built 10 -> 11): E (AIC_2 16-17), its scheduler thread busy resolving meanwhile."""
    tasks = [task("AIC_1", 3, 2, leaf="LA", window=0, call=0),        # A
             task("AIV_3", 6, 2, leaf="LB", window=0, call=1),        # B, after A
             task("AIC_2", 3, 1, leaf="LC", window=0, call=2),        # C
             task("AIC_1", 12, 1, leaf="LD", window=1, call=0),       # D
             task("AIC_2", 16, 1, leaf="LE", window=2, call=0)]       # E
    builds = [{"name": f"build window {w}", "start": a, "dur": b - a}
              for w, (a, b) in enumerate([(0, 2), (2, 10), (10, 11)])]
    obj = build(tasks, [(0, 1)], aic=2, aiv=2, aicpu=builds)
    sched = {1: [("dispatch", 2.9, 0.1), ("dispatch", 5.9, 0.1), ("resolve", 13.2, 2.3),
                 ("dispatch", 15.5, 0.5)],
             2: [("dispatch", 2.8, 0.2), ("dispatch", 11.8, 0.2)]}
    for k, events in sched.items():
        obj["traceEvents"].append({"args": {"name": f"AICPU_SCHED_{k}"}, "cat": "__metadata",
                                   "name": "thread_name", "ph": "M", "pid": 1, "tid": 5000 + k})
        obj["traceEvents"] += [{"args": {"count": 1}, "cat": "event", "id": 900 + 10 * k + n,
                                "name": name, "ph": "X", "pid": 1, "tid": 5000 + k, "ts": ts,
                                "dur": dur} for n, (name, ts, dur) in enumerate(events)]
    return obj


@pytest.fixture
def planted_data(tmp_path):
    return load(write(tmp_path / "planted.json", planted()))


def _row(r, lane, task_name):
    (row,) = [x for x in r.rows if x["lane"] == lane and x["name"] == task_name]
    return [(s["cause"], pytest.approx(s["t0"]), pytest.approx(s["t1"])) for s in row["segments"]], row


def test_each_planted_cause_gets_its_exact_segment(planted_data):
    r = blockers.report(planted_data, threshold_us=0.0)
    names = planted_data.task_columns.name
    segs, row = _row(r, "AIV_3", names[1])
    assert segs == [("predecessor", 3, 5), ("scheduler", 5, 6)]
    assert names[row["segments"][0]["blocker"]] == names[0]             # B waited for A
    segs, row = _row(r, "AIC_1", names[3])
    assert segs == [("window barrier", 5, 8), ("window build", 8, 10), ("scheduler", 10, 12)]
    assert row["segments"][0]["blocker"] == 1                           # window 0's last: B
    assert "build window 1" in row["segments"][1]["what"]
    assert row["segments"][2]["thread"] == "AICPU_SCHED_2"
    segs, row = _row(r, "AIC_2", names[4])
    assert segs == [("window build", 4, 11), ("window barrier", 11, 13), ("scheduler", 13, 16)]
    hop = row["segments"][2]
    assert hop["thread"] == "AICPU_SCHED_1" and (hop["dispatch"], hop["resolve"]) == (1, 1)
    assert hop["busy_us"] == pytest.approx(2.8) and hop["hop_us"] == pytest.approx(3.0)


def test_per_cause_sums_are_exact_and_add_up_to_the_idle_time(planted_data):
    r = blockers.report(planted_data)
    want = {"window build": 9, "window barrier": 5, "predecessor": 2, "scheduler": 6,
            "no work left": 13, "unused core": 14}
    assert {k: v for k, v in r.by_cause.items() if v} == pytest.approx(want)
    assert r.idle_us == pytest.approx(49) and r.busy_us == pytest.approx(7)
    assert sum(r.by_cause.values()) == pytest.approx(4 * 14 - 7)
    assert r.by_thread == pytest.approx({"AICPU_SCHED_1": 4, "AICPU_SCHED_2": 2})
    # the default threshold (1 % of the 14 us span) lists the three gaps before tasks
    assert r.threshold_us == pytest.approx(0.14) and (r.gaps, r.listed) == (3, 3)
    assert [row["us"] for row in r.rows] == pytest.approx([12, 7, 3])
    page = blockers.page_data(planted_data)
    assert set(page["overlay"]["causes"]) == set(blockers.CAUSES)
    drawn = sum(b - a for a, b in zip(page["overlay"]["t0"], page["overlay"]["t1"]))
    assert drawn == pytest.approx(12 + 7 + 3 + 9 + 4)                  # gaps and tails


def test_static_and_observed_paths_and_the_exact_decomposition(planted_data):
    r = paths.report(planted_data)
    assert r.static_us == pytest.approx(6) and r.static == [0, 1, 3, 4]   # A B | D | E
    assert r.observed == [2, 4] and r.observed_us == pytest.approx(14)    # C then E on AIC_2
    waits = {k: v for k, v in r.waits.items() if v}
    assert waits == pytest.approx({"window build": 7, "window barrier": 2, "scheduler": 3})
    assert r.core_hold_us == pytest.approx(1)                           # C, then E via lane
    assert r.chain_difference_us == pytest.approx(1 - 6)
    assert r.explained_us == pytest.approx(r.observed_us)
    assert r.only_static == {"LA": 1, "LB": 1, "LD": 1} and r.only_observed == {"LC": 1}


def test_a_step_that_waited_for_its_core_is_a_core_hold(tmp_path):
    """Y (AIV_3 5-6) after W (AIV_4 0-1) waited for its core, busy with X (AIV_3 0-4): the
    path steps X -> Y via the lane, X's 4 us are a core hold, the wait 4 -> 5 is the hop
    ("unknown": no AICPU lanes)."""
    tasks = [task("AIV_3", 0, 4, leaf="LX"), task("AIV_4", 0, 1, leaf="LW"),
             task("AIV_3", 5, 1, leaf="LY")]
    data = load(write(tmp_path / "t.json", build(tasks, [(1, 2)], aic=2, aiv=2)))
    r = paths.report(data)
    assert r.observed == [0, 2] and r.static == [0]
    assert {k: v for k, v in r.waits.items() if v} == pytest.approx({"unknown": 1})
    assert r.core_hold_us == pytest.approx(4) and r.chain_difference_us == pytest.approx(-3)
    assert r.explained_us == pytest.approx(6)
    b = blockers.report(data)
    assert b.by_cause["unknown"] == pytest.approx(1) and "AICPU" in b.notes[0]


def _mm_loop_run() -> str:
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 2},
                        debug_options={"runtime_debug_mode": 1})
    def mm_loop(a: pypto.Tensor([pypto.DYNAMIC, 128, 128], pypto.DT_FP16),
                b: pypto.Tensor([128, 128], pypto.DT_FP16),
                y: pypto.Tensor([pypto.DYNAMIC, 128, 128], pypto.DT_FP32)):
        for i in pypto.loop(a.shape[0]):
            pypto.set_cube_tile_shapes([64, 64], [64, 128], [128, 128])
            c = pypto.matmul(a[i], b, pypto.DT_FP32)
            pypto.set_vec_tile_shapes(64, 128)
            y[i] = pypto.exp(c) + 1.0
    mm_loop(torch.rand(4, 128, 128, dtype=torch.float16),
            torch.rand(128, 128, dtype=torch.float16), torch.zeros(4, 128, 128))
    bounds = lower_bounds(mm_loop.last_run)
    (folder,) = glob.glob("output/output_*")
    return folder, bounds


def test_a_real_run_sums_exactly_and_its_static_path_is_the_bound(capsys):
    folder, bounds = _mm_loop_run()
    data = load(folder)
    b = blockers.report(data)
    assert sum(b.by_cause.values()) == pytest.approx(b.idle_us)
    assert b.idle_us + b.busy_us == pytest.approx(b.cores * (b.span[1] - b.span[0]))
    for cause in ("window build", "window barrier", "predecessor", "scheduler"):
        assert b.by_cause[cause] > 0, cause
    p = paths.report(data)
    # the trace's durations are rounded to 1 ns: the chains agree to that
    assert abs(p.static_us - bounds.chain_us) <= 5e-4 * bounds.chain_tasks + 1e-9
    assert len(p.static) == bounds.chain_tasks
    assert p.explained_us == pytest.approx(p.observed_us)
    assert main(["analyze", folder, "--blockers", "--paths"]) == 0
    text = capsys.readouterr().out
    assert "window barrier" in text and "Observed path = static chain" in text
    assert main(["analyze", folder, "--blockers", "--paths", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["blockers"]["idle_us"] == pytest.approx(b.idle_us, abs=1e-5)
    assert out["paths"]["decomposition"]["sum_us"] == pytest.approx(p.observed_us, abs=1e-5)


def test_a_pypto_trace_degrades_to_flows_and_unknown(capsys):
    data = load(SAMPLE)
    b = blockers.report(data)
    assert sum(b.by_cause.values()) == pytest.approx(b.idle_us)
    assert b.by_cause["window build"] == b.by_cause["scheduler"] == 0
    assert b.by_cause["unknown"] > 0 and any("AICPU" in n for n in b.notes)
    p = paths.report(data)
    assert p.explained_us == pytest.approx(p.observed_us)
    assert main(["analyze", SAMPLE, "--blockers", "--paths"]) == 0
    assert "unknown" in capsys.readouterr().out


def test_bad_traces_give_a_clear_error_or_nothing(tmp_path, capsys):
    """Flows with a cycle: `analyze --paths` says so in one line (exit 2) and the page keeps
    the error in place of the paths; a trace without AIC/AIV tasks gives no page data."""
    tasks = [task("AIV_2", 0, 1), task("AIV_2", 2, 1)]
    cyclic = write(tmp_path / "c.json", build(tasks, [(0, 1), (1, 0)], aic=1, aiv=1))
    assert main(["analyze", str(cyclic), "--paths"]) == 2
    assert "cycle" in capsys.readouterr().err
    assert "cycle" in paths.page_data(load(cyclic))["error"]
    assert blockers.page_data(load(cyclic))["idle_us"] == pytest.approx(2 * 3 - 2)
    empty = load(write(tmp_path / "e.json", build([], aic=1, aiv=1, aicpu=[
        {"name": "build window 0", "start": 0, "dur": 1}])))
    assert blockers.page_data(empty) is None and paths.page_data(empty) is None
    assert blockers.report(empty).idle_us == 0 and paths.report(empty).static_us == 0
