"""The swimlane: one simulated run as a Chrome trace in PyPTO's `merged_swimlane.json` layout.

Takes a `machine.result.SimResult` (times in cycles) and writes `{"traceEvents": [...]}` with
times in microseconds (`cycles / clock_mhz`); reads such a file - ours or one written by PyPTO
0.2.0 itself - back into a `SwimlaneData`; and computes PyPTO's stdout summary (task count,
AICore end-to-end time, AICore utilisation) from a parsed file. Keeps: the output is a pure
function of the result (events sorted, ids serial, hashes from sha1 of names), so two runs of
the same kernel give byte-identical files.

Layout (shared/reference/swimlane_format.md section 1), kept as PyPTO writes it:

* one process, pid 1, "Machine View"; one `thread_name` lane per core, `tid = 1000 + 2 * n`
  with the 1-based lane number n: `AIC_1..AIC_<aic>`, then `AIV_<aic+1>..AIV_<aic+aiv>` (24 AIC
  and 48 AIV on A2/A3 give PyPTO's AIC_1..AIC_24, AIV_25..AIV_72). Every core lane is declared,
  idle or not. There are no HUB or "Fake Core" lanes: our task graph has no control tasks.
* one `X` event per task, named `"<window>-<instance>-<call>-<root_index>-<leaf_index>(<label>)"`
  (PyPTO: seqNo-instance-task-d-psgId(color); the task index inside the instance is our call
  index, the subgraph id our leaf index), `args` with PyPTO's 7 keys: `event-hint`
  (`Task:[w-i-c], rootHash, callOpMagic = 10000 + call, leafHash, TaskId`), `ioperand-hint`,
  `ooperand-hint` (Python repr of `[{magic: {'shape', 'dtype', 'rawmagic'}}]`),
  `execution-hint` (average / max / min duration of the tasks of the same root function and
  leaf: the real samples carry one hint per subgraph, which is per root function only when the
  root has one leaf), `color` (the label), `taskId = (instance << 20) + call`, `seqNo`.
* `s`/`f` flow pairs (cat = name = "machine-view-last-dep") for every resolved edge: `s` on the
  predecessor's lane 0.0001 us before its end (inside the slice, as PyPTO places it), `f`
  (`bp: "e"`) on the successor's lane at its start; flow ids continue after the X ids.
* `C` counters on tid 1: `ReadyCount_AIV`, `ReadyCount_AIC` (only when cube tasks exist),
  `ReadyCount_Total`, sampled when they change.
* event order: M, X by lane then start, s/f pairs, C; key order as in PyPTO's files.

Our extensions (ignored by readers that only know PyPTO's keys):

* AICPU lanes after the core lanes, `AICPU_CTRL` (thread 0) and `AICPU_SCHED_<k>` (thread k),
  lane numbers `aic + aiv + 1 + thread`, holding one X event per `AicpuRun`. Classify lanes by
  the full name (`AIC_<n>` vs `AICPU_...`), never by the prefix "AIC".
* extra X args: `leaf`, `root`, `window`, `instance`, `call`, `core_type`, `core_index`,
  `merge` (merge group ids), `cost` (per-task cost-model inputs), `l2_hit_bytes`, `hbm_bytes`,
  `gm_reads` (`[storage, offsets, extents, bytes]` per GM read box: which block a task loads,
  for the toolkit's repeated-load analysis), `sim_task_id`, `start_cycle`, `end_cycle` (exact,
  for tools that work in cycles).
* counters `BusyCount_AIV` / `BusyCount_AIC`: cores running a task.
* top-level `otherData` (a Trace Event Format field): generator, kernel, clock_mhz, aic, aiv.

A task's ready time (for `ReadyCount_*`) is `TaskRun.ready` when the simulator sets one, else
the end of its last predecessor, else (no predecessor) the first task start of its window.
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pypto.dtypes import DataType
from pypto.machine.result import SimResult, TaskRun

PROCESS_NAME = "Machine View"
FLOW_NAME = "machine-view-last-dep"
PYPTO_CLOCK_MHZ = 1800          # PyPTO's time_convert_denominator (swimlane_format.md section 1)
_FLOW_LEAD_US = 1e-4            # s sits this far before the predecessor's end (PyPTO: 0.0001)
_TID_BASE = 1000
_COUNTER_TID = 1
_MAGIC_BASE = 10000             # callOpMagic = base + call index (PyPTO's magics start at 10000)

_LANE_KINDS = (("aic", re.compile(r"^AIC_(\d+)$")), ("aiv", re.compile(r"^AIV_(\d+)$")),
               ("hub", re.compile(r"^HUB_(\d+)$")), ("fake", re.compile(r"^Fake Core_(\d+)$")),
               ("aicpu", re.compile(r"^AICPU_?(\S*)$")))
_TASK_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)-(\d+)-(\d+)\((.*)\)$", re.S)


def lane_tid(number: int) -> int:
    """PyPTO's thread id of lane `number` (1-based core lane number, 0 = Fake Core)."""
    return _TID_BASE + 2 * number


