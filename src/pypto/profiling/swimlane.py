"""The swimlane: one simulated run as a Chrome trace in PyPTO's `merged_swimlane.json` layout.

What the file holds (below), the encodings of its fields and how the reader restores what our
files share (`restore_args`, on the parsed columns); plus PyPTO's stdout summary (task count,
AICore end-to-end time, AICore utilisation) of a parsed file. The parsed form (`SwimlaneData`,
read by `swimlane_reader` from a file written by us or by PyPTO 0.2.0 itself) is
`swimlane_data`'s, importable from here.
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
  sampled when they change (PyPTO also writes their sum, `ReadyCount_Total`: see below); and
  ours, `SchedOverhead_AIV` / `SchedOverhead_AIC` (a Perfetto track each): the cores of that
  type idle while ready tasks of that type waited, min(idle cores, ReadyCount), sampled when it
  changes (`overhead_counters`; none while it stays 0). At one time: ReadyCount_AIV,
  ReadyCount_AIC, SchedOverhead_AIV, SchedOverhead_AIC.
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
* `lines` (only when the writer was given them): per leaf function its source lines and
  their shares of its task time, by cost term, `{leaf: [[file, line, {term: share}], ...]}`
  (`runtime.line_shares`, which states the attribution rule); no event refers to it.
* `ReadyCount_Total`, the sum of `ReadyCount_AIV` and `ReadyCount_AIC` (`restore_counters`).
* No `BusyCount_*` counters (cores running a task): the X slices show it.

A task's ready time (for `ReadyCount_*`) is `TaskRun.ready` when the simulator sets one, else
the end of its last predecessor, else (no predecessor) the first task start of its window.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import Any

import numpy as np

from pypto.dtypes import DataType
from pypto.machine.result import SimResult
# the parsed form, importable from here as before
from pypto.profiling.swimlane_data import PROCESS_NAME as PROCESS_NAME
from pypto.profiling.swimlane_data import PYPTO_CLOCK_MHZ as PYPTO_CLOCK_MHZ
from pypto.profiling.swimlane_data import Flow as Flow
from pypto.profiling.swimlane_data import Lane as Lane
from pypto.profiling.swimlane_data import SwimlaneData as SwimlaneData
from pypto.profiling.swimlane_data import TaskEvent as TaskEvent
from pypto.profiling.swimlane_data import classify_lane as classify_lane
from pypto.profiling.swimlane_data import lane_values as lane_values
from pypto.profiling.swimlane_data import name_fields as name_fields
from pypto.profiling.swimlane_data import name_parts as name_parts
from pypto.profiling.swimlane_data import task_fields as task_fields
from pypto.profiling.swimlane_data import task_label as task_label
from pypto.profiling.swimlane_data import task_labels as task_labels
from pypto.profiling.trace_columns import (ABSENT, ArgColumns, EventColumns, object_array, pick,
                                           renumbered)

FLOW_NAME = "machine-view-last-dep"
_TID_BASE = 1000
COUNTER_TID = 1
MAGIC_BASE = 10000             # callOpMagic = base + call index (PyPTO's magics start at 10000)

_JSON_SCALARS = frozenset((str, int, float, bool, type(None)))
# a time (ts or dur, us) beyond this is not a trace's: ~11.6 days, while a kernel runs for ms
MAX_TIME_US = 1e12
_SCHED_LANE = re.compile(r"^AICPU_SCHED_([1-9]\d*)$")
# our files: the otherData key of the shared args; the task args restored from the event's
# name, seqNo and lane and the function tables (inserted after seqNo, in this order); the task
# args written as an index into a table of values
SHARED_ARGS = "shared_args"
DERIVED_ARGS = ("leaf", "root", "window", "instance", "call", "core_type")
TABLE_ARGS = ("merge", "cost")
ITEM_TABLE_ARGS = ("gm_reads",)         # a list of indices into a table of items
_DERIVED_SET = frozenset(DERIVED_ARGS)
# the shared table of each leaf function's source lines and their shares of its task time
# (`runtime.line_shares`; read by `toolkit.analyses.by_line`, not restored into any event)
LINES_TABLE = "lines"


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


def derived_column(key: str, fields: list[tuple[int, ...] | None], seq_no: list[Any],
                   core: list[str | None], tables: dict[str, Any]) -> list[Any]:
    """The value of `DERIVED_ARGS` key `key` of each task: `fields` parsed from its name, its
    `seqNo` arg, its lane's core type ("AIC", "AIV" or None) and the `SHARED_ARGS` tables;
    `ABSENT` where they do not give it."""
    missing = ABSENT
    if key == "window":
        return [v if type(v) is int else missing for v in seq_no]
    if key == "core_type":
        return [c or missing for c in core]
    if key in ("instance", "call"):
        at = 1 if key == "instance" else 2
        return [missing if f is None else f[at] for f in fields]
    table = tables.get(key)
    if type(table) is not dict:
        return [missing] * len(fields)
    at = key == "root"
    # NOTE: a few functions, many tasks: each (root, leaf) index is looked up once
    names = {p: table.get(function_keys((0, 0, 0) + p)[at])
             for p in {(f[3], f[4]) for f in fields if f is not None}}
    names = {p: missing if name is None else name for p, name in names.items()}
    names[None] = missing
    return [names[None if f is None else (f[3], f[4])] for f in fields]


def _from_table(value: Any, table: list, items: bool) -> Any:
    """A `TABLE_ARGS` value (`items`: an `ITEM_TABLE_ARGS` one) as the table gives it; a value
    that is no index (list of indices) into it is kept."""
    n = len(table)
    if not items:
        return table[value] if type(value) is int and 0 <= value < n else value
    if type(value) is not list or not all(type(i) is int and 0 <= i < n for i in value):
        return value
    return [table[i] for i in value]


def _from_table_column(values: list, table: list, items: bool) -> list:
    """`_from_table` of each value. NOTE: when every value is a valid index (list of them),
    the usual case, they are looked up in C loops."""
    def valid(indices: list) -> bool:
        return set(map(type, indices)) <= {int} and \
            (not indices or 0 <= min(indices) and max(indices) < len(table))
    get = table.__getitem__
    if not items and valid(values):
        return list(map(get, values))
    if items and set(map(type, values)) == {list} and valid(list(chain.from_iterable(values))):
        return [list(map(get, v)) for v in values]
    return [_from_table(v, table, items) for v in values]


def restore_args(data: SwimlaneData) -> None:
    """Give each event of `data` back the args our writer left out or shared (see the module
    docstring), from `data.other[SHARED_ARGS]`; a trace without it (PyPTO's, or a file written
    before) is left as it is. NOTE: the keys are put in the writer's order, so a parsed file
    equals the run's columns it was written from; done on the columns, shape by shape."""
    tables = data.other.get(SHARED_ARGS)
    if type(tables) is not dict:
        return
    tasks, aicpu = data.task_columns, data.aicpu_columns
    data.set_columns(tasks.with_args(_restored_task_args(tasks, data.lanes, tables)),
                     aicpu.with_args(_restored_aicpu_args(aicpu, data.lanes)))
    restore_counters(data.counters)


