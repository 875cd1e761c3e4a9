"""A kernel call as a value: what one call traced, compiled, ran and (on first need) simulated.

`JitKernel.__call__` makes one `CallRecord` per call and keeps the latest as `kernel.last`;
`kernel.evaluate(...)` makes one for a variant (knobs changed, timing only) and keeps none.
Nothing reads a call's results from the kernel's own attributes, so whatever runs a second
call (a what-if, a tuner worker, `@autotune`) has nothing to save and restore around it.

The simulation is the costlier half of a call on the models and many calls never look at
timing, so a record holds its stitched tasks as a `PendingRun` and simulates them when its
`run` is first read (once: the record keeps the result). The tuner reads the pending tasks
first to bound them and may never simulate.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from pypto._config import RunOptions
from pypto.ir.program import Program
from pypto.machine.result import SimResult
from pypto.machine.simulate import simulate
from pypto.passes import CompiledProgram
from pypto.runtime.compile_cache import CompileCache
from pypto.runtime.plan import ExecutionPlan


@dataclass(frozen=True)
class PendingRun:
    """A call's stitched tasks and the machine they run on, not yet simulated; calling it
    simulates them (the tuner bounds the tasks first to skip hopeless settings)."""

    stitched: Any       # the `Stitcher`: its tasks as objects, or as a table of rows
    spec: Any
    kernel: str
    sched_mode: int
    workspace: list
    sched_threads: int | None

    @property
    def table(self) -> Any:
        """The tasks as columns, when the stitcher made them (`Stitcher.table`)."""
        return self.stitched.table

    @property
    def tasks(self) -> Any:
        """The tasks as `SimTask`s (made from the table's rows when they are rows)."""
        return self.stitched.tasks

    def __call__(self) -> SimResult:
        table = self.table
        return simulate(table if table is not None else self.tasks, self.spec,
                        self.kernel, self.sched_mode, self.workspace, self.sched_threads,
                        self.stitched.closed_by)


class _Simulated:
    """The one simulation of a pending run, made on first need and kept (thread-safe: two
    readers of `run` get the same result)."""

    def __init__(self, pending: PendingRun | None):
        self.pending, self.result = pending, None
        self.lock = threading.Lock()

    def get(self) -> SimResult | None:
        with self.lock:
            if self.result is None and self.pending is not None:
                self.result = self.pending()
            return self.result


@dataclass(frozen=True)
class CallRecord:
    """One call of a kernel: its arguments, program, compiled program, execution plan, the
    executor that ran it, its run options, the knob call sites its trace met, and its
    simulated run (`run`, computed on first read)."""

    kernel: str
    args: tuple
    kwargs: dict
    program: Program
    compiled: CompiledProgram
    plan: ExecutionPlan | None         # None: compile_stage stopped before the run
    options: RunOptions
    sites: dict                        # {knob site: calls it replaced} (frontend.knobs)
    executor: Any = None               # the executor that ran it (None: it did not run)
    pending: PendingRun | None = None  # its stitched tasks, before simulation
    timing_only: bool = False          # no arithmetic ran (the outputs were not written)
    folder: str | None = None          # its run folder under output/, when one was written
    _simulated: _Simulated = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_simulated", _Simulated(self.pending))

    @property
    def ran(self) -> bool:
        """Whether the kernel ran (compile_stage ALL_COMPLETE), not only compiled."""
        return self.executor is not None

    @property
    def simulated(self) -> bool:
        """Whether `run` was computed already (reading it would not simulate)."""
        return self._simulated.result is not None

    @property
    def run(self) -> SimResult | None:
        """The simulated A2/A3 run (a `machine.result.SimResult`); None when the kernel did
        not run or ran on the reference executor, which has no schedule."""
        return self._simulated.get()


class Variant(NamedTuple):
    """How `JitKernel.evaluate` runs a call beside the kernel's own (`NONE`: the kernel's own
    call, which runs as written, keeps its compiles and writes its folders)."""

    timing_only: bool
    explicit: str | None            # a `numerics` knob, which wins over `timing_only`
    cache: CompileCache | None      # where its compiles are kept (None: nowhere)
    fresh: bool                     # trace and compile afresh

    def numerics(self, run: RunOptions, refusal: str | None) -> RunOptions:
        """`run` with the numerics this variant runs with: timing only when asked for and
        possible (an explicit timing_only knob is then refused by the run), else exact."""
        timing = self.explicit == "timing_only" or (
            self.explicit is None and self.timing_only and refusal is None)
        return replace(run, numerics="timing_only" if timing else self.explicit or "exact")


Variant.NONE = Variant(False, None, None, False)


def copy_value(value: Any) -> Any:
    """A copy of an argument a variant computes on (a tensor's data copied, others as is)."""
    if hasattr(value, "clone") and callable(value.clone):   # torch
        return value.clone()
    if hasattr(value, "copy") and hasattr(value, "dtype"):   # numpy
        return value.copy()
    return value


def copies(args: tuple) -> tuple:
    return tuple(copy_value(a) for a in args)
