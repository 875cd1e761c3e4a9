"""The discrete-event simulation of one kernel run on the A2/A3 machine model.

Takes the stitched tasks (`runtime.stitch`) → a `SimResult`. Keeps: deterministic by
construction (events run in (time, order raised) order; no set iteration reaches the output).
The model, with every constant from the machine spec:

- the host launches the AICPU and AICore kernels and the AICPU starts up (`start_cycles`): a
  host-side timer sees it (stats["host_e2e_cycles"]), the timeline starts after it;
- AICPU control thread builds the windows (device tasks) one after another
  (`scheduling.build_cycles`), so a big window costs more to build before its first task can
  start; window w starts after it is built, handed over (launch cost) and window w-1's last
  end has been seen;
- scheduler threads each own a share of the cores; dispatching a task costs its thread time
  (more in the fairness modes 2 and 3: `scheduling.dispatch_cycles`), and so does resolving
  the successors of a finished task (`scheduling.SchedulerThreads`), which its thread sees
  `completion_cycles` after it ends (the core's completion register, hw_costs §2); a core
  holds one running and one pending task (`slots_per_core`); the core a ready task goes to
  depends on `device_sched_mode` (`scheduling.Cores.choose`);
- a task's reads and writes meet L2 when it is dispatched (`memory.Memory`: an LRU-like L2,
  write-back); it begins once dispatched and its core is free of the tasks before it; its
  duration is `timing.task_cycles` with its busiest pipe re-timed whenever the running set
  changes (`flow`: HBM and L2 bandwidth shared by the tasks running, the fluid model);
  the first task of the run on each core starts `cold_start_cycles` late (hw_costs §2).

`ModelWindow` below runs a window by that definition, one event at a time on the event core
(`events.EventQueue`): it is THE model, the readable specification. `simulate` runs the
compiled core (`compiled`, C++) when it is built: the same model, bit for bit, much faster.
"""
from __future__ import annotations

from collections import defaultdict, deque
from enum import Enum
from itertools import chain, compress, islice
from operator import le
from typing import Sequence

from pypto.gc_pause import gc_paused
from pypto.machine import compiled
from pypto.machine.events import EventQueue
from pypto.machine.flow import Flows
from pypto.machine.memory import Memory
from pypto.machine.result import AicpuRun, SimResult, SimTask, TaskRun
from pypto.machine.scheduling import (Cores, SchedulerThreads, WindowGraph, WindowRun,
                                      build_args, build_cycles, dispatch_cycles)
from pypto.machine.spec import MachineSpec
from pypto.machine.stats import Tally, in_order_sum, run_stats
from pypto.machine.task_table import TaskTable
from pypto.machine.timing import (CoreTiming, lead_cycles, tail_cycles, task_cycles,
                                  task_terms)


class Event(Enum):
    READY = "ready"   # a task's last dependency is resolved: it joins its core type's queue
    BEGIN = "begin"   # a task begins on its core: it shares GM bandwidth from now on
    END = "end"       # a task's (current) end: it stops sharing; its core takes the next one
    DONE = "done"     # its thread sees the end: the slot frees and its successors resolve


