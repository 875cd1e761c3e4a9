"""Which task a flow end sits on: the slices of each lane sorted by start, searched by time.

A trace's flow is an `s` event on the predecessor's lane just before its end and an `f` event
on the successor's lane at its start; the reader places each end on a slice of its lane
(`SliceIndex.source` / `.target`), the viewer does the same for a run's columns. Keeps: the
answers are positions in the columns the index was built from, and the many-at-once
`sources` / `targets` answer exactly as the one-at-a-time methods do.

NOTE: a core runs one task at a time, so nearly every flow end has one slice around it and
none close before it; those are answered with numpy over all ends at once, and only the rest
(overlapping or touching slices) walk the lane one slice at a time.
"""
from __future__ import annotations

import bisect
from typing import Callable

import numpy as np

FLOW_LEAD_US = 1e-4            # PyPTO puts s this far before the predecessor's end (ours: 1 ns)
SOURCE_TOLERANCE = 2 * FLOW_LEAD_US
TARGET_TOLERANCE = 1e-9
_SCAN = 64                     # slices looked at before an end (the latest-starting first)


class SliceIndex:
    """The X events of each lane sorted by start, to place flow ends on their slices. Events
    are given as columns (lane tid, start, end); the answers are positions in them."""

    def __init__(self, lanes, starts, ends):
        lane = np.asarray(lanes)
        start = np.asarray(starts, dtype=np.float64)
        end = np.asarray(ends, dtype=np.float64)
        self.tids, code = np.unique(lane, return_inverse=True) if len(lane) else \
            (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        code = code.reshape(-1)
        self.order = np.lexsort((np.arange(len(lane)), start, code))
        self.start, self.end = start[self.order], end[self.order]
        self.bounds = np.searchsorted(code[self.order], np.arange(len(self.tids) + 1))
        # the latest end among the lane's first slices: once it is before ts - tol, no
        # earlier slice can enclose ts, so the backward scan stops there
        self.max_end = self.end.copy()
        for a, b in zip(self.bounds[:-1].tolist(), self.bounds[1:].tolist()):
            self.max_end[a:b] = np.maximum.accumulate(self.end[a:b])
        self._lanes: dict[int, tuple[list[int], list[float], list[float], list[float]]] = {}

    def _lane(self, lane: int) -> tuple[list[int], list[float], list[float], list[float]]:
        """(positions, starts, ends, running max end) of the slices of `lane`, by start, as
        lists (for the one-at-a-time search)."""
        if lane not in self._lanes:
            code = self._lane_codes(np.array([lane]))[0]
            a, b = (self.bounds[code], self.bounds[code + 1]) if code >= 0 else (0, 0)
            self._lanes[lane] = (self.order[a:b].tolist(), self.start[a:b].tolist(),
                                 self.end[a:b].tolist(), self.max_end[a:b].tolist())
        return self._lanes[lane]

    def source(self, lane: int, ts: float) -> int | None:
        """The task an `s` flow end at (lane, ts) leaves from."""
        return self._enclosing(lane, ts, SOURCE_TOLERANCE)

    def target(self, lane: int, ts: float) -> int | None:
        """The task an `f` flow end at (lane, ts) arrives at."""
        return self._starting(lane, ts, TARGET_TOLERANCE)

    def sources(self, lanes: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """`source` of each end (lane tid, time), -1 for None."""
        found, unsure = self._enclosing_many(self._lane_codes(lanes), ts, SOURCE_TOLERANCE)
        return self._settle(found, np.flatnonzero(unsure), lanes, ts, self.source)

    def targets(self, lanes: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """`target` of each end (lane tid, time), -1 for None."""
        code = self._lane_codes(lanes)
        known = np.flatnonzero(code >= 0)
        at = self._search(code[known], ts[known] - TARGET_TOLERANCE, "left")
        inside = at < self.bounds[code[known] + 1]
        at_start = self.start[np.minimum(at, len(self.start) - 1)] if len(self.start) else ts
        hit = inside & (np.abs(at_start - ts[known]) <= TARGET_TOLERANCE)
        found = np.full(len(ts), -1, dtype=np.int64)
        found[known[hit]] = self.order[at[hit]]
        missed = np.ones(len(ts), dtype=bool)
        missed[known[hit]] = False
        rest = np.flatnonzero(missed)
        found[rest], unsure = self._enclosing_many(code[rest], ts[rest], TARGET_TOLERANCE)
        return self._settle(found, rest[unsure], lanes, ts, self.target)

    def _lane_codes(self, lanes: np.ndarray) -> np.ndarray:
        """Each tid's lane position in `tids`, -1 for a lane without slices."""
        if not len(self.tids):
            return np.full(len(lanes), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.tids, lanes), len(self.tids) - 1)
        return np.where(self.tids[at] == lanes, at, -1).astype(np.int64)

    def _search(self, code: np.ndarray, x: np.ndarray, side: str) -> np.ndarray:
        """Position in the sorted slices of `x` among the starts of lane `code`, per end."""
        out = np.zeros(len(code), dtype=np.int64)
        for c in np.unique(code).tolist():
            mine = code == c
            a, b = self.bounds[c], self.bounds[c + 1]
            out[mine] = a + np.searchsorted(self.start[a:b], x[mine], side)
        return out

    def _enclosing_many(self, code: np.ndarray, ts: np.ndarray,
                        tol: float) -> tuple[np.ndarray, np.ndarray]:
        """`_enclosing` where one slice decides it (found: its position, -1 for None);
        `unsure` marks the ends that need the scan."""
        found = np.full(len(ts), -1, dtype=np.int64)
        unsure = np.zeros(len(ts), dtype=bool)
        known = np.flatnonzero(code >= 0)
        if not len(known):
            return found, unsure
        c, t = code[known], ts[known]
        lo = self.bounds[c]
        j = self._search(c, t + tol, "right") - 1       # the latest slice starting by ts + tol
        some = j >= lo
        jj = np.maximum(j, 0)
        encloses = some & (self.start[jj] - tol <= t) & (t <= self.end[jj] + tol)
        prev = np.maximum(jj - 1, 0)
        alone = (j == lo) | (self.max_end[prev] + tol < t)   # no earlier slice can enclose
        gone = some & ~encloses & (self.max_end[jj] + tol < t)  # none encloses
        decided = ~some | gone | (encloses & alone)
        found[known[encloses & alone]] = self.order[jj[encloses & alone]]
        unsure[known[~decided]] = True
        return found, unsure

    @staticmethod
    def _settle(found: np.ndarray, unsure: np.ndarray, lanes: np.ndarray, ts: np.ndarray,
                one: Callable[[int, float], int | None]) -> np.ndarray:
        """`found` with the ends at positions `unsure` answered one at a time by `one`."""
        if len(unsure):
            lane_list, ts_list = lanes[unsure].tolist(), ts[unsure].tolist()
            got = [one(lane, t) for lane, t in zip(lane_list, ts_list)]
            found[unsure] = [-1 if g is None else g for g in got]
        return found

    def _enclosing(self, lane: int, ts: float, tol: float) -> int | None:
        """The latest-starting task on `lane` with start - tol <= ts <= end + tol (among the 64
        latest-starting tasks that start by ts + tol; ties in distance to the end: the later
        starting one)."""
        lst, starts, ends, max_end = self._lane(lane)
        if not starts:
            return None
        i = bisect.bisect_right(starts, ts + tol)
        best, best_d = None, 0.0
        for j in range(i - 1, max(0, i - _SCAN) - 1, -1):
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
        lst, starts, _, _ = self._lane(lane)
        i = bisect.bisect_left(starts, ts - tol)
        if i < len(starts) and abs(starts[i] - ts) <= tol:
            return lst[i]
        return self._enclosing(lane, ts, tol)
