"""The swimlane events of one simulated run as columns, computed once from a `SimResult`.

Takes a `machine.result.SimResult` → a `RunColumns`: the lanes, the task X events in file order
(one list per field; each args key as one `ArgColumn` holding both its JSON text and the value
the viewer keys it by), the AICPU X events, the flows as task positions (the direct
dependencies: an edge another path implies is left out, see `_direct_edges`), the counter
samples. Times are whole ns (`time_units`); args hold nothing another field gives (the core
index is the lane's, cycles are ts x clock_mhz). The args are all of a task's keys, as the
viewer and the reader see them; the file leaves out or shares what the reader restores
(`swimlane_writer`).
The JSON writer (`swimlane_writer`), the viewer page (`toolkit.viewer.pack.pack_run`) and the
reports (`pred_ends`) all read these columns, so nothing is computed twice and no per-event
dict is built on the way to the files. Keeps: every value is
the one `swimlane`'s module docstring specifies; the order is the file's order.

NOTE: columns are built with `map` over attribute getters and bound methods (C loops) rather
than one Python loop per task: a run has ~10k tasks, ~100k flows and ~50k counter samples.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter
from typing import Any, Callable, Iterable

import numpy as np

from pypto._version import __version__
from pypto.machine.result import AicpuRun, SimResult, TaskRun
from pypto.profiling.swimlane import (MAGIC_BASE, aicpu_lane_name, core_lane,
                                      core_lane_number, exact, jsonable, lane_tid,
                                      operand_hint, stable_hash)

json_str = json.encoder.encode_basestring_ascii       # json.dumps of a str (C)
COMPACT = (",", ":")                                  # the trace's JSON separators: no spaces
# times (us) are written in whole ns: what Perfetto resolves (it rounds us x 1000 to ns), so
# its slice ends (ts + dur) are the written ends; a cycle is 0.56 ns at 1.8 GHz
US_DIGITS = 3
_UNIT = 10 ** US_DIGITS                               # time units per us
_NON_FINITE = frozenset(("nan", "inf", "-inf"))


def json_numbers(values: list, repeated: bool = False) -> list[str]:
    """`json.dumps` of each int or float of `values` (repr, except NaN / Infinity).
    `repeated`: floats with many repeats (durations, sample times), each formatted once."""
    if repeated:
        return per_distinct(json_numbers, values)
    texts = list(map(repr, values))
    if not _NON_FINITE.isdisjoint(texts):
        texts = [json.dumps(v) if t in _NON_FINITE else t for t, v in zip(texts, values)]
    return texts


def time_units(cycles: Any, clock_mhz: float) -> np.ndarray:
    """Cycles as whole ns (int64; ts = units / 1000). NOTE: a slice's start and end are
    rounded, never its duration: ts + dur is the rounded end, for us and for Perfetto, so
    back-to-back tasks of a lane (the next dispatched at the cycle the last ends) stay apart."""
    return np.rint(np.asarray(cycles, dtype=np.float64) * (_UNIT / clock_mhz)).astype(np.int64)


def per_distinct(convert: Callable[[list], list], values: list) -> list:
    """`convert(values)` for a `convert` that maps element by element, applied to each
    distinct value once. NOTE: equal values must convert alike (1 and 1.0 do not: use it on
    values of one type)."""
    distinct = list(dict.fromkeys(values))
    table = dict(zip(distinct, convert(distinct)))
    return list(map(table.__getitem__, values))


def json_strs(values: list[str]) -> list[str]:
    """`json.dumps` of each string."""
    return list(map(json_str, values))


@dataclass
class ArgColumn:
    """One args key over the task events: `json` is each value as written in the trace;
    `page` is what the viewer keys it by (the value if `numeric` or a string, else its JSON
    text with sorted keys, as `pack` derives from a parsed trace)."""

    json: list[str]
    page: list[Any]
    numeric: bool
    # a column of lists whose items repeat: the distinct items' JSON, and each row as the
    # JSON list of its items' positions there (the file shares them: `swimlane_writer`)
    items: list[str] | None = None
    item_refs: list[str] | None = None


def _numeric(values: list) -> ArgColumn:
    return ArgColumn(json_numbers(values), values, True)


def _exact_numbers(values: list) -> ArgColumn:
    """A numeric column of `exact` values (whole floats as ints)."""
    kinds = set(map(type, values))
    if kinds <= {int}:
        return _numeric(values)
    if kinds == {float}:
        a = np.array(values)
        if (np.abs(a) < 2.0 ** 63).all():           # finite, and whole ones fit int64
            whole = a == np.trunc(a)
            if whole.all():
                return _numeric(a.astype(np.int64).tolist())
            return _numeric([int(x) if w else x for x, w in zip(values, whole.tolist())])
    return _numeric(list(map(exact, values)))


def _strings(values: list[str], repeated: bool = False) -> ArgColumn:
    """A column of strings; `repeated`: few distinct ones, each encoded once."""
    return ArgColumn(per_distinct(json_strs, values) if repeated else json_strs(values),
                     values, False)


@dataclass
class AicpuEvent:
    """One AICPU X event (us), its args in file key order."""

    tid: int
    ts: float
    dur: float
    name: str
    args: dict[str, Any]


@dataclass
class RunColumns:
    """The swimlane of one run (see the module docstring); task positions index `runs`."""

    result: SimResult
    lanes: list[tuple[int, str]]            # (tid, name) of every declared lane, in order
    runs: list[TaskRun]                     # the task X events in file order
    tid: list[int]
    ts: list[float]
    dur: list[float]
    name: list[str]
    ts_json: list[str]                      # ts and dur as JSON, of the tasks then AICPU events
    dur_json: list[str]
    args: dict[str, ArgColumn]              # in the file's key order
    aicpu: list[AicpuEvent]                 # in file order, after the tasks
    flow_src: list[int]                     # flow k: runs[flow_src[k]] -> runs[flow_dst[k]]
    flow_dst: list[int]
    flow_s_ts: list[float]                  # per task: ts of the s ends it is the source of
    counters: tuple[list[float], list[str], list[int]]     # (ts, name, size) in file order
    other: dict[str, Any]
    pred_ends: dict[int, float]             # `latest_pred_ends(result)`, for the reports

    @property
    def n_events(self) -> int:
        return len(self.runs) + len(self.aicpu)


def run_columns(result: SimResult) -> RunColumns:
    runs, tids = _in_file_order(result)
    unit = _UNIT
    start = time_units(list(map(attrgetter("start"), runs)), result.clock_mhz)
    end = time_units(list(map(attrgetter("end"), runs)), result.clock_mhz)
    ts, dur = (start / unit).tolist(), ((end - start) / unit).tolist()
    tasks = list(map(attrgetter("task"), runs))
    names = list(map("{0.window}-{0.instance}-{0.call}-{0.root_index}-{0.leaf_index}({0.label})"
                     .format, tasks))
    aicpu = _aicpu_events(result)
    src, dst = _flows(result, runs)
    # s ends 1 ns before the task's end: inside its slice and before the next one of the
    # lane even at Perfetto's resolution (PyPTO puts it FLOW_LEAD_US = 0.1 ns before)
    s_ts = ((end - np.minimum(1, (end - start) // 2)) / unit).tolist()
    other = {"generator": f"openpto {__version__}", "kernel": result.kernel,
             "clock_mhz": result.clock_mhz, "aic": result.aic, "aiv": result.aiv}
    pred_ends = latest_pred_ends(result)
    return RunColumns(result, _lanes(result), runs, tids, ts, dur, names,
                      json_numbers(ts + [e.ts for e in aicpu]),
                      json_numbers(dur + [e.dur for e in aicpu], repeated=True),
                      _task_args(runs, tasks, dur, US_DIGITS), aicpu, src, dst, s_ts,
                      _counters(result, pred_ends), other, pred_ends)


def _in_file_order(result: SimResult) -> tuple[list[TaskRun], list[int]]:
    """The tasks as their X events are written (by lane, start, end, then task id), and
    their lanes' tids."""
    tids = [lane_tid(core_lane_number(result, r.task.core, r.core_index)) for r in result.tasks]
    keys = [(tid, r.start, r.end, r.task.id) for tid, r in zip(tids, result.tasks)]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return [result.tasks[i] for i in order], [tids[i] for i in order]


