"""The trace file stays small and a valid Chrome trace: what the reader can restore (the
task name's fields, the lane's core type, shared tables) is left out of each event and
restored exactly; every event has the fields Perfetto needs, and a mid-size run of the glm
benchmark stays within 1.5 KB per task."""
import importlib.util
import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from pypto.profiling.run_columns import run_columns
from pypto.profiling.swimlane import DERIVED_ARGS, SHARED_ARGS, restore_args
from pypto.profiling.swimlane_reader import read_swimlane, parse_swimlane
from pypto.profiling.swimlane_writer import write_swimlane
from pypto.toolkit.trace import load

ROOT = Path(__file__).resolve().parents[2]
MAX_BYTES_PER_TASK = 1500           # issue 16: <= 1.5 KB per task on average


def _full_args(result) -> list[list[tuple]]:
    """Each task's args (key, value) in order, as the run's columns hold them."""
    cols = run_columns(result)
    return [[(k, json.loads(col.json[i])) for k, col in cols.args.items()]
            for i in range(len(cols.runs))]


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


def _raw_tasks(doc: dict) -> list[dict]:
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and "seqNo" in e["args"]]


def test_file_leaves_out_what_the_reader_restores(result, tmp_path):
    path = write_swimlane(result, tmp_path / "s.json")
    doc = _raw(path)
    for e in _raw_tasks(doc):
        a = e["args"]
        assert not set(DERIVED_ARGS) & a.keys()         # name, seqNo and lane give them
        assert type(a["merge"]) is int and type(a["cost"]) is int
        assert all(type(i) is int for i in a["gm_reads"])
    shared = doc["otherData"][SHARED_ARGS]
    assert shared["leaf"] == {"3-0": "vadd", "3-1": "mm", "3-2": "vexp"}
    assert shared["root"] == {"3": "LOOP_B"}
    assert {"l1_reuse": 2, "groups": [1, 2]} in shared["merge"]
    cpu = [e["args"] for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] >= 1014]
    assert cpu[0] == {"window": 0} and cpu[1] == {}
    # the reader gives every event its full args back, in the writer's key order
    data = read_swimlane(path)
    assert [list(t.args.items()) for t in data.tasks] == _full_args(result)
    assert list(data.aicpu[0].args.items()) == [
        ("event-hint", "AICPU_CTRL: build_window"), ("color", ""), ("window", 0), ("thread", 0)]
    assert [t.args for t in load(path).tasks] == [t.args for t in data.tasks]


def test_values_the_file_cannot_derive_are_written(result, tmp_path):
    """A task on a lane of another core type, a second leaf at one (root, leaf) index, a name
    that does not parse, AICPU args that differ from their lane's: written, read back."""
    t0, t1, t2, t3 = (r for r in sorted(result.tasks, key=lambda r: r.task.id))
    t2.core_index = 2                       # 2 AIC cores: lane 3 is AIV_3
    t1.task.leaf = "vadd_b"                 # t0's leaf index
    t3.task.instance = -1                   # name "0--1-0-3-2()" has no PyPTO fields
    result.aicpu[1].args = {"color": "red"}
    path = write_swimlane(result, tmp_path / "s.json")
    written = {e["name"]: e["args"] for e in _raw_tasks(_raw(path))}
    assert written["0-0-2-3-1(Sa_C1)"]["core_type"] == "AIC"
    assert "leaf" in written["0-0-1-3-0()"] and "leaf" not in written["0-0-0-3-0()"]
    assert {"instance", "call", "leaf", "root"} <= written["0--1-0-3-2()"].keys()
    data = read_swimlane(path)
    assert [list(t.args.items()) for t in data.tasks] == _full_args(result)
    red = next(e for e in data.aicpu if e.args.get("color") == "red")
    assert red.args["event-hint"] == "AICPU_SCHED_1: dispatch" and red.args["thread"] == 1


