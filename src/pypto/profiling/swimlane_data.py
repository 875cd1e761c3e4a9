"""The parsed swimlane: lanes, task and AICPU X events, flows and counters of one trace.

Takes what `swimlane_reader` reads (columns: `trace_columns`) or objects a caller builds
(`TaskEvent`, `Flow`) → a `SwimlaneData` that offers both: the toolkit reads the columns, older
callers the objects, each made on first use from the other. Also how a task's name and lane are
read (PyPTO's `seqNo-instance-task-rootIndex-psgId(label)`, `AIC_<n>` / `AIV_<n>` / ...), which
the objects and the columns share. The file layout and the shared args are `swimlane`'s.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from pypto.profiling.trace_columns import ABSENT, EventColumns, FlowColumns

PROCESS_NAME = "Machine View"
PYPTO_CLOCK_MHZ = 1800          # PyPTO's time_convert_denominator (swimlane_format.md section 1)
_LANE_KINDS = (("aic", re.compile(r"^AIC_(\d+)$")), ("aiv", re.compile(r"^AIV_(\d+)$")),
               ("hub", re.compile(r"^HUB_(\d+)$")), ("fake", re.compile(r"^Fake Core_(\d+)$")),
               ("aicpu", re.compile(r"^AICPU_?(\S*)$")))
_TASK_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)-(\d+)-(\d+)\((.*)\)$", re.S)


def task_fields(name: str) -> tuple[int, int, int, int, int] | None:
    """(seqNo, instance, task index, root index, psgId) of a PyPTO-style task name, or None."""
    m = _TASK_NAME.match(name)
    return (int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5])) if m else None


def name_parts(events: EventColumns) -> tuple[list[tuple[int, ...] | None], list[str | None]]:
    """(`task_fields`, the label in brackets) of each event's name, None where it is not a
    PyPTO-style name; kept with the columns (restore, identity and the viewer all want them).
    NOTE: matched in slices: a match object per name of 1M would hold ~100 MB at once."""
    def parse(e: EventColumns) -> tuple[list, list]:
        fields: list = []
        labels: list = []
        for at in range(0, len(e.name), 1 << 16):
            matches = list(map(_TASK_NAME.match, e.name[at:at + (1 << 16)]))
            fields += [(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5])) if m else None
                       for m in matches]
            labels += [m[6] if m else None for m in matches]
        return fields, labels
    return events.cached("name parts", parse)


def name_fields(events: EventColumns) -> list[tuple[int, int, int, int, int] | None]:
    """`task_fields` of each event's name."""
    return name_parts(events)[0]


def task_label(name: str, args: dict[str, Any]) -> str:
    """The label of an X event: the bracket of a PyPTO-style name, else the `color` arg."""
    m = _TASK_NAME.match(name)
    return m.group(6) if m else args.get("color", "")


def task_labels(events: EventColumns, colors: list[Any]) -> list[Any]:
    """`task_label` of each event from its name and its `color` arg (`ABSENT` where none)."""
    return [c if b is None and c is not ABSENT else "" if b is None else b
            for b, c in zip(name_parts(events)[1], colors)]


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


