"""What one simulated run produced: task and AICPU events in cycles, dependency flows, stats.

Takes nothing; it is the contract between the simulator (`machine.simulate`) and everything
that reads a run (`profiling.swimlane` writer, reports, `kernel.last_run`). Times are cycles of
the machine clock (`MachineSpec.clock_mhz`); writers convert to microseconds.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(slots=True)
class SimTask:
    """One task = one call op of one root-function instance, as the stitcher saw it."""

    id: int                 # global index in submission order
    window: int             # stitch window (device task) index, 0-based
    instance: int           # root-function instance index within its window
    root: str               # root function (block) name
    root_index: int         # index of the root function in the program (its "magic")
    call: int               # call-op index inside the root function (psgId)
    leaf: str               # leaf function name
    leaf_index: int
    core: str               # "AIC" or "AIV"
    label: str = ""         # semantic label of the ops (swimlane bracket)
    # cost-model inputs (filled by runtime/task_cost.py, read by machine/timing.py)
    mte2_bytes: float = 0.0
    mte1_bytes: float = 0.0
    vector_cycles: float = 0.0
    cube_cycles: float = 0.0
    mte3_bytes: float = 0.0
    # what the GM transfers occupy by their shape (>= the bytes above; runtime/transfer_shape)
    mte2_moved: float = 0.0
    mte3_moved: float = 0.0
    mte1_cycles: float = 0.0   # L1 -> L0A/L0B moves at their effective rates
    fix_cycles: float = 0.0    # L0C drains through the fixpipe (per output tile and row)
    empty: bool = False     # every valid extent is zero: only the head overhead is paid
    # GM accesses: (storage id, offsets, extents) of each read / write, for stitching deps
    reads: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    writes: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    # layout of each access above, in the same order: (shape of the accessed tensor, bytes per
    # element), so the L2 model can map boxes to cache lines
    read_layouts: list[tuple[tuple[int, ...], float]] = field(default_factory=list)
    write_layouts: list[tuple[tuple[int, ...], float]] = field(default_factory=list)
    uncached: frozenset = frozenset()  # storage ids marked NONE_CACHEABLE
    preds: list[int] = field(default_factory=list)   # task ids this task waits for
    inputs: list[dict[str, Any]] = field(default_factory=list)   # operand hints
    outputs: list[dict[str, Any]] = field(default_factory=list)
    merge: dict[str, Any] = field(default_factory=dict)          # merge group ids


@dataclass(slots=True)
class TaskRun:
    """Where and when a task ran."""

    task: SimTask
    core_index: int         # 0..aic-1 for AIC, 0..aiv-1 for AIV
    start: float            # cycles
    end: float
    l2_hit_bytes: float = 0.0
    hbm_bytes: float = 0.0
    ready: float | None = None  # when its last dependency was resolved (cycles)


@dataclass(slots=True)
class AicpuRun:
    """Work on an AICPU thread: building a stitch window, dispatching, resolving deps."""

    thread: int             # 0 = control thread, 1.. = scheduler threads
    name: str
    start: float
    end: float
    args: dict[str, Any] = field(default_factory=dict)


class TaskRunColumns:
    """The task runs of a run as arrays (what the compiled core returns), in task order: per
    task that ran its row in `table` (a `machine.task_table.TaskTable`), core index, start,
    end, L2-hit and HBM bytes, and ready time (NaN: none). `runs()` makes the `TaskRun`s."""

    def __init__(self, table: Any, rows, core_index, start, end, hit, hbm, ready):
        self.table = table
        self.rows, self.core_index, self.start, self.end = rows, core_index, start, end
        self.hit, self.hbm, self.ready = hit, hbm, ready

    def __len__(self) -> int:
        return len(self.rows)

    def runs(self) -> list[TaskRun]:
        tasks = self.table.tasks()
        ready = [None if r != r else r for r in self.ready.tolist()]
        return list(map(TaskRun, map(tasks.__getitem__, self.rows.tolist()),
                        self.core_index.tolist(), self.start.tolist(), self.end.tolist(),
                        self.hit.tolist(), self.hbm.tolist(), ready))


# What the layers above lend a result (`pypto/__init__.py` registers them; the machine imports
# nothing above it): "compare", the toolkit's comparison with a board's trace.
LENT: dict[str, Any] = {}


@dataclass
class SimResult:
    """One simulated run. Printed (repr/str), it is a short `summary()`; every field stays
    an attribute (`tasks`, `aicpu`, `flows`, `stats`, ...) and `dataclasses.asdict` gives all.

    A field given as None with a maker in `lazy` (field name -> function) is made on first
    access: the compiled core's run makes its `TaskRun`s, AICPU records and flows from its
    arrays only when read, so a reader that wants only the stats (the tuner, a scaling
    benchmark) never makes a per-task object. `columns`: the task runs as arrays."""

    kernel: str
    clock_mhz: int
    aic: int
    aiv: int
    tasks: list[TaskRun]
    aicpu: list[AicpuRun]
    flows: list[tuple[int, int]]            # (pred task id, succ task id) resolved edges
    stats: dict[str, Any]
    folder: str | None = None               # the run's files (runtime_debug_mode=1), if written
    columns: TaskRunColumns | None = field(default=None, repr=False, compare=False)
    lazy: dict[str, Callable[[], Any]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in self.lazy:
            if getattr(self, name) is None:
                delattr(self, name)   # made by __getattr__ on first access

    def __getattr__(self, name: str) -> Any:
        # only for attributes not set: the lazy fields not made yet
        make = self.__dict__.get("lazy", {}).get(name)
        if make is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = make()
        setattr(self, name, value)
        return value

    def us(self, cycles: float) -> float:
        return cycles / self.clock_mhz

    def digest(self) -> str:
        """A hash of the whole timeline: every task's core and times, every AICPU event, the
        flows and the stats. Equal digests, equal runs (values compared, not types)."""
        import hashlib

        def norm(v: Any) -> Any:
            return float(v) if isinstance(v, (int, float)) or hasattr(v, "dtype") else v

        h = hashlib.sha256()
        for r in self.tasks:
            h.update(repr(tuple(norm(v) for v in (r.task.id, r.core_index, r.start, r.end,
                                                    r.l2_hit_bytes, r.hbm_bytes, r.ready))
                          ).encode())
        for a in self.aicpu:
            h.update(repr((a.thread, a.name, norm(a.start), norm(a.end),
                           sorted((k, norm(v)) for k, v in a.args.items()))).encode())
        h.update(repr(self.flows).encode())
        h.update(repr(sorted((k, norm(v)) for k, v in self.stats.items())).encode())
        return h.hexdigest()[:16]

    def leaf_busy(self) -> list[tuple[str, str, int, float]]:
        """(leaf, core type, tasks, busy cycles) per leaf function, busiest first."""
        busy: dict[tuple[str, str], list] = {}
        for r in self.tasks:
            entry = busy.setdefault((r.task.leaf, r.task.core), [0, 0.0])
            entry[0] += 1
            entry[1] += r.end - r.start
        return sorted(((leaf, core, n, b) for (leaf, core), (n, b) in busy.items()),
                      key=lambda x: (-x[3], x[0], x[1]))

    def compare(self, board: str, machine: str | None = None) -> dict[str, Any]:
        """This run against a swimlane recorded on a board (a path to its
        merged_swimlane.json or run folder): `pypto-toolkit compare`'s report, as a dict
        (`toolkit.compare`; print it with `toolkit.compare.format_text`). `machine`: the
        preset this run used, when not the default."""
        if "compare" not in LENT:
            raise RuntimeError("SimResult.compare needs pypto's toolkit: import pypto")
        return LENT["compare"](self, board, machine)

    def summary(self, top: int = 5) -> str:
        """About ten lines: kernel and end-to-end time, tasks, utilisation, windows, L2 hits,
        the `top` leaf functions by busy time, where the files are."""
        # the numbers the stderr line and the stats report print
        n = run_numbers(self)
        l2 = "n/a" if n.l2_hit_pct is None else \
            f"{n.l2_hit_pct:.1f}% of {n.gm_read_bytes / 1e6:,.1f} MB read from GM"
        lines = [
            f"SimResult {self.kernel}: {n.tasks} tasks on {self.aic} AIC + {self.aiv} AIV "
            f"cores at {self.clock_mhz} MHz",
            f"  kernel {self.us(n.kernel_cycles):.2f} us: first to last AIC/AIV task "
            f"(PyPTO's 'AICore End-to-End Time')",
            f"  e2e {self.us(n.e2e_cycles):.2f} us: launch to the last task or AICPU event"
            + (f" ({self.us(self.stats['host_e2e_cycles']):.2f} us with the host's launch)"
               if "host_e2e_cycles" in self.stats else ""),
            f"  tasks {n.aic_tasks} AIC / {n.aiv_tasks} AIV in {n.instances} instance(s), "
            f"{n.windows} stitch window(s) (workspace up to "
            f"{self.stats.get('workspace_bytes', 0) / 2**20:,.2f} MiB each); "
            f"{len(self.flows)} dependency edges",
            f"  AICore util {n.util_pct:.2f}% (AIC {n.aic_util_pct:.2f}%, "
            f"AIV {n.aiv_util_pct:.2f}%); L2 hit {l2}"]
        leaves = self.leaf_busy()
        total = sum(b for *_, b in leaves)
        if leaves:
            lines.append(f"  top leaf functions by busy time (of {len(leaves)}):")
        lines += [f"    {leaf} ({core}): {count} tasks, {self.us(b):.2f} us busy "
                  f"({100.0 * b / total if total else 0.0:.1f}%)"
                  for leaf, core, count, b in leaves[:top]]
        lines.append(f"  files: {self.folder}" if self.folder else
                     "  files: none written (runtime_debug_mode=1 writes the swimlane)")
        lines.append("  full data: .tasks .aicpu .flows .stats (dataclasses.asdict for all)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    __str__ = __repr__


@dataclass(frozen=True)
class RunNumbers:
    """The headline numbers of one run (cycles unless named _us / _pct)."""

    kernel_cycles: float
    e2e_cycles: float
    tasks: int
    aic_tasks: int
    aiv_tasks: int
    aic_busy: float
    aiv_busy: float
    aic_util_pct: float
    aiv_util_pct: float
    util_pct: float             # AIC+AIV busy / ((aic + aiv) x kernel_cycles), PyPTO's formula
    gm_read_bytes: float | None
    gm_write_bytes: float | None
    l2_hit_bytes: float | None
    l2_hit_pct: float | None
    windows: int
    instances: int


def _stat(stats: dict[str, Any], key: str, default: Callable[[], Any]) -> Any:
    """`stats[key]`, else `default()` (a pass over the tasks: only made when needed)."""
    value = stats.get(key)
    return default() if value is None else value


def percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def run_numbers(result: SimResult) -> RunNumbers:
    runs, st = result.tasks, result.stats
    kernel = float(_stat(st, "kernel_cycles", lambda: (
        max(r.end for r in runs) - min(r.start for r in runs)) if runs else 0.0))
    e2e = float(_stat(st, "e2e_cycles", lambda: _e2e(result)))
    busy = {"AIC": 0.0, "AIV": 0.0}
    count = Counter(r.task.core for r in runs)
    for r in runs:
        busy[r.task.core] = busy.get(r.task.core, 0.0) + (r.end - r.start)
    gm_read = _stat(st, "gm_read_bytes", lambda: sum(r.task.mte2_bytes for r in runs))
    l2_hit = _stat(st, "l2_hit_bytes", lambda: sum(r.l2_hit_bytes for r in runs))
    return RunNumbers(
        kernel, e2e, len(runs), count["AIC"], count["AIV"], busy["AIC"], busy["AIV"],
        percent(busy["AIC"], result.aic * kernel), percent(busy["AIV"], result.aiv * kernel),
        percent(busy["AIC"] + busy["AIV"], (result.aic + result.aiv) * kernel),
        gm_read, _stat(st, "gm_write_bytes", lambda: sum(r.task.mte3_bytes for r in runs)),
        l2_hit, percent(l2_hit, gm_read) if gm_read else None,
        int(_stat(st, "windows", lambda: len({r.task.window for r in runs}))),
        int(_stat(st, "instances", lambda: len({(r.task.window, r.task.instance)
                                                for r in runs}))))


def _e2e(result: SimResult) -> float:
    """Launch (cycle 0, or an earlier event) to the last end of any task or AICPU event."""
    ends = [r.end for r in result.tasks] + [a.end for a in result.aicpu]
    starts = [r.start for r in result.tasks] + [a.start for a in result.aicpu]
    return max(ends) - min(0.0, min(starts)) if ends else 0.0