@functools.lru_cache(maxsize=None)
def stable_hash(name: str) -> int:
    """A stable non-zero u64 for a function name (PyPTO's rootHash/leafHash; 0 means HUB)."""
    h = int.from_bytes(hashlib.sha1(name.encode()).digest()[:8], "big")
    return h or 1


def task_id(instance: int, call: int) -> int:
    """PyPTO's TaskId: the root instance in the high bits, the task inside it in the low 20."""
    return (instance << 20) + call


def aicpu_lane_name(thread: int) -> str:
    return "AICPU_CTRL" if thread == 0 else f"AICPU_SCHED_{thread}"


# ----------------------------------------------------------------------------------------------
# writer
# ----------------------------------------------------------------------------------------------

def _core_lane(result: SimResult, core: str, index: int) -> tuple[int, str]:
    """(lane number, lane name) of core `index` of type `core` ("AIC" or "AIV")."""
    n = index + 1 if core == "AIC" else result.aic + index + 1
    return n, f"{core}_{n}"


def _dtype_code(dtype: Any) -> int:
    """PyPTO's integer dtype code of a DataType, int or name ("DT_FP32" / "fp32"); -1 if none."""
    if isinstance(dtype, int):
        return int(dtype)
    if isinstance(dtype, str):
        key = dtype.upper()
        key = key if key.startswith("DT_") else f"DT_{key}"
        return int(DataType[key]) if key in DataType.__members__ else -1
    return -1


def _dim(d: Any) -> int:
    try:
        return int(d)
    except (TypeError, ValueError):
        return -1       # symbolic: PyPTO writes -1 for dynamic dims


def _operand_hint(ops: list[dict[str, Any]]) -> str:
    """PyPTO's operand hint; accepts `{magic: {shape, dtype, rawmagic}}` or flat dicts with
    `magic` (or `id`), `shape`, `dtype`, `rawmagic` (or `raw`)."""
    if not ops:
        return ""
    items = []
    for pos, op in enumerate(ops):
        if len(op) == 1 and isinstance(next(iter(op)), int) \
                and isinstance(next(iter(op.values())), dict):
            magic, body = next(iter(op.items()))
        else:
            magic, body = op.get("magic", op.get("id", pos)), op
        raw = body.get("rawmagic", body.get("raw", magic))
        items.append({_dim(magic): {"shape": [_dim(d) for d in body.get("shape", ())],
                                    "dtype": _dtype_code(body.get("dtype")),
                                    "rawmagic": _dim(raw)}})
    return repr(items)


def _jsonable(value: Any) -> Any:
    """`value` with tuples/sets as lists, non-string keys as strings, numpy scalars as Python."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_jsonable(v) for v in value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _exact(x: float) -> int | float:
    if type(x) is int:
        return x
    f = float(x)
    return int(x) if f.is_integer() else f


def _sort_key(run: TaskRun) -> tuple:
    t = run.task
    return (t.window, t.instance, t.call, t.id)


def _execution_hints(result: SimResult) -> dict[tuple[int, str], str]:
    """PyPTO's execution hint per (root function, leaf): average, max and min duration in us."""
    groups: dict[tuple[int, str], list[TaskRun]] = defaultdict(list)
    for run in sorted(result.tasks, key=_sort_key):
        groups[(run.task.root_index, run.task.leaf)].append(run)
    hints = {}
    for key, runs in groups.items():
        durs = [result.us(r.end - r.start) for r in runs]
        hi = max(range(len(runs)), key=lambda i: durs[i])      # first of ties, in task order
        lo = min(range(len(runs)), key=lambda i: durs[i])

        def ref(r: TaskRun) -> str:
            return f"[{r.task.window}-{r.task.instance}-{r.task.call}]"
        hints[key] = (f"Average Execution Time: {sum(durs) / len(durs)}\n"
                      f"Max Execution Time: {durs[hi]}, Task: {ref(runs[hi])}\n"
                      f"Min Execution Time: {durs[lo]}, Task: {ref(runs[lo])}\n")
    return hints