def _restored_task_args(tasks: EventColumns, lanes: dict[int, Lane],
                        tables: dict[str, Any]) -> ArgColumns:
    """The args of the tasks that have a `seqNo` with the derived keys after it (each where
    written or derivable) and the table keys looked up; the other tasks' as they are."""
    args = tasks.args
    restored = [s for s, keys in enumerate(args.shapes) if "seqNo" in keys]
    if not restored:
        return args
    members = np.flatnonzero(np.isin(args.shape, restored))
    lists = {k: v for k, v in tables.items()
             if (k in TABLE_ARGS or k in ITEM_TABLE_ARGS) and type(v) is list}
    cores = {tid: ln.name.split("_")[0] for tid, ln in lanes.items() if ln.kind in ("aic", "aiv")}
    fields = pick(name_fields(tasks), members)
    seq_no = args.column("seqNo")[members].tolist()
    core = list(map(cores.get, tasks.lane[members].tolist()))
    columns = dict(args.columns)
    mask = np.zeros(len(members), dtype=np.int64)       # bit j: DERIVED_ARGS[j] is there
    for j, key in enumerate(DERIVED_ARGS):
        derived = derived_column(key, fields, seq_no, core, tables)
        if key in args.columns:             # written where the name, seqNo, ... do not give it
            derived = [g if w is ABSENT else w
                       for w, g in zip(args.column(key)[members].tolist(), derived)]
        values = object_array(derived, len(members))
        mask |= (values != ABSENT).astype(np.int64) << j
        column = columns[key] = args.column(key).copy()
        column[members] = values
    for key, table in lists.items():
        has = members[np.isin(args.shape[members],
                              [s for s in restored if key in args.shapes[s]])]
        if len(has):
            column = columns[key] = columns[key].copy()
            column[has] = object_array(_from_table_column(column[has].tolist(), table,
                                                          key in ITEM_TABLE_ARGS), len(has))
    # each restored task's shape: its keys but the derived, those after seqNo where there
    shape = args.shape.copy()
    combo = args.shape[members] * (1 << len(DERIVED_ARGS)) + mask
    shapes = list(args.shapes)
    for code in np.unique(combo).tolist():
        old, bits = divmod(code, 1 << len(DERIVED_ARGS))
        keys: list[str] = []
        for k in args.shapes[old]:
            if k not in _DERIVED_SET:
                keys.append(k)
            if k == "seqNo":
                keys += [d for j, d in enumerate(DERIVED_ARGS) if bits >> j & 1]
        shape[members[combo == code]] = len(shapes)
        shapes.append(tuple(keys))
    return _renumbered(args.n, shapes, shape, columns)