class ModelWindow:
    """One window run by the plain model: THE definition of what the simulator decides."""

    def __init__(self, sim: Simulator, tasks: list[SimTask], graph: WindowGraph, start: float):
        self.sim, self.tasks, self.graph = sim, tasks, graph
        self.events = EventQueue(start)
        self.cores = Cores(sim.spec.aic, sim.spec.aiv, sim.slots, start)
        sim.threads.start_window(start)
        self.queues = (deque(), deque())           # ready tasks per core type
        self.producer: list[int | None] = [None] * len(tasks)   # core of the last resolver
        # per core the tasks dispatched to it and not ended, in order: the first one runs
        # (or begins once its dispatch is done), the others wait in its pending slots
        self.lineup = [deque() for _ in range(sim.spec.aic + sim.spec.aiv)]
        self.dispatched = [0.0] * len(tasks)       # when its dispatch was done
        self.version = [0] * len(tasks)            # of its END event: re-timing raises anew
        self.write_back = [False] * len(tasks)     # its writes land in L2
        self.flows = Flows(len(tasks), sim.memory.hbm_bw, sim.memory.l2_bw,
                           sim.spec.aic + sim.spec.aiv + 1)
        self.out = WindowRun(len(tasks))
        for i in graph.roots:
            self.events.schedule(start, (Event.READY, i, 0))

    def run(self) -> WindowRun:
        self.events.run(self.handle)
        return self.out

    def handle(self, event: tuple[Event, int, int]) -> None:
        kind, i, version = event
        if kind is Event.READY:
            self.queues[self.graph.kinds[i]].append(i)
            self.out.ready[i] = self.events.now
        elif kind is Event.BEGIN:
            self.begin(i)
            return
        elif kind is Event.END:
            if version == self.version[i]:   # else re-timed since: a later END stands
                self.end(i)
            return
        else:
            self.finish(i)
        self.dispatch(self.graph.kinds[i])

    def begin(self, i: int) -> None:
        """Task i begins on its core: it shares GM bandwidth from now to its end (`flow`)."""
        sim, now, task, out = self.sim, self.events.now, self.tasks[i], self.out
        out.start[i] = now
        core = sim.timing[self.graph.kinds[i]]
        if task.empty:   # it moves nothing: it takes the head and shares with nobody
            self.retime([i], {i: now + core.head})
            return
        pipe = (task_terms(task, core.cube), core, out.hit[i], out.hbm[i],
                bool(task.mte3_bytes), self.write_back[i])
        self.retime(self.flows.join(i, now, lead_cycles(task, core), tail_cycles(task, core),
                                    pipe))

    def end(self, i: int) -> None:
        """Task i ends: it stops sharing, its core begins the next task in its lineup, its
        thread sees the end a completion latency later."""
        now, g = self.events.now, self.out.core[i]
        self.out.end[i] = now
        if not self.tasks[i].empty:
            self.retime(self.flows.leave(i, now))
        lineup = self.lineup[g]
        lineup.popleft()
        if lineup:   # the next one was dispatched behind i: it begins now, or once dispatched
            self.events.schedule(max(now, self.dispatched[lineup[0]]),
                                 (Event.BEGIN, lineup[0], 0))
        else:
            self.cores.free_at[g] = now
        self.events.schedule(now + self.sim.notice, (Event.DONE, i, 0))

    def retime(self, tasks: list[int], ends: dict[int, float] | None = None) -> None:
        """Raise the (new) END events of `tasks`; a core's `free_at` follows its last task."""
        for j in tasks:
            end = self.flows.end_of(j) if ends is None else ends[j]
            self.version[j] += 1
            self.events.schedule(end, (Event.END, j, self.version[j]))
            g = self.out.core[j]
            if self.lineup[g][-1] == j:
                self.cores.free_at[g] = end

    def finish(self, i: int) -> None:
        """Task i's end is seen: free its slot; its core's thread resolves its successors."""
        g = self.out.core[i]
        self.cores.used[g] -= 1
        succ = self.graph.successors[i]
        if not succ:
            return
        sim, graph = self.sim, self.graph
        cost = sim.spec.aicpu["resolve_cycles_per_edge"] * len(succ)
        resolved = sim.threads.work(sim.threads.owner[g], "resolve", self.events.now, cost,
                                    len(succ))
        self.out.resolved.append(i)
        for s in succ:
            graph.remaining[s] -= 1
            # a producer on the other core type is no affinity target
            self.producer[s] = g if graph.kinds[s] == graph.kinds[i] else None
            if graph.remaining[s] == 0:
                self.events.schedule(resolved, (Event.READY, s, 0))

    def dispatch(self, ty: int) -> None:
        """Hand ready tasks of core type `ty` to cores while one has a free slot; in L2
        affinity modes the newest ready task goes first, else the oldest."""
        sim, queue = self.sim, self.queues[ty]
        while queue:
            i = queue[-1] if sim.mode & 1 else queue[0]
            g = self.cores.choose(ty, sim.mode, self.producer[i], sim.threads.owner,
                                  sim.threads.dispatched)
            if g is None:
                return
            if sim.mode & 1:
                queue.pop()
            else:
                queue.popleft()
            self.start(i, g)

    def start(self, i: int, g: int) -> None:
        """Dispatch task i to core g: its reads and writes meet L2 now (in dispatch order); it
        begins once dispatched and the core is free of the tasks before it."""
        sim, now, task = self.sim, self.events.now, self.tasks[i]
        threads, cores, out = sim.threads, self.cores, self.out
        self.dispatched[i] = dispatched = threads.work(
            threads.owner[g], "dispatch", now, sim.dispatch_cost, 1)
        hit, hbm, write_back = sim.memory.serve(task)
        out.core[i], out.hit[i], out.hbm[i] = g, hit, hbm
        self.write_back[i] = write_back
        lineup = self.lineup[g]
        lineup.append(i)
        cores.used[g] += 1
        begin = max(cores.free_at[g], dispatched)
        if len(lineup) == 1:   # the core is free: it begins once dispatched
            if not sim.warm[g]:   # the core's first task of the run starts late: cold start
                sim.warm[g] = True
                begin += sim.cold_start
            self.events.schedule(begin, (Event.BEGIN, i, 0))
        # until it begins, the core counts as free at its end at the share it would get now
        # (`Cores.choose` compares cores by it)
        core = sim.timing[self.graph.kinds[i]]
        n = len(self.flows.running) + 1
        cores.free_at[g] = begin + task_cycles(task, core, hit, hbm, sim.memory.hbm_bw / n,
                                               sim.memory.l2_bw / n, write_back)