def _task_args(result: SimResult, run: TaskRun, hint: str,
               operand_hint: Any = _operand_hint) -> dict[str, Any]:
    t = run.task
    tid = task_id(t.instance, t.call)
    return {
        "event-hint": (f"Task:[{t.window}-{t.instance}-{t.call}], rootHash:{stable_hash(t.root)}, "
                       f"callOpMagic:{_MAGIC_BASE + t.call}, leafHash:{stable_hash(t.leaf)}, "
                       f"TaskId:{tid}"),
        "ioperand-hint": operand_hint(t.inputs),
        "ooperand-hint": operand_hint(t.outputs),
        "execution-hint": hint,
        "color": t.label,
        "taskId": tid,
        "seqNo": t.window,
        # OpenPTO extensions
        "leaf": t.leaf,
        "root": t.root,
        "window": t.window,
        "instance": t.instance,
        "call": t.call,
        "core_type": t.core,
        "core_index": run.core_index,
        "merge": _jsonable(t.merge),
        "cost": {"mte2_bytes": _exact(t.mte2_bytes), "mte1_bytes": _exact(t.mte1_bytes),
                 "vector_cycles": _exact(t.vector_cycles), "cube_cycles": _exact(t.cube_cycles),
                 "mte3_bytes": _exact(t.mte3_bytes), "empty": t.empty},
        "l2_hit_bytes": _exact(run.l2_hit_bytes),
        "hbm_bytes": _exact(run.hbm_bytes),
        "gm_reads": [[sid, list(off), list(ext), _exact(nbytes)] for (sid, off, ext), nbytes
                     in zip(t.reads, _access_bytes(t.reads, t.read_layouts))],
        "sim_task_id": t.id,
        "start_cycle": _exact(run.start),
        "end_cycle": _exact(run.end),
    }


def _access_bytes(accesses: list, layouts: list) -> list[float]:
    """Bytes of each GM access box (extent product x element size; 0 when no layout)."""
    out = []
    for i, (_, _, ext) in enumerate(accesses):
        n = 1
        for e in ext:
            n *= int(e)
        out.append(n * layouts[i][1] if i < len(layouts) else 0)
    return out


def _x_event(args: dict, name: str, tid: int, ts: float, dur: float) -> dict[str, Any]:
    return {"args": args, "cat": "event", "id": 0, "name": name, "ph": "X", "pid": 1,
            "tid": tid, "ts": ts, "dur": dur}


def _ready_times(result: SimResult) -> dict[int, float]:
    """Cycle at which each task became ready (see the module docstring)."""
    by_id = {r.task.id: r for r in result.tasks}
    window_first: dict[int, float] = {}
    for r in result.tasks:
        w = r.task.window
        window_first[w] = min(window_first.get(w, r.start), r.start)
    preds: dict[int, set[int]] = defaultdict(set)
    for p, s in result.flows:
        preds[s].add(p)
    ready = {}
    for r in result.tasks:
        given = getattr(r, "ready", None)
        if given is not None:
            ready[r.task.id] = float(given)
            continue
        ends = [by_id[p].end for p in preds[r.task.id] | set(r.task.preds) if p in by_id]
        ready[r.task.id] = min(max(ends), r.start) if ends else window_first[r.task.window]
    return ready


def _step_counter(name: str,
                  changes: Iterable[tuple[float, int]]) -> list[tuple[float, int, str, int]]:
    """Samples (cycle, order, name, value) of a counter driven by +/- changes, one per change
    of value; changes at the same cycle are netted."""
    net: dict[float, int] = defaultdict(int)
    for t, d in changes:
        net[t] += d
    out, value = [], 0
    for t in sorted(net):
        if net[t]:
            value += net[t]
            out.append((t, 0, name, value))
    return out


def _counters(result: SimResult) -> list[dict[str, Any]]:
    ready = _ready_times(result)
    kinds = sorted({r.task.core for r in result.tasks})
    samples = []
    ready_changes: dict[str, list[tuple[float, int]]] = {k: [] for k in kinds}
    busy_changes: dict[str, list[tuple[float, int]]] = {k: [] for k in kinds}
    for r in result.tasks:
        ready_changes[r.task.core] += [(ready[r.task.id], 1), (r.start, -1)]
        busy_changes[r.task.core] += [(r.start, 1), (r.end, -1)]
    order = {"ReadyCount_AIV": 0, "ReadyCount_AIC": 1, "ReadyCount_Total": 2,
             "BusyCount_AIV": 3, "BusyCount_AIC": 4}
    for k in kinds:
        samples += _step_counter(f"ReadyCount_{k}", ready_changes[k])
        samples += _step_counter(f"BusyCount_{k}", busy_changes[k])
    if kinds:
        total = [c for k in kinds for c in ready_changes[k]]
        samples += _step_counter("ReadyCount_Total", total)
    samples.sort(key=lambda s: (s[0], order.get(s[2], 9)))
    return [{"name": name, "pid": 1, "tid": _COUNTER_TID, "ph": "C", "ts": result.us(t),
             "args": {"size": v}} for t, _, name, v in samples]