def _lanes(result: SimResult) -> list[tuple[int, str]]:
    lanes = [(lane_tid(n), name) for core, count in (("AIC", result.aic), ("AIV", result.aiv))
             for n, name in (core_lane(result, core, i) for i in range(count))]
    # thread 0 (control) and every scheduler thread the stats announce, idle or not
    sched = int(result.stats.get("sched_threads", 0) or 0)
    threads = sorted({a.thread for a in result.aicpu} | (set(range(sched + 1)) if sched else set()))
    first_cpu = result.aic + result.aiv + 1
    return lanes + [(lane_tid(first_cpu + th), aicpu_lane_name(th)) for th in threads]


# ----------------------------------------------------------------------------------------------
# task args
# ----------------------------------------------------------------------------------------------

def _task_args(runs: list[TaskRun], tasks: list, dur: list[float],
               digits: int) -> dict[str, ArgColumn]:
    """The args columns of the task X events, in PyPTO's key order then ours."""
    def field(name: str) -> list:
        return list(map(attrgetter(name), tasks))
    window, instance, call = field("window"), field("instance"), field("call")
    leaf, root, label = field("leaf"), field("root"), field("label")
    tid = [(i << 20) + c for i, c in zip(instance, call)]
    event_hint = list(map("Task:[{}-{}-{}], rootHash:{}, callOpMagic:{}, leafHash:{}, TaskId:{}"
                          .format, window, instance, call, map(stable_hash, root),
                          [MAGIC_BASE + c for c in call], map(stable_hash, leaf), tid))
    return {
        "event-hint": _strings(event_hint),
        "ioperand-hint": _strings(_operand_hints(field("inputs")), repeated=True),
        "ooperand-hint": _strings(_operand_hints(field("outputs")), repeated=True),
        "execution-hint": _strings(_execution_hints(tasks, dur, digits), repeated=True),
        "color": _strings(label, repeated=True),
        "taskId": _numeric(tid),
        "seqNo": _numeric(window),
        # OpenPTO extensions
        "leaf": _strings(leaf, repeated=True),
        "root": _strings(root, repeated=True),
        "window": _numeric(window),
        "instance": _numeric(instance),
        "call": _numeric(call),
        "core_type": _strings(field("core"), repeated=True),
        "merge": _merge_column(field("merge")),
        "cost": _cost_column(tasks),
        "l2_hit_bytes": _exact_numbers(list(map(attrgetter("l2_hit_bytes"), runs))),
        "hbm_bytes": _exact_numbers(list(map(attrgetter("hbm_bytes"), runs))),
        "gm_reads": _gm_reads_column(tasks),
        "sim_task_id": _numeric(field("id")),
    }


