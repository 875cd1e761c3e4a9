"""The discrete-event simulation of one kernel run on the A2/A3 machine model.

Takes the stitched tasks (`runtime.stitch`) → a `SimResult`. Keeps: deterministic by
construction (one event heap ordered by (time, sequence number); no set iteration reaches the
output). The model, with every constant from the machine spec:

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
from collections import defaultdict, deque

import numpy as np

from pypto.machine.cost import TaskTimer
from pypto.machine.result import AicpuRun, SimResult, SimTask, TaskRun
from pypto.machine.spec import MachineSpec


class _L2:
    """L2 as recency stamps per GM line (`memory.l2_line` bytes): a line hits when fewer than
    `l2_capacity / l2_line` line accesses happened since it was last touched.

    NOTE: this approximates LRU (it counts accesses, not distinct lines) so that a contiguous
    run of lines is one numpy slice instead of hundreds of dictionary operations."""

    def __init__(self, capacity: float, line: int):
        self.line = line
        self.capacity = capacity
        self.max_lines = max(1, int(capacity // line))
        self.clock = 0
        self.stamps: dict[int, np.ndarray] = {}

    def touch(self, storage: int, offs: tuple[int, ...], ext: tuple[int, ...],
              shape: tuple[int, ...], itemsize: float) -> tuple[int, int]:
        """Access a box; returns (lines that hit, lines touched)."""
        stamps = self.stamps.get(storage)
        if stamps is None:
            numel = 1
            for d in shape:
                numel *= d
            stamps = self.stamps[storage] = np.full(int(numel * itemsize) // self.line + 1,
                                                    -(2**62), dtype=np.int64)
        hit = total = 0
        line, clock = self.line, self.clock
        max_lines = self.max_lines
        if len(ext) == len(shape) and ext.count(1) - (ext[-1] == 1) == len(ext) - 1:
            # NOTE: fast path: one partial row is one contiguous run
            start = 0
            for o, d in zip(offs, shape):
                start = start * d + o
            runs = ((start, ext[-1]),)
        else:
            runs = _segments(offs, ext, shape)
        for start, length in runs:
            first = int(start * itemsize) // line
            last = int((start + length) * itemsize - 1) // line
            if last >= len(stamps):  # an alias with a bigger shape: grow
                grown = np.full(last + 1, -(2**62), dtype=np.int64)
                grown[:len(stamps)] = stamps
                stamps = self.stamps[storage] = grown
            n = last + 1 - first
            threshold = clock - max_lines
            if n == 1:
                hit += stamps[first] >= threshold
                clock += 1
                stamps[first] = clock
            else:
                window = stamps[first:last + 1]
                hit += int(np.count_nonzero(window >= threshold))
                clock += n
                window.fill(clock)
            total += n
        self.clock = clock
        return hit, total


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
    lead = [range(o, o + e) for o, e in zip(offs[:k], ext[:k])]
    base_k = offs[k] * strides[k]
    for idx in itertools.product(*lead):
        yield base_k + sum(i * s for i, s in zip(idx, strides)), run


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
        self.aicpu: list[AicpuRun] = []
        dma, mem = spec.dma, spec.memory
        self._bw = {"AIC": (dma["gm_to_l1"]["bw"], dma["l0c_to_gm"]["bw"]),
                    "AIV": (dma["gm_to_ub"]["bw"], dma["ub_to_gm"]["bw"])}
        self._hbm = mem["hbm_bytes_per_cycle"]
        self.timer = TaskTimer(spec)
        self._l2_bw = mem["l2_bytes_per_cycle"]
        self.runs: dict[int, TaskRun] = {}
        self._written = 0.0   # GM bytes written so far (L2 absorbs them until it is full)
        self._last_work: dict[int, AicpuRun] = {}
        self.flows: list[tuple[int, int]] = []

    def owner(self, core: str, index: int) -> int:
        """The scheduler thread (1-based) that manages a core."""
        per = self.per_thread["aic" if core == "AIC" else "aiv"]
        return min(self.threads, index // per + 1)

    # ---- whole run ----
    def run(self, tasks: list[SimTask], kernel: str,
            params: frozenset = frozenset()) -> SimResult:
        windows: dict[int, list[SimTask]] = defaultdict(list)
        for t in tasks:
            windows[t.window].append(t)
        a = self.spec.aicpu
        build_end = 0.0
        prev_end = 0.0
        window_stats = []
        for w in sorted(windows):
            wt = windows[w]
            instances = len({t.instance for t in wt})
            by_id = {t.id: t for t in wt}
            cross = sum(1 for t in wt for p in t.preds if by_id[p].instance != t.instance)
            build = a["window_base_cycles"] + a["instance_cycles"] * instances \
                + a["edge_cycles"] * cross
            start_build = build_end
            build_end = start_build + build
            self.aicpu.append(AicpuRun(0, f"build window {w}", start_build, build_end,
                                       {"instances": instances, "tasks": len(wt),
                                        "cross_edges": cross}))
            launch = max(build_end + a["launch_cycles"], prev_end)
            prev_end = self.run_window(wt, launch)
            window_stats.append((instances, len(wt), cross, _workspace(wt, params)))
        return self._result(tasks, kernel, build_end, window_stats)

    # ---- one window ----
    def run_window(self, tasks: list[SimTask], start: float) -> float:
        if not tasks:
            return start
        a = self.spec.aicpu
        succ: dict[int, list[int]] = {}
        remaining = {}
        for t in tasks:
            remaining[t.id] = len(t.preds)
            for p in t.preds:
                succ.setdefault(p, []).append(t.id)
        by_id = {t.id: t for t in tasks}
        cores = {"AIC": self.spec.aic, "AIV": self.spec.aiv}
        free_at = {(c, i): start for c, n in cores.items() for i in range(n)}
        slots_used = {k: 0 for k in free_at}
        free_slots = {c: n * self.slots for c, n in cores.items()}  # NOTE: saturation fast path
        # NOTE: cores with 0 / 1 used slots in heaps ordered like the linear rule (free_at, i);
        # entries go stale when a core changes and are checked when popped.
        open_heaps = {(c, used): [] for c in cores for used in (0, 1)}
        for c, n in cores.items():
            open_heaps[(c, 0)] = [(start, i) for i in range(n)]
        thread_free = [start] * (self.threads + 1)
        dispatched = [0] * (self.threads + 1)
        ready: dict[str, deque] = {"AIC": deque(), "AIV": deque()}
        producer_core: dict[int, int] = {}
        ready_at: dict[int, float] = {}
        running: list[float] = []   # end times of running tasks (heap)
        events: list = []
        seq = 0
        for t in tasks:
            if remaining[t.id] == 0:
                heapq.heappush(events, (start, seq, "ready", t.id))
                seq += 1
        end_of_window = start
        # NOTE: hot loop: locals instead of attribute and dict lookups
        owner = {(c, i): self.owner(c, i) for c, n in cores.items() for i in range(n)}
        resolve_cost = a["resolve_cycles_per_edge"]
        dispatch_cost = a["dispatch_cycles_per_task"]
        heappush, heappop = heapq.heappush, heapq.heappop
        runs, flows, duration, work = self.runs, self.flows, self._duration, self._aicpu_work
        lifo, fair = bool(self.mode & 1), bool(self.mode & 2)
        slots = self.slots
        while events:
            now, _, kind, tid = heappop(events)
            if kind == "ready":
                ready[by_id[tid].core].append(tid)
                ready_at[tid] = now
            else:  # done
                run = runs[tid]
                key = (run.task.core, run.core_index)
                slots_used[key] -= 1
                free_slots[key[0]] += 1
                heappush(open_heaps[(key[0], slots_used[key])], (free_at[key], key[1]))
                if now > end_of_window:
                    end_of_window = now
                th = owner[key]
                t0 = now if now > thread_free[th] else thread_free[th]
                successors = succ.get(tid)
                if successors:
                    thread_free[th] = t0 + resolve_cost * len(successors)
                    work(th, "resolve", t0, thread_free[th], len(successors))
                    for s in successors:
                        flows.append((tid, s))
                        remaining[s] -= 1
                        # a producer on the other core type is no affinity target
                        producer_core[s] = run.core_index if by_id[s].core == key[0] else None
                        if remaining[s] == 0:
                            heappush(events, (thread_free[th], seq, "ready", s))
                            seq += 1
            while running and running[0] <= now:
                heappop(running)
            # dispatch as much as possible at `now`
            for core in ("AIC", "AIV"):
                q = ready[core]
                while q and free_slots[core]:
                    preferred = producer_core.get(q[-1] if lifo else q[0])
                    if fair:
                        slot = self._pick_core(core, cores[core], slots_used, free_at,
                                               dispatched, preferred)
                    else:
                        slot = self._take_core(core, open_heaps, slots_used, free_at,
                                               preferred)
                    if slot is None:
                        break
                    tid = q.pop() if lifo else q.popleft()
                    task = by_id[tid]
                    key = (core, slot)
                    th = owner[key]
                    d0 = now if now > thread_free[th] else thread_free[th]
                    thread_free[th] = d1 = d0 + dispatch_cost
                    dispatched[th] += 1
                    work(th, "dispatch", d0, d1, 1)
                    begin = d1 if d1 > free_at[key] else free_at[key]
                    dur, hit, hbm = duration(task, len(running) + 1)
                    end = begin + dur
                    free_at[key] = end
                    used = slots_used[key] = slots_used[key] + 1
                    free_slots[core] -= 1
                    if used < slots:
                        heappush(open_heaps[(core, used)], (end, slot))
                    heappush(running, end)
                    runs[tid] = TaskRun(task, slot, begin, end, hit, hbm, ready_at[tid])
                    heappush(events, (end, seq, "done", tid))
                    seq += 1
        return end_of_window

    def _aicpu_work(self, thread: int, kind: str, start: float, end: float, count: int) -> None:
        """Record scheduler-thread work; back-to-back work of one kind on one thread becomes one
        event (with a count), so the AICPU lanes stay readable and cheap at 100k tasks."""
        last = self._last_work.get(thread)
        if last is not None and last.name == kind and last.end == start:
            last.end = end
            last.args["count"] += count
            return
        run = AicpuRun(thread, kind, start, end, {"count": count})
        self.aicpu.append(run)
        self._last_work[thread] = run

    def _take_core(self, core: str, heaps: dict, slots_used: dict, free_at: dict,
                   preferred: int | None) -> int | None:
        """_pick_core's rule for modes 0 and 1, through the open-slot heaps."""
        if self.mode & 1 and preferred is not None and slots_used[(core, preferred)] == 0:
            return preferred
        for used in (0, 1):
            if used >= self.slots:
                break
            heap = heaps[(core, used)]
            while heap:
                f, i = heapq.heappop(heap)
                if slots_used[(core, i)] == used and free_at[(core, i)] == f:
                    return i
        return None

    def _pick_core(self, core: str, n: int, slots_used: dict, free_at: dict,
                   dispatched: list[int], preferred: int | None) -> int | None:
        """A core of type `core` with a free slot, by the scheduling mode."""
        if self.mode & 1 and preferred is not None and slots_used[(core, preferred)] == 0:
            return preferred
        candidates = [i for i in range(n) if slots_used[(core, i)] < self.slots]
        if not candidates:
            return None
        idle = [i for i in candidates if slots_used[(core, i)] == 0]
        pool = idle or candidates
        if self.mode & 2:
            return min(pool, key=lambda i: (dispatched[self.owner(core, i)], free_at[(core, i)],
                                            i))
        return min(pool, key=lambda i: (free_at[(core, i)], i))

    def _duration(self, task: SimTask, active: int) -> tuple[float, float, float]:
        """Cycles, L2-hit bytes and HBM bytes of `task` started with `active` tasks running:
        the share of its reads that hit L2 moves at the L2 share of bandwidth, the rest at the
        HBM share, each capped by the core's own DMA rate. L2 is write-back (hw_model §5): writes
        land in L2 at its bandwidth until the kernel has written more than L2 holds; from then
        on every write evicts a dirty line and moves at the HBM share."""
        core_bw, out_core_bw = self._bw[task.core]
        hit_lines = total_lines = 0
        reads_total = 0.0
        touch, uncached = self.l2.touch, task.uncached
        for acc, (shape, isz) in zip(task.reads, task.read_layouts):
            n = 1
            for e in acc[2]:
                n *= e
            reads_total += n * isz
            if acc[0] not in uncached:
                h, lines = touch(acc[0], acc[1], acc[2], shape, isz)
                hit_lines += h
                total_lines += lines
        hit = min(task.mte2_bytes, reads_total * hit_lines / total_lines) if total_lines else 0.0
        miss = task.mte2_bytes - hit
        cached_writes = False
        for acc, (shape, isz) in zip(task.writes, task.write_layouts):
            if acc[0] not in uncached:
                touch(acc[0], acc[1], acc[2], shape, isz)
                cached_writes = True
        hbm_share = self._hbm / active
        l2_share = self._l2_bw / active
        t_in = miss / min(core_bw, hbm_share) + hit / min(core_bw * 2, l2_share)
        write_back = cached_writes and self._written + task.mte3_bytes <= self.l2.capacity
        self._written += task.mte3_bytes
        out_bw = min(out_core_bw, l2_share if write_back else hbm_share)
        return self.timer.cycles(task, t_in, out_bw), hit, miss

    # ---- results ----
    def _result(self, tasks: list[SimTask], kernel: str, build_end: float,
                window_stats: list) -> SimResult:
        runs = [self.runs[t.id] for t in tasks if t.id in self.runs]
        # one pass over the runs (100k+ tasks): first/last, busy time, counts, bytes
        first, last = float("inf"), 0.0
        busy = {"AIC": 0.0, "AIV": 0.0}
        count = {"AIC": 0, "AIV": 0}
        empty = 0
        read = write = hit = hbm = 0.0
        for r in runs:
            t = r.task
            if r.start < first:
                first = r.start
            if r.end > last:
                last = r.end
            busy[t.core] += r.end - r.start
            count[t.core] += 1
            empty += t.empty
            read += t.mte2_bytes
            write += t.mte3_bytes
            hit += r.l2_hit_bytes
            hbm += r.hbm_bytes
        first = first if runs else 0.0
        span = max(last - first, 1e-9)
        stats = {
            "kernel_cycles": last - first,
            "e2e_cycles": max(last, build_end),
            "tasks": len(runs),
            "tasks_aic": count["AIC"],
            "tasks_aiv": count["AIV"],
            "empty_tasks": empty,
            "utilization": (busy["AIC"] + busy["AIV"]) / (span * (self.spec.aic
                                                                   + self.spec.aiv)),
            "utilization_aic": busy["AIC"] / (span * self.spec.aic),
            "utilization_aiv": busy["AIV"] / (span * self.spec.aiv),
            "gm_read_bytes": read,
            "gm_write_bytes": write,
            "l2_hit_bytes": hit,
            "hbm_read_bytes": hbm,
            "windows": len(window_stats),
            "instances": sum(w[0] for w in window_stats),
            "cross_edges": sum(w[2] for w in window_stats),
            "aicpu_build_cycles": sum(r.end - r.start for r in self.aicpu if r.thread == 0),
            "aicpu_sched_cycles": sum(r.end - r.start for r in self.aicpu if r.thread > 0),
            "sched_threads": self.threads,
            "workspace_bytes": max((w[3] for w in window_stats), default=0),
        }
        reads = stats["gm_read_bytes"]
        stats["l2_hit_ratio"] = stats["l2_hit_bytes"] / reads if reads else 0.0
        return SimResult(kernel, self.spec.clock_mhz, self.spec.aic, self.spec.aiv, runs,
                         self.aicpu, self.flows, stats)


def _workspace(tasks: list[SimTask], params: frozenset) -> float:
    """GM workspace a window needs: the distinct boxes its tasks write outside the kernel's
    parameters (intermediates crossing tasks or instances)."""
    boxes = {}
    for t in tasks:
        for acc, (_, isz) in zip(t.writes, t.write_layouts):
            if acc[0] not in params:
                boxes[acc] = _numel(acc[2]) * isz
    return float(sum(boxes.values()))


def _numel(extents: tuple[int, ...]) -> int:
    n = 1
    for e in extents:
        n *= e
    return n


def simulate(tasks: list[SimTask], spec: MachineSpec, kernel: str = "",
             sched_mode: int = 0, params: frozenset = frozenset(),
             sched_threads: int | None = None) -> SimResult:
    """Simulate stitched tasks on `spec`; see the module docstring for the model. `params`:
    storage ids of the kernel's parameters (not workspace)."""
    # NOTE: a run allocates one long-lived record per task; pausing the cyclic GC meanwhile
    # avoids repeated full collections over them.
    was_on = gc.isenabled()
    gc.disable()
    try:
        return Simulator(spec, sched_mode, sched_threads).run(tasks, kernel, params)
    finally:
        if was_on:
            gc.enable()
