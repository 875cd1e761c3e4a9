"""The discrete-event simulation of one kernel run on the A2/A3 machine model.

Takes the stitched tasks (`runtime.stitch`) → a `SimResult`. Keeps: deterministic by
construction (events run in (time, order raised) order; no set iteration reaches the output).
The model, with every constant from the machine spec:

- AICPU control thread builds the windows (device tasks) one after another: a base cost, a
  cost per root instance and per cross-instance dependency, so a big window costs more to
  build before its first task can start;
- window w starts after it is built, handed over (launch cost) and window w-1 has finished;
- scheduler threads each own a share of the cores; dispatching a task costs its thread time,
  and so does resolving the successors of a finished task; a core holds one running and one
  pending task (`slots_per_core`);
- `device_sched_mode`: 0 one shared FIFO ready queue; 1 L2 affinity: newest ready task first,
  handed to the core that produced its input when that core is free; 2 fairness: cores are
  taken from the scheduler thread that has dispatched least; 3 = 1 + 2;
- a task's duration comes from `machine.cost.TaskTimer` with its MTE2 bandwidth lowered by
  contention: reads that hit the LRU L2 share L2 bandwidth, misses share HBM bandwidth, among
  the tasks running when it starts. NONE_CACHEABLE storages never enter L2.
"""
from __future__ import annotations

import gc
import heapq
import itertools
from math import prod as _prod
from collections import defaultdict, deque
from functools import reduce
from itertools import chain, compress, islice
from operator import add, attrgetter, le
from typing import Sequence

import numpy as np
from numpy import greater_equal as _greater_equal
try:  # NOTE: the C function without np.count_nonzero's Python wrapper (numpy 2.x path)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import count_nonzero as _count_nonzero

from pypto.machine.result import AicpuRun, SimResult, SimTask, TaskRun
from pypto.machine.spec import MachineSpec


_NEVER = -(2**62)   # the stamp of a line never touched
_NO_END = float("nan")   # equal to no time (a float: comparing it to one stays cheap)


