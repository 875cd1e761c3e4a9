"""The swimlane: one simulated run as a Chrome trace in PyPTO's `merged_swimlane.json` layout.

What the file holds (below), the encodings of its fields and the parsed form (`SwimlaneData`,
read by `swimlane_reader` from a file written by us or by PyPTO 0.2.0 itself); plus PyPTO's
stdout summary (task count, AICore end-to-end time, AICore utilisation) of a parsed file.
`run_columns` computes the events of a `machine.result.SimResult` (times in cycles; the
file's in microseconds, `cycles / clock_mhz`) and `swimlane_writer` writes them. Keeps: the
output is a pure function of the result (events sorted, ids serial, hashes from sha1 of
names), so two runs of the same kernel give byte-identical files.

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
* `s`/`f` flow pairs for every direct dependency (PyPTO writes every resolved edge; we leave
  out an edge another path implies, which keeps each task's last-finishing predecessor): `s`
  on the predecessor's lane 1 ns before its end (PyPTO: 0.0001 us; 1 ns is the resolution
  Perfetto reads, so `s` stays inside its slice and before the lane's next one), `f`
  (`bp: "e"`) on the successor's lane at its start; flow ids continue after the X ids; `name`
  "machine-view-last-dep" (chrome://tracing drops a flow without a name), no `cat` (PyPTO:
  the name again; optional in the Trace Event Format: Perfetto pairs s with f by id, cat and
  name, equal when absent).
* `C` counters on tid 1: `ReadyCount_AIV`, `ReadyCount_AIC` (only when cube tasks exist),
  sampled when they change (PyPTO also writes their sum, `ReadyCount_Total`: see below).
* event order: M, X by lane then start, s/f pairs, C; key order as in PyPTO's files.
* times (ts, dur) in whole ns (3 decimals of us; a cycle is 0.56 ns at 1.8 GHz): a slice's
  start and end are rounded, its dur is their difference, so its end is exact for any reader.

Our extensions (ignored by readers that only know PyPTO's keys):

* AICPU lanes after the core lanes, `AICPU_CTRL` (thread 0) and `AICPU_SCHED_<k>` (thread k),
  lane numbers `aic + aiv + 1 + thread`, holding one X event per `AicpuRun` (args: its own,
  between `event-hint` = "<lane>: <name>", `color` = "" and `thread`).
  Classify lanes by the full name (`AIC_<n>` vs `AICPU_...`), never by the prefix "AIC".
* extra task args, after PyPTO's: `leaf`, `root`, `window`, `instance`, `call`, `core_type`,
  `merge` (merge group ids), `cost` (the non-zero per-task cost-model inputs), `l2_hit_bytes`,
  `hbm_bytes`, `gm_reads` (`[storage, offsets, extents, bytes]` per GM read box: which block a
  task loads, for the toolkit's repeated-load analysis), `sim_task_id`. Cycles are ts x
  `clock_mhz`, to the ns.
* top-level `otherData` (a Trace Event Format field): generator, kernel, clock_mhz, aic, aiv,
  and `shared_args` (`SHARED_ARGS`), the tables of what the events share.

Shared args (the file is ~1.4 KB per task, 45 MB before for 9,344 tasks; PyPTO's 7 keys
stay on every task, the rest is written once): an event leaves out what `restore_args` gives
back, and the reader restores it, so a parsed file holds every key above, in that order.
* `DERIVED_ARGS`, written only where these do not give them: `window` = `seqNo`; `instance`,
  `call` from the task name; `core_type` from the lane (AIC_n / AIV_n); `leaf` and `root`
  from `shared_args.leaf` ("<root index>-<leaf index>" of the name → leaf) and
  `shared_args.root` ("<root index>" → root).
* `TABLE_ARGS` (`merge`, `cost`): the position of the value in `shared_args.<key>`;
  `ITEM_TABLE_ARGS` (`gm_reads`): a list of positions in `shared_args.gm_reads`.
* AICPU events: `event-hint`, `color` and `thread`, where they are the lane's.
* `ReadyCount_Total`, the sum of `ReadyCount_AIV` and `ReadyCount_AIC` (`restore_counters`).
* No `BusyCount_*` counters (cores running a task): the X slices show it.

A task's ready time (for `ReadyCount_*`) is `TaskRun.ready` when the simulator sets one, else
the end of its last predecessor, else (no predecessor) the first task start of its window.
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pypto.dtypes import DataType
from pypto.machine.result import SimResult

PROCESS_NAME = "Machine View"
FLOW_NAME = "machine-view-last-dep"
PYPTO_CLOCK_MHZ = 1800          # PyPTO's time_convert_denominator (swimlane_format.md section 1)
FLOW_LEAD_US = 1e-4            # PyPTO puts s this far before the predecessor's end (ours: 1 ns)
_TID_BASE = 1000
COUNTER_TID = 1
MAGIC_BASE = 10000             # callOpMagic = base + call index (PyPTO's magics start at 10000)

_LANE_KINDS = (("aic", re.compile(r"^AIC_(\d+)$")), ("aiv", re.compile(r"^AIV_(\d+)$")),
               ("hub", re.compile(r"^HUB_(\d+)$")), ("fake", re.compile(r"^Fake Core_(\d+)$")),
               ("aicpu", re.compile(r"^AICPU_?(\S*)$")))
_JSON_SCALARS = frozenset((str, int, float, bool, type(None)))
# a time (ts or dur, us) beyond this is not a trace's: ~11.6 days, while a kernel runs for ms
MAX_TIME_US = 1e12
_TASK_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)-(\d+)-(\d+)\((.*)\)$", re.S)
_SCHED_LANE = re.compile(r"^AICPU_SCHED_([1-9]\d*)$")
# our files: the otherData key of the shared args; the task args restored from the event's
# name, seqNo and lane and the function tables (inserted after seqNo, in this order); the task
# args written as an index into a table of values
SHARED_ARGS = "shared_args"
DERIVED_ARGS = ("leaf", "root", "window", "instance", "call", "core_type")
TABLE_ARGS = ("merge", "cost")
ITEM_TABLE_ARGS = ("gm_reads",)         # a list of indices into a table of items
_DERIVED_SET = frozenset(DERIVED_ARGS)
_NOT_DERIVED = object()


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


def task_fields(name: str) -> tuple[int, int, int, int, int] | None:
    """(seqNo, instance, task index, root index, psgId) of a PyPTO-style task name, or None."""
    m = _TASK_NAME.match(name)
    return (int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5])) if m else None


def task_label(name: str, args: dict[str, Any]) -> str:
    """The label of an X event: the bracket of a PyPTO-style name, else the `color` arg."""
    m = _TASK_NAME.match(name)
    return m.group(6) if m else args.get("color", "")


def task_labels(names: list[str], colors: list[Any], absent: Any = None) -> list[Any]:
    """`task_label` of each event from its name and its `color` arg (`absent` where it has
    none), with the names matched in C (map): many at once."""
    matches = list(map(_TASK_NAME.match, names))
    return [m.group(6) if m else "" if c is absent else c for m, c in zip(matches, colors)]


def aicpu_lane_name(thread: int) -> str:
    return "AICPU_CTRL" if thread == 0 else f"AICPU_SCHED_{thread}"


def aicpu_thread(lane_name: str) -> int | None:
    """The AICPU thread of an `aicpu_lane_name`, None for any other name."""
    if lane_name == "AICPU_CTRL":
        return 0
    m = _SCHED_LANE.match(lane_name)
    return int(m.group(1)) if m else None


# ----------------------------------------------------------------------------------------------
# shared args: what our files leave out of each event and the reader restores
# ----------------------------------------------------------------------------------------------

def function_keys(fields: tuple[int, ...]) -> tuple[str, str]:
    """(leaf, root) keys of the `SHARED_ARGS` function tables for a task whose name gives
    `fields` (seqNo, instance, task, root index, leaf index): "<root>-<leaf>" and "<root>"."""
    return f"{fields[3]}-{fields[4]}", str(fields[3])


def derived_arg(key: str, fields: tuple[int, ...] | None, seq_no: Any, core: str | None,
                tables: dict[str, Any]) -> Any:
    """The value of `DERIVED_ARGS` key `key` of a task: `fields` parsed from its name, its
    `seqNo` arg, its lane's core type ("AIC", "AIV" or None) and the `SHARED_ARGS` tables;
    `_NOT_DERIVED` when they do not give it."""
    if key == "window":
        return seq_no if type(seq_no) is int else _NOT_DERIVED
    if key == "core_type":
        return core or _NOT_DERIVED
    if fields is None:
        return _NOT_DERIVED
    if key == "instance":
        return fields[1]
    if key == "call":
        return fields[2]
    table = tables.get(key)
    name = table.get(function_keys(fields)[key == "root"]) if type(table) is dict else None
    return _NOT_DERIVED if name is None else name


def _from_table(value: Any, table: list, items: bool) -> Any:
    """A `TABLE_ARGS` value (`items`: an `ITEM_TABLE_ARGS` one) as the table gives it; a value
    that is no index (list of indices) into it is kept."""
    n = len(table)
    if not items:
        return table[value] if type(value) is int and 0 <= value < n else value
    if type(value) is not list or not all(type(i) is int and 0 <= i < n for i in value):
        return value
    return [table[i] for i in value]


def restore_args(data: SwimlaneData) -> None:
    """Give each event of `data` back the args our writer left out or shared (see the module
    docstring), from `data.other[SHARED_ARGS]`; a trace without it (PyPTO's, or a file written
    before) is left as it is. NOTE: each args dict is replaced by one in the writer's key
    order, so a parsed file equals the run's columns it was written from."""
    tables = data.other.get(SHARED_ARGS)
    if type(tables) is not dict:
        return
    lists = {k: v for k, v in tables.items()
             if (k in TABLE_ARGS or k in ITEM_TABLE_ARGS) and type(v) is list}
    cores = {tid: ln.name.split("_")[0] for tid, ln in data.lanes.items()
             if ln.kind in ("aic", "aiv")}
    set_args = TaskEvent.args.__set__
    for t in data.tasks:
        a = t.args
        if "seqNo" not in a:
            continue
        fields = task_fields(t.name)
        new = {}
        for k, v in a.items():
            if k in _DERIVED_SET:
                continue                        # placed after seqNo
            if k in lists:
                v = _from_table(v, lists[k], k in ITEM_TABLE_ARGS)
            new[k] = v
            if k == "seqNo":
                for d in DERIVED_ARGS:
                    v = a[d] if d in a else derived_arg(d, fields, a["seqNo"],
                                                        cores.get(t.lane), tables)
                    if v is not _NOT_DERIVED:
                        new[d] = v
        set_args(t, new)
    for e in data.aicpu:
        a = e.args
        lane = data.lanes.get(e.lane)
        thread = aicpu_thread(lane.name) if lane is not None else None
        if "event-hint" not in a and thread is not None:
            set_args(e, {"event-hint": f"{lane.name}: {e.name}", "color": "", **a,
                         "thread": thread})
    restore_counters(data.counters)


