"""GM traffic of a task as the memory hierarchy serves it: the L2 cache and write-back.

Takes a task's GM boxes → the bytes that hit L2, the bytes that go to HBM, and whether its
writes land in L2 (the bandwidth they get is `flow`'s). Keeps: the L2 hits are exactly those of
the plain definition (`tests/machine/test_l2_lines_brought_in.py`: a line hits when fewer than
`l2_kept / l2_line` lines were brought into L2, i.e. missed, since it was last touched; reads
and writes alike). What L2 keeps is its effective capacity, not its physical size (`l2_kept`).
"""
from __future__ import annotations

import itertools
from math import prod as _prod

import numpy as np
from numpy import greater_equal as _greater_equal
try:  # NOTE: the C function without np.count_nonzero's Python wrapper (numpy 2.x path)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import count_nonzero as _count_nonzero

from pypto.machine.result import SimTask

_NEVER = -(2**62)   # the stamp of a line never touched


class _Lines:
    """The recency stamps of one storage's lines, and the facts that let `touch` skip
    reading them. NOTE: a run often covers the previous run of its storage (a tile read again,
    a streaming read advancing by less than a line), which then never needs writing: the
    write waits in `deferred` until a later run does not cover it or a read needs the stamps."""

    __slots__ = ("stamps", "untouched", "first", "last", "oldest", "newest", "deferred")

    def __init__(self, lines: int):
        self.stamps = np.full(lines, _NEVER, dtype=np.int64)
        self.untouched = 0       # lines from here on were never touched
        self.first = 0           # the recent region first..last: every line touched, ...
        self.last = -1
        self.oldest = _NEVER     # ... with a stamp >= `oldest`
        self.newest = _NEVER     # the storage's newest stamp
        self.deferred: tuple[int, int, int] | None = None   # (first, last, stamp) not written

    def write_deferred(self) -> None:
        """Write the deferred run's stamps, which a read or a non-covering run needs now."""
        first, last, stamp = self.deferred
        self.stamps[first:last + 1] = stamp
        self.deferred = None

    def count_hits(self, first: int, last: int, old: int) -> int:
        """How many of lines first..last have a stamp >= `old` (a numpy comparison)."""
        if self.deferred is not None:   # the comparison needs it
            self.write_deferred()
        return int(_count_nonzero(_greater_equal(self.stamps[first:last + 1], old)))

    def grow(self, last: int) -> np.ndarray:
        """An alias with a bigger shape than the storage's first access: grow the stamps."""
        grown = np.full(last + 1, _NEVER, dtype=np.int64)
        grown[:len(self.stamps)] = self.stamps
        self.stamps = grown
        return grown

    def touch(self, first: int, last: int, clock: int, max_lines: int) -> tuple[int, int]:
        """Touch lines first..last at `clock`: (lines that hit, the clock advanced by the
        lines brought in)."""
        if last >= len(self.stamps):
            self.grow(last)
        if first == last and first < self.untouched:
            hit, clock = self._touch_line(first, clock, max_lines)
        else:
            hit, clock = self._touch_run(first, last, clock, max_lines)
        self._extend_recent(first, last, clock, max_lines)
        self.newest = clock
        return hit, clock

    def _touch_line(self, first: int, clock: int, max_lines: int) -> tuple[int, int]:
        """One line touched before: its own stamp decides."""
        stamps = self.stamps
        if self.deferred is not None:   # the read below needs it
            self.write_deferred()
        if stamps[first] >= clock - max_lines:
            hit = 1
        else:   # a line brought in: the clock counts these (see `L2`)
            hit = 0
            clock += 1
        stamps[first] = clock
        return hit, clock

    def _touch_run(self, first: int, last: int, clock: int, max_lines: int) -> tuple[int, int]:
        """A run of lines: hits counted through the shortcuts of `L2` where they are exact,
        the stamps deferred."""
        top = self.untouched
        old = clock - max_lines
        if first >= top or self.newest < old:   # NOTE: all misses, see `L2`
            hit = 0
        elif self.oldest >= old and self.first <= first and (
                seen := last if last < top else top - 1) <= self.last:
            hit = seen + 1 - first
        else:
            hit = self.count_hits(first, last, old)
        if last >= top:
            self.untouched = last + 1
        clock += last + 1 - first - hit   # the lines this run brought in (see `L2`)
        # this run's stamps wait; the deferred one is written unless this covers it
        deferred = self.deferred
        if deferred is not None and (deferred[0] < first or deferred[1] > last):
            # `write_deferred`, inlined (NOTE: a streaming read does this per task)
            self.stamps[deferred[0]:deferred[1] + 1] = deferred[2]
        self.deferred = (first, last, clock)
        return hit, clock

    def _extend_recent(self, first: int, last: int, clock: int, max_lines: int) -> None:
        """The recent region grows over overlapping or adjacent runs, else restarts."""
        if first <= self.last + 1 and last + 1 >= self.first and self.oldest >= clock - max_lines:
            if first < self.first:
                self.first = first
            if last > self.last:
                self.last = last
        else:
            self.first, self.last, self.oldest = first, last, clock