FlowPair = tuple[int, int, float, int, float]     # flow id, s tid, s ts, f tid, f ts


def swimlane_events(result: SimResult) -> dict[str, Any]:
    """The swimlane of `result` as the JSON object `write_swimlane` writes."""
    head, flows, counters, other = swimlane_parts(result)
    events = head
    for fid, p_tid, p_ts, s_tid, s_ts in flows:
        events.append({"cat": FLOW_NAME, "id": fid, "name": FLOW_NAME, "ph": "s", "pid": 1,
                       "tid": p_tid, "ts": p_ts})
        events.append({"bp": "e", "cat": FLOW_NAME, "id": fid, "name": FLOW_NAME, "ph": "f",
                       "pid": 1, "tid": s_tid, "ts": s_ts})
    return {"traceEvents": events + counters, "otherData": other}


def swimlane_parts(result: SimResult) -> tuple[list[dict], list[FlowPair], list[dict], dict]:
    """`swimlane_events` in parts: the M and X events, each flow's s/f pair as a tuple, the C
    events and otherData. NOTE: a run has ten flows per task; `write_run` writes and parses the
    tuples without building two event dicts per flow."""
    meta = [{"args": {"name": PROCESS_NAME}, "cat": "__metadata", "name": "process_name",
             "ph": "M", "pid": 1}]

    def lane(number: int, name: str) -> None:
        meta.append({"args": {"name": name}, "cat": "__metadata", "name": "thread_name",
                     "ph": "M", "pid": 1, "tid": lane_tid(number)})
    for i in range(result.aic):
        lane(*_core_lane(result, "AIC", i))
    for i in range(result.aiv):
        lane(*_core_lane(result, "AIV", i))
    # thread 0 (control) and every scheduler thread the stats announce, idle or not
    sched = int(result.stats.get("sched_threads", 0) or 0)
    threads = sorted({a.thread for a in result.aicpu} | (set(range(sched + 1)) if sched else set()))
    first_cpu = result.aic + result.aiv + 1
    for th in threads:
        lane(first_cpu + th, aicpu_lane_name(th))

    hints = _execution_hints(result)
    # NOTE: the executor hands every instance of a call op the same operand lists, so their
    # hint string is built once per list (keyed by identity: `result` keeps the lists alive)
    operand_hints: dict[int, str] = {}

    def operand_hint(ops: list[dict[str, Any]]) -> str:
        text = operand_hints.get(id(ops))
        if text is None:
            text = operand_hints[id(ops)] = _operand_hint(ops)
        return text
    xs: list[tuple[tuple, dict]] = []
    ends: dict[int, tuple[int, float, float]] = {}      # task id -> (tid, start us, end us)
    for run in result.tasks:
        t = run.task
        n, _ = _core_lane(result, t.core, run.core_index)
        ts, dur = result.us(run.start), result.us(run.end - run.start)
        name = f"{t.window}-{t.instance}-{t.call}-{t.root_index}-{t.leaf_index}({t.label})"
        args = _task_args(result, run, hints[(t.root_index, t.leaf)], operand_hint)
        event = _x_event(args, name, lane_tid(n), ts, dur)
        xs.append(((lane_tid(n), run.start, run.end, t.id), event))
        ends[t.id] = (lane_tid(n), ts, ts + dur)
    for a in result.aicpu:
        tid = lane_tid(first_cpu + a.thread)
        args = {"event-hint": f"{aicpu_lane_name(a.thread)}: {a.name}", "color": "",
                **{str(key): _jsonable(v) for key, v in sorted(a.args.items())},
                "thread": a.thread, "start_cycle": _exact(a.start), "end_cycle": _exact(a.end)}
        event = _x_event(args, a.name, tid, result.us(a.start), result.us(a.end - a.start))
        # ties (same thread and times) are broken by content, never by input order
        xs.append(((tid, a.start, a.end, json.dumps(event, sort_keys=True)), event))
    xs.sort(key=lambda item: item[0])
    events = meta + [x for _, x in xs]
    for i, (_, x) in enumerate(xs):
        x["id"] = i

    next_id = len(xs)
    flows: list[FlowPair] = []
    for pred, succ in sorted(set(result.flows)):
        if pred not in ends or succ not in ends:
            continue
        p_tid, p_start, p_end = ends[pred]
        s_tid, s_start, _ = ends[succ]
        lead = min(_FLOW_LEAD_US, (p_end - p_start) / 2)
        flows.append((next_id, p_tid, p_end - lead, s_tid, s_start))
        next_id += 1
    # NOTE: imported here, not at module level: the runtime imports this module while the
    # `pypto` package itself may still be initialising.
    from pypto import __version__
    return events, flows, _counters(result), {
        "generator": f"openpto {__version__}", "kernel": result.kernel,
        "clock_mhz": result.clock_mhz, "aic": result.aic, "aiv": result.aiv}