def _renumbered(n: int, shapes: list[tuple[str, ...]], shape: np.ndarray,
                columns: dict[str, np.ndarray]) -> ArgColumns:
    """ArgColumns with the shapes in order of first use and only the keys they hold."""
    shape, used = renumbered(shape)
    shapes = [shapes[s] for s in used]
    keys = dict.fromkeys(k for s in shapes for k in s)
    return ArgColumns(n, shapes, shape, {k: columns[k] for k in keys})


def _restored_aicpu_args(events: EventColumns, lanes: dict[int, Lane]) -> ArgColumns:
    """The AICPU events on an AICPU thread's lane without an `event-hint` get it, the `color`
    ("" unless written) and the lane's `thread`, in the writer's order."""
    args = events.args
    thread = lane_values(lanes, events.lane, lambda ln: aicpu_thread(ln.name), object)
    on_thread = lane_values(lanes, events.lane, lambda ln: aicpu_thread(ln.name) is not None,
                            bool)
    hinted = [s for s, keys in enumerate(args.shapes) if "event-hint" in keys]
    members = np.flatnonzero(~np.isin(args.shape, hinted) & on_thread)
    if not len(members):
        return args
    columns = dict(args.columns)
    names = pick(events.name, members)
    lane_names = lane_values(lanes, events.lane[members], lambda ln: ln.name, object).tolist()
    # NOTE: a few lanes and names: each hint made once, shared by the events that have it
    hint_of = {pair: f"{pair[0]}: {pair[1]}" for pair in set(zip(lane_names, names))}
    for key, values in (("event-hint", list(map(hint_of.__getitem__, zip(lane_names, names)))),
                        ("color", [v if v is not ABSENT else "" for v in
                                   args.column("color")[members].tolist()]
                         if "color" in args.columns else [""] * len(members)),
                        ("thread", thread[members].tolist())):
        column = columns[key] = args.column(key).copy()
        column[members] = object_array(values, len(values))
    shape = args.shape.copy()
    shapes = list(args.shapes)
    for old in np.unique(args.shape[members]).tolist():
        keys = args.shapes[old]
        shape[members[args.shape[members] == old]] = len(shapes)
        shapes.append(("event-hint", "color") + tuple(k for k in keys if k != "color")
                      + (() if "thread" in keys else ("thread",)))
    return _renumbered(args.n, shapes, shape, columns)


def restore_counters(counters: dict[str, list[tuple[float, float]]]) -> None:
    """Add `ReadyCount_Total` (one sample where the sum of the ReadyCount_AIV / _AIC samples
    changes, as PyPTO samples it) to `counters` that have those and not it."""
    parts = [counters[k] for k in ("ReadyCount_AIV", "ReadyCount_AIC") if k in counters]
    if not parts or "ReadyCount_Total" in counters:
        return
    # each part's change at each of its times (samples at one time add up, in order)
    series = [np.array(samples, dtype=np.float64).reshape(-1, 2) for samples in parts]
    times = np.unique(np.concatenate([ts_value[:, 0] for ts_value in series]))
    if (np.signbit(times) & (times == 0.0)).any():
        counters["ReadyCount_Total"] = _summed_series(parts)    # -0.0 and 0.0: one time
        return
    change = np.zeros(len(times))
    for ts_value in series:
        ts, value = ts_value[:, 0], ts_value[:, 1]
        part = np.zeros(len(times))
        np.add.at(part, np.searchsorted(times, ts), value - np.r_[0.0, value[:-1]])
        change = change + part
    moved = change != 0.0
    counters["ReadyCount_Total"] = list(zip(times[moved].tolist(),
                                            accumulate(change[moved].tolist())))


def _summed_series(parts: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """`restore_counters`'s total, one sample at a time."""
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
    return out


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


class TraceFormatError(ValueError):
    """An event of a trace that no reading can make sense of (a field of the wrong type);
    the message names the event and the field."""


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
    tasks = data.task_columns
    cores = data.on(tasks.lane, "aic", "aiv")
    n_core = len(data.lanes_of("aic", "aiv"))
    e2e = max(tasks.end[cores].tolist()) - min(tasks.start[cores].tolist()) \
        if cores.any() else 0.0
    busy = sum(tasks.dur[cores].tolist())
    util = 100.0 * busy / (n_core * e2e) if n_core and e2e > 0 else 0.0
    return SwimlaneSummary(len(data.lanes_of("aic", "aiv", "hub")), len(tasks),
                           int(data.on(tasks.lane, "fake").sum()), e2e, util, n_core)


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