def test_a_file_without_the_tables_keeps_its_args(result, tmp_path):
    """PyPTO's files (and any trace without our otherData) are read as they are."""
    doc = _raw(write_swimlane(result, tmp_path / "s.json"))
    bare = parse_swimlane(doc["traceEvents"])
    before = [dict(t.args) for t in bare.tasks]
    restore_args(bare)
    assert [t.args for t in bare.tasks] == before and "leaf" not in before[0]


@pytest.fixture(scope="module")
def glm_run(tmp_path_factory):
    """The issue's benchmark (benchmarks/glm_attention.py) at a mid size: 16 (batch, KV
    head) pairs x 8 KV blocks, ~1,200 tasks."""
    spec = importlib.util.spec_from_file_location("glm_attention",
                                                  ROOT / "benchmarks" / "glm_attention.py")
    glm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glm)
    run = glm.run(batch=2).last_run
    return run, write_swimlane(run, tmp_path_factory.mktemp("glm") / "merged_swimlane.json")


def test_bytes_per_task_of_a_mid_size_run(glm_run):
    run, path = glm_run
    assert 1000 < len(run.tasks) < 2000
    assert path.stat().st_size / len(run.tasks) <= MAX_BYTES_PER_TASK


def _ns(us: float) -> int:
    """A time as Perfetto's JSON importer takes it: us x 1000, rounded half away from zero."""
    return math.floor(us * 1000 + 0.5)


def test_file_is_a_chrome_trace_perfetto_reads(glm_run):
    """Trace Event Format: an object with traceEvents; M names the process and each lane;
    X has name, ts, dur (finite, >= 0), pid, tid; each flow id has a name, one s and one f (bp "e")
    that bind, at Perfetto's ns resolution, to the slice of the run's predecessor (the latest
    slice of the lane begun by s) and successor (the one f starts); C has numeric args; no
    two slices of a lane overlap."""
    run, path = glm_run
    doc = _raw(path)
    assert set(doc) == {"traceEvents", "otherData"}
    events = doc["traceEvents"]
    assert all(type(e["ph"]) is str and e["pid"] == 1 for e in events)
    meta = [e for e in events if e["ph"] == "M"]
    assert {e["name"] for e in meta} == {"process_name", "thread_name"}
    lanes = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert all(type(t) is int for t in lanes)
    xs = [e for e in events if e["ph"] == "X"]
    for e in xs:
        assert type(e["name"]) is str and e["tid"] in lanes and type(e["args"]) is dict
        assert all(type(e[k]) in (int, float) and 0 <= e[k] < 1e12 for k in ("ts", "dur"))
    by_lane = defaultdict(list)                         # lane -> (start ns, end ns, event)
    for i, e in enumerate(xs):
        by_lane[e["tid"]].append((_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), i))
    for slices in by_lane.values():         # (back-to-back slices too: AICPU resolve, then
        slices.sort()                       # dispatch at the same cycle; a core's next task)
        assert all(a[1] <= b[0] for a, b in zip(slices, slices[1:]))

    def bound(tid: int, ts: float) -> int:
        """The slice Perfetto binds a flow end at (tid, ts) to: the latest begun by then."""
        return max(x for x in by_lane[tid] if x[0] <= _ns(ts))[2]

    ends = defaultdict(dict)
    for e in events:
        if e["ph"] in "sf":
            assert type(e["id"]) is int and e["tid"] in lanes and e["ph"] not in ends[e["id"]]
            assert type(e["name"]) is str               # chrome://tracing drops a nameless flow
            assert (e["ph"] == "f") == (e.get("bp") == "e")
            ends[e["id"]][e["ph"]] = bound(e["tid"], e["ts"])
    assert all(len(pair) == 2 for pair in ends.values())
    sim_id = [e["args"].get("sim_task_id") for e in xs]
    edges = {(sim_id[p["s"]], sim_id[p["f"]]) for p in ends.values()}
    assert edges <= set(run.flows) and len(edges) == len(ends) > len(run.tasks)
    counters = [e for e in events if e["ph"] == "C"]
    assert counters and all(type(e["name"]) is str and e["args"] and all(
        type(v) in (int, float) for v in e["args"].values()) for e in counters)
