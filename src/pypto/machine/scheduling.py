"""The AICPU side of a run: the control thread that builds each window, the scheduler threads
that dispatch tasks and resolve dependencies, and which core a ready task goes to.

Takes one window's tasks → its dependency graph, what building it costs, and the scheduling
decisions (`device_sched_mode`: 0 one shared FIFO ready queue; 1 L2 affinity: newest ready
task first, handed to the core that produced its input when that core is idle; 2 fairness:
cores are taken from the scheduler thread that has dispatched least, and every dispatch costs
`fairness_cycles_per_dispatch` more; 3 = 1 + 2).
"""
from __future__ import annotations

from pypto.machine.result import AicpuRun, SimTask
from pypto.machine.spec import MachineSpec

AIC, AIV = 0, 1   # core types; cores are numbered AIC 0..aic-1, then AIV


class WindowGraph:
    """One window's dependency graph over task positions 0..n-1 instead of task ids, so the
    event loop indexes lists rather than hashing ids."""

    __slots__ = ("ids", "kinds", "remaining", "successors", "roots", "instances", "cross_edges")

    def __init__(self, tasks: list[SimTask]):
        n = len(tasks)
        # NOTE: comprehensions, not map(attrgetter(...)): CPython specializes their attribute
        # reads, which makes them the cheaper of the two
        self.ids = ids = [t.id for t in tasks]
        position = dict(zip(ids, range(n)))
        instance = [t.instance for t in tasks]
        self.kinds = [AIC if t.core == "AIC" else AIV for t in tasks]
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


def build_cycles(aicpu: dict, graph: WindowGraph) -> float:
    """What building a window costs the control thread: a big window (many instances, many
    edges across them) costs more before its first task can start."""
    return aicpu["window_base_cycles"] + aicpu["instance_cycles"] * graph.instances \
        + aicpu["edge_cycles"] * graph.cross_edges


def dispatch_cycles(aicpu: dict, mode: int) -> float:
    """What dispatching one task costs its scheduler thread; in fairness modes (2, 3) the pick
    also reads and updates the dispatch counts the scheduler threads share."""
    cost = float(aicpu["dispatch_cycles_per_task"])
    if mode & 2:
        cost += float(aicpu["fairness_cycles_per_dispatch"])
    return cost


class SchedulerThreads:
    """The scheduler threads 1..count (thread 0 is the control thread). Each owns a share of
    the cores and does their work in order: dispatching a task, resolving the successors of a
    finished one."""

    def __init__(self, spec: MachineSpec, threads: int | None):
        a = spec.aicpu
        self.count = count = min(a["sched_threads"], threads or a["sched_threads"])
        per = a["cores_per_thread"]
        self.owner = [min(count, i // per["aic"] + 1) for i in range(spec.aic)] + \
            [min(count, i // per["aiv"] + 1) for i in range(spec.aiv)]   # per core
        self.records: list[AicpuRun] = []   # resolves and dispatches, in the order made
        # per thread its last record, kept across windows (at first one that nothing extends):
        # back-to-back work of one kind on a thread extends it, as PyPTO's trace shows it
        self.last = [AicpuRun(-1, "", float("nan"), float("nan"))] * (count + 1)
        # in the current window: per thread when it is free and how many tasks it dispatched,
        # and the records it made
        self.free: list[float] = []
        self.dispatched: list[int] = []
        self.made: list[AicpuRun] = []

    def start_window(self, start: float) -> None:
        self.free = [start] * (self.count + 1)
        self.dispatched = [0] * (self.count + 1)

    def work(self, thread: int, kind: str, now: float, cycles: float, count: int) -> float:
        """`count` items of `kind` work on `thread` from `now` or when it is free; returns
        when the work is done."""
        t0 = self.free[thread]
        if now > t0:
            t0 = now
        self.free[thread] = t1 = t0 + cycles
        record = self.last[thread]
        if record.end == t0 and record.name == kind:
            record.end = t1
            record.args["count"] += count
        else:
            self.last[thread] = record = AicpuRun(thread, kind, t0, t1, {"count": count})
            self.made.append(record)
        if kind == "dispatch":
            self.dispatched[thread] += count
        return t1

    def end_window(self) -> list[AicpuRun]:
        """The records the window made."""
        made, self.made = self.made, []
        self.records += made
        return made


class Cores:
    """The cores of one window: when each is free of all its tasks (`free_at`) and how many
    of its `slots` hold a task (`used`: one running and the pending ones)."""

    def __init__(self, aic: int, aiv: int, slots: int, start: float):
        self.of_type = (range(aic), range(aic, aic + aiv))
        self.slots = slots
        self.free_at = [start] * (aic + aiv)
        self.used = [0] * (aic + aiv)

    def choose(self, ty: int, mode: int, producer: int | None, owner: list[int],
               dispatched: list[int]) -> int | None:
        """The core of type `ty` that the next ready task goes to, or None if all are full:
        in L2 affinity modes its producer's core when that core is idle; else, among the
        cores with the fewest busy slots, the earliest free one (in fairness modes first the
        ones whose scheduler thread has dispatched least), the lowest index on a tie."""
        used, free_at = self.used, self.free_at
        if mode & 1 and producer is not None and used[producer] == 0:
            return producer
        open_cores = [g for g in self.of_type[ty] if used[g] < self.slots]
        if not open_cores:
            return None
        fewest = min(used[g] for g in open_cores)
        pool = [g for g in open_cores if used[g] == fewest]
        if mode & 2:
            return min(pool, key=lambda g: (dispatched[owner[g]], free_at[g], g))
        return min(pool, key=lambda g: (free_at[g], g))


class WindowRun:
    """What running one window decided, per task position (`start` None: never ran, a
    dependency cycle), and the finished tasks whose successors were resolved, in the order
    they were (the flows)."""

    __slots__ = ("core", "start", "end", "hit", "hbm", "ready", "resolved")

    def __init__(self, n: int):
        self.core = [0] * n                             # core g
        self.start: list[float | None] = [None] * n
        self.end = [0.0] * n
        self.hit = [0.0] * n                            # L2-hit bytes
        self.hbm = [0.0] * n                            # HBM bytes
        self.ready: list[float | None] = [None] * n     # when its last dependency resolved
        self.resolved: list[int] = []


def build_args(instances: int, tasks: int, cross_edges: int, workspace: float,
               closed_by: str) -> dict:
    """A window build event's args; `closed_by` only when the stitcher said why."""
    args = {"instances": instances, "tasks": tasks, "cross_edges": cross_edges,
            "workspace_bytes": workspace}
    if closed_by:
        args["closed_by"] = closed_by
    return args
