"""What one simulated run produced: task and AICPU events in cycles, dependency flows, stats.

Takes nothing; it is the contract between the simulator (`machine.simulate`) and everything
that reads a run (`profiling.swimlane` writer, reports, `kernel.last_run`). Times are cycles of
the machine clock (`MachineSpec.clock_mhz`); writers convert to microseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    # cost-model inputs (see machine.cost)
    mte2_bytes: float = 0.0
    mte1_bytes: float = 0.0
    vector_cycles: float = 0.0
    cube_cycles: float = 0.0
    mte3_bytes: float = 0.0
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


@dataclass
class SimResult:
    kernel: str
    clock_mhz: int
    aic: int
    aiv: int
    tasks: list[TaskRun]
    aicpu: list[AicpuRun]
    flows: list[tuple[int, int]]            # (pred task id, succ task id) resolved edges
    stats: dict[str, Any]

    def us(self, cycles: float) -> float:
        return cycles / self.clock_mhz
