"""The swimlane writer follows PyPTO's merged_swimlane.json layout; the reader parses ours and
PyPTO's real files alike; the summary reproduces PyPTO's printed numbers."""
import json
from collections import Counter

import pytest

from pypto.profiling.swimlane import (FLOW_NAME, TraceFormatError, format_summary, lane_tid,
                                      stable_hash, summarize, task_id)
from pypto.profiling.swimlane_reader import read_swimlane
from pypto.profiling.reports import bubbles_from_swimlane
from pypto.profiling.swimlane_writer import swimlane_events, write_swimlane

PYPTO_ARGS = ["event-hint", "ioperand-hint", "ooperand-hint", "execution-hint", "color",
              "taskId", "seqNo"]


def _events(result):
    return swimlane_events(result)["traceEvents"]


def _x_by_name(events):
    return {e["name"]: e for e in events if e["ph"] == "X"}


def test_lanes_use_pypto_names_and_tids_then_aicpu_threads(result):
    """Core lanes AIC_1.., AIV_<aic+1>.. at tid 1000 + 2n, every core declared; AICPU after."""
    events = _events(result)
    meta = [e for e in events if e["ph"] == "M"]
    assert meta[0] == {"args": {"name": "Machine View"}, "cat": "__metadata",
                       "name": "process_name", "ph": "M", "pid": 1}
    lanes = [(e["args"]["name"], e["tid"]) for e in meta[1:]]
    assert lanes == [("AIC_1", 1002), ("AIC_2", 1004), ("AIV_3", 1006), ("AIV_4", 1008),
                     ("AIV_5", 1010), ("AIV_6", 1012), ("AICPU_CTRL", 1014),
                     ("AICPU_SCHED_1", 1016), ("AICPU_SCHED_2", 1018), ("AICPU_SCHED_3", 1020)]
    assert all(e["cat"] == "__metadata" and e["pid"] == 1 for e in meta)