class _L2:
    """L2 as recency stamps per GM line (`memory.l2_line` bytes): a line hits when fewer than
    `l2_capacity / l2_line` line accesses happened since it was last touched.

    NOTE: this approximates LRU (it counts accesses, not distinct lines) so that a contiguous
    run of lines is one numpy slice instead of hundreds of dictionary operations."""

    BOXES_KEPT = 1 << 16   # boxes whose lines are remembered (forgotten all at once when full)

    def __init__(self, capacity: float, line: int):
        self.line = line
        self.capacity = capacity
        self.max_lines = max(1, int(capacity // line))
        self.clock = 0
        # per storage: [stamps, untouched, first, last, oldest, newest, deferred]: lines from
        # `untouched` on were never touched; every line of the recent region first..last was
        # touched and has a stamp >= `oldest`; `newest` is the storage's newest stamp;
        # `deferred` is the last run's (first, last, stamp) not yet written to `stamps`.
        # NOTE: a run often covers the previous run of its storage (a tile read again, a
        # streaming read advancing by less than a line), which then never needs writing: the
        # write waits until a later run does not cover it or a read needs the stamps.
        self.states: dict[int, list] = {}
        # (access, layout) -> (first, last) lines of its runs, for boxes off the fast paths.
        # NOTE: tasks of one kernel access the same boxes over and over (a 9k-task attention
        # kernel: 44k accesses of 5k boxes), and finding the runs of such a box costs more
        # than remembering them
        self.boxes: dict[tuple, tuple] = {}

    def access(self, accs: list, layouts: list, uncached: frozenset) -> tuple[float, int, int,
                                                                                bool]:
        """Access boxes in order, NONE_CACHEABLE storages (`uncached`) bypassing L2; returns
        (bytes of all the boxes, lines that hit, lines touched, whether any box was cached).
        NOTE: one call per task's reads (or writes), not per box: the per-call overhead was a
        third of the L2 model's cost."""
        nbytes = 0.0
        hit = total = 0
        cached = False
        line, max_lines, states = self.line, self.max_lines, self.states
        clock = self.clock
        for acc, layout in zip(accs, layouts):   # NOTE: unpacked at once: zip reuses its tuple
            storage, offs, ext = acc
            shape, itemsize = layout
            # the (first, last) lines of each contiguous run of the box
            rank = len(ext)
            if rank == 2 and ext[0] == 1 and len(shape) == 2:
                # NOTE: fast paths: one partial row is one contiguous run, from byte lo to hi
                size = ext[1]
                start = offs[0] * shape[1] + offs[1]
                lo, hi = start * itemsize, (start + size) * itemsize - 1
            elif rank == len(shape) and ext.count(1) - (ext[-1] == 1) == rank - 1:
                size = _prod(ext)
                start = 0
                for o, d in zip(offs, shape):
                    start = start * d + o
                lo, hi = start * itemsize, (start + ext[-1]) * itemsize - 1
            else:
                size = _prod(ext)
                lo = None
                box = (acc, layout)
                runs = self.boxes.get(box)
                if runs is None:
                    runs = self._runs(box)
            nbytes += size * itemsize
            if storage in uncached:
                continue
            cached = True
            st = states.get(storage)
            if st is None:
                st = states[storage] = [
                    np.full(int(_prod(shape) * itemsize) // line + 1, _NEVER, dtype=np.int64),
                    0, 0, -1, _NEVER, _NEVER, None]
            stamps = st[0]
            if lo is not None:
                if lo.__class__ is not int:   # sub-byte elements: whole bytes, as in `_runs`
                    lo, hi = int(lo), int(hi)
                runs = ((lo // line, hi // line),)
            for first, last in runs:
                if last >= len(stamps):
                    stamps = self._grow(st, last)
                n = last + 1 - first
                _, top, r_first, r_last, r_min, r_newest, deferred = st
                if n == 1 and first < top:
                    if deferred is not None:   # the read below needs it
                        stamps[deferred[0]:deferred[1] + 1] = deferred[2]
                        st[6] = None
                    if stamps[first] >= clock - max_lines:
                        hit += 1
                    clock += 1
                    stamps[first] = clock
                else:
                    if first >= top:
                        # NOTE: lines past the highest one touched so far are all misses; a
                        # streaming read skips the comparison
                        st[1] = last + 1
                    else:
                        # NOTE: exact shortcuts around the numpy comparison: nothing hits
                        # when the storage's newest stamp is too old, and everything up to
                        # the untouched lines (all misses) hits inside the recent region
                        old = clock - max_lines
                        if r_newest < old:
                            pass
                        elif r_min >= old and r_first <= first and (
                                seen := last if last < top else top - 1) <= r_last:
                            hit += seen + 1 - first
                        else:
                            if deferred is not None:   # the comparison needs it
                                stamps[deferred[0]:deferred[1] + 1] = deferred[2]
                                deferred = None
                            hit += int(_count_nonzero(_greater_equal(stamps[first:last + 1],
                                                                     old)))
                        if last >= top:
                            st[1] = last + 1
                    clock += n
                    # this run's stamps wait; the deferred run is written now unless this
                    # run covers all of its lines
                    if deferred is not None and (deferred[0] < first or deferred[1] > last):
                        stamps[deferred[0]:deferred[1] + 1] = deferred[2]
                    st[6] = (first, last, clock)
                # the recent region grows over overlapping or adjacent runs while its
                # oldest stamp still hits, else restarts at this run
                if first <= r_last + 1 and last + 1 >= r_first and r_min >= clock - max_lines:
                    if first < r_first:
                        st[2] = first
                    if last > r_last:
                        st[3] = last
                else:
                    st[2] = first
                    st[3] = last
                    st[4] = clock
                st[5] = clock
                total += n
        self.clock = clock
        return nbytes, hit, total, cached

    def _runs(self, box: tuple) -> tuple[tuple[int, int], ...]:
        """The (first, last) lines of each contiguous run of a box that takes no fast path of
        `access`, remembered in `boxes`."""
        (_, offs, ext), (shape, itemsize) = box
        runs = None
        size = _prod(ext)
        if size and len(ext) == len(shape):
            # NOTE: `_segments`' single run without its generator: whole inner dims (from k
            # on) after unit outer dims are one run of the whole box
            k = len(ext) - 1
            while k > 0 and offs[k] == 0 and ext[k] == shape[k]:
                k -= 1
            if ext[:k].count(1) == k:
                start = 0
                for o, d in zip(offs, shape):
                    start = start * d + o
                runs = ((start, size),)
        if runs is None:
            runs = _segments(offs, ext, shape)
        line = self.line
        lines = tuple((int(start * itemsize) // line, int((start + length) * itemsize - 1)
                       // line) for start, length in runs)
        boxes = self.boxes
        if len(boxes) >= self.BOXES_KEPT:
            boxes.clear()
        boxes[box] = lines
        return lines

    def _grow(self, st: list, last: int) -> np.ndarray:
        """An alias with a bigger shape than the storage's first access: grow its stamps."""
        stamps = st[0]
        grown = np.full(last + 1, _NEVER, dtype=np.int64)
        grown[:len(stamps)] = stamps
        st[0] = grown
        return grown


def _segments(offs: tuple[int, ...], ext: tuple[int, ...], shape: tuple[int, ...]):
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


class _Graph:
    """One window's dependency graph over task positions 0..n-1 instead of task ids, so the
    event loop indexes lists rather than hashing ids; also what building the window costs the
    AICPU control thread (its instances and its edges across instances)."""

    __slots__ = ("ids", "kinds", "remaining", "successors", "roots", "instances", "cross_edges")

    def __init__(self, tasks: list[SimTask]):
        n = len(tasks)
        # NOTE: comprehensions, not map(attrgetter(...)): CPython specializes their attribute
        # reads, which makes them the cheaper of the two
        self.ids = ids = [t.id for t in tasks]
        position = dict(zip(ids, range(n)))
        instance = [t.instance for t in tasks]
        self.kinds = [0 if t.core == "AIC" else 1 for t in tasks]   # 0 AIC, 1 AIV
        self.remaining = remaining = [0] * n       # unresolved predecessors per task
        successors: list[list[int] | None] = [None] * n
        self.successors = successors
        self.roots = roots = []
        cross = 0
        for i, t in enumerate(tasks):
            preds = t.preds
            if not preds:
                roots.append(i)
                continue
            remaining[i] = len(preds)
            inst = instance[i]
            for p in preds:
                j = position[p]
                if instance[j] != inst:
                    cross += 1
                succ = successors[j]
                if succ is None:
                    successors[j] = [i]
                else:
                    succ.append(i)
        self.instances = len(set(instance))
        self.cross_edges = cross


class _Tally:
    """The sums behind a run's stats, fed the tasks that ran in task order. NOTE: fed window by
    window while a window's columns are still in cache; the sums add in the same order as one
    loop over all the runs."""

    __slots__ = ("first", "last", "busy_aic", "busy_aiv", "tasks", "tasks_aiv", "empty",
                 "read", "write", "hit", "hbm")

    def __init__(self):
        self.first, self.last = float("inf"), 0.0
        self.busy_aic = self.busy_aiv = 0.0
        self.tasks = self.tasks_aiv = self.empty = 0
        self.read = self.write = self.hit = self.hbm = 0.0

    def add(self, tasks: list[SimTask], kinds: list[int], starts: list[float],
            ends: list[float], hits: list[float], hbms: list[float]) -> None:
        if not tasks:
            return
        first, last = min(starts), max(ends)
        if first < self.first:
            self.first = first
        if last > self.last:
            self.last = last
        self.tasks += len(tasks)
        self.tasks_aiv += sum(kinds)
        busy_aic, busy_aiv, empty = self.busy_aic, self.busy_aiv, self.empty
        read, write = self.read, self.write
        for t, aiv, start, end in zip(tasks, kinds, starts, ends):
            if aiv:
                busy_aiv += end - start
            else:
                busy_aic += end - start
            empty += t.empty
            read += t.mte2_bytes
            write += t.mte3_bytes
        self.busy_aic, self.busy_aiv, self.empty = busy_aic, busy_aiv, empty
        self.read, self.write = read, write
        self.hit = reduce(add, hits, self.hit)
        self.hbm = reduce(add, hbms, self.hbm)


class Simulator:
    def __init__(self, spec: MachineSpec, sched_mode: int = 0,
                 sched_threads: int | None = None):
        self.spec = spec
        self.mode = sched_mode
        a = spec.aicpu
        self.threads = min(a["sched_threads"], sched_threads or a["sched_threads"])
        self.per_thread = a["cores_per_thread"]
        self.slots = a["slots_per_core"]
        self.l2 = _L2(spec.memory["l2_capacity"], int(spec.memory["l2_line"]))
        self.aicpu: list[AicpuRun] = []        # builds and scheduler work, in time order
        self.builds: list[AicpuRun] = []       # control thread: one build per window
        self.sched_work: list[AicpuRun] = []   # scheduler threads: resolves and dispatches
        dma, mem = spec.dma, spec.memory
        task = spec.task
        # per core type: (in bw, out bw, head, first-load latency, last-store latency, L1->L0
        # bw or 0 for a vector core): machine.cost.TaskTimer's constants. NOTE: as floats
        # (same values): the event loop then compares and adds floats to floats, which
        # CPython does without its mixed-type paths
        self._consts = {
            "AIC": _floats(dma["gm_to_l1"]["bw"], dma["l0c_to_gm"]["bw"],
                           task["head_cycles_aic"], dma["gm_to_l1"]["latency"],
                           dma["l0c_to_gm"]["latency"], dma["l1_to_l0b"]["bw"]),
            "AIV": _floats(dma["gm_to_ub"]["bw"], dma["ub_to_gm"]["bw"],
                           task["head_cycles_aiv"], dma["gm_to_ub"]["latency"],
                           dma["ub_to_gm"]["latency"], 0)}
        self._hbm = float(mem["hbm_bytes_per_cycle"])
        self._l2_bw = float(mem["l2_bytes_per_cycle"])
        self.runs: list[TaskRun] = []   # simulated order: window by window
        self.tally = _Tally()
        self._in_order = True   # the tasks come window by window: runs are in task order
        self._written = 0.0   # GM bytes written so far (L2 absorbs them until it is full)
        # per scheduler thread: its last work record and that record's end if it resolves
        # (or dispatches), else _NO_END, so back-to-back work of one kind extends one record
        self._last_work: list[AicpuRun | None] = [None] * (self.threads + 1)
        self._resolve_end = [_NO_END] * (self.threads + 1)
        self._dispatch_end = [_NO_END] * (self.threads + 1)
        self.flows: list[tuple[int, int]] = []

    def owner(self, core: str, index: int) -> int:
        """The scheduler thread (1-based) that manages a core."""
        per = self.per_thread["aic" if core == "AIC" else "aiv"]
        return min(self.threads, index // per + 1)

    # ---- whole run ----
    def run(self, tasks: list[SimTask], kernel: str,
            workspace: Sequence[float] = ()) -> SimResult:
        """`workspace`: GM workspace bytes of each window, as the stitcher measured them."""
        numbers = [t.window for t in tasks]
        self._in_order = all(map(le, numbers, islice(numbers, 1, None)))
        windows: dict[int, list[SimTask]] = defaultdict(list)
        for t in tasks:
            windows[t.window].append(t)
        a = self.spec.aicpu
        build_end = 0.0
        prev_end = 0.0
        window_stats = []
        for w in sorted(windows):
            wt = windows[w]
            graph = _Graph(wt)
            instances, cross = graph.instances, graph.cross_edges
            build = a["window_base_cycles"] + a["instance_cycles"] * instances \
                + a["edge_cycles"] * cross
            start_build = build_end
            build_end = start_build + build
            space = float(workspace[w]) if w < len(workspace) else 0.0
            self.builds.append(AicpuRun(0, f"build window {w}", start_build, build_end,
                                        {"instances": instances, "tasks": len(wt),
                                         "cross_edges": cross, "workspace_bytes": space}))
            self.aicpu.append(self.builds[-1])
            launch = max(build_end + a["launch_cycles"], prev_end)
            done = len(self.sched_work)
            prev_end = self.run_window(wt, graph, launch)
            self.aicpu += self.sched_work[done:]
            window_stats.append((instances, len(wt), cross, space))
        return self._result(tasks, kernel, build_end, window_stats)

    # ---- one window ----
    def run_window(self, tasks: list[SimTask], graph: _Graph, start: float) -> float:
        """Run one window's tasks from `start`; returns when its last task ends."""
        n = len(tasks)
        if not n:
            return start
        a = self.spec.aicpu
        n_aic, n_aiv = self.spec.aic, self.spec.aiv
        slots = self.slots
        # NOTE: hot loop (~5 us per task at 1M tasks). Tasks are positions i in the window,
        # cores are integers g (AIC 0..n_aic-1, then AIV), core types are 0 (AIC) / 1 (AIV),
        # everything per task or core is a list, and the event kind is in the sign of the
        # event code (ready: ~i, done: i), so no dict or tuple keys are built.
        kinds, remaining, successors = graph.kinds, graph.remaining, graph.successors
        core_of = [0] * n
        ready_at: list[float | None] = [None] * n
        begin_of: list[float | None] = [None] * n
        end_of = [0.0] * n
        hit_of = [0.0] * n
        hbm_of = [0.0] * n
        # The events: a heap of their distinct times, and per time its event codes in the
        # order they were raised, so events run in (time, raised) order. NOTE: not one heap
        # of (time, sequence number, code) tuples: comparing floats is a third of the cost
        # of comparing tuples, and events at one time cost one heap entry.
        times = [start]
        at = {start: [~i for i in graph.roots]}
        free_at = [start] * (n_aic + n_aiv)
        slots_used = [0] * (n_aic + n_aiv)
        free_slots = [n_aic * slots, n_aiv * slots]
        # NOTE: cores with `used` busy slots in heaps[type * slots + used], ordered like the
        # linear rule (free_at, g); entries go stale when a core changes and are checked when
        # popped.
        heaps: list[list] = [[] for _ in range(2 * slots)]
        heaps[0] = [(start, g) for g in range(n_aic)]
        if slots:
            heaps[slots] = [(start, g) for g in range(n_aic, n_aic + n_aiv)]
        owner = [self.owner("AIC", i) for i in range(n_aic)] + \
            [self.owner("AIV", i) for i in range(n_aiv)]
        thread_free = [start] * (self.threads + 1)
        dispatched = self._dispatched = [0] * (self.threads + 1)
        ready = (deque(), deque())
        producer_core: list[int | None] = [None] * n
        running: list[float] = []   # end times of running tasks (heap)
        resolve_cost = a["resolve_cycles_per_edge"]
        dispatch_cost = float(a["dispatch_cycles_per_task"])
        heappush, heappop = heapq.heappush, heapq.heappop
        resolved: list[int] = []   # tasks whose successors were resolved, in order: the flows
        resolved_append = resolved.append
        access, l2_capacity = self.l2.access, self.l2.capacity
        consts = (self._consts["AIC"], self._consts["AIV"])
        hbm_bw, l2_bw, written = self._hbm, self._l2_bw, self._written
        aicpu_append = self.sched_work.append
        last_work, resolve_end, dispatch_end = \
            self._last_work, self._resolve_end, self._dispatch_end
        lifo, fair = bool(self.mode & 1), bool(self.mode & 2)
        search = range(min(slots, 2))
        while times:
            now = heappop(times)
            # NOTE: an event raised at `now` from here lands in a new list, run after this one
            for code in at.pop(now):
                if code < 0:  # ready
                    i = ~code
                    ty = kinds[i]
                    ready[ty].append(i)
                    ready_at[i] = now
                    freed = -1
                else:  # done
                    g = core_of[code]
                    ty = kinds[code]
                    used = slots_used[g] = slots_used[g] - 1
                    if free_slots[ty] or not ready[ty]:
                        free_slots[ty] += 1
                        heappush(heaps[ty * slots + used], (free_at[g], g))
                        freed = -1
                    else:
                        # NOTE: saturated: g is now the only core of its type with a free slot and
                        # the waiting queue takes it below, so it skips the open-slot heaps
                        free_slots[ty] = 1
                        freed = g
                    succ = successors[code]
                    if succ:
                        th = owner[g]
                        t0 = thread_free[th]
                        if now > t0:
                            t0 = now
                        thread_free[th] = t1 = t0 + resolve_cost * len(succ)
                        # scheduler-thread work: back-to-back work of one kind is one event
                        if resolve_end[th] == t0:
                            last = last_work[th]
                            last.end = t1
                            last.args["count"] += len(succ)
                        else:
                            last_work[th] = last = AicpuRun(th, "resolve", t0, t1,
                                                            {"count": len(succ)})
                            aicpu_append(last)
                            dispatch_end[th] = _NO_END
                        resolve_end[th] = t1
                        resolved_append(code)
                        for s in succ:
                            left = remaining[s] = remaining[s] - 1
                            if lifo:  # a producer on the other core type is no affinity target
                                producer_core[s] = g if kinds[s] == ty else None
                            if left == 0:
                                codes = at.get(t1)
                                if codes is None:
                                    at[t1] = [~s]
                                    heappush(times, t1)
                                else:
                                    codes.append(~s)
                # Dispatch as much as possible at `now`. NOTE: only the event's core type can
                # dispatch: after every event each type has an empty queue or no free slot, and an
                # event changes one type's queue or slots.
                q = ready[ty]
                if not (q and free_slots[ty]):
                    continue
                while running and running[0] <= now:
                    heappop(running)
                while True:
                    if freed >= 0:
                        g, freed = freed, -1
                    elif lifo and (preferred := producer_core[q[-1]]) is not None \
                            and slots_used[preferred] == 0:
                        g = preferred
                    elif fair:
                        g = self._pick_core(ty, slots_used, free_at, owner, dispatched)
                        if g is None:
                            break
                    else:  # the earliest free core with the fewest busy slots
                        g = -1
                        for used in search:
                            heap = heaps[ty * slots + used]
                            while heap:
                                f, c = heappop(heap)
                                if slots_used[c] == used and free_at[c] == f:
                                    g = c
                                    break
                            if g >= 0:
                                break
                        if g < 0:
                            break
                    i = q.pop() if lifo else q.popleft()
                    task = tasks[i]
                    th = owner[g]
                    d0 = thread_free[th]
                    if now > d0:
                        d0 = now
                    thread_free[th] = d1 = d0 + dispatch_cost
                    if fair:
                        dispatched[th] += 1
                    if dispatch_end[th] == d0:
                        last = last_work[th]
                        last.end = d1
                        last.args["count"] += 1
                    else:
                        last_work[th] = last = AicpuRun(th, "dispatch", d0, d1, {"count": 1})
                        aicpu_append(last)
                        resolve_end[th] = _NO_END
                    dispatch_end[th] = d1
                    begin = free_at[g]
                    if d1 > begin:
                        begin = d1
                    # The task's cycles, L2-hit bytes and HBM bytes, started with `active` tasks
                    # running: the share of its reads that hit L2 moves at the L2 share of
                    # bandwidth, the rest at the HBM share, each capped by the core's own DMA rate.
                    # L2 is write-back (hw_model §5): writes land in L2 at its bandwidth until the
                    # kernel has written more than L2 holds; from then on every write evicts a
                    # dirty line and moves at the HBM share. The cycles are `TaskTimer.cycles`
                    # (head + first-load latency + busiest pipe + last-store latency).
                    # NOTE: inline, not a method: a call and a result tuple per task
                    core_bw, out_core_bw, head, fill_latency, drain_latency, l0_bw = consts[ty]
                    uncached = task.uncached
                    reads_total, hit_lines, total_lines, _ = access(task.reads, task.read_layouts,
                                                                    uncached)
                    mte2 = task.mte2_bytes
                    if total_lines:
                        hit = reads_total * hit_lines / total_lines
                        if mte2 <= hit:
                            hit = mte2
                    else:
                        hit = 0.0
                    hbm = mte2 - hit
                    writes = task.writes
                    cached_writes = writes and access(writes, task.write_layouts, uncached)[3]
                    mte3 = task.mte3_bytes
                    active = len(running) + 1
                    hbm_share = hbm_bw / active
                    l2_share = l2_bw / active
                    write_back = cached_writes and written + mte3 <= l2_capacity
                    written += mte3
                    if task.empty:
                        dur = float(head)
                    else:
                        in_bw = core_bw if core_bw <= hbm_share else hbm_share
                        l2_in_bw = core_bw * 2
                        if l2_share < l2_in_bw:
                            l2_in_bw = l2_share
                        t_in = hbm / in_bw + hit / l2_in_bw
                        out_bw = l2_share if write_back else hbm_share
                        if out_core_bw <= out_bw:
                            out_bw = out_core_bw
                        if l0_bw:  # AIC: the cube or the L1 -> L0 moves, whichever is busier
                            compute = task.mte1_bytes / l0_bw
                            if task.cube_cycles >= compute:
                                compute = task.cube_cycles
                        else:
                            compute = task.vector_cycles
                        busiest = t_in
                        if compute > busiest:
                            busiest = compute
                        if mte3:
                            t_out = mte3 / out_bw
                            if t_out > busiest:
                                busiest = t_out
                        dur = (head + (fill_latency if mte2 else 0.0) + busiest
                               + (drain_latency if mte3 else 0.0))
                    free_at[g] = end = begin + dur
                    used = slots_used[g] = slots_used[g] + 1
                    free_slots[ty] -= 1
                    if used < slots:
                        heappush(heaps[ty * slots + used], (end, g))
                    heappush(running, end)
                    core_of[i] = g
                    begin_of[i] = begin
                    end_of[i] = end
                    hit_of[i] = hit
                    hbm_of[i] = hbm
                    codes = at.get(end)
                    if codes is None:
                        at[end] = [i]
                        heappush(times, end)
                    else:
                        codes.append(i)
                    if not (q and free_slots[ty]):
                        break
        self._written = written
        if None in begin_of:   # never ran (a dependency cycle): no run, no stats
            ran = [b is not None for b in begin_of]
            tasks, kinds, core_of, begin_of, end_of, hit_of, hbm_of, ready_at = (
                list(compress(column, ran)) for column in (
                    tasks, kinds, core_of, begin_of, end_of, hit_of, hbm_of, ready_at))
        core_index = list(range(n_aic)) + list(range(n_aiv))   # per core g, within its type
        self.runs += map(TaskRun, tasks, map(core_index.__getitem__, core_of), begin_of,
                         end_of, hit_of, hbm_of, ready_at)
        if self._in_order:
            self.tally.add(tasks, kinds, begin_of, end_of, hit_of, hbm_of)
        # the flows: (pred id, succ id) per edge, preds in the order they were resolved
        ids = graph.ids
        self.flows += [(ids[p], ids[s]) for p in resolved for s in successors[p]]
        # every dispatched task ended in a processed event: the window ends at the last one
        return max(chain((start,), end_of))

    def _pick_core(self, ty: int, slots_used: list[int], free_at: list[float],
                   owner: list[int], dispatched: list[int]) -> int | None:
        """A core of type `ty` with a free slot, by the scheduling mode (the linear rule the
        open-slot heaps of run_window implement for modes 0 and 1)."""
        n_aic = self.spec.aic
        cores = range(n_aic) if ty == 0 else range(n_aic, n_aic + self.spec.aiv)
        candidates = [g for g in cores if slots_used[g] < self.slots]
        if not candidates:
            return None
        idle = [g for g in candidates if slots_used[g] == 0]
        pool = idle or candidates
        if self.mode & 2:
            return min(pool, key=lambda g: (dispatched[owner[g]], free_at[g], g))
        return min(pool, key=lambda g: (free_at[g], g))

    # ---- results ----
    def _result(self, tasks: list[SimTask], kernel: str, build_end: float,
                window_stats: list) -> SimResult:
        runs, tally = self.runs, self.tally
        if not self._in_order:
            where = {id(r.task): r for r in runs}
            runs = [where[id(t)] for t in tasks if id(t) in where]
            ran = [r.task for r in runs]
            tally.add(ran, [0 if t.core == "AIC" else 1 for t in ran],
                      *(list(map(attrgetter(name), runs))
                        for name in ("start", "end", "l2_hit_bytes", "hbm_bytes")))
        n_aic, n_aiv = self.spec.aic, self.spec.aiv
        first = tally.first if runs else 0.0
        last = tally.last
        span = max(last - first, 1e-9)
        sched = self.sched_work
        busy_aic, busy_aiv = tally.busy_aic, tally.busy_aiv
        stats = {
            "kernel_cycles": last - first,
            "e2e_cycles": max(last, build_end),
            "tasks": len(runs),
            "tasks_aic": len(runs) - tally.tasks_aiv,
            "tasks_aiv": tally.tasks_aiv,
            "empty_tasks": tally.empty,
            "utilization": (busy_aic + busy_aiv) / (span * (n_aic + n_aiv)),
            "utilization_aic": busy_aic / (span * n_aic),
            "utilization_aiv": busy_aiv / (span * n_aiv),
            "gm_read_bytes": tally.read,
            "gm_write_bytes": tally.write,
            "l2_hit_bytes": tally.hit,
            "hbm_read_bytes": tally.hbm,
            "windows": len(window_stats),
            "instances": sum(w[0] for w in window_stats),
            "cross_edges": sum(w[2] for w in window_stats),
            "aicpu_build_cycles": sum(r.end - r.start for r in self.builds),
            "aicpu_sched_cycles": sum([r.end - r.start for r in sched]),
            "sched_threads": self.threads,
            "workspace_bytes": max((w[3] for w in window_stats), default=0),
        }
        reads = stats["gm_read_bytes"]
        stats["l2_hit_ratio"] = stats["l2_hit_bytes"] / reads if reads else 0.0
        return SimResult(kernel, self.spec.clock_mhz, n_aic, n_aiv, runs, self.aicpu,
                         self.flows, stats)


def _floats(*values: float) -> tuple[float, ...]:
    return tuple(map(float, values))


def simulate(tasks: list[SimTask], spec: MachineSpec, kernel: str = "",
             sched_mode: int = 0, workspace: Sequence[float] = (),
             sched_threads: int | None = None) -> SimResult:
    """Simulate stitched tasks on `spec`; see the module docstring for the model.
    `workspace`: GM workspace bytes per window (`Stitcher.window_workspace`)."""
    # NOTE: a run allocates one long-lived record per task; pausing the cyclic GC meanwhile
    # avoids repeated full collections over them.
    was_on = gc.isenabled()
    gc.disable()
    try:
        return Simulator(spec, sched_mode, sched_threads).run(tasks, kernel, workspace)
    finally:
        if was_on:
            gc.enable()