def _operand_hints(lists: list[list[dict[str, Any]]]) -> list[str]:
    """`operand_hint` of each list. NOTE: the executor hands every instance of a call op the
    same operand lists, so each hint is built once per list (keyed by identity: the result
    keeps the lists alive)."""
    cache: dict[int, str] = {}
    out = []
    for ops in lists:
        text = cache.get(id(ops))
        if text is None:
            text = cache[id(ops)] = operand_hint(ops)
        out.append(text)
    return out


_COST_FIELDS = ("mte2_bytes", "mte1_bytes", "vector_cycles", "cube_cycles", "mte3_bytes")


def _cost_column(tasks: list) -> ArgColumn:
    """Each task's cost-model inputs as an object of its non-zero fields (in `_COST_FIELDS`
    order), plus `"empty": true` for an empty task: a vector task has no cube cycles, a cube
    task no vector ones. For the viewer with sorted keys. NOTE: tasks of one leaf mostly share
    their values: each distinct row is formatted once."""
    rows = list(zip(*(map(attrgetter(k), tasks) for k in (*_COST_FIELDS, "empty"))))
    texts = {}
    for row in dict.fromkeys(rows):
        value = {k: exact(v) for k, v in zip(_COST_FIELDS, row) if v}
        if row[-1]:
            value["empty"] = jsonable(row[-1])
        texts[row] = (json.dumps(value, separators=COMPACT), json.dumps(value, sort_keys=True))
    return ArgColumn([texts[row][0] for row in rows], [texts[row][1] for row in rows], False)


def _merge_column(merges: list[dict[str, Any]]) -> ArgColumn:
    """The merge group ids, as JSON in insertion order and with sorted keys; equal dicts of
    strings (the instances of one call op) are encoded once."""
    cache: dict[tuple, tuple[str, str]] = {}
    file_json, page_json = [], []
    for merge in merges:
        # only all-string dicts are cached: equal keys then mean equal JSON (1 == 1.0 == True)
        key = tuple(merge.items())
        if not all(type(x) is str for x in chain.from_iterable(key)):
            key = None
        texts = cache.get(key) if key is not None else None
        if texts is None:
            value = jsonable(merge)
            texts = (json.dumps(value, separators=COMPACT), json.dumps(value, sort_keys=True))
            if key is not None:
                cache[key] = texts
        file_json.append(texts[0])
        page_json.append(texts[1])
    return ArgColumn(file_json, page_json, False)