class Simulator:
    """One run: the windows in order, each built by the control thread, then run."""

    def __init__(self, spec: MachineSpec, sched_mode: int = 0,
                 sched_threads: int | None = None):
        self.spec = spec
        self.mode = sched_mode
        self.slots = spec.aicpu["slots_per_core"]
        self.dispatch_cost = dispatch_cycles(spec.aicpu, sched_mode)   # fairness modes: more
        self.threads = SchedulerThreads(spec, sched_threads)
        self.memory = Memory(spec.memory)
        self.timing = (CoreTiming.of(spec, "AIC"), CoreTiming.of(spec, "AIV"))
        self.cold_start = float(spec.task["cold_start_cycles"])
        self.notice = float(spec.aicpu["completion_cycles"])   # a task's end -> its thread
        self.warm = [False] * (spec.aic + spec.aiv)   # per core: it has run a task
        self.aicpu: list[AicpuRun] = []        # builds and scheduler work, in time order
        self.builds: list[AicpuRun] = []       # control thread: one build per window
        self.runs: list[TaskRun] = []   # simulated order: window by window
        self.tally = Tally()
        self._in_order = True   # the tasks come window by window: runs are in task order
        self.flows: list[tuple[int, int]] = []

    def run(self, tasks: list[SimTask], kernel: str,
            workspace: Sequence[float] = (), closed_by: Sequence[str] = ()) -> SimResult:
        """`workspace`: GM workspace bytes of each window, as the stitcher measured them;
        `closed_by`: why the stitcher closed each window (`Stitcher.closed_by`)."""
        self._in_order, windows = _windows(tasks)
        a = self.spec.aicpu
        build_end = 0.0
        prev_end = 0.0
        window_stats = []
        for w, wt in windows:
            graph = WindowGraph(wt)
            start_build = build_end
            build_end = start_build + build_cycles(a, graph)
            space = float(workspace[w]) if w < len(workspace) else 0.0
            self.builds.append(AicpuRun(0, f"build window {w}", start_build, build_end,
                                        build_args(graph.instances, len(wt),
                                                   graph.cross_edges, space,
                                                   _reason(closed_by, w))))
            self.aicpu.append(self.builds[-1])
            launch = max(build_end + a["launch_cycles"], prev_end + self.notice)
            prev_end = self.run_window(wt, graph, launch)
            self.aicpu += self.threads.end_window()
            window_stats.append((graph.instances, len(wt), graph.cross_edges, space,
                                 _reason(closed_by, w)))
        return self._result(tasks, kernel, build_end, window_stats)

    def run_window(self, tasks: list[SimTask], graph: WindowGraph, start: float) -> float:
        """Run one window's tasks from `start`; returns when its last task ends."""
        if not tasks:
            return start
        out = ModelWindow(self, tasks, graph, start).run()
        kinds, core_of, begin_of, end_of, hit_of, hbm_of, ready_at = (
            graph.kinds, out.core, out.start, out.end, out.hit, out.hbm, out.ready)
        if None in begin_of:   # never ran (a dependency cycle): no run, no stats
            ran = [b is not None for b in begin_of]
            tasks, kinds, core_of, begin_of, end_of, hit_of, hbm_of, ready_at = (
                list(compress(column, ran)) for column in (
                    tasks, kinds, core_of, begin_of, end_of, hit_of, hbm_of, ready_at))
        # per core g, its index within its type
        core_index = list(range(self.spec.aic)) + list(range(self.spec.aiv))
        self.runs += map(TaskRun, tasks, map(core_index.__getitem__, core_of), begin_of,
                         end_of, hit_of, hbm_of, ready_at)
        if self._in_order:
            self.tally.add(tasks, kinds, begin_of, end_of, hit_of, hbm_of)
        # the flows: (pred id, succ id) per edge, preds in the order they were resolved
        ids, successors = graph.ids, graph.successors
        self.flows += [(ids[p], ids[s]) for p in out.resolved for s in successors[p]]
        # every dispatched task ended in a processed event: the window ends at the last one
        return max(chain((start,), end_of))

    def _result(self, tasks: list[SimTask], kernel: str, build_end: float,
                window_stats: list) -> SimResult:
        runs = self.runs
        if not self._in_order:
            where = {id(r.task): r for r in runs}
            runs = [where[id(t)] for t in tasks if id(t) in where]
            self.tally.add_runs(runs)
        stats = run_stats(self.tally, len(runs), self.spec.aic, self.spec.aiv, build_end,
                          window_stats, in_order_sum([r.end - r.start for r in self.builds]),
                          in_order_sum([r.end - r.start for r in self.threads.records]),
                          self.threads.count,
                          float(self.spec.aicpu["start_cycles"]))
        return SimResult(kernel, self.spec.clock_mhz, self.spec.aic, self.spec.aiv, runs,
                         self.aicpu, self.flows, stats)


