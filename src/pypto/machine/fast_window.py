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
when a core changes and are checked when popped.
"""
from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from typing import TYPE_CHECKING

from pypto.machine.result import SimTask
from pypto.machine.scheduling import Cores, WindowGraph, WindowRun
from pypto.machine.timing import task_cycles

if TYPE_CHECKING:
    from pypto.machine.simulate import Simulator


class _FastWindow:
    __slots__ = ("sim", "tasks", "graph", "cores", "threads", "times", "at", "free_slots",
                 "heaps", "ready", "producer", "running", "out", "lifo", "fair", "hot")

    def __init__(self, sim: Simulator, tasks: list[SimTask], graph: WindowGraph, start: float):
        n_aic, n_aiv, slots = sim.spec.aic, sim.spec.aiv, sim.slots
        self.sim, self.tasks, self.graph = sim, tasks, graph
        self.cores = Cores(n_aic, n_aiv, slots, start)
        self.threads = sim.threads
        self.threads.start_window(start)
        self.times = [start]
        self.at = {start: [~i for i in graph.roots]}
        self.free_slots = [n_aic * slots, n_aiv * slots]
        self.heaps: list[list] = [[] for _ in range(2 * slots)]
        self.heaps[0] = [(start, g) for g in range(n_aic)]
        if slots:
            self.heaps[slots] = [(start, g) for g in range(n_aic, n_aic + n_aiv)]
        self.ready = (deque(), deque())
        self.producer: list[int | None] = [None] * len(tasks)
        self.running: list[float] = []   # end times of running tasks (heap)
        self.out = WindowRun(len(tasks))
        self.lifo, self.fair = bool(sim.mode & 1), bool(sim.mode & 2)
        out, cores = self.out, self.cores
        self.hot = (self.ready, self.free_slots, self.running, self.heaps, self.lifo, self.fair,
                    self.producer, tasks, cores, cores.used, cores.free_at, slots,
                    self.threads.owner, self.threads.free, self.threads.dispatched,
                    self.threads.log.append, sim.memory.traffic, sim.timing,
                    float(sim.spec.aicpu["dispatch_cycles_per_task"]), out.core, out.start,
                    out.end, out.hit, out.hbm, self.at, self.times)

    def run(self) -> WindowRun:
        times, at, ready, free_slots = self.times, self.at, self.ready, self.free_slots
        kinds, remaining, successors = self.graph.kinds, self.graph.remaining, \
            self.graph.successors
        used_of, free_at, heaps, slots = self.cores.used, self.cores.free_at, self.heaps, \
            self.cores.slots
        out, producer, lifo, dispatch = self.out, self.producer, self.lifo, self._dispatch
        ready_at, core_of, resolved = out.ready, out.core, out.resolved
        owner, thread_free, log = self.threads.owner, self.threads.free, self.threads.log.append
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
                        log((th, "resolve", t0, t1, len(succ)))
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
                    dispatch(ty, now, freed)
        return self.out

    def _dispatch(self, ty: int, now: float, freed: int) -> None:
        """Start ready tasks of type `ty` at `now` while a core of that type is free."""
        (ready, free_slots, running, heaps, lifo, fair, producer, tasks, cores, used_of, free_at,
         slots, owner, thread_free, dispatched, log, traffic, timing, cost, core_of, start_of,
         end_of, hit_of, hbm_of, at, times) = self.hot   # NOTE: one unpack, not 26 reads
        q = ready[ty]
        core_timing = timing[ty]
        while running and running[0] <= now:
            heappop(running)
        while True:
            if freed >= 0:
                g, freed = freed, -1
            elif lifo and (preferred := producer[q[-1]]) is not None \
                    and used_of[preferred] == 0:
                g = preferred
            elif fair:
                g = cores.choose(ty, 2, None, owner, dispatched)
                if g is None:
                    break
            else:  # the earliest free core with the fewest busy slots
                g = -1
                for used in range(slots):
                    heap = heaps[ty * slots + used]
                    while heap:
                        f, c = heappop(heap)
                        if used_of[c] == used and free_at[c] == f:
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
            thread_free[th] = d1 = d0 + cost
            log((th, "dispatch", d0, d1, 1))
            if fair:
                dispatched[th] += 1
            begin = free_at[g]
            if d1 > begin:
                begin = d1
            hit, hbm, hbm_share, l2_share, write_back = traffic(task, len(running) + 1)
            free_at[g] = end = begin + task_cycles(task, core_timing, hit, hbm, hbm_share,
                                                   l2_share, write_back)
            used = used_of[g] = used_of[g] + 1
            free_slots[ty] -= 1
            if used < slots:
                heappush(heaps[ty * slots + used], (end, g))
            heappush(running, end)
            core_of[i], start_of[i], end_of[i], hit_of[i], hbm_of[i] = g, begin, end, hit, hbm
            codes = at.get(end)
            if codes is None:
                at[end] = [i]
                heappush(times, end)
            else:
                codes.append(i)
            if not (q and free_slots[ty]):
                break


def run_fast_window(sim: Simulator, tasks: list[SimTask], graph: WindowGraph,
                    start: float) -> WindowRun:
    return _FastWindow(sim, tasks, graph, start).run()