def write_swimlane(result: SimResult, path: str | os.PathLike, indent: int | None = None) -> Path:
    """Write `result` as `merged_swimlane.json` at `path` (parents created); returns the path.

    By default one event per line (grep- and diff-friendly, half the size of PyPTO's
    `indent=4` files and three times faster to write); `indent=4` reproduces PyPTO's
    formatting. Both are the same JSON document.
    """
    if indent is not None:
        return write_trace(swimlane_events(result), path, indent)
    return write_parts(swimlane_parts(result), path)


def write_parts(parts: tuple[list[dict], list[FlowPair], list[dict], dict],
                path: str | os.PathLike) -> Path:
    """Write `swimlane_parts` as `write_swimlane` writes `swimlane_events`; returns the path."""
    head, flows, counters, other = parts
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = list(map(_event_json, head))
    # the text of json.dumps of the s and f dicts swimlane_events builds
    s_fmt = (f'{{{{"cat": {_FLOW_JSON}, "id": {{}}, "name": {_FLOW_JSON}, "ph": "s", '
             f'"pid": 1, "tid": {{}}, "ts": {{}}}}}},\n'
             f'{{{{"bp": "e", "cat": {_FLOW_JSON}, "id": {{}}, "name": {_FLOW_JSON}, '
             f'"ph": "f", "pid": 1, "tid": {{}}, "ts": {{}}}}}}')
    lines += [s_fmt.format(fid, p_tid, _num(p_ts), fid, s_tid, _num(s_ts))
              for fid, p_tid, p_ts, s_tid, s_ts in flows]
    lines += map(_event_json, counters)
    events = ",\n".join(lines)
    text = f'{{"traceEvents": [\n{events}\n], "otherData": {json.dumps(other)}}}'
    path.write_text(text + "\n")
    return path


def write_trace(doc: dict[str, Any], path: str | os.PathLike, indent: int | None = None) -> Path:
    """Write a `swimlane_events` object as `write_swimlane` does; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if indent is not None:
        text = json.dumps(doc, indent=indent)
    else:
        events = ",\n".join(map(_event_json, doc["traceEvents"]))
        text = (f'{{"traceEvents": [\n{events}\n], '
                f'"otherData": {json.dumps(doc["otherData"])}}}')
    path.write_text(text + "\n")
    return path


def _num(v: Any) -> str:
    """`json.dumps(v)` of a number, without the encoder's per-call setup for finite floats."""
    # NOTE: x - x is 0.0 only for finite x; NaN and infinities go through json (NaN, Infinity)
    if type(v) is float and v - v == 0.0:
        return float.__repr__(v)
    return json.dumps(v)


_FLOW_JSON = json.dumps(FLOW_NAME)
_S_KEYS = ("cat", "id", "name", "ph", "pid", "tid", "ts")
_F_KEYS = ("bp", "cat", "id", "name", "ph", "pid", "tid", "ts")
_C_KEYS = ("name", "pid", "tid", "ph", "ts", "args")
_name_json = functools.lru_cache(maxsize=64)(json.dumps)     # the few counter names


