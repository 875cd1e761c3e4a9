"""The swimlane reader: a `merged_swimlane.json` written by us or by PyPTO 0.2.0 itself, or its
events streamed a run at a time (`toolkit.trace`), → a `SwimlaneData` held as columns (the
layout and the field encodings are `swimlane`'s docstring).

NOTE: events are taken a run (a list) at a time. A run whose events all have the usual field
types and usable times goes into the columns through C loops over the run (`map` with
`methodcaller`, `zip`, numpy); any other run is read event by event - that is where a field of
the wrong type becomes its `TraceFormatError`, in file order, and an unusable time is counted.
Both ways give the same columns.
"""
from __future__ import annotations

import json
import os
import reprlib
import sys
from collections import defaultdict
from itertools import islice, repeat
from operator import itemgetter, methodcaller
from typing import Any, Iterable, Iterator

import numpy as np

from pypto.profiling.flow_ends import SliceIndex
from pypto.profiling.swimlane import (MAX_TIME_US, PROCESS_NAME, Lane, SwimlaneData,
                                      TraceFormatError, classify_lane, lane_values,
                                      restore_args)
from pypto.profiling.swimlane_lines import LineRun
from pypto.profiling.trace_columns import (ArgColumns, EventColumns, FlowColumns, int_array,
                                           pick)


def bad_time(value: float) -> str | None:
    """Why `value` cannot be a time (ts or dur, us) of a trace, or None if it can."""
    if value != value or value in (float("inf"), float("-inf")):
        return "not finite"
    if value < 0:
        return "negative"
    return f"beyond {MAX_TIME_US:.0e} us" if value > MAX_TIME_US else None


_NUMBER_TYPES = frozenset((int, float))
_RUN = 4096                     # events per run when the caller gives them one by one
_X, _FLOW, _META, _COUNTER, _OTHER = range(5)
_PHASES = {"X": _X, "s": _FLOW, "f": _FLOW, "M": _META, "C": _COUNTER}
_EMPTY: dict[str, Any] = {}
_GET = {key: methodcaller("get", key) for key in ("ph", "ts", "tid", "id")}
_GET_X = {"ts": methodcaller("get", "ts", 0.0), "dur": methodcaller("get", "dur", 0.0),
          "tid": methodcaller("get", "tid", 0), "args": methodcaller("get", "args", _EMPTY),
          "name": methodcaller("get", "name", ""), "id": _GET["id"]}


def _malformed(n: int, e: dict[str, Any], key: str, want: str) -> TraceFormatError:
    got = reprlib.repr(e[key]) if key in e else "missing"
    return TraceFormatError(f"event {n} (ph {e.get('ph')!r}): {key!r} is {got}, not {want}")


def _int(n: int, e: dict[str, Any], key: str, default: Any = None) -> int:
    v = e.get(key, default)
    if type(v) is int:
        return v
    try:
        if isinstance(v, (str, float, int)) and not isinstance(v, bool):
            return int(v)
    except (ValueError, OverflowError):
        pass
    raise _malformed(n, e, key, "an integer")


def _time(n: int, e: dict[str, Any], key: str, default: Any = None) -> float:
    """A number field; a time that is not a trace's is returned as it is (callers check)."""
    v = e.get(key, default)
    if type(v) in _NUMBER_TYPES:
        return v
    raise _malformed(n, e, key, "a number")


def _object(n: int, e: dict[str, Any], key: str) -> dict[str, Any]:
    v = e.get(key, {})
    if type(v) is dict:
        return v
    raise _malformed(n, e, key, "an object")


def _of_types(values: list, types: frozenset | set) -> bool:
    return set(map(type, values)) <= types


def _usable_times(values: list) -> np.ndarray | None:
    """`values` (numbers) as float64 when every one is a usable time, else None."""
    try:
        times = np.array(values, dtype=np.float64)
    except OverflowError:
        return None
    return times if ((times >= 0.0) & (times <= MAX_TIME_US)).all() else None


