"""Which stitched tasks touch overlapping GM, one of them writing: every such pair of one window,
with the kind of conflict, the storage and the overlapping region, found with numpy.

Takes one window's tasks (`SimTask`s in submission order) and the storage copy of each of
their accesses (`runtime.dependency_check.storage_copies`: which memory an access really
touches) → `Conflicts`: per task pair (first, second in submission order) the kind (RAW: the
first writes what the second reads; WAR; WAW), the storage and the region (the first
overlapping access pair found, read-after-write preferred). Read-read pairs are no conflict.
Boxes are closed-open per dim: a zero extent overlaps nothing. Two boxes of one storage copy
with different ranks (a reshaped alias) are assumed to overlap.

Its own module: the dependency check (`runtime.dependency_check`) and deps.json
(`profiling.deps_json`, the reason of each edge) both ask it; neither needs how it is found.
NOTE: all-pairs is quadratic and a grid walked box by box (`box_grid.BoxGrid`) costs a Python
step per candidate. Here each access is spread over the cells of a grid per storage copy (cell:
the copy's first box, as `BoxGrid` does), every write is paired with the accesses sharing a
cell with it, and the candidates are tested, deduplicated and classified as arrays: a 10k-task
window with ~500k conflicting pairs takes a fraction of a second. An access spanning more than
`WIDE` cells is paired with every access of its copy instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pypto.machine.result import SimTask

WIDE = 64
KINDS = ("RAW", "WAR", "WAW")


@dataclass
class Conflicts:
    """The conflicting task pairs of one window (local task indices, first < second)."""

    first: np.ndarray
    second: np.ndarray
    kind: np.ndarray        # index into KINDS
    storage: np.ndarray
    offsets: np.ndarray     # (pairs, rank) the overlapping region, padded with 0
    extents: np.ndarray     # padded with 1
    rank: np.ndarray

    def __len__(self) -> int:
        return len(self.first)

    def region(self, k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        r = int(self.rank[k])
        return (tuple(int(x) for x in self.offsets[k, :r]),
                tuple(int(x) for x in self.extents[k, :r]))


@dataclass
class _Accesses:
    """The window's accesses as arrays."""

    task: np.ndarray
    write: np.ndarray
    copy: np.ndarray        # storage copy code
    storage: np.ndarray
    rank: np.ndarray
    offs: np.ndarray        # (m, R), padded with 0
    ext: np.ndarray         # (m, R), padded with 1


def _table(tasks: Sequence[SimTask], copies: list) -> _Accesses:
    codes: dict[tuple, int] = {}
    rows = []
    for k, (t, (rc, wc)) in enumerate(zip(tasks, copies)):
        for (sid, o, e), c in zip(t.reads, rc):
            rows.append((k, False, codes.setdefault(c, len(codes)), sid, o, e))
        for (sid, o, e), c in zip(t.writes, wc):
            rows.append((k, True, codes.setdefault(c, len(codes)), sid, o, e))
    width = max((len(r[4]) for r in rows), default=1) or 1
    offs = np.zeros((len(rows), width), np.int64)
    ext = np.ones((len(rows), width), np.int64)
    for i, r in enumerate(rows):
        n = len(r[4])
        offs[i, :n] = r[4]
        ext[i, :n] = r[5]
    col = (lambda j, dt: np.fromiter((r[j] for r in rows), dt, len(rows)))  # noqa: E731
    return _Accesses(col(0, np.int64), col(1, bool), col(2, np.int64), col(3, np.int64),
                     np.fromiter((len(r[4]) for r in rows), np.int64, len(rows)), offs, ext)