def _event_json(e: dict[str, Any]) -> str:
    """`json.dumps(e)`. NOTE: flow and counter events (most of a trace's events) have a fixed
    shape (the dicts `swimlane_events` builds) and are formatted directly, which is several
    times faster than the encoder and gives the same text; anything else goes through json."""
    ph = e.get("ph")
    if ph == "s" or ph == "f":
        if tuple(e) == (_S_KEYS if ph == "s" else _F_KEYS) and e["cat"] == FLOW_NAME \
                and e["name"] == FLOW_NAME and e.get("bp", "e") == "e" and e["pid"] == 1 \
                and type(e["id"]) is int and type(e["tid"]) is int:
            head = '{"bp": "e", ' if ph == "f" else "{"
            return (f'{head}"cat": {_FLOW_JSON}, "id": {e["id"]}, "name": {_FLOW_JSON}, '
                    f'"ph": "{ph}", "pid": 1, "tid": {e["tid"]}, "ts": {_num(e["ts"])}}}')
    elif ph == "C":
        args = e.get("args")
        if tuple(e) == _C_KEYS and type(args) is dict and e["pid"] == 1 \
                and type(e["tid"]) is int and type(e["name"]) is str and len(args) == 1 and type(args.get("size")) is int:
            return (f'{{"name": {_name_json(e["name"])}, "pid": 1, "tid": {e["tid"]}, '
                    f'"ph": "C", "ts": {_num(e["ts"])}, "args": {{"size": {args["size"]}}}}}')
    return json.dumps(e)


# ----------------------------------------------------------------------------------------------
# reader
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Lane:
    """One thread of the trace. `kind` is aic / aiv / hub / fake / aicpu / other."""

    tid: int
    name: str
    kind: str
    number: int | None          # the lane number in the name (AIC_3 -> 3), if any


@dataclass(frozen=True, slots=True)
class TaskEvent:
    """One X event (times in us); `index` is its position in `SwimlaneData.tasks`/`.aicpu`."""

    index: int
    id: int
    lane: int                   # tid
    name: str
    start: float
    dur: float
    args: dict[str, Any]

    @property
    def end(self) -> float:
        return self.start + self.dur

    @property
    def task_id(self) -> int | None:
        return self.args.get("taskId")

    @property
    def label(self) -> str:
        m = _TASK_NAME.match(self.name)
        return m.group(6) if m else self.args.get("color", "")

    @property
    def fields(self) -> tuple[int, int, int, int, int] | None:
        """(seqNo, instance, task index, d, psgId) parsed from a PyPTO-style name."""
        m = _TASK_NAME.match(self.name)
        return tuple(int(m.group(i)) for i in range(1, 6)) if m else None


@dataclass(frozen=True, slots=True)
class Flow:
    """One dependency edge: `src`/`dst` index `SwimlaneData.tasks` (None if not matched)."""

    id: int
    src_lane: int
    src_ts: float
    dst_lane: int
    dst_ts: float
    src: int | None
    dst: int | None


@dataclass
class SwimlaneData:
    """A parsed swimlane: lanes by tid, task X events, AICPU X events, flows, counters."""

    lanes: dict[int, Lane]
    tasks: list[TaskEvent]
    aicpu: list[TaskEvent]
    flows: list[Flow]
    counters: dict[str, list[tuple[float, float]]]
    process: str = PROCESS_NAME
    other: dict[str, Any] = field(default_factory=dict)     # top-level otherData

    @property
    def generator(self) -> str:
        return str(self.other.get("generator", "pypto"))

    @property
    def clock_mhz(self) -> float:
        return float(self.other.get("clock_mhz", PYPTO_CLOCK_MHZ))

    def lanes_of(self, *kinds: str) -> list[Lane]:
        return [ln for tid, ln in sorted(self.lanes.items()) if ln.kind in kinds]

    def tasks_of(self, *kinds: str) -> list[TaskEvent]:
        return [t for t in self.tasks if self.lanes[t.lane].kind in kinds]

    def preds(self) -> dict[int, list[int]]:
        """Task index -> indices of its predecessors, from the matched flows."""
        out: dict[int, list[int]] = defaultdict(list)
        for f in self.flows:
            if f.src is not None and f.dst is not None:
                out[f.dst].append(f.src)
        return out


def _classify(tid: int, name: str) -> Lane:
    for kind, pattern in _LANE_KINDS:
        m = pattern.match(name)
        if m:
            digits = m.group(1)
            return Lane(tid, name, kind, int(digits) if digits.isdigit() else None)
    return Lane(tid, name, "other", None)