class _Parser:
    """The columns of a trace's events, taken a run at a time (see the module docstring)."""

    def __init__(self) -> None:
        self.lanes: dict[int, Lane] = {}
        self.process = PROCESS_NAME
        self.starts: dict[Any, tuple[int, Any]] = {}     # flow id -> (tid, ts) of its s end
        self.finishes: dict[Any, tuple[int, Any]] = {}
        self.counters: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.dropped: dict[str, int] = defaultdict(int)
        # the X events in file order; an id is None where the event has none
        self.tid: list[int] = []
        self.ts: list[float] = []
        self.dur: list[float] = []
        self.id: list[int | None] = []
        self.name: list[str] = []
        self.args: list[ArgColumns] = []
        self.pending: list[dict[str, Any]] = []          # args of events read one by one
        self.n = 0                                       # events seen (for messages)

    def run(self, events: list[Any] | LineRun) -> None:
        if isinstance(events, LineRun):
            self._take_lines(events)
            self.n += events.count
            return
        if not self._whole_run(events):
            for n, e in enumerate(events, self.n):
                self._event(n, e)
        self.n += len(events)

    def _take_lines(self, run: LineRun) -> None:
        """Events read by their line template (`swimlane_lines`): already checked."""
        f = run.fields
        if run.kind == "X":
            self._flush()
            self._take_x(f["tid"], f["ts"], f["dur"], f["id"], f["name"])
            self.args.append(f["args"])
        elif run.kind == "flow":
            starts = np.array([p == "s" for p in f["ph"]], dtype=bool)
            for ends, at in ((self.starts, np.flatnonzero(starts)),
                             (self.finishes, np.flatnonzero(~starts))):
                ends.update(zip(pick(f["id"], at), zip(pick(f["tid"], at), pick(f["ts"], at))))
        else:
            for name, ts, value in zip(f["name"], f["ts"], f["value"]):
                self.counters[name].append((ts, value))

    # -- one event at a time ---------------------------------------------------------------

    def _event(self, n: int, e: Any) -> None:
        """Take event `e` (number `n`): any field of the wrong type raises, an unusable time
        is counted."""
        if type(e) is not dict:
            return                                  # (not an event: ignored, like unknown kinds)
        ph = e.get("ph")
        if ph == "s" or ph == "f":
            ts, tid = _time(n, e, "ts"), _int(n, e, "tid")
            if not 0.0 <= ts <= MAX_TIME_US:
                self.dropped[bad_time(ts)] += 1
                return
            fid = e.get("id")
            if not isinstance(fid, (int, float, str)):
                raise _malformed(n, e, "id", "a flow id")
            (self.starts if ph == "s" else self.finishes)[fid] = (tid, ts)
        elif ph == "X":
            ts, dur = _time(n, e, "ts", 0.0), _time(n, e, "dur", 0.0)
            tid, args = _int(n, e, "tid", 0), _object(n, e, "args")
            if not (0.0 <= ts <= MAX_TIME_US and 0.0 <= dur <= MAX_TIME_US):
                self.dropped[bad_time(ts) or bad_time(dur)] += 1
                return
            eid = e.get("id")
            if type(eid) is not int:
                eid = _int(n, e, "id") if eid is not None or "id" in e else None
            name = e.get("name", "")
            self._take_x([tid], [float(ts)], [float(dur)], [eid],
                         [name if type(name) is str else str(name)])
            self.pending.append(args)
        elif ph == "M":
            self._metadata(n, e)
        elif ph == "C":
            self._counter(n, e)

    def _metadata(self, n: int, e: dict[str, Any]) -> None:
        """A lane's thread_name or the process name."""
        if e.get("name") == "thread_name":
            tid = _int(n, e, "tid")
            self.lanes[tid] = classify_lane(tid, str(_object(n, e, "args").get("name", tid)))
        elif e.get("name") == "process_name":
            self.process = str(_object(n, e, "args").get("name", self.process))

    def _counter(self, n: int, e: dict[str, Any]) -> None:
        """The samples of counter event `e`: one series per args key."""
        ts, args = _time(n, e, "ts"), _object(n, e, "args")
        if not 0.0 <= ts <= MAX_TIME_US:
            self.dropped[bad_time(ts)] += 1
            return
        for key, value in args.items():
            if type(value) not in _NUMBER_TYPES:
                raise TraceFormatError(f"event {n} (ph 'C'): counter {key!r} is "
                                       f"{reprlib.repr(value)}, not a number")
            name = str(e.get("name", "")) if key == "size" else f"{e.get('name', '')}.{key}"
            self.counters[name].append((float(ts), float(value)))

    def _take_x(self, tid: list, ts: list, dur: list, ids: list, names: list) -> None:
        self.tid += tid
        self.ts += ts
        self.dur += dur
        self.id += ids
        self.name += names

    # -- a whole run at once -----------------------------------------------------------------

    def _whole_run(self, events: list[Any]) -> bool:
        """Take `events` at once; False (nothing taken) when one of them needs a closer look."""
        if set(map(type, events)) != {dict}:
            return False
        phases = list(map(_GET["ph"], events))
        try:
            kind = np.fromiter(map(_PHASES.get, phases, repeat(_OTHER)), dtype=np.int8,
                               count=len(events))
        except TypeError:                                   # a ph that is a list, say
            return False
        x = self._x_columns(pick(events, np.flatnonzero(kind == _X)))
        at = np.flatnonzero(kind == _FLOW)
        flows = self._flow_columns(pick(events, at), pick(phases, at))
        counters = self._counter_columns(pick(events, np.flatnonzero(kind == _COUNTER)))
        if x is None or flows is None or counters is None:
            return False
        for i in np.flatnonzero(kind == _META).tolist():
            self._metadata(self.n + i, events[i])           # (the only events that may raise)
        if x[0]:
            self._flush()
            self._take_x(*x[:5])
            self.args.append(ArgColumns.from_dicts(x[5]))
        for ends, (ids, tids, ts) in zip((self.starts, self.finishes), flows):
            ends.update(zip(ids, zip(tids, ts)))
        for name, ts, value in counters:
            self.counters[name].append((ts, value))
        return True

    @staticmethod
    def _x_columns(xs: list[dict[str, Any]]) -> tuple | None:
        """(tid, ts, dur, id, name, args) lists of X events, or None if one needs a closer
        look (a field of another type, an unusable time, no id)."""
        try:        # NOTE: itemgetter is twice as fast as .get, and every key is there
            got = {key: list(map(itemgetter(key), xs)) for key in _GET_X}
        except KeyError:
            got = {key: list(map(get, xs)) for key, get in _GET_X.items()}
        if not (_of_types(got["ts"], _NUMBER_TYPES) and _of_types(got["dur"], _NUMBER_TYPES)
                and _of_types(got["tid"], {int}) and _of_types(got["args"], {dict})
                and _of_types(got["id"], {int}) and _of_types(got["name"], {str})):
            return None
        ts, dur = _usable_times(got["ts"]), _usable_times(got["dur"])
        if ts is None or dur is None:
            return None
        return (got["tid"], ts.tolist(), dur.tolist(), got["id"], got["name"], got["args"])

    @staticmethod
    def _flow_columns(flows: list[dict[str, Any]], phases: list[str]) -> tuple | None:
        """((ids, tids, ts) of the s ends, the same of the f ends), or None."""
        ids, tids, ts = (list(map(_GET[k], flows)) for k in ("id", "tid", "ts"))
        if not (_of_types(ts, _NUMBER_TYPES) and _of_types(tids, {int})
                and _of_types(ids, {int}) and _usable_times(ts) is not None):
            return None
        starts = np.array([p == "s" for p in phases], dtype=bool)
        return tuple((pick(ids, at), pick(tids, at), pick(ts, at))
                     for at in (np.flatnonzero(starts), np.flatnonzero(~starts)))

    @staticmethod
    def _counter_columns(counters: list[dict[str, Any]]) -> list[tuple] | None:
        """(name, ts, value) of counter events that each hold one "size" sample, or None."""
        ts = list(map(_GET["ts"], counters))
        args = list(map(_GET_X["args"], counters))
        names = list(map(_GET_X["name"], counters))
        if not (_of_types(args, {dict}) and set(map(tuple, args)) <= {("size",)}
                and _of_types(names, {str}) and _of_types(ts, _NUMBER_TYPES)):
            return None
        sizes = list(map(itemgetter("size"), args))
        times = _usable_times(ts)
        if times is None or not _of_types(sizes, _NUMBER_TYPES):
            return None
        try:
            values = np.array(sizes, dtype=np.float64)
        except OverflowError:
            return None
        return list(zip(names, times.tolist(), values.tolist()))

    # -- the data ----------------------------------------------------------------------------

    def _flush(self) -> None:
        if self.pending:
            self.args.append(ArgColumns.from_dicts(self.pending))
            self.pending = []

    def data(self, other: dict[str, Any]) -> SwimlaneData:
        self._flush()
        lanes = self.lanes
        for tid in dict.fromkeys(self.tid):       # a lane with tasks but no thread_name event
            if tid not in lanes:
                lanes[tid] = Lane(tid, str(tid), "other", None)
        tid = int_array(self.tid)
        start, dur = (np.array(t, dtype=np.float64) for t in (self.ts, self.dur))
        on_cpu = lane_values(lanes, tid, lambda ln: ln.kind == "aicpu", bool)
        parts = []
        for at, args in zip((np.flatnonzero(~on_cpu), np.flatnonzero(on_cpu)),
                            _split_args(self.args, on_cpu)):
            # an event without an id is numbered by its position among the tasks (AICPU events)
            ids = [i if e is None else e for i, e in enumerate(pick(self.id, at))]
            parts.append(EventColumns(tid[at], start[at], dur[at], int_array(ids),
                                      pick(self.name, at), args))
        tasks, cpu = parts
        return SwimlaneData.from_columns(lanes, tasks, cpu, _flows(tasks, self.starts,
                                                                  self.finishes),
                                         dict(self.counters), self.process,
                                         dict(other) if isinstance(other, dict) else {},
                                         dict(self.dropped))


