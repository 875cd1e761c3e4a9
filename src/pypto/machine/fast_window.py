"""The fast path of one window's run: the same decisions as `simulate.ModelWindow` (THE
model), at about twice its speed (tests/machine/test_fast_window.py checks that they agree);
`simulate` uses it because the scaling benchmark runs 1k to 1M tasks through this loop.

NOTE: hot loop (~5 us per task at 1M tasks). Tasks are positions i in the window, cores are
integers g (AIC 0..aic-1, then AIV), core types are 0 (AIC) / 1 (AIV), everything per task or
core is a list, and the event kind is in the sign of the event code (ready: ~i, done: i), so no
dict or tuple keys are built. The events: a heap of their distinct times, and per time its
event codes in the order they were raised, so events run in (time, raised) order like the
event core's (time, seq) heap; NOTE: comparing floats is a third of the cost of comparing
tuples, and events at one time cost one heap entry. Cores with `used` busy slots wait in
heaps[type * slots + used] ordered like `Cores.choose`'s rule (free_at, g); entries go stale
when a core changes and are checked when popped. A tested specialised copy of the model:
`dispatch` inlines `memory.Memory.traffic` and `timing.task_cycles` (THE definitions; change
them there first; the per-task `timing.task_terms` are computed once per window) and extends
the AICPU records in place as `SchedulerThreads.work` does; NOTE: each Python call per task
costs the scaling benchmark a few % of its instructions.
"""
from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Callable

from pypto.machine.result import AicpuRun, SimTask
from pypto.machine.scheduling import AIC, Cores, WindowGraph, WindowRun
from pypto.machine.timing import task_terms

if TYPE_CHECKING:
    from pypto.machine.simulate import Simulator


_NONE = float("nan")   # the end of a thread's last record when it is not of that kind


