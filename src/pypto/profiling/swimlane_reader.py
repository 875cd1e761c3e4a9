"""The swimlane reader: a `merged_swimlane.json` written by us or by PyPTO 0.2.0 itself, or its
events streamed one at a time (`toolkit.trace`), → a `SwimlaneData` (the layout and the field
encodings are `swimlane`'s docstring).
"""
from __future__ import annotations

import json
import os
import reprlib
import sys
from collections import defaultdict
from typing import Any, Iterable

from pypto.profiling.swimlane import (MAX_TIME_US, PROCESS_NAME, Flow, Lane, SliceIndex,
                                      SwimlaneData, TaskEvent, TraceFormatError, classify_lane,
                                      restore_args)


def bad_time(value: float) -> str | None:
    """Why `value` cannot be a time (ts or dur, us) of a trace, or None if it can."""
    if value != value or value in (float("inf"), float("-inf")):
        return "not finite"
    if value < 0:
        return "negative"
    return f"beyond {MAX_TIME_US:.0e} us" if value > MAX_TIME_US else None


_NUMBER_TYPES = frozenset((int, float))


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


def _task_factory():
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


_task = _task_factory()


def parse_swimlane(obj: dict[str, Any] | Iterable[dict[str, Any]]) -> SwimlaneData:
    """Parse a trace object (`{"traceEvents": [...]}`) or its events (any iterable: `toolkit.trace`
    streams them). NOTE: each X event becomes its `TaskEvent` as it arrives (a streamed trace
    never holds its raw events next to its tasks), filed by its lane's kind (a lane declared
    after its first X event is re-filed at the end). The shared args are restored when the
    trace object (with its otherData) is given; a streaming caller restores them itself.
    Keeps: a field of the wrong type is a `TraceFormatError` naming the event; an X, flow or
    counter event whose ts or dur is not finite, negative or beyond `MAX_TIME_US` is left out
    and counted in `dropped` by reason."""
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
    dropped: dict[str, int] = defaultdict(int)
    late = False                # an X event came before (or its lane changed after) it was filed
    number, max_us = _NUMBER_TYPES, MAX_TIME_US
    for n, e in enumerate(events):             # n: the event's position, for messages
        if type(e) is not dict:
            continue                            # (not an event: ignored, like unknown kinds)
        ph = e.get("ph")
        # NOTE: flow ends are most of a trace's events: tested first; each field is checked
        # by its type first (the usual case, cheap) and only converted when that fails
        if ph == "s" or ph == "f":
            ts, tid = e.get("ts"), e.get("tid")
            if type(ts) not in number or type(tid) is not int:
                ts, tid = _time(n, e, "ts"), _int(n, e, "tid")
            if not 0.0 <= ts <= max_us:
                dropped[bad_time(ts)] += 1
                continue
            fid = e.get("id")
            if not isinstance(fid, (int, float, str)):
                raise _malformed(n, e, "id", "a flow id")
            (starts if ph == "s" else finishes)[fid] = (tid, ts)
        elif ph == "X":
            ts, dur, tid = e.get("ts", 0.0), e.get("dur", 0.0), e.get("tid", 0)
            args = e.get("args", {})
            if (type(ts) not in number or type(dur) not in number or type(tid) is not int
                    or type(args) is not dict):
                ts, dur, tid, args = _task_fields(n, e)
            if not (0.0 <= ts <= max_us and 0.0 <= dur <= max_us):
                dropped[bad_time(ts) or bad_time(dur)] += 1
                continue
            lane = lanes.get(tid)
            if lane is None:
                late, dest = True, tasks
            else:
                placed.add(tid)
                dest = cpu if lane.kind == "aicpu" else tasks
            eid = e.get("id")
            has_id = eid is not None or "id" in e
            if type(eid) is not int:
                eid = _int(n, e, "id") if has_id else len(dest)
            name = e.get("name", "")
            task = _task(len(dest), eid, tid, name if type(name) is str else str(name),
                         float(ts), float(dur), dict(args))
            dest.append(task)
            order.append((tid, has_id, task))
        elif ph == "M":
            redeclared, process = _metadata(n, e, lanes, placed, process)
            late = late or redeclared
        elif ph == "C":
            _counter(n, e, counters, dropped)
    if late:
        tasks, cpu = _refiled(order, lanes)
    else:
        _name_unknown_lanes(order, lanes)
    del order
    pairs = ((fid, s_tid, s_ts, *finishes[fid]) for fid, (s_tid, s_ts) in starts.items()
             if fid in finishes)                    # file order of the s events
    data = SwimlaneData(lanes, tasks, cpu, _match_flows(tasks, pairs), dict(counters), process,
                        dict(other) if isinstance(other, dict) else {}, dict(dropped))
    restore_args(data)
    return data