def restore_counters(counters: dict[str, list[tuple[float, float]]]) -> None:
    """Add `ReadyCount_Total` (one sample where the sum of the ReadyCount_AIV / _AIC samples
    changes, as PyPTO samples it) to `counters` that have those and not it."""
    parts = [counters[k] for k in ("ReadyCount_AIV", "ReadyCount_AIC") if k in counters]
    if not parts or "ReadyCount_Total" in counters:
        return
    steps: dict[float, list[float]] = defaultdict(lambda: [0.0] * len(parts))
    for i, samples in enumerate(parts):
        last = 0.0
        for ts, value in samples:
            steps[ts][i] += value - last
            last = value
    total, out = 0.0, []
    for ts in sorted(steps):
        change = sum(steps[ts])
        if change:
            total += change
            out.append((ts, total))
    counters["ReadyCount_Total"] = out


# ----------------------------------------------------------------------------------------------
# field encodings (the writer is `swimlane_writer`, over `run_columns`)
# ----------------------------------------------------------------------------------------------

def core_lane_number(result: SimResult, core: str, index: int) -> int:
    """The lane number of core `index` of type `core` ("AIC" or "AIV")."""
    return index + 1 if core == "AIC" else result.aic + index + 1


def core_lane(result: SimResult, core: str, index: int) -> tuple[int, str]:
    """(lane number, lane name) of core `index` of type `core`."""
    n = core_lane_number(result, core, index)
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