def _windows(tasks: list[SimTask]) -> tuple[bool, list[tuple[int, list[SimTask]]]]:
    """Whether the tasks come window by window, and each window's tasks in window order."""
    numbers = [t.window for t in tasks]
    windows: dict[int, list[SimTask]] = defaultdict(list)
    for t in tasks:
        windows[t.window].append(t)
    return all(map(le, numbers, islice(numbers, 1, None))), sorted(windows.items())


def simulate(tasks: list[SimTask] | TaskTable, spec: MachineSpec, kernel: str = "",
             sched_mode: int = 0, workspace: Sequence[float] = (),
             sched_threads: int | None = None, closed_by: Sequence[str] = ()) -> SimResult:
    """Simulate stitched tasks on `spec`; see the module docstring for the model.
    `workspace`: GM workspace bytes per window (`Stitcher.window_workspace`); `closed_by`:
    why each window closed (`Stitcher.closed_by`), reported on its build event."""
    # NOTE: a run allocates one long-lived record per task; pausing the cyclic GC meanwhile
    # avoids repeated full collections over them. Its own pause, not only the caller's: the
    # run happens lazily on the first `kernel.last_run` access.
    with gc_paused():
        if compiled.core() == "compiled":
            result = compiled.simulate_compiled(tasks, spec, kernel, sched_mode, workspace,
                                                sched_threads, closed_by)
            if result is not None:
                return result
        if isinstance(tasks, TaskTable):
            tasks = list(tasks.tasks())
        return Simulator(spec, sched_mode, sched_threads).run(tasks, kernel, workspace,
                                                              closed_by)


def _reason(closed_by: Sequence[str], w: int) -> str:
    """Why window `w` closed ("" when not told: a caller other than the stitcher)."""
    return closed_by[w] if w < len(closed_by) else ""