class _LaneIndex:
    """Tasks of each lane sorted by start, to place flow ends on their slices."""

    def __init__(self, tasks: list[TaskEvent]):
        self.by_lane: dict[int, list[TaskEvent]] = defaultdict(list)
        for t in tasks:
            self.by_lane[t.lane].append(t)
        for lst in self.by_lane.values():
            lst.sort(key=lambda t: (t.start, t.index))
        self.starts = {k: [t.start for t in v] for k, v in self.by_lane.items()}
        self.ends = {k: [t.end for t in v] for k, v in self.by_lane.items()}
        # the latest end among the lane's first i+1 tasks: once it is before ts - tol, no
        # earlier task can enclose ts, so the backward scan stops there
        self.max_end: dict[int, list[float]] = {}
        for k, ends in self.ends.items():
            run, acc = float("-inf"), []
            for e in ends:
                run = e if e > run else run
                acc.append(run)
            self.max_end[k] = acc

    def enclosing(self, lane: int, ts: float, tol: float) -> int | None:
        """The latest-starting task on `lane` with start - tol <= ts <= end + tol (among the 64
        latest-starting tasks that start by ts + tol; ties in distance to the end: the later
        starting one)."""
        starts = self.starts.get(lane)
        if not starts:
            return None
        lst, ends, max_end = self.by_lane[lane], self.ends[lane], self.max_end[lane]
        i = bisect.bisect_right(starts, ts + tol)
        best, best_d = None, 0.0
        for j in range(i - 1, max(0, i - 64) - 1, -1):
            end = ends[j]
            if starts[j] - tol <= ts <= end + tol:
                d = abs(end - ts)
                if best is None or d < best_d:
                    best, best_d = j, d
            elif max_end[j] + tol < ts:
                break
        return lst[best].index if best is not None else None

    def starting(self, lane: int, ts: float, tol: float) -> int | None:
        """The task on `lane` that starts at `ts` (nearest within tol), else one enclosing ts."""
        starts = self.starts.get(lane, [])
        i = bisect.bisect_left(starts, ts - tol)
        if i < len(starts) and abs(starts[i] - ts) <= tol:
            return self.by_lane[lane][i].index
        return self.enclosing(lane, ts, tol)


def parse_swimlane(obj: dict[str, Any] | Iterable[dict[str, Any]]) -> SwimlaneData:
    """Parse a trace object (`{"traceEvents": [...]}`) or its events (a list, or any iterable:
    `toolkit.trace` streams them from the file one at a time).

    NOTE: each X event becomes its `TaskEvent` as it arrives, so a streamed trace never holds
    its raw event dicts next to the tasks built from them. A task goes to `tasks` or `aicpu` by
    its lane's kind, known once the lane's `thread_name` event has been seen (PyPTO and we write
    them first); in the rare file that declares (or redeclares) a lane after its first X event,
    the tasks are re-sorted into file order at the end.
    """
    events = obj.get("traceEvents", []) if isinstance(obj, dict) else obj
    other = obj.get("otherData", {}) if isinstance(obj, dict) else {}
    lanes: dict[int, Lane] = {}
    process = PROCESS_NAME
    starts, finishes = {}, {}
    counters: dict[str, list[tuple[float, float]]] = defaultdict(list)
    tasks: list[TaskEvent] = []
    cpu: list[TaskEvent] = []
    order: list[tuple[int, bool, TaskEvent]] = []   # (tid, has an id, task) in file order
    placed: set[int] = set()                        # tids whose X events were filed already
    late = False                # an X event came before (or its lane changed after) it was filed
    for e in events:
        ph = e.get("ph")
        # NOTE: flow ends are most of a trace's events: tested first
        if ph == "s":
            starts[e["id"]] = (e.get("tid"), e.get("ts"))
        elif ph == "f":
            finishes[e["id"]] = (e.get("tid"), e.get("ts"))
        elif ph == "X":
            tid = int(e.get("tid", 0))
            lane = lanes.get(tid)
            if lane is None:
                late = True
                dest = tasks
            else:
                placed.add(tid)
                dest = cpu if lane.kind == "aicpu" else tasks
            task = TaskEvent(len(dest), int(e.get("id", len(dest))), tid, str(e.get("name", "")),
                             float(e.get("ts", 0.0)), float(e.get("dur", 0.0)),
                             dict(e.get("args", {})))
            dest.append(task)
            order.append((tid, "id" in e, task))
        elif ph == "M":
            if e.get("name") == "thread_name":
                tid = int(e["tid"])
                lanes[tid] = _classify(tid, str(e.get("args", {}).get("name", tid)))
                late = late or tid in placed
            elif e.get("name") == "process_name":
                process = str(e.get("args", {}).get("name", process))
        elif ph == "C":
            for key, value in e.get("args", {}).items():
                name = e["name"] if key == "size" else f"{e['name']}.{key}"
                counters[name].append((float(e["ts"]), float(value)))
    for tid, _, _ in order:
        if tid not in lanes:
            lanes[tid] = Lane(tid, str(tid), "other", None)
    if late:
        tasks, cpu = [], []
        for tid, has_id, t in order:
            dest = cpu if lanes[tid].kind == "aicpu" else tasks
            dest.append(TaskEvent(len(dest), t.id if has_id else len(dest), tid, t.name,
                                  t.start, t.dur, t.args))
    del order
    pairs = ((fid, s_tid, s_ts, *finishes[fid]) for fid, (s_tid, s_ts) in starts.items()
             if fid in finishes)                    # file order of the s events
    flows = _match_flows(tasks, pairs)
    return SwimlaneData(lanes, tasks, cpu, flows, dict(counters), process, dict(other))