def _task_fields(n: int, e: dict[str, Any]) -> tuple[float, float, int, dict[str, Any]]:
    """ts, dur, tid and args of X event `e` (number `n`), converted where they can be."""
    return (_time(n, e, "ts", 0.0), _time(n, e, "dur", 0.0), _int(n, e, "tid", 0),
            _object(n, e, "args"))


def _metadata(n: int, e: dict[str, Any], lanes: dict[int, Lane], placed: set[int],
              process: str) -> tuple[bool, str]:
    """File M event `e` (number `n`): a lane's thread_name or the process name. (Whether it
    declared a lane whose X events were filed already, the process name.)"""
    if e.get("name") == "thread_name":
        tid = _int(n, e, "tid")
        lanes[tid] = classify_lane(tid, str(_object(n, e, "args").get("name", tid)))
        return tid in placed, process
    if e.get("name") == "process_name":
        return False, str(_object(n, e, "args").get("name", process))
    return False, process


def _counter(n: int, e: dict[str, Any], counters: dict[str, list[tuple[float, float]]],
             dropped: dict[str, int]) -> None:
    """File the samples of counter event `e` (number `n`): one series per args key."""
    ts, args = e.get("ts"), e.get("args", {})
    if type(ts) not in _NUMBER_TYPES:
        ts = _time(n, e, "ts")
    if type(args) is not dict:
        args = _object(n, e, "args")
    if not 0.0 <= ts <= MAX_TIME_US:
        dropped[bad_time(ts)] += 1
        return
    for key, value in args.items():
        if type(value) not in _NUMBER_TYPES:
            raise TraceFormatError(f"event {n} (ph 'C'): counter {key!r} is "
                                   f"{reprlib.repr(value)}, not a number")
        name = str(e.get("name", "")) if key == "size" else f"{e.get('name', '')}.{key}"
        counters[name].append((float(ts), float(value)))


def _name_unknown_lanes(order: list[tuple[int, bool, TaskEvent]], lanes: dict[int, Lane]) -> None:
    """A lane with tasks but no thread_name event is an "other" lane named by its tid."""
    for tid, _, _ in order:
        if tid not in lanes:
            lanes[tid] = Lane(tid, str(tid), "other", None)


def _refiled(order: list[tuple[int, bool, TaskEvent]],
             lanes: dict[int, Lane]) -> tuple[list[TaskEvent], list[TaskEvent]]:
    """(tasks, AICPU events) in file order, now that every lane's kind is known (a lane was
    declared, or redeclared, after its first X event)."""
    _name_unknown_lanes(order, lanes)
    tasks: list[TaskEvent] = []
    cpu: list[TaskEvent] = []
    for tid, has_id, t in order:
        dest = cpu if lanes[tid].kind == "aicpu" else tasks
        dest.append(TaskEvent(len(dest), t.id if has_id else len(dest), tid, t.name,
                              t.start, t.dur, t.args))
    return tasks, cpu


def _match_flows(tasks: list[TaskEvent], pairs: Iterable[tuple]) -> list[Flow]:
    """Flows of (id, s tid, s ts, f tid, f ts) pairs, each end placed on its task's slice."""
    index = SliceIndex([t.lane for t in tasks], [t.start for t in tasks], [t.end for t in tasks])
    flows = []
    # NOTE: a task with k successors (predecessors) has k flow ends at one (lane, time): each
    # distinct end is looked up once
    srcs: dict[tuple[int, float], int | None] = {}
    dsts: dict[tuple[int, float], int | None] = {}
    for fid, s_tid, s_ts, f_tid, f_ts in pairs:
        s_tid, s_ts, f_tid, f_ts = int(s_tid), float(s_ts), int(f_tid), float(f_ts)
        key = (s_tid, s_ts)
        src = srcs[key] if key in srcs else srcs.setdefault(key, index.source(s_tid, s_ts))
        key = (f_tid, f_ts)
        dst = dsts[key] if key in dsts else dsts.setdefault(key, index.target(f_tid, f_ts))
        flows.append(Flow(fid, s_tid, s_ts, f_tid, f_ts, src, dst))
    return flows


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
