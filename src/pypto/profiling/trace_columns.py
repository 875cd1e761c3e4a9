"""A trace's events as columns: how the toolkit holds a 1M-event swimlane.

Takes the X events and flows of a parsed trace (from the reader, or from the objects of
`swimlane.SwimlaneData`) → `EventColumns` (per event: lane tid, start, dur, id as numpy arrays,
the names, the args as `ArgColumns`) and `FlowColumns`, so that view and analyze walk arrays
instead of a Python object per event. Keeps: the columns hold exactly what the objects hold -
`ArgColumns.dicts()` gives each event's args with its keys in their order, ids and tids that
do not fit in int64 stay Python ints (object arrays) - so either form can stand for a trace.

NOTE: the args of a trace come in a few shapes (key tuples): our tasks share one, PyPTO's
another, AICPU events a handful. Columns are made per shape and key, each a C loop (`map` of
an `itemgetter`) over the events of that shape, never one Python step per event and key.
"""
from __future__ import annotations

from collections import defaultdict
from itertools import count
from operator import itemgetter
from typing import Any, Callable, Iterable, Sequence

import numpy as np


class _Absent:
    """The value of an args key an event does not have."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


def object_array(values: Iterable[Any], n: int) -> np.ndarray:
    """An object array of `n` values taken as they are (a list value stays one element)."""
    return np.fromiter(values, dtype=object, count=n)


def int_array(values: Sequence[Any]) -> np.ndarray:
    """Integers as int64, or as an object array of Python ints when one does not fit."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return object_array(values, len(values))


def pick(items: Sequence[Any], index: np.ndarray | slice) -> list:
    """`[items[i] for i in index]` for positions `index` (or a slice), in C."""
    index = as_slice(index) if not isinstance(index, slice) else index
    if isinstance(index, slice):
        return list(items[index])
    return object_array(items, len(items))[index].tolist()


def as_slice(index: np.ndarray) -> np.ndarray | slice:
    """Positions `index` as a slice when they are consecutive (a view, no copy)."""
    if not len(index):
        return slice(0, 0)
    first, last = int(index[0]), int(index[-1])
    if last - first + 1 == len(index) and (np.diff(index) == 1).all():
        return slice(first, last + 1)
    return index


def first_use_codes(values: Iterable[Any]) -> tuple[np.ndarray, list]:
    """(code of each value, the distinct values in order of first use): value `table[code]`."""
    codes: defaultdict[Any, int] = defaultdict(count().__next__)
    array = np.fromiter(map(codes.__getitem__, values), dtype=np.int64)
    return array, list(codes)


def grouped(keys: Iterable[Any]) -> list[tuple[Any, np.ndarray]]:
    """(key, the positions holding it, increasing) for each distinct key, in order of first
    use: a group-by over a column, sorted once in C."""
    codes, distinct = first_use_codes(keys)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(distinct) + 1))
    return [(k, order[bounds[i]:bounds[i + 1]]) for i, k in enumerate(distinct)]


def renumbered(codes: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """`first_use_codes` of an int array: (its codes renumbered in order of first use, the old
    code of each new one)."""
    if not len(codes):
        return codes, []
    old, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], old[order].tolist()


class ArgColumns:
    """The args of `n` events: `shapes` holds the distinct key tuples in order of first use,
    `shape[i]` the index of event i's, `columns[key]` each event's value (an object array,
    `ABSENT` where the event lacks the key)."""

    def __init__(self, n: int, shapes: list[tuple[str, ...]], shape: np.ndarray,
                 columns: dict[str, np.ndarray]):
        self.n, self.shapes, self.shape, self.columns = n, shapes, shape, columns

    @classmethod
    def from_dicts(cls, dicts: list[dict[str, Any]]) -> ArgColumns:
        n = len(dicts)
        shape, shapes = first_use_codes(map(tuple, dicts))
        columns: dict[str, np.ndarray] = {}
        for s, keys in enumerate(shapes):
            members = None if len(shapes) == 1 else np.flatnonzero(shape == s)
            chosen = dicts if members is None else pick(dicts, members)
            for key in keys:
                values = object_array(map(itemgetter(key), chosen), len(chosen))
                if members is None:
                    columns[key] = values
                    continue
                column = columns.get(key)
                if column is None:
                    column = columns[key] = np.full(n, ABSENT, dtype=object)
                column[members] = values
        return cls(n, shapes, shape, columns)

    @classmethod
    def concat(cls, parts: list[ArgColumns]) -> ArgColumns:
        """The events of `parts`, one after the other."""
        codes: defaultdict[tuple[str, ...], int] = defaultdict(count().__next__)
        shape = np.concatenate([np.array([codes[s] for s in p.shapes], dtype=np.int64)[p.shape]
                                for p in parts]) if parts else np.zeros(0, np.int64)
        starts = np.cumsum([0] + [p.n for p in parts]).tolist()
        columns = {}
        for key in dict.fromkeys(k for p in parts for k in p.columns):
            column = columns[key] = np.full(len(shape), ABSENT, dtype=object)
            for p, at in zip(parts, starts):
                if key in p.columns:
                    column[at:at + p.n] = p.columns[key]
        return cls(len(shape), list(codes), shape, columns)

    @property
    def keys(self) -> list[str]:
        """Every key, in order of first use (an event's keys in its order, then the next's)."""
        return list(dict.fromkeys(k for s in self.shapes for k in s))

    def column(self, key: str) -> np.ndarray:
        """Each event's value of `key` (`ABSENT` where it has none)."""
        found = self.columns.get(key)
        return found if found is not None else np.full(self.n, ABSENT, dtype=object)

    def values(self, key: str, default: Any = None) -> list:
        """Each event's value of `key`, `default` where it has none."""
        column = self.columns.get(key)
        if column is None:
            return [default] * self.n
        values = column.tolist()
        if default is ABSENT or self.n == 0 or all(key in s for s in self.shapes):
            return values
        return [default if v is ABSENT else v for v in values]

    def take(self, index: np.ndarray) -> ArgColumns:
        """The args of events `index`, in that order (an event may come again); the shapes and
        keys none of them has are dropped."""
        index = as_slice(index)
        shape, used = renumbered(self.shape[index])
        shapes = [self.shapes[s] for s in used]
        keys = dict.fromkeys(k for s in shapes for k in s)
        return ArgColumns(len(shape), shapes, shape,
                          {k: self.columns[k][index] for k in keys})

    def dicts(self) -> list[dict[str, Any]]:
        """Each event's args as a dict, keys in the event's order."""
        out: list[Any] = [None] * self.n
        for s, keys in enumerate(self.shapes):
            members = np.flatnonzero(self.shape == s)
            rows = zip(*(self.columns[k][members].tolist() for k in keys)) if keys else \
                ((),) * len(members)
            for i, row in zip(members.tolist(), rows):
                out[i] = dict(zip(keys, row))
        return out


