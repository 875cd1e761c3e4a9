"""How long a task occupies its core: the one duration formula of the simulator.

Takes a task's pipe work (bytes per DMA direction, cube/vector cycles) and the bandwidth its GM
traffic gets (`memory.Memory.traffic`) → cycles. The pipes of a core overlap, so the busiest
one sets the pace; the first load's and the last store's latencies do not overlap with it.
"""
from __future__ import annotations

from typing import NamedTuple

from pypto.machine.result import SimTask
from pypto.machine.spec import MachineSpec


class CoreTiming(NamedTuple):
    """The per-core-type constants of `task_cycles` (cycles, bytes per cycle)."""

    in_bw: float            # GM -> L1 (AIC) / UB (AIV)
    out_bw: float           # L0C (AIC) / UB (AIV) -> GM
    head: float             # fixed cost of every task, an empty one included
    fill_latency: float     # of the first load
    drain_latency: float    # of the last store
    cube: bool              # a cube core: its compute is the cube or the L1 -> L0 moves

    @classmethod
    def of(cls, spec: MachineSpec, core: str) -> CoreTiming:
        dma, task = spec.dma, spec.task
        # NOTE: as floats (same values): the formula then adds floats to floats, which CPython
        # does without its mixed-type paths
        if core == "AIC":
            values = (dma["gm_to_l1"]["bw"], dma["l0c_to_gm"]["bw"], task["head_cycles_aic"],
                      dma["gm_to_l1"]["latency"], dma["l0c_to_gm"]["latency"])
        else:
            values = (dma["gm_to_ub"]["bw"], dma["ub_to_gm"]["bw"], task["head_cycles_aiv"],
                      dma["gm_to_ub"]["latency"], dma["ub_to_gm"]["latency"])
        return cls(*map(float, values), core == "AIC")


class TaskTerms(NamedTuple):
    """The parts of a task's duration that do not depend on what else runs."""

    in_scale: float     # bytes the reads occupy per byte they carry (narrow rows: > 1)
    compute: float      # cube or L1 -> L0 moves (cube core), vector cycles (vector core)
    out_moved: float    # bytes the writes occupy
    fix: float          # fixpipe cycles of the L0C drains (cube core)


def task_terms(task: SimTask, cube: bool) -> TaskTerms:
    mte2, moved = task.mte2_bytes, task.mte2_moved
    in_scale = moved / mte2 if moved > mte2 > 0 else 1.0
    if cube:  # the cube or the L1 -> L0 moves, whichever is busier
        compute = task.mte1_cycles
        if task.cube_cycles >= compute:
            compute = task.cube_cycles
    else:
        compute = task.vector_cycles
    mte3 = task.mte3_bytes
    return TaskTerms(in_scale, compute, task.mte3_moved if task.mte3_moved > mte3 else mte3,
                     task.fix_cycles)


def busy_cycles(terms: TaskTerms, core: CoreTiming, hit: float, hbm: float, has_out: bool,
                write_back: bool, hbm_share: float, l2_share: float) -> float:
    """The busiest pipe of a non-empty task whose GM traffic gets `hbm_share` / `l2_share`
    bytes per cycle. Reads that hit L2 move at the L2 share (at most twice the core's DMA
    rate), the rest at the HBM share, each capped by the core's own DMA rate, and take as long
    as the bytes their shape occupies (`in_scale`: narrow rows fill whole pieces); writes
    (`has_out`) move at the L2 share when L2 takes them (`write_back`), else at the HBM share,
    and a cube core's go through the fixpipe, whichever is slower."""
    core_bw, out_core_bw = core.in_bw, core.out_bw
    in_scale, compute, out_moved, t_out = terms
    in_bw = core_bw if core_bw <= hbm_share else hbm_share
    l2_in_bw = core_bw * 2
    if l2_share < l2_in_bw:
        l2_in_bw = l2_share
    busiest = (hbm / in_bw + hit / l2_in_bw) * in_scale
    if compute > busiest:
        busiest = compute
    if has_out:
        out_bw = l2_share if write_back else hbm_share
        if out_core_bw <= out_bw:
            out_bw = out_core_bw
        if out_moved / out_bw > t_out:
            t_out = out_moved / out_bw
    return t_out if t_out > busiest else busiest


def lead_cycles(task: SimTask, core: CoreTiming) -> float:
    """Before the busiest pipe runs: the task head, and the first load's latency."""
    return core.head + core.fill_latency if task.mte2_bytes else core.head


def tail_cycles(task: SimTask, core: CoreTiming) -> float:
    """After the busiest pipe: the last store's latency."""
    return core.drain_latency if task.mte3_bytes else 0.0


def task_cycles(task: SimTask, core: CoreTiming, hit: float, hbm: float, hbm_share: float,
                l2_share: float, write_back: bool, terms: TaskTerms | None = None) -> float:
    """head + first-load latency + busiest pipe (`busy_cycles`) + last-store latency, at
    constant shares; an empty task pays only the head. `terms`: `task_terms(task)`. The
    simulator re-times the busiest pipe as the shares change (`machine.flow`)."""
    if task.empty:
        return core.head
    busy = busy_cycles(terms or task_terms(task, core.cube), core, hit, hbm,
                       bool(task.mte3_bytes), write_back, hbm_share, l2_share)
    return lead_cycles(task, core) + busy + tail_cycles(task, core)