def _split_args(runs: list[ArgColumns], on_cpu: np.ndarray) -> tuple[ArgColumns, ArgColumns]:
    """The args of the X events, read in `runs`, of the tasks and of the AICPU events. NOTE: a
    run is usually all one or the other: it is then taken whole, and each side holds only its
    own keys."""
    sides: tuple[list[ArgColumns], list[ArgColumns]] = ([], [])
    at = 0
    for run in runs:
        mine = on_cpu[at:at + run.n]
        at += run.n
        for side, chosen in zip(sides, (~mine, mine)):
            if chosen.all():
                side.append(run)
            elif chosen.any():
                side.append(run.take(np.flatnonzero(chosen)))
    return ArgColumns.concat(sides[0]), ArgColumns.concat(sides[1])


def _flows(tasks: EventColumns, starts: dict[Any, tuple], finishes: dict[Any, tuple]
           ) -> FlowColumns:
    """The flows whose id has both ends (in the order of their first s event), each end
    placed on its task's slice."""
    ids = [fid for fid in starts if fid in finishes]
    s_tid, s_ts = zip(*map(starts.__getitem__, ids)) if ids else ((), ())
    f_tid, f_ts = zip(*map(finishes.__getitem__, ids)) if ids else ((), ())
    src_lane, dst_lane = int_array(list(s_tid)), int_array(list(f_tid))
    src_ts, dst_ts = (np.array(t, dtype=np.float64) for t in (s_ts, f_ts))
    index = SliceIndex(tasks.lane, tasks.start, tasks.end)
    return FlowColumns(ids, src_lane, src_ts, dst_lane, dst_ts,
                       index.sources(src_lane, src_ts), index.targets(dst_lane, dst_ts))