class EventColumns:
    """X events as columns (times in us): `lane` (tid), `start`, `dur`, `id`, `name`, `args`.
    `cached(key, make)` keeps what a consumer derives from them (the name fields, say)."""

    def __init__(self, lane: np.ndarray, start: np.ndarray, dur: np.ndarray, id: np.ndarray,
                 name: list[str], args: ArgColumns):
        self.lane, self.start, self.dur, self.id, self.name, self.args = (
            lane, start, dur, id, name, args)
        self.end = start + dur
        self._cache: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.name)

    @classmethod
    def from_events(cls, events: Sequence[Any]) -> EventColumns:
        """The columns of `TaskEvent`-like objects (lane, start, dur, id, name, args)."""
        def floats(attr: str) -> np.ndarray:
            return np.array([getattr(e, attr) for e in events], dtype=np.float64)
        return cls(int_array([e.lane for e in events]), floats("start"), floats("dur"),
                   int_array([e.id for e in events]), [e.name for e in events],
                   ArgColumns.from_dicts([e.args for e in events]))

    def take(self, index: np.ndarray) -> EventColumns:
        """The events `index`, in that order."""
        index = as_slice(index)
        return EventColumns(self.lane[index], self.start[index], self.dur[index],
                            self.id[index], pick(self.name, index), self.args.take(index))

    def with_args(self, args: ArgColumns) -> EventColumns:
        """These events with other args (what they were derived from stays cached)."""
        out = EventColumns(self.lane, self.start, self.dur, self.id, self.name, args)
        out._cache = self._cache
        return out

    def cached(self, key: str, make: Callable[[EventColumns], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make(self)
        return self._cache[key]


class FlowColumns:
    """Dependency edges as columns: `id` (as the file gives them), the ends' lanes and times,
    and `src`/`dst`, the task index each end was placed on (-1: none)."""

    def __init__(self, id: list, src_lane: np.ndarray, src_ts: np.ndarray, dst_lane: np.ndarray,
                 dst_ts: np.ndarray, src: np.ndarray, dst: np.ndarray):
        self.id, self.src_lane, self.src_ts, self.dst_lane, self.dst_ts = (
            id, src_lane, src_ts, dst_lane, dst_ts)
        self.src, self.dst = src, dst

    def __len__(self) -> int:
        return len(self.id)

    @classmethod
    def from_flows(cls, flows: Sequence[Any]) -> FlowColumns:
        """The columns of `Flow`-like objects (src/dst None where unmatched)."""
        def ends(attr: str) -> np.ndarray:
            return np.array([-1 if getattr(f, attr) is None else getattr(f, attr)
                             for f in flows], dtype=np.int64)
        return cls([f.id for f in flows], int_array([f.src_lane for f in flows]),
                   np.array([f.src_ts for f in flows], dtype=np.float64),
                   int_array([f.dst_lane for f in flows]),
                   np.array([f.dst_ts for f in flows], dtype=np.float64), ends("src"), ends("dst"))

    def matched(self) -> tuple[np.ndarray, np.ndarray]:
        """(src, dst) of the flows whose both ends are on a task, in flow order."""
        both = (self.src >= 0) & (self.dst >= 0)
        return self.src[both], self.dst[both]