def operand_hint(ops: list[dict[str, Any]]) -> str:
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


def jsonable(value: Any) -> Any:
    """`value` with tuples/sets as lists, non-string keys as strings, numpy scalars as Python."""
    if type(value) in _JSON_SCALARS:         # the usual case, tested first
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def exact(x: float) -> int | float:
    if type(x) is int:
        return x
    f = float(x)
    return int(x) if f.is_integer() else f


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
        return task_label(self.name, self.args)

    @property
    def fields(self) -> tuple[int, int, int, int, int] | None:
        """(seqNo, instance, task index, d, psgId) parsed from a PyPTO-style name."""
        return task_fields(self.name)


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


class TraceFormatError(ValueError):
    """An event of a trace that no reading can make sense of (a field of the wrong type);
    the message names the event and the field."""


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
    # events left out for an unusable time (`bad_time`): reason -> count
    dropped: dict[str, int] = field(default_factory=dict)

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


def classify_lane(tid: int, name: str) -> Lane:
    for kind, pattern in _LANE_KINDS:
        m = pattern.match(name)
        if m:
            digits = m.group(1)
            return Lane(tid, name, kind, int(digits) if digits.isdigit() else None)
    return Lane(tid, name, "other", None)


class SliceIndex:
    """The X events of each lane sorted by start, to place flow ends on their slices. Events
    are given as columns (lane tid, start, end); the answers are positions in them."""

    def __init__(self, lanes: list[int], starts: list[float], ends: list[float]):
        by_lane: dict[int, list[int]] = defaultdict(list)
        for i, lane in enumerate(lanes):
            by_lane[lane].append(i)
        for lst in by_lane.values():
            lst.sort(key=lambda i: (starts[i], i))
        self.by_lane = dict(by_lane)
        self.starts = {k: [starts[i] for i in v] for k, v in by_lane.items()}
        self.ends = {k: [ends[i] for i in v] for k, v in by_lane.items()}
        # the latest end among the lane's first i+1 tasks: once it is before ts - tol, no
        # earlier task can enclose ts, so the backward scan stops there
        self.max_end: dict[int, list[float]] = {}
        for k, lane_ends in self.ends.items():
            run, acc = float("-inf"), []
            for e in lane_ends:
                run = e if e > run else run
                acc.append(run)
            self.max_end[k] = acc

    def source(self, lane: int, ts: float) -> int | None:
        """The task an `s` flow end at (lane, ts) leaves from."""
        return self._enclosing(lane, ts, 2 * FLOW_LEAD_US)

    def target(self, lane: int, ts: float) -> int | None:
        """The task an `f` flow end at (lane, ts) arrives at."""
        return self._starting(lane, ts, 1e-9)

    def _enclosing(self, lane: int, ts: float, tol: float) -> int | None:
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
        return lst[best] if best is not None else None

    def _starting(self, lane: int, ts: float, tol: float) -> int | None:
        """The task on `lane` that starts at `ts` (nearest within tol), else one enclosing ts."""
        starts = self.starts.get(lane, [])
        i = bisect.bisect_left(starts, ts - tol)
        if i < len(starts) and abs(starts[i] - ts) <= tol:
            return self.by_lane[lane][i]
        return self._enclosing(lane, ts, tol)


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