def parse_swimlane(obj: dict[str, Any] | Iterable[dict[str, Any]]) -> SwimlaneData:
    """Parse a trace object (`{"traceEvents": [...]}`) or its events (any iterable). The shared
    args are restored when the trace object (with its otherData) is given; a streaming caller
    gives `parse_runs` its runs and restores them itself. Keeps: a field of the wrong type is
    a `TraceFormatError` naming the event; an X, flow or counter event whose ts or dur is not
    finite, negative or beyond `MAX_TIME_US` is left out and counted in `dropped` by reason."""
    events = obj.get("traceEvents", []) if isinstance(obj, dict) else obj
    other = obj.get("otherData", {}) if isinstance(obj, dict) else {}
    data = parse_runs(_runs(events), other)
    restore_args(data)
    return data


def _runs(events: Iterable[Any]) -> Iterator[list[Any]]:
    """`events` in lists of `_RUN`."""
    it = iter(events)
    while run := list(islice(it, _RUN)):
        yield run


def parse_runs(runs: Iterable[list[Any] | LineRun], other: dict[str, Any] | None = None
               ) -> SwimlaneData:
    """The trace of these runs of events (lists of decoded events, or `LineRun`s, in file
    order); `other` is its otherData."""
    parser = _Parser()
    for run in runs:
        parser.run(run)
    return parser.data(other or {})


def read_swimlane(path: str | os.PathLike) -> SwimlaneData:
    """Read a `merged_swimlane.json` written by us or by PyPTO. A file nested deeper than the
    JSON reader goes (Python's recursion limit) is a `TraceFormatError` naming the file, as
    the toolkit's reader (`toolkit.trace`) says it, not a RecursionError from inside `json`."""
    with open(path) as f:
        try:
            obj = json.load(f)
        except RecursionError:
            raise TraceFormatError(f"{path}: JSON nested too deeply (more levels than the "
                                   f"reader's limit of about {sys.getrecursionlimit()})"
                                   ) from None
    return parse_swimlane(obj)