def test_a2a3_core_counts_give_pypto_lane_numbers(result):
    """With 24 AIC + 48 AIV the lanes are exactly PyPTO's AIC_1..AIC_24, AIV_25..AIV_72."""
    result.aic, result.aiv = 24, 48
    names = {e["args"]["name"]: e["tid"] for e in _events(result)
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names["AIC_1"] == 1002 and names["AIC_24"] == 1048
    assert names["AIV_25"] == 1050 and names["AIV_72"] == 1144
    assert sum(n.startswith(("AIC_", "AIV_")) for n in names) == 72
    assert names["AICPU_CTRL"] == lane_tid(73)


def test_event_counts_order_and_key_order(result):
    """M first, X by lane then start, s/f pairs, C last; keys in PyPTO's order."""
    events = _events(result)
    kinds = [e["ph"] for e in events]
    # C: ReadyCount_AIV / _AIC and SchedOverhead_AIV / _AIC (here equal: idle cores abound)
    assert Counter(kinds) == {"M": 11, "X": 8, "s": 3, "f": 3, "C": 12}
    first = {ph: kinds.index(ph) for ph in "MXsfC"}
    last = {ph: len(kinds) - 1 - kinds[::-1].index(ph) for ph in "MXsfC"}
    assert last["M"] < first["X"] and last["X"] < first["s"] and last["f"] < first["C"]
    xs = [e for e in events if e["ph"] == "X"]
    assert [(e["tid"], e["ts"]) for e in xs] == sorted((e["tid"], e["ts"]) for e in xs)
    assert [e["id"] for e in xs] == list(range(8))
    assert list(xs[0]) == ["args", "cat", "id", "name", "ph", "pid", "tid", "ts", "dur"]
    flows = [e for e in events if e["ph"] in "sf"]
    assert list(flows[0]) == ["id", "name", "ph", "pid", "tid", "ts"]
    assert list(flows[1]) == ["bp", "id", "name", "ph", "pid", "tid", "ts"]
    c = next(e for e in events if e["ph"] == "C")
    assert list(c) == ["name", "pid", "tid", "ph", "ts", "args"]


def test_task_names_times_and_pypto_args(result):
    """Name w-i-c-root-leaf(label); ts/dur = cycles / clock_mhz; PyPTO's 7 args keys first."""
    x = _x_by_name(_events(result))
    assert set(x) >= {"0-0-0-3-0()", "0-0-1-3-0()", "0-0-2-3-1(Sa_C1)", "0-1-0-3-2()"}
    mm = x["0-0-2-3-1(Sa_C1)"]
    assert (mm["tid"], mm["ts"], mm["dur"], mm["cat"], mm["pid"]) == (1002, 4.0, 5.0, "event", 1)
    assert list(mm["args"])[:7] == PYPTO_ARGS
    a = mm["args"]
    assert a["event-hint"] == (f"Task:[0-0-2], rootHash:{stable_hash('LOOP_B')}, "
                               f"callOpMagic:10002, leafHash:{stable_hash('mm')}, TaskId:2")
    assert a["ioperand-hint"] == "[{5: {'shape': [16, 32], 'dtype': 6, 'rawmagic': 3}}]"
    assert a["ooperand-hint"] == "[{7: {'shape': [-1, 32], 'dtype': 7, 'rawmagic': 4}}]"
    assert (a["color"], a["taskId"], a["seqNo"]) == ("Sa_C1", 2, 0)
    exp = x["0-1-0-3-2()"]
    assert exp["args"]["taskId"] == task_id(1, 0) == 1 << 20
    assert (exp["tid"], exp["ts"], exp["dur"]) == (1006, 10.0, 0.5)
    assert x["0-0-1-3-0()"]["args"]["ioperand-hint"] == ""


def test_extra_args_carry_our_task_details(result, tmp_path):
    data = read_swimlane(write_swimlane(result, tmp_path / "s.json"))
    a = next(t for t in data.tasks if t.name == "0-0-2-3-1(Sa_C1)").args
    assert (a["leaf"], a["root"], a["window"], a["instance"], a["call"]) == (
        "mm", "LOOP_B", 0, 0, 2)
    assert (a["core_type"], a["sim_task_id"]) == ("AIC", 2)
    assert a["merge"] == {"l1_reuse": 2, "groups": [1, 2]}
    # the non-zero cost-model inputs (a cube task has no vector cycles)
    assert a["cost"] == {"mte2_bytes": 2048, "cube_cycles": 4000}
    assert (a["l2_hit_bytes"], a["hbm_bytes"]) == (0, 2048)
    # no redundant args: the core index is the lane's, the cycles are ts / dur x clock_mhz
    assert not {"core_index", "start_cycle", "end_cycle"} & a.keys()


def test_execution_hint_aggregates_per_root_and_leaf(result):
    """Average / max / min duration (us) over the tasks of one leaf, first task on ties."""
    x = _x_by_name(_events(result))
    hint = ("Average Execution Time: 2.0\nMax Execution Time: 2.0, Task: [0-0-0]\n"
            "Min Execution Time: 2.0, Task: [0-0-0]\n")
    assert x["0-0-0-3-0()"]["args"]["execution-hint"] == hint
    assert x["0-0-1-3-0()"]["args"]["execution-hint"] == hint
    assert x["0-1-0-3-2()"]["args"]["execution-hint"].startswith("Average Execution Time: 0.5\n")


def test_flows_pair_predecessor_end_with_successor_start(result):
    """One s/f pair per edge, ids after the X ids; s inside the predecessor 1 ns before its
    end (Perfetto's resolution), f at the successor's start with bp "e"."""
    events = _events(result)
    s = {e["id"]: e for e in events if e["ph"] == "s"}
    f = {e["id"]: e for e in events if e["ph"] == "f"}
    assert sorted(s) == sorted(f) == [8, 9, 10]
    pairs = [(s[i]["tid"], s[i]["ts"], f[i]["tid"], f[i]["ts"]) for i in sorted(s)]
    assert pairs == [(1006, 2.999, 1002, 4.0), (1008, 3.199, 1002, 4.0),
                     (1002, 8.999, 1006, 10.0)]
    # PyPTO's name (chrome://tracing needs one); no cat (optional: Perfetto pairs by id)
    assert all(e["name"] == FLOW_NAME and "cat" not in e for e in [*s.values(), *f.values()])
    assert all(e["bp"] == "e" for e in f.values())


def test_flow_to_unknown_task_is_dropped(result):
    result.flows.append((2, 99))
    assert sum(e["ph"] == "s" for e in _events(result)) == 3


def _counter(events, name):
    return [(e["ts"], e["args"]["size"]) for e in events if e["ph"] == "C" and e["name"] == name]


def test_ready_counters(result, tmp_path):
    """ReadyCount_* rise when the last predecessor ends (window start without one) and fall at
    the task's start; samples only on a change. The file leaves out their sum (the reader
    gives ReadyCount_Total back) and BusyCount (the X slices show it)."""
    events = _events(result)
    assert _counter(events, "ReadyCount_AIV") == [(1.0, 1), (1.2, 0), (9.0, 1), (10.0, 0)]
    assert _counter(events, "ReadyCount_AIC") == [(3.2, 1), (4.0, 0)]
    assert {e["name"] for e in events if e["ph"] == "C"} == {
        "ReadyCount_AIV", "ReadyCount_AIC", "SchedOverhead_AIV", "SchedOverhead_AIC"}
    # every ready task found an idle core: the overhead counters follow the ready ones
    assert _counter(events, "SchedOverhead_AIV") == _counter(events, "ReadyCount_AIV")
    assert _counter(events, "SchedOverhead_AIC") == _counter(events, "ReadyCount_AIC")
    assert all(e["tid"] == 1 and e["pid"] == 1 for e in events if e["ph"] == "C")
    data = read_swimlane(write_swimlane(result, tmp_path / "s.json"))
    assert data.counters["ReadyCount_Total"] == [(1.0, 1), (1.2, 0), (3.2, 1), (4.0, 0),
                                                 (9.0, 1), (10.0, 0)]


def test_no_cube_tasks_means_no_aic_counters(result):
    result.tasks = [r for r in result.tasks if r.task.core == "AIV"]
    names = {e["name"] for e in _events(result) if e["ph"] == "C"}
    assert names == {"ReadyCount_AIV", "SchedOverhead_AIV"}


def test_sched_overhead_counts_idle_cores_while_tasks_are_ready(result, tmp_path):
    """SchedOverhead_AIV = min(idle AIV cores, ready AIV tasks). With 2 AIV cores and t3 ready
    at 1.1 us: 1.0-1.2 one core idle (t0 runs) while t1 (and t3) wait -> 1; 1.2-3.0 both
    busy -> 0; 3.0-10.0 a core idle while t3 waits -> 1; t3 starts at 10.0 -> 0."""
    result.aiv = 2
    result.tasks[3].ready = 1100
    events = _events(result)
    assert _counter(events, "ReadyCount_AIV") == [(1.0, 1), (1.1, 2), (1.2, 1), (10.0, 0)]
    assert _counter(events, "SchedOverhead_AIV") == [(1.0, 1), (1.2, 0), (3.0, 1), (10.0, 0)]
    data = read_swimlane(write_swimlane(result, tmp_path / "s.json"))
    assert data.counters["SchedOverhead_AIV"] == [(1.0, 1), (1.2, 0), (3.0, 1), (10.0, 0)]
    # the reader's ReadyCount_Total sums the ready counters only
    assert data.counters["ReadyCount_Total"][:3] == [(1.0, 1), (1.1, 2), (1.2, 1)]


def test_aicpu_runs_are_x_events_on_their_lanes(result):
    cpu = [e for e in _events(result) if e["ph"] == "X" and e["tid"] >= 1014]
    assert [(e["tid"], e["name"], e["ts"], e["dur"]) for e in cpu] == [
        (1014, "build_window", 0.0, 0.8), (1016, "dispatch", 0.8, 0.2),
        (1016, "resolve", 3.2, pytest.approx(0.39)), (1018, "dispatch", 0.85, 0.2)]
    assert cpu[0]["args"]["window"] == 0 and cpu[2]["args"]["task"] == 2


def test_output_is_deterministic(result, shuffled, tmp_path):
    """Input order does not matter; two writes are byte-identical."""
    a = write_swimlane(result, tmp_path / "a" / "merged_swimlane.json")
    b = write_swimlane(shuffled, tmp_path / "b.json")
    assert a.read_bytes() == b.read_bytes()
    assert json.loads(a.read_text())["otherData"]["clock_mhz"] == 1000
    # one event per line: 11 M, 8 X, 6 s/f, 12 C (ready and overhead counters)
    assert len(a.read_text().splitlines()) == 2 + 37
    pretty = write_swimlane(result, tmp_path / "c.json", indent=4)   # PyPTO's formatting
    assert pretty.read_text().startswith('{\n    "traceEvents": [\n        {\n')
    assert json.loads(pretty.read_text()) == json.loads(a.read_text())


def test_round_trip(result, tmp_path):
    """write -> read gives the tasks, AICPU events, matched flows and counters back."""
    data = read_swimlane(write_swimlane(result, tmp_path / "s.json"))
    assert [ln.name for ln in data.lanes_of("aic", "aiv")] == [
        "AIC_1", "AIC_2", "AIV_3", "AIV_4", "AIV_5", "AIV_6"]
    assert len(data.lanes_of("aicpu")) == 4 and data.lanes[1014].kind == "aicpu"
    assert data.clock_mhz == 1000 and data.generator.startswith("openpto")
    by_name = {t.name: t for t in data.tasks}
    assert len(data.tasks) == 4 and len(data.aicpu) == 4
    mm = by_name["0-0-2-3-1(Sa_C1)"]
    assert (mm.lane, mm.start, mm.end, mm.task_id, mm.label) == (1002, 4.0, 9.0, 2, "Sa_C1")
    assert mm.fields == (0, 0, 2, 3, 1)
    assert mm.args["leaf"] == "mm"
    edges = sorted((data.tasks[f.src].name, data.tasks[f.dst].name) for f in data.flows)
    assert edges == sorted([("0-0-0-3-0()", mm.name), ("0-0-1-3-0()", mm.name),
                            (mm.name, "0-1-0-3-2()")])
    assert data.counters["ReadyCount_AIC"] == [(3.2, 1.0), (4.0, 0.0)]


def test_summary_of_our_file(result, tmp_path):
    """E2E = AIC/AIV span, utilisation over all AIC+AIV lanes; AICPU events are not tasks."""
    s = summarize(read_swimlane(write_swimlane(result, tmp_path / "s.json")))
    assert (s.task_count, s.fake_task_count, s.core_lanes, s.total_core) == (4, 0, 6, 6)
    assert s.e2e_us == pytest.approx(9.5)
    assert s.utilization_pct == pytest.approx(100 * 9.5 / (6 * 9.5))


def test_every_pypto_sample_parses(samples):
    """All real PyPTO files: 74 lanes, every X read, every flow matched to the task whose
    slice holds its s (lane + end) and whose start is its f."""
    files = sorted(samples.glob("*merged_swimlane.json"))
    assert files
    for path in files:
        raw = json.loads(path.read_text())["traceEvents"]
        data = read_swimlane(path)
        kinds = Counter(ln.kind for ln in data.lanes.values())
        assert kinds == {"aiv": 48, "aic": 24, "hub": 1, "fake": 1}, path.name
        assert len(data.tasks) == sum(e["ph"] == "X" for e in raw) and not data.aicpu
        assert len(data.flows) == sum(e["ph"] == "s" for e in raw)
        for f in data.flows:
            src, dst = data.tasks[f.src], data.tasks[f.dst]
            assert src.lane == f.src_lane and src.end == pytest.approx(f.src_ts, abs=2e-4)
            assert dst.lane == f.dst_lane and dst.start == pytest.approx(f.dst_ts, abs=1e-9)
        assert "ReadyCount_Total" in data.counters and "Dependence Solving (MHz)" in data.counters
        assert all(t.fields is not None and t.task_id is not None for t in data.tasks)


@pytest.mark.parametrize("name,e2e,util,tasks", [
    ("softmax", 71.13, 38.11, 320),
    ("ffn_dynamic_gelu", 75.22, 15.87, 56),
    ("glm_moe_fusion", 45.80, 14.16, 113),
    ("ds32_sparse_flash_attention_quant", 118.38, 33.49, 320)])
def test_pypto_summary_numbers(samples, name, e2e, util, tasks):
    """The printed AICore E2E / utilisation / task count of each sample (README table)."""
    data = read_swimlane(samples / f"{name}_merged_swimlane.json")
    s = summarize(data)
    assert s.e2e_us == pytest.approx(e2e, abs=0.01)
    assert s.utilization_pct == pytest.approx(util, abs=0.01)
    assert (s.task_count, s.total_core, s.fake_task_count) == (tasks, 73, 0)


def test_softmax_stdout_block(samples):
    s = summarize(read_swimlane(samples / "softmax_merged_swimlane.json"))
    assert format_summary(s) == ("Total Core:73\nTotal Task Count:320\n|--Fake Task Count:0\n"
                                 "-------- AICORE Prof Summary --------\n"
                                 "AICore End-to-End Time: 71.13\n"
                                 "AICore Utilization:     38.11%\n")
    data = read_swimlane(samples / "softmax_merged_swimlane.json")
    assert Counter(data.lanes[t.lane].kind for t in data.tasks) == {"aiv": 256, "hub": 64}


def test_read_swimlane_names_a_too_deeply_nested_file(tmp_path):
    """JSON nested past the reader's limit is the one-line TraceFormatError naming the file
    (as the toolkit reader says it), not a RecursionError from inside json."""
    path = tmp_path / "deep.json"
    path.write_text('{"traceEvents": [{"ph": "X", "args": {"a": ' + "[" * 100_000
                    + "]" * 100_000 + "}}]}")
    with pytest.raises(TraceFormatError, match=r"deep\.json: JSON nested too deeply") as info:
        read_swimlane(path)
    assert "\n" not in str(info.value)


def test_flows_are_the_direct_dependencies(result, tmp_path):
    """An edge another path implies (t0 -> t3 through t2) is not written: each task keeps
    its last-finishing predecessor, so ready times and bubbles read the same."""
    direct = read_swimlane(write_swimlane(result, tmp_path / "a.json"))
    result.flows = result.flows + [(0, 3), (1, 3)]
    data = read_swimlane(write_swimlane(result, tmp_path / "b.json"))
    assert len(data.flows) == 3
    assert data.preds() == direct.preds()
    assert bubbles_from_swimlane(data) == bubbles_from_swimlane(direct)


def test_flows_keep_every_tasks_latest_predecessor_on_a_real_kernel(tmp_path):
    """On a stitched loop (edges within and across windows), the file's flows are fewer than
    the run's edges, and every task's latest predecessor end is the run's."""
    import torch

    import pypto
    from pypto.profiling.task_edges import latest_pred_ends

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 2})
    def acc(x: pypto.Tensor([pypto.DYNAMIC, 64, 256], pypto.DT_FP32),
            y: pypto.Tensor([pypto.DYNAMIC, 64, 256], pypto.DT_FP32)):
        for i in pypto.loop(x.shape[0]):
            pypto.set_vec_tile_shapes(1, 32, 256)
            e = pypto.exp(x[i:i + 1])
            pypto.set_vec_tile_shapes(1, 64, 128)       # other tiles: e goes through GM
            f = e * 2.0
            pypto.set_vec_tile_shapes(1, 16, 256)
            y[0:1] = y[0:1] + f + e                     # e -> y is implied by e -> f -> y
    x = torch.rand(6, 64, 256)
    acc(x, torch.zeros_like(x))
    run = acc.last_run
    data = read_swimlane(write_swimlane(run, tmp_path / "s.json"))
    assert 0 < len(data.flows) < len(set(run.flows))
    by_id = {t.args["sim_task_id"]: t for t in data.tasks}
    preds = data.preds()
    from_file = {by_id_key: max(data.tasks[p].end for p in preds[t.index])
                 for by_id_key, t in by_id.items() if t.index in preds}
    expected = {k: v / run.clock_mhz for k, v in latest_pred_ends(run).items()}
    assert from_file.keys() == expected.keys()
    assert all(from_file[k] == pytest.approx(expected[k], abs=5e-4) for k in expected)  # ns