class SwimlaneData:
    """A parsed swimlane: lanes by tid, task X events, AICPU X events, flows, counters.

    Held as columns (`task_columns`, `aicpu_columns`: `trace_columns.EventColumns`;
    `flow_columns`) or as objects (`tasks`, `aicpu`: `TaskEvent`s; `flows`: `Flow`s), whichever
    it was made from; the other form is made on first use. NOTE: the toolkit reads the
    columns; a 1M-event trace never makes its million objects unless a caller asks for them.
    """

    def __init__(self, lanes: dict[int, Lane], tasks: list[TaskEvent] | None,
                 aicpu: list[TaskEvent] | None, flows: list[Flow] | None,
                 counters: dict[str, list[tuple[float, float]]], process: str = PROCESS_NAME,
                 other: dict[str, Any] | None = None, dropped: dict[str, int] | None = None):
        self.lanes, self.counters, self.process = lanes, counters, process
        self.other = {} if other is None else other     # top-level otherData
        # events left out for an unusable time (`bad_time`): reason -> count
        self.dropped = {} if dropped is None else dropped
        self._tasks, self._aicpu, self._flows = tasks, aicpu, flows
        self._task_columns: EventColumns | None = None
        self._aicpu_columns: EventColumns | None = None
        self._flow_columns: FlowColumns | None = None

    @classmethod
    def from_columns(cls, lanes: dict[int, Lane], tasks: EventColumns, aicpu: EventColumns,
                     flows: FlowColumns, counters: dict[str, list[tuple[float, float]]],
                     process: str = PROCESS_NAME, other: dict[str, Any] | None = None,
                     dropped: dict[str, int] | None = None) -> SwimlaneData:
        data = cls(lanes, None, None, None, counters, process, other, dropped)
        data.set_columns(tasks, aicpu, flows)
        return data

    def set_columns(self, tasks: EventColumns, aicpu: EventColumns,
                    flows: FlowColumns | None = None) -> None:
        """Replace the events by these columns (objects are made again on first use)."""
        self._task_columns, self._aicpu_columns = tasks, aicpu
        self._tasks = self._aicpu = None
        if flows is not None:
            self._flow_columns, self._flows = flows, None

    @property
    def task_columns(self) -> EventColumns:
        if self._task_columns is None:
            self._task_columns = EventColumns.from_events(self._tasks)
        return self._task_columns

    @property
    def aicpu_columns(self) -> EventColumns:
        if self._aicpu_columns is None:
            self._aicpu_columns = EventColumns.from_events(self._aicpu)
        return self._aicpu_columns

    @property
    def flow_columns(self) -> FlowColumns:
        if self._flow_columns is None:
            self._flow_columns = FlowColumns.from_flows(self._flows)
        return self._flow_columns

    @property
    def tasks(self) -> list[TaskEvent]:
        if self._tasks is None:
            self._tasks = task_events(self._task_columns)
        return self._tasks

    @property
    def aicpu(self) -> list[TaskEvent]:
        if self._aicpu is None:
            self._aicpu = task_events(self._aicpu_columns)
        return self._aicpu

    @property
    def flows(self) -> list[Flow]:
        if self._flows is None:
            c = self._flow_columns
            src = [None if i < 0 else i for i in c.src.tolist()]
            dst = [None if i < 0 else i for i in c.dst.tolist()]
            self._flows = list(map(Flow, c.id, c.src_lane.tolist(), c.src_ts.tolist(),
                                   c.dst_lane.tolist(), c.dst_ts.tolist(), src, dst))
        return self._flows

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SwimlaneData):
            return NotImplemented
        return (self.lanes, self.tasks, self.aicpu, self.flows, self.counters, self.process,
                self.other, self.dropped) == (other.lanes, other.tasks, other.aicpu,
                                              other.flows, other.counters, other.process,
                                              other.other, other.dropped)

    def __repr__(self) -> str:
        return (f"SwimlaneData({len(self.lanes)} lanes, {len(self.task_columns)} tasks, "
                f"{len(self.aicpu_columns)} AICPU events, {len(self.flow_columns)} flows)")

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

    def kind_of(self, lanes: np.ndarray) -> np.ndarray:
        """The kind of the lane of each tid in `lanes` (an object array of str)."""
        return lane_values(self.lanes, lanes, lambda ln: ln.kind, object)

    def on(self, lanes: np.ndarray, *kinds: str) -> np.ndarray:
        """Whether the lane of each tid in `lanes` is of one of `kinds` (a bool array)."""
        return lane_values(self.lanes, lanes, lambda ln: ln.kind in kinds, bool)

    def previous_on_lane(self) -> np.ndarray:
        """The task before each task on its lane (by start, then index), -1 for a lane's
        first."""
        tasks = self.task_columns
        order = np.lexsort((np.arange(len(tasks)), tasks.start, tasks.lane))
        before = np.full(len(tasks), -1, dtype=np.int64)
        same = tasks.lane[order[1:]] == tasks.lane[order[:-1]]
        before[order[1:][same]] = order[:-1][same]
        return before

    def predecessors(self) -> tuple[np.ndarray, np.ndarray]:
        """The matched flows by successor, (bounds, sources): the predecessors of task i are
        `sources[bounds[i]:bounds[i + 1]]`, in flow order."""
        src, dst = self.flow_columns.matched()
        order = np.argsort(dst, kind="stable")
        return np.searchsorted(dst[order], np.arange(len(self.task_columns) + 1)), src[order]

    def preds(self) -> dict[int, list[int]]:
        """Task index -> indices of its predecessors, from the matched flows."""
        out: dict[int, list[int]] = defaultdict(list)
        for s, d in zip(*(a.tolist() for a in self.flow_columns.matched())):
            out[d].append(s)
        return out


def lane_values(lanes: dict[int, Lane], tids: np.ndarray, f: Callable[[Lane], Any],
                dtype: Any) -> np.ndarray:
    """`f` of the lane of each tid (an array of `dtype`), computed once per lane."""
    if not len(tids):
        return np.zeros(0, dtype=dtype)
    distinct, inverse = np.unique(tids, return_inverse=True)
    values = np.array([f(lanes[t]) for t in distinct.tolist()], dtype=dtype)
    return values[inverse.reshape(-1)]


def task_events(columns: EventColumns) -> list[TaskEvent]:
    """The `TaskEvent`s of `columns` (index = position)."""
    n = len(columns)
    return list(map(_task_event, range(n), columns.id.tolist(), columns.lane.tolist(),
                    columns.name, columns.start.tolist(), columns.dur.tolist(),
                    columns.args.dicts()))


def _task_event_factory() -> Callable[..., TaskEvent]:
    """`TaskEvent(...)` at a third of the cost: a frozen dataclass's `__init__` sets each field
    through `object.__setattr__`; this sets the slots directly (a trace has ~1M tasks)."""
    new = object.__new__
    setters = [TaskEvent.__dict__[f].__set__
               for f in ("index", "id", "lane", "name", "start", "dur", "args")]
    s_index, s_id, s_lane, s_name, s_start, s_dur, s_args = setters

    def task(index: int, id: int, lane: int, name: str, start: float, dur: float,
             args: dict[str, Any]) -> TaskEvent:
        t = new(TaskEvent)
        s_index(t, index), s_id(t, id), s_lane(t, lane), s_name(t, name)
        s_start(t, start), s_dur(t, dur), s_args(t, args)
        return t
    return task


_task_event = _task_event_factory()


def classify_lane(tid: int, name: str) -> Lane:
    for kind, pattern in _LANE_KINDS:
        m = pattern.match(name)
        if m:
            digits = m.group(1)
            return Lane(tid, name, kind, int(digits) if digits.isdigit() else None)
    return Lane(tid, name, "other", None)