def _cells(a: _Accesses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(access, cell id) of every cell each not-wide access covers; the wide accesses."""
    m = len(a.task)
    first = np.full(int(a.copy.max()) + 1, -1, np.int64)
    first[a.copy[::-1]] = np.arange(m)[::-1]               # each copy's first access
    cell = np.maximum(a.ext[first[a.copy]], 1)
    lo = a.offs // cell
    hi = (a.offs + np.maximum(a.ext, 1) - 1) // cell
    span = hi - lo + 1
    count = np.prod(span, axis=1)
    ranks = np.zeros(len(first), np.int64)
    mixed = np.zeros(len(first), bool)
    np.maximum.at(ranks, a.copy, a.rank)
    mixed[a.copy[a.rank != ranks[a.copy]]] = True          # a reshaped alias in the copy
    wide = (count > WIDE) | mixed[a.copy]
    keep = np.flatnonzero(~wide)
    rep = np.repeat(keep, count[keep])
    k = np.arange(len(rep)) - np.repeat(np.cumsum(count[keep]) - count[keep], count[keep])
    coords = [a.copy[rep]]
    for d in range(a.offs.shape[1] - 1, -1, -1):
        s = span[rep, d]
        coords.append(lo[rep, d] + k % s)
        k = k // s
    _, cell_id = np.unique(np.stack(coords, axis=1), axis=0, return_inverse=True)
    return rep, cell_id.reshape(-1), np.flatnonzero(wide)


def _candidates(a: _Accesses) -> tuple[np.ndarray, np.ndarray]:
    """Access pairs (i, j) that may overlap with a write among them (some twice)."""
    rep, cell, wide = _cells(a)
    order = np.argsort(cell, kind="stable")
    rep, cell = rep[order], cell[order]
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    size = np.diff(np.r_[starts, len(cell)])
    begin = np.repeat(starts, size)        # per member: its cell's first position
    n = np.repeat(size, size)
    w = np.flatnonzero(a.write[rep])       # positions of writes
    pi = np.repeat(w, n[w])
    pj = np.repeat(begin[w], n[w]) + (np.arange(len(pi)) - np.repeat(np.cumsum(n[w]) - n[w],
                                                                        n[w]))
    i, j = [rep[pi]], [rep[pj]]
    if len(wide):   # a wide access against every access of its copy
        order = np.argsort(a.copy, kind="stable")
        copies = a.copy[order]
        lo = np.searchsorted(copies, a.copy[wide], "left")
        hi = np.searchsorted(copies, a.copy[wide], "right")
        cnt = hi - lo
        wi = np.repeat(wide, cnt)
        wj = order[np.repeat(lo, cnt) + (np.arange(len(wi)) - np.repeat(np.cumsum(cnt) - cnt,
                                                                         cnt))]
        i.append(wi)
        j.append(wj)
    return np.concatenate(i), np.concatenate(j)


def find_conflicts(tasks: Sequence[SimTask], copies: list) -> Conflicts:
    """The conflicting task pairs of one window (see the module docstring)."""
    a = _table(tasks, copies)
    empty = np.zeros(0, np.int64)
    if not a.write.any():
        return Conflicts(empty, empty, empty, empty, np.zeros((0, 1), np.int64),
                         np.zeros((0, 1), np.int64), empty)
    i, j = _candidates(a)
    ti, tj = a.task[i], a.task[j]
    keep = (ti != tj) & (a.write[i] | a.write[j]) & (a.copy[i] == a.copy[j])
    i, j = i[keep], j[keep]
    same = a.rank[i] == a.rank[j]
    ends = a.offs + a.ext
    # (dim by dim: 1-D takes are the cheap ones)
    hit = ~same | np.logical_and.reduce([np.maximum(o[i], o[j]) < np.minimum(e[i], e[j])
                                         for o, e in zip(a.offs.T, ends.T)])
    i, j = i[hit], j[hit]
    swap = a.task[i] > a.task[j]           # first = the earlier task
    i, j = np.where(swap, j, i), np.where(swap, i, j)
    wi, wj = a.write[i], a.write[j]
    kind = np.where(wi & wj, 2, np.where(wi, 0, 1))
    first, second = a.task[i], a.task[j]
    key = (first * len(tasks) + second) * 4 + kind
    order = np.argsort(key)                # per pair: RAW first
    pair = key[order] >> 2
    once = order[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else order
    i, j = i[once], j[once]
    lo = np.maximum(a.offs[i], a.offs[j])
    same = (a.rank[i] == a.rank[j])[:, None]
    offs = np.where(same, lo, a.offs[i])
    ext = np.where(same, np.minimum(ends[i], ends[j]) - lo, a.ext[i])
    return Conflicts(first[once], second[once], kind[once], a.storage[i], offs, ext, a.rank[i])