def _match_flows(tasks: list[TaskEvent], pairs: Iterable[tuple]) -> list[Flow]:
    """Flows of (id, s tid, s ts, f tid, f ts) pairs, each end placed on its task's slice."""
    index = _LaneIndex(tasks)
    tol = 2 * _FLOW_LEAD_US
    flows = []
    # NOTE: a task with k successors (predecessors) has k flow ends at one (lane, time): each
    # distinct end is looked up once
    srcs: dict[tuple[int, float], int | None] = {}
    dsts: dict[tuple[int, float], int | None] = {}
    for fid, s_tid, s_ts, f_tid, f_ts in pairs:
        s_tid, s_ts, f_tid, f_ts = int(s_tid), float(s_ts), int(f_tid), float(f_ts)
        key = (s_tid, s_ts)
        src = srcs[key] if key in srcs else srcs.setdefault(key, index.enclosing(s_tid, s_ts, tol))
        key = (f_tid, f_ts)
        dst = dsts[key] if key in dsts else dsts.setdefault(key, index.starting(f_tid, f_ts, 1e-9))
        flows.append(Flow(fid, s_tid, s_ts, f_tid, f_ts, src, dst))
    return flows


def swimlane_data(parts: tuple[list[dict], list[FlowPair], list[dict], dict]) -> SwimlaneData:
    """`parse_swimlane` of the trace `swimlane_parts` describes, without its flow dicts."""
    head, flows, counters, other = parts
    data = parse_swimlane({"traceEvents": head + counters, "otherData": other})
    data.flows = _match_flows(data.tasks, flows)
    return data


def read_swimlane(path: str | os.PathLike) -> SwimlaneData:
    """Read a `merged_swimlane.json` written by us or by PyPTO."""
    with open(path) as f:
        return parse_swimlane(json.load(f))


# ----------------------------------------------------------------------------------------------
# PyPTO's stdout summary
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SwimlaneSummary:
    """The numbers `draw_swim_lane.py` prints after a simulated call (times in us)."""

    total_core: int             # core + HUB lanes (PyPTO: lane count - 1, the Fake Core)
    task_count: int             # X events on task lanes (HUB and fake tasks included)
    fake_task_count: int
    e2e_us: float               # last end - first start over AIC/AIV tasks
    utilization_pct: float      # sum of AIC/AIV durations / (AIC+AIV lanes x E2E)
    core_lanes: int


def summarize(data: SwimlaneData) -> SwimlaneSummary:
    cores = data.tasks_of("aic", "aiv")
    n_core = len(data.lanes_of("aic", "aiv"))
    e2e = max(t.end for t in cores) - min(t.start for t in cores) if cores else 0.0
    busy = sum(t.dur for t in cores)
    util = 100.0 * busy / (n_core * e2e) if n_core and e2e > 0 else 0.0
    return SwimlaneSummary(len(data.lanes_of("aic", "aiv", "hub")), len(data.tasks),
                           len(data.tasks_of("fake")), e2e, util, n_core)


def format_summary(s: SwimlaneSummary, output: str | os.PathLike | None = None) -> str:
    """PyPTO's stdout block for `s` (without the trailing "Time taken" line)."""
    lines = [f"Total Core:{s.total_core}", f"Total Task Count:{s.task_count}",
             f"|--Fake Task Count:{s.fake_task_count}",
             "-------- AICORE Prof Summary --------",
             f"AICore End-to-End Time: {s.e2e_us:.2f}",
             f"AICore Utilization:     {s.utilization_pct:.2f}%"]
    if output is not None:
        lines.append(f"Output:  {os.path.abspath(output)}")
    return "\n".join(lines) + "\n"