def _gm_reads_column(tasks: list) -> ArgColumn:
    """`[storage, offsets, extents, bytes]` per GM read box (bytes = extent product x element
    size; 0 when the access has no layout). NOTE: the tasks of a run read few distinct boxes
    (the same blocks, again and again): each box's text is made once. Boxes hold ints (the
    SimTask contract), so equal boxes have equal text."""
    # (box, layout) -> its (file text, page text, position among the distinct file texts)
    boxes: dict[tuple, tuple[str, str, str]] = {}
    items: dict[str, str] = {}                  # file text -> its position (as text)
    file_texts, page_texts, refs = [], [], []
    for t in tasks:
        layouts = t.read_layouts
        row = []
        for i, box in enumerate(t.reads):
            key = (box, layouts[i] if i < len(layouts) else None)
            texts = boxes.get(key)
            if texts is None:
                value = _gm_read(*key)
                text = json_value(value)
                texts = boxes[key] = (text, json.dumps(value),
                                      items.setdefault(text, str(len(items))))
            row.append(texts)
        # NOTE: the file's text is compact; the page keys a list by json.dumps' default text
        file_texts.append(f"[{','.join(f for f, _, _ in row)}]")
        page_texts.append(f"[{', '.join(p for _, p, _ in row)}]")
        refs.append(f"[{','.join(r for _, _, r in row)}]")
    return ArgColumn(file_texts, page_texts, False, list(items), refs)


def _gm_read(box: tuple[int, tuple, tuple], layout: tuple | None) -> list:
    sid, off, ext = box
    nbytes = math.prod(int(e) for e in ext) * layout[1] if layout is not None else 0
    return [sid, list(off), list(ext), exact(nbytes)]


def json_value(v: Any) -> str:
    """`json.dumps(v, separators=COMPACT)`; strings, finite numbers and lists of ints without
    the encoder's per-call setup."""
    t = type(v)
    if t is str:
        return json_str(v)
    if t is int or (t is float and v - v == 0.0):      # x - x == 0.0: finite
        return repr(v)
    if t is list and all(type(x) is int for x in v):
        return f"[{','.join(map(repr, v))}]"
    return json.dumps(v, separators=COMPACT)


def _execution_hints(tasks: list, dur: list[float], digits: int) -> list[str]:
    """PyPTO's execution hint of each task: average, max and min duration (us, the average
    rounded to `digits` decimals) of the tasks of its (root function, leaf), max / min the
    first of ties in task order."""
    task_order = list(zip(*(map(attrgetter(k), tasks) for k in ("window", "instance", "call",
                                                                 "id"))))
    group = list(zip(map(attrgetter("root_index"), tasks), map(attrgetter("leaf"), tasks)))
    groups: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in sorted(range(len(tasks)), key=task_order.__getitem__):
        groups[group[i]].append(i)
    hints = {}
    for key, members in groups.items():
        durs = [dur[i] for i in members]
        hi = members[max(range(len(members)), key=durs.__getitem__)]
        lo = members[min(range(len(members)), key=durs.__getitem__)]

        def ref(i: int) -> str:
            return "[{}-{}-{}]".format(*task_order[i][:3])
        hints[key] = (f"Average Execution Time: {round(sum(durs) / len(durs), digits)}\n"
                      f"Max Execution Time: {dur[hi]}, Task: {ref(hi)}\n"
                      f"Min Execution Time: {dur[lo]}, Task: {ref(lo)}\n")
    return list(map(hints.__getitem__, group))


# ----------------------------------------------------------------------------------------------
# AICPU events, flows, counters
# ----------------------------------------------------------------------------------------------