class _FastWindow:
    __slots__ = ("sim", "tasks", "graph", "cores", "threads", "times", "at", "free_slots",
                 "heaps", "ready", "producer", "running", "waiting", "out", "lifo", "fair", "ends",
                 "hot")

    def __init__(self, sim: Simulator, tasks: list[SimTask], graph: WindowGraph, start: float):
        n_aic, n_aiv, slots = sim.spec.aic, sim.spec.aiv, sim.slots
        self.sim, self.tasks, self.graph = sim, tasks, graph
        self.cores = Cores(n_aic, n_aiv, slots, start)
        self.threads = threads = sim.threads
        threads.start_window(start)
        self.times = [start]
        self.at = {start: [~i for i in graph.roots]}
        self.free_slots = [n_aic * slots, n_aiv * slots]
        self.heaps: list[list] = [[] for _ in range(2 * slots)]
        self.heaps[0] = [(start, g) for g in range(n_aic)]
        if slots:
            self.heaps[slots] = [(start, g) for g in range(n_aic, n_aic + n_aiv)]
        self.ready = (deque(), deque())
        self.producer: list[int | None] = [None] * len(tasks)
        self.running: list[float] = []   # end times of dispatched tasks (heap)
        self.waiting: list[float] = []   # start times of those queued behind a task (heap)
        self.out = WindowRun(len(tasks))
        self.lifo, self.fair = bool(sim.mode & 1), bool(sim.mode & 2)
        # per thread the end of its last record if that resolves / dispatches (else NaN): the
        # work that starts there extends the record (`SchedulerThreads.work`'s rule)
        self.ends = tuple([r.end if r.name == kind else _NONE for r in threads.last]
                          for kind in ("resolve", "dispatch"))
        out, cores, memory = self.out, self.cores, sim.memory
        self.hot = (self.free_slots, self.running, self.waiting, self.heaps, self.lifo, self.fair,
                    tasks, cores.used, cores.free_at, slots,
                    threads.owner, threads.free, threads.dispatched, threads.last,
                    threads.made.append, self.ends, memory, memory.l2.access, sim.timing,
                    float(sim.spec.aicpu["dispatch_cycles_per_task"]), out.core, out.start,
                    out.end, out.hit, out.hbm, self.at, self.times,
                    [task_terms(t, k == AIC) for t, k in zip(tasks, graph.kinds)], sim.warm,
                    sim.cold_start, sim.notice, sim.sharers)

    def run(self) -> WindowRun:
        times, at, ready, free_slots = self.times, self.at, self.ready, self.free_slots
        kinds, remaining, successors = self.graph.kinds, self.graph.remaining, \
            self.graph.successors
        used_of, free_at, heaps, slots = self.cores.used, self.cores.free_at, self.heaps, \
            self.cores.slots
        out, producer, lifo, dispatch = self.out, self.producer, self.lifo, self._dispatcher()
        ready_at, core_of, resolved = out.ready, out.core, out.resolved
        owner, thread_free = self.threads.owner, self.threads.free
        last, made, (resolve_end, dispatch_end) = self.threads.last, self.threads.made, self.ends
        resolve_cost = self.sim.spec.aicpu["resolve_cycles_per_edge"]
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
                else:  # done: free its slot, resolve its successors
                    g = core_of[code]
                    ty = kinds[code]
                    used = used_of[g] = used_of[g] - 1
                    if free_slots[ty] or not ready[ty]:
                        free_slots[ty] += 1
                        heappush(heaps[ty * slots + used], (free_at[g], g))
                        freed = -1
                    else:
                        # NOTE: saturated: g is now the only core of its type with a free slot
                        # and the waiting queue takes it, so it skips the open-slot heaps
                        free_slots[ty] = 1
                        freed = g
                    succ = successors[code]
                    if succ:
                        th = owner[g]
                        t0 = thread_free[th]
                        if now > t0:
                            t0 = now
                        thread_free[th] = t1 = t0 + resolve_cost * len(succ)
                        if resolve_end[th] == t0:
                            record = last[th]
                            record.end = t1
                            record.args["count"] += len(succ)
                        else:
                            last[th] = record = AicpuRun(th, "resolve", t0, t1,
                                                         {"count": len(succ)})
                            made.append(record)
                            dispatch_end[th] = _NONE
                        resolve_end[th] = t1
                        resolved.append(code)
                        for s in succ:
                            left = remaining[s] = remaining[s] - 1
                            if lifo:  # a producer on the other core type is no affinity target
                                producer[s] = g if kinds[s] == ty else None
                            if left == 0:
                                codes = at.get(t1)
                                if codes is None:
                                    at[t1] = [~s]
                                    heappush(times, t1)
                                else:
                                    codes.append(~s)
                # NOTE: only the event's core type can dispatch: after every event each type
                # has an empty queue or no free slot, and an event changes one type's queue or
                # slots.
                if ready[ty] and free_slots[ty]:
                    dispatch(ty, ready[ty], now, freed)
        return self.out

    def _dispatcher(self) -> Callable[[int, deque, float, int], None]:
        """`dispatch(ty, q, now, freed)`: start tasks of `q` (type `ty`) at `now` while a core of
        that type is free; NOTE: a closure, not a method (one call per event)."""
        (free_slots, running, waiting, heaps, lifo, fair, tasks, used_of, free_at, slots, owner,
         thread_free, dispatched, last, made, (resolve_end, dispatch_end), memory, access,
         timing, cost, core_of, start_of, end_of, hit_of, hbm_of, at, times, terms, warm,
         cold, notice, sharers) = self.hot

        def dispatch(ty: int, q: deque, now: float, freed: int) -> None:
            core_bw, out_core_bw, head, fill_latency, drain_latency, _ = timing[ty]
            active = self._running(now) + 1   # and this one
            while True:
                g = freed if freed >= 0 else self._choose(ty, q)
                if g < 0:
                    break
                freed = -1
                i = q.pop() if lifo else q.popleft()
                task = tasks[i]
                th = owner[g]
                d0 = now if now > thread_free[th] else thread_free[th]
                thread_free[th] = d1 = d0 + cost
                if dispatch_end[th] == d0:   # `SchedulerThreads.work`, inlined
                    last[th].end = d1
                    last[th].args["count"] += 1
                else:
                    last[th] = record = AicpuRun(th, "dispatch", d0, d1, {"count": 1})
                    made(record)
                    resolve_end[th] = _NONE
                dispatch_end[th] = d1
                dispatched[th] += fair   # (only read in fairness modes)
                begin = free_at[g] if (queued := free_at[g] > d1) else d1   # queued: pending
                if not warm[g]:   # the core's cold start (`ModelWindow.start`)
                    warm[g] = True
                    begin += cold
                uncached, mte2, mte3 = task.uncached, task.mte2_bytes, task.mte3_bytes
                in_scale, compute, out_moved, t_out = terms[i]
                reads_total, hit_lines, total_lines, _ = access(task.reads, task.read_layouts,
                                                                uncached)
                hit = reads_total * hit_lines / total_lines if total_lines else 0.0
                if total_lines and mte2 <= hit:
                    hit = mte2
                hbm = mte2 - hit
                write_back = task.writes and access(task.writes, task.write_layouts, uncached)[3] \
                    and memory.written + mte3 <= memory.l2_capacity
                memory.written += mte3
                if task.empty:
                    free_at[g] = end = begin + head
                else:
                    n = active if sharers is None else sharers[task.id]   # `sharing`
                    hbm_share, l2_share = memory.hbm_bw / n, memory.l2_bw / n
                    in_bw = core_bw if core_bw <= hbm_share else hbm_share
                    l2_in_bw = l2_share if l2_share < core_bw * 2 else core_bw * 2
                    busiest = (hbm / in_bw + hit / l2_in_bw) * in_scale
                    busiest = compute if compute > busiest else busiest
                    if mte3:
                        out_bw = l2_share if write_back else hbm_share
                        t = out_moved / (out_core_bw if out_core_bw <= out_bw else out_bw)
                        t_out = t if t > t_out else t_out
                    busiest = t_out if t_out > busiest else busiest
                    free_at[g] = end = begin + (head + (fill_latency if mte2 else 0.0) + busiest
                                                + (drain_latency if mte3 else 0.0))
                used = used_of[g] = used_of[g] + 1
                free_slots[ty] -= 1
                if used < slots:
                    heappush(heaps[ty * slots + used], (end, g))
                heappush(running, end)
                if queued:
                    heappush(waiting, begin)
                else:
                    active += 1
                core_of[i], start_of[i], end_of[i], hit_of[i], hbm_of[i] = g, begin, end, hit, hbm
                seen = end + notice   # its thread sees the end then (`ModelWindow.start`)
                codes = at.get(seen)
                if codes is None:
                    at[seen] = codes = []
                    heappush(times, seen)
                codes.append(i)
                if not (q and free_slots[ty]):
                    break
        return dispatch

    def _running(self, now: float) -> int:
        """How many dispatched tasks run at `now`: not ended, not waiting in a pending slot."""
        running, waiting = self.running, self.waiting
        while running and running[0] <= now:
            heappop(running)
        while waiting and waiting[0] <= now:
            heappop(waiting)
        return len(running) - len(waiting)

    def _choose(self, ty: int, q: deque) -> int:
        """`Cores.choose` for the next task of `q`, or -1: the open-slot heaps in modes 0 and
        1 (the earliest free core with the fewest busy slots, after the affinity target)."""
        used_of = self.cores.used
        if self.lifo and (preferred := self.producer[q[-1]]) is not None \
                and used_of[preferred] == 0:
            return preferred
        if self.fair:
            g = self.cores.choose(ty, 2, None, self.threads.owner, self.threads.dispatched)
            return -1 if g is None else g
        free_at, slots = self.cores.free_at, self.cores.slots
        for used in range(slots):
            heap = self.heaps[ty * slots + used]
            while heap:
                f, c = heappop(heap)
                if used_of[c] == used and free_at[c] == f:
                    return c
        return -1


def run_fast_window(sim: Simulator, tasks: list[SimTask], graph: WindowGraph,
                    start: float) -> WindowRun:
    return _FastWindow(sim, tasks, graph, start).run()