class L2:
    """L2 as recency stamps per GM line (`memory.l2_line` bytes).

    NOTE: this approximates LRU so that a contiguous run of lines is one numpy slice instead
    of hundreds of dictionary operations: its clock counts the lines brought into L2 (misses),
    and a line hits while fewer than `max_lines` came in since it was last touched. An LRU
    evicts a line once `max_lines` distinct lines were touched after it: those brought in (all
    counted here) and resident lines re-read (not counted), so this errs toward hits only where
    re-reads of lines older than it push a line out. Counting every access instead (until
    2026-12) erred toward misses far more: a resident working set re-read many times between
    two uses of a line aged it by every re-read (the 6144^3 matmul with L2-aware loops re-reads
    its B column views after ~650 MB of accesses but under 74 MiB of distinct lines, so an
    L2 keeping 100 MiB keeps them; counting accesses sent 530 MB of them to HBM). `access`
    takes all of a task's reads (or writes) in one call: the per-call overhead was a third of
    the model's cost. Exact shortcuts around the numpy comparison: lines past the highest one
    touched so far are all misses (a streaming read skips the comparison), nothing hits when
    the storage's newest stamp is too old, and everything up to the untouched lines hits
    inside the recent region while its oldest stamp does."""

    BOXES_KEPT = 1 << 16   # boxes whose lines are remembered (forgotten all at once when full)

    def __init__(self, capacity: float, line: int):
        self.line = line
        self.capacity = capacity
        self.max_lines = max(1, int(capacity // line))
        self.clock = 0
        self.states: dict[int, _Lines] = {}
        # (access, layout) -> (first, last) lines of its runs, for boxes off the fast paths.
        # NOTE: tasks of one kernel access the same boxes over and over (a 9k-task attention
        # kernel: 44k accesses of 5k boxes), and finding the runs of such a box costs more
        # than remembering them
        self.boxes: dict[tuple, tuple] = {}

    def access(self, accs: list, layouts: list, uncached: frozenset) -> tuple:
        """Access boxes in order, NONE_CACHEABLE storages (`uncached`) bypassing L2; returns
        (bytes of all the boxes, lines that hit, lines touched, whether any box was cached)."""
        nbytes, hit, total, cached = 0.0, 0, 0, False
        line, max_lines, states, clock = self.line, self.max_lines, self.states, self.clock
        for acc, layout in zip(accs, layouts):   # NOTE: unpacked at once: zip reuses its tuple
            storage = acc[0]
            shape, itemsize = layout
            size, runs = self._box_lines(acc, layout)
            nbytes += size * itemsize
            if storage in uncached:
                continue
            cached = True
            st = states.get(storage)
            if st is None:
                st = states[storage] = _Lines(int(_prod(shape) * itemsize) // line + 1)
            for first, last in runs:
                h, clock = st.touch(first, last, clock, max_lines)
                hit += h
                total += last + 1 - first
        self.clock = clock
        return nbytes, hit, total, cached

    def _box_lines(self, acc: tuple, layout: tuple) -> tuple:
        """(elements of the box, the (first, last) lines of each of its contiguous runs)."""
        _, offs, ext = acc
        shape, itemsize = layout
        rank = len(ext)
        if rank == 2 and ext[0] == 1 and len(shape) == 2:
            # NOTE: fast paths: one partial row is one contiguous run, from byte lo to hi
            size = ext[1]
            start = offs[0] * shape[1] + offs[1]
            lo, hi = start * itemsize, (start + size) * itemsize - 1
        elif rank == len(shape) and ext.count(1) - (ext[-1] == 1) == rank - 1:
            size = _prod(ext)
            start = _flat(offs, shape)
            lo, hi = start * itemsize, (start + ext[-1]) * itemsize - 1
        else:
            box = (acc, layout)
            runs = self.boxes.get(box)
            return _prod(ext), (self._runs(box) if runs is None else runs)
        line = self.line   # (sub-byte elements: whole bytes, as in `_runs`)
        return size, ((int(lo) // line, int(hi) // line),)

    def _runs(self, box: tuple) -> tuple[tuple[int, int], ...]:
        """The (first, last) lines of each contiguous run of a box that takes no fast path of
        `_box_lines`, remembered in `boxes`."""
        (_, offs, ext), (shape, itemsize) = box
        runs = None
        size = _prod(ext)
        if size and len(ext) == len(shape):
            # NOTE: `segments`' single run without its generator: whole inner dims (from k
            # on) after unit outer dims are one run of the whole box
            k = len(ext) - 1
            while k > 0 and offs[k] == 0 and ext[k] == shape[k]:
                k -= 1
            if ext[:k].count(1) == k:
                runs = ((_flat(offs, shape), size),)
        if runs is None:
            runs = segments(offs, ext, shape)
        line = self.line
        lines = tuple((int(start * itemsize) // line, int((start + length) * itemsize - 1)
                       // line) for start, length in runs)
        boxes = self.boxes
        if len(boxes) >= self.BOXES_KEPT:
            boxes.clear()
        boxes[box] = lines
        return lines


def _flat(offs: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """The row-major element index of `offs`."""
    index = 0
    for o, d in zip(offs, shape):
        index = index * d + o
    return index


def segments(offs: tuple[int, ...], ext: tuple[int, ...], shape: tuple[int, ...]):
    """(first element, element count) of each contiguous run of a box in a row-major tensor."""
    if not shape or any(e == 0 for e in ext):
        return
    k = len(shape) - 1
    while k > 0 and offs[k] == 0 and ext[k] == shape[k]:
        k -= 1  # dims k+1.. are whole: rows of dim k are contiguous with each other
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    run = ext[k] * strides[k]
    # the run starts in row-major order of the outer dims (the last outer dim fastest)
    starts = [offs[k] * strides[k]]
    for j in range(k):
        stride, o = strides[j], offs[j]
        starts = [b + i * stride for b in starts for i in range(o, o + ext[j])]
    yield from zip(starts, itertools.repeat(run))


def l2_kept(memory: dict) -> float:
    """The bytes of a working set L2 keeps: `l2_effective_capacity`, never more than the
    physical `l2_capacity` (a machine file that shrinks L2 shrinks what it keeps; a memory
    section without the key keeps all of L2).

    NOTE: 100 MiB of a2a3's 192 MiB: Huawei's own matmul templates size their L2 blocks to
    that (catlass `BlockSchedulerL2MisplaceCore`: `L2_TILE_THRESHOLD = 100 * 1024 * 1024`,
    inputs and output together; an asc-devkit sample calls it the "100MB effective
    working-set threshold"; runtime_facts §4). Above it a working set streams: the LRU keeps
    this many bytes, and the write-back rule of `Memory` absorbs this many."""
    physical = memory["l2_capacity"]
    return min(memory.get("l2_effective_capacity", physical), physical)


class Memory:
    """L2 and HBM as the tasks of one run see them, in the order they start.

    Reads that hit L2 take L2 bandwidth, misses HBM bandwidth (shared as `flow` says). L2 is
    write-back (hw_model §5) and write-allocate (runtime_facts §4): a task's writes touch
    their lines like reads do (`L2.access`), so a line written and not yet in L2 is brought
    in, advances the clock and ages the inputs like a miss. Writes land in L2 at its
    bandwidth until the kernel has written more than L2 keeps (`l2_kept`); from then on every
    write evicts a dirty line and moves at the HBM share. NONE_CACHEABLE storages never enter
    L2."""

    def __init__(self, memory: dict):
        self.l2_capacity = l2_kept(memory)   # what L2 keeps (the physical size may be more)
        self.l2 = L2(self.l2_capacity, int(memory["l2_line"]))
        # NOTE: as floats (same values): the durations then add floats to floats, which
        # CPython does without its mixed-type paths
        self.hbm_bw = float(memory["hbm_bytes_per_cycle"])
        self.l2_bw = float(memory["l2_bytes_per_cycle"])
        self.written = 0.0   # GM bytes written so far (L2 absorbs them until it is full)

    def serve(self, task: SimTask) -> tuple[float, float, bool]:
        """(L2-hit bytes, HBM bytes, whether the writes land in L2) of `task`, which starts
        now: its reads and writes enter L2 in the order the tasks start (the bandwidth each
        class of traffic gets is `flow`'s)."""
        access = self.l2.access
        uncached = task.uncached
        reads_total, hit_lines, total_lines, _ = access(task.reads, task.read_layouts, uncached)
        mte2 = task.mte2_bytes
        if total_lines:
            hit = reads_total * hit_lines / total_lines
            if mte2 <= hit:
                hit = mte2
        else:
            hit = 0.0
        writes = task.writes
        cached_writes = bool(writes) and access(writes, task.write_layouts, uncached)[3]
        mte3 = task.mte3_bytes
        write_back = cached_writes and self.written + mte3 <= self.l2_capacity
        self.written += mte3
        return hit, mte2 - hit, write_back