def _aicpu_events(result: SimResult) -> list[AicpuEvent]:
    """One X event per AicpuRun, by lane, start, end; ties by content, never by input order."""
    first_cpu = result.aic + result.aiv + 1
    unit = _UNIT
    start = time_units([a.start for a in result.aicpu], result.clock_mhz)
    end = time_units([a.end for a in result.aicpu], result.clock_mhz)
    events = []
    for a, ts, dur in zip(result.aicpu, (start / unit).tolist(), ((end - start) / unit).tolist()):
        args = {"event-hint": f"{aicpu_lane_name(a.thread)}: {a.name}", "color": "",
                **{str(key): jsonable(v) for key, v in sorted(a.args.items())},
                "thread": a.thread}
        events.append(AicpuEvent(lane_tid(first_cpu + a.thread), ts, dur, a.name, args))
    runs: list[AicpuRun] = result.aicpu
    keys = [(e.tid, a.start, a.end) for e, a in zip(events, runs)]
    order = sorted(range(len(events)), key=keys.__getitem__)
    if any(keys[i] == keys[j] for i, j in zip(order, order[1:])):
        # NOTE: the content key (the event's JSON) is costly: only built when there are ties
        def content(i: int) -> str:
            e = events[i]
            return json.dumps({"args": e.args, "cat": "event", "id": 0, "name": e.name,
                               "ph": "X", "pid": 1, "tid": e.tid, "ts": e.ts, "dur": e.dur},
                              sort_keys=True)
        order = sorted(range(len(events)), key=lambda i: (*keys[i], content(i)))
    return [events[i] for i in order]


def _flows(result: SimResult, runs: list[TaskRun]) -> tuple[list[int], list[int]]:
    """The resolved edges between written tasks, sorted by (pred id, succ id), as task
    positions."""
    pred, succ = _edge_array(result.flows)
    order = np.lexsort((succ, pred))
    pred, succ = pred[order], succ[order]
    first = np.ones(len(pred), dtype=bool)              # drop repeated edges
    first[1:] = (pred[1:] != pred[:-1]) | (succ[1:] != succ[:-1])
    find = _TaskPositions(runs)
    src, dst = find(pred[first]), find(succ[first])
    known = (src >= 0) & (dst >= 0)
    src, dst = src[known].tolist(), dst[known].tolist()
    keep = _direct_edges(len(runs), src, dst)
    return [src[k] for k in keep], [dst[k] for k in keep]


def _direct_edges(n: int, src: list[int], dst: list[int]) -> list[int]:
    """Indices of the edges (src[k] -> dst[k] over nodes 0..n-1) that no other path implies:
    the transitive reduction, in the given order. A dropped edge's predecessor ends before a
    kept one's, so every task keeps its last-finishing predecessor (the dependency that held
    it back: critical path, bubbles and ready times read the same), and dependency
    highlighting still reaches every ancestor; a 10k-task run keeps ~20k of its ~90k edges.
    NOTE: reachability as Python-int bitsets, nodes in reverse topological order, each node's
    successors nearest first: an edge is implied iff its target is already reached."""
    succs: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for k, (a, b) in enumerate(zip(src, dst)):
        succs[a].append(k)
        indeg[b] += 1
    topo = [v for v in range(n) if not indeg[v]]
    for v in topo:                                      # Kahn: topo grows while it is walked
        for k in succs[v]:
            b = dst[k]
            indeg[b] -= 1
            if not indeg[b]:
                topo.append(b)
    if len(topo) < n:                                   # a cycle: nothing is implied
        return list(range(len(src)))
    rank = [0] * n
    for i, v in enumerate(topo):
        rank[v] = i
    dst_rank = [rank[b] for b in dst]
    nearest_first: list[list[int]] = [[] for _ in range(n)]
    for k in sorted(range(len(dst)), key=dst_rank.__getitem__):
        nearest_first[src[k]].append(k)
    reach = [0] * n                                     # by rank: the nodes a node reaches
    kept: list[int] = []
    for i in range(n - 1, -1, -1):
        mine = 0
        for k in nearest_first[topo[i]]:
            r = dst_rank[k]
            if not mine >> r & 1:
                kept.append(k)
                mine |= reach[r] | (1 << r)
        reach[i] = mine
    kept.sort()
    return kept


def _edge_array(edges: Iterable[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(pred ids, succ ids) of (pred, succ) pairs."""
    flat = np.fromiter(chain.from_iterable(edges), dtype=np.int64)
    return flat[0::2], flat[1::2]


class _TaskPositions:
    """Task id (unique: the simulator numbers the tasks) -> position in `runs`, looked up for
    whole arrays of ids; -1 for an id not among them."""

    def __init__(self, runs: list[TaskRun]):
        ids = np.fromiter((r.task.id for r in runs), dtype=np.int64, count=len(runs))
        self.positions = np.argsort(ids, kind="stable")
        self.ids = ids[self.positions]

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        if not len(self.ids):
            return np.full(len(ids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return np.where(self.ids[at] == ids, self.positions[at], -1)


def latest_pred_ends(result: SimResult) -> dict[int, float]:
    """Task id -> latest end (cycles) of its predecessors among the run's tasks (from the
    resolved flows and the task's own preds); tasks without one are left out."""
    runs = result.tasks
    tasks = list(map(attrgetter("task"), runs))
    pred_lists = list(map(attrgetter("preds"), tasks))
    flow_pred, flow_succ = _edge_array(result.flows)
    own_pred = np.fromiter(chain.from_iterable(pred_lists), dtype=np.int64)
    own_succ = np.repeat(np.fromiter(map(attrgetter("id"), tasks), dtype=np.int64,
                                     count=len(tasks)), list(map(len, pred_lists)))
    find = _TaskPositions(runs)
    pred = find(np.concatenate([flow_pred, own_pred]))
    succ = find(np.concatenate([flow_succ, own_succ]))
    known = (pred >= 0) & (succ >= 0)
    end = np.array([r.end for r in runs], dtype=np.float64)
    latest = np.full(len(runs), -np.inf)
    np.maximum.at(latest, succ[known], end[pred[known]])
    has = np.flatnonzero(latest > -np.inf)
    return dict(zip([tasks[i].id for i in has.tolist()], latest[has].tolist()))


def _ready_times(result: SimResult, pred_ends: dict[int, float],
                 start: np.ndarray) -> np.ndarray:
    """Cycle at which each task (in `result.tasks` order) became ready: `TaskRun.ready` when
    set, else the end of its last predecessor (at the latest its start), else the first task
    start of its window."""
    runs = result.tasks
    window = np.fromiter(map(attrgetter("task.window"), runs), dtype=np.int64, count=len(runs))
    windows, of_window = np.unique(window, return_inverse=True)
    window_first = np.full(len(windows), np.inf)
    np.minimum.at(window_first, of_window, start)
    latest = np.fromiter(map(pred_ends.get, map(attrgetter("task.id"), runs), repeat(np.nan)),
                         dtype=np.float64, count=len(runs))
    ready = np.where(np.isnan(latest), window_first[of_window], np.minimum(latest, start))
    given = list(map(attrgetter("ready"), runs))
    if given.count(None) != len(given):
        ready[[i for i, g in enumerate(given) if g is not None]] = [
            float(g) for g in given if g is not None]
    return ready


# counter names in their order among samples at one time
_COUNTER_ORDER = {"ReadyCount_AIV": 0, "ReadyCount_AIC": 1}


def _step_counter(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(times, values) of a counter driven by +/- changes, one sample per change of value;
    changes at the same time are netted."""
    t, inverse = np.unique(times, return_inverse=True)
    net = np.zeros(len(t), dtype=np.int64)
    np.add.at(net, inverse, deltas)
    changed = net != 0
    return t[changed], np.cumsum(net[changed])


def _counters(result: SimResult,
              pred_ends: dict[int, float]) -> tuple[list[float], list[str], list[int]]:
    """ReadyCount_AIV / _AIC samples (us, name, size), by time then counter. Changes are
    netted at the file's time resolution (`time_units`): one sample per counter and written
    time. NOTE: no ReadyCount_Total (their sum: the reader restores it, `restore_counters`)
    and no BusyCount (cores running a task: any trace viewer shows it, the X slices)."""
    runs = result.tasks
    start = np.fromiter(map(attrgetter("start"), runs), dtype=np.float64, count=len(runs))
    ready = time_units(_ready_times(result, pred_ends, start), result.clock_mhz)
    start = time_units(start, result.clock_mhz)
    core = np.array(list(map(attrgetter("task.core"), runs)), dtype=object)
    series: list[tuple[str, np.ndarray, np.ndarray]] = []
    for k in sorted(set(core.tolist())):
        mine = core == k
        up_down = np.repeat([1, -1], int(mine.sum()))
        series.append((f"ReadyCount_{k}", *_step_counter(
            np.concatenate([ready[mine], start[mine]]), up_down)))
    if not series:
        return [], [], []
    times = np.concatenate([t for _, t, _ in series])
    rank = np.concatenate([np.full(len(t), _COUNTER_ORDER.get(n, 9)) for n, t, _ in series])
    order = np.lexsort((rank, times))               # by time, then counter (stable)
    names = np.concatenate([np.full(len(t), i) for i, (_, t, _) in enumerate(series)])[order]
    label = [n for n, _, _ in series]
    values = np.concatenate([v for _, _, v in series])[order]
    return ((times[order] / _UNIT).tolist(),
            [label[i] for i in names.tolist()],
            values.tolist())
