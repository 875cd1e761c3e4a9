"""A simulated task's duration split by the cost model's mechanisms, read back from our trace.

`machine/timing.py` times a task as head + first-load latency + its busiest pipe + last-store
latency; the pipes are the load (GM -> L1 / UB: bytes at the core's DMA rate and its share of
HBM / L2, times the bytes its shape occupies: ND2NZ rows on a cube core, partial pieces and
burst overhead on a vector core), the compute (vector cycles; cube cycles or L1 -> L0 moves)
and the store (bytes at the DMA rate, or the fixpipe's drain on a cube core). Our trace keeps
each task's inputs to that formula (`cost`, `l2_hit_bytes`, `hbm_bytes`), so the split is
recomputed here as the task's pipes (`pipes`: head, compute, fixpipe, load, the load's shape
overhead, store, as the simulation timed them) and as its duration split by mechanism
(`split`: the head, then the busy time to the busiest pipe). `toolkit/mechanism_fit.py`
re-times the pipes with one mechanism scaled at a time to see which one explains a board.

Each mechanism names the constants of `machine/a2a3.toml` it rests on, so a gap between a
board and the model (`toolkit/compare.py`) points at constants to look at or fit.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from pypto.machine.spec import MachineSpec
from pypto.profiling.swimlane import SwimlaneData

# name -> (what it is, the a2a3.toml constants it rests on)
MECHANISMS: dict[str, tuple[str, str]] = {
    "task_head": ("a task's fixed cost and its first load's / last store's latency",
                  "task.head_cycles_aic / aiv, dma.*.latency"),
    "load_bandwidth": ("GM -> L1 / UB bytes at the core's DMA rate and its HBM / L2 share",
                       "dma.gm_to_l1.bw, dma.gm_to_ub.bw, memory.hbm/l2_bytes_per_cycle"),
    "nd2nz": ("a cube core's ND rows reordered into L1's fractal layout",
              "dma.shape.nd2nz_row_bytes, dma.shape.piece_bytes"),
    "burst": ("a vector core's partial pieces and per-burst overhead",
              "dma.shape.burst_overhead_bytes, dma.shape.piece_bytes"),
    "vector": ("vector compute", "vector.* (cycles per repeat, issue, sync)"),
    "cube": ("cube compute and L1 -> L0 moves",
             "cube.mad_head_cycles, cube.mac_per_cycle_fp16, dma.l1_to_l0a/b"),
    "store": ("UB / L0C -> GM bytes at the core's DMA rate",
              "dma.ub_to_gm.bw, dma.l0c_to_gm.bw"),
    "fixpipe": ("a cube core's L0C drain, row by row", "dma.fixpipe.*"),
}
NAMES = tuple(MECHANISMS)


class Rates(NamedTuple):
    in_bw: float
    out_bw: float
    head: float
    fill: float
    drain: float


def _rates(spec: MachineSpec, core: str) -> Rates:
    dma, task = spec.dma, spec.task
    if core == "aic":
        return Rates(dma["gm_to_l1"]["bw"], dma["l0c_to_gm"]["bw"], task["head_cycles_aic"],
                     dma["gm_to_l1"]["latency"], dma["l0c_to_gm"]["latency"])
    return Rates(dma["gm_to_ub"]["bw"], dma["ub_to_gm"]["bw"], task["head_cycles_aiv"],
                 dma["gm_to_ub"]["latency"], dma["ub_to_gm"]["latency"])


# the pipes of the duration formula, per task (microseconds): head + max(compute, fix,
# load + shape, store)
PIPES = ("head", "compute", "fix", "load", "shape", "store")
# mechanism -> (its pipe, the core type it applies to: None for both)
PIPE_OF = {"task_head": ("head", None), "load_bandwidth": ("load", None),
           "nd2nz": ("shape", "aic"), "burst": ("shape", "aiv"), "vector": ("compute", "aiv"),
           "cube": ("compute", "aic"), "store": ("store", None), "fixpipe": ("fix", None)}


def pipes(data: SwimlaneData, spec: MachineSpec, tasks: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """(len(tasks), len(PIPES)) microseconds of each task's pipes as the simulation timed them,
    and whether each task is a cube core's; rows of zeros where the trace has no cost inputs
    (not one of ours). head + the longest pipe is the task's simulated duration.

    The compute and the fixpipe take what they take whatever else runs; the load and the store
    move at a share of HBM / L2 that depends on the other running tasks. Where one of them is
    the busiest (the busy time exceeds the compute and the fixpipe), both are stretched by the
    factor that makes it last the busy time. Elsewhere the factor is not seen: the median
    factor of that core type's bandwidth-bound tasks stands in, capped so that neither pipe
    outlasts the busy time (it did not, or the task would have been bandwidth-bound)."""
    cols = data.task_columns
    kinds = data.kind_of(cols.lane)
    cost = cols.args.values("cost", None)
    hit, hbm = cols.args.values("l2_hit_bytes", 0), cols.args.values("hbm_bytes", 0)
    clock = float(data.clock_mhz)
    raw = np.zeros((len(tasks), 8))   # head, compute, fix, load, store, scale, busy, bw-bound
    raw[:, 5] = 1.0
    aic = np.zeros(len(tasks), dtype=bool)
    for row, t in enumerate(tasks.tolist()):
        aic[row] = kinds[t] == "aic"
        if isinstance(cost[t], dict):
            raw[row] = task_pipes(cost[t], str(kinds[t]), _number(hit[t]), _number(hbm[t]),
                                  float(cols.dur[t]) * clock, spec)
    return _stretched(raw, aic) / clock, aic


def task_pipes(cost: dict[str, Any], core: str, hit: float, hbm: float, dur: float,
               spec: MachineSpec) -> tuple[float, ...]:
    """One task's (head, compute, fix, load, store) cycles, the load and store at the core's
    own rates; the load's shape factor (`mte2_moved` / `mte2_bytes`: ND2NZ rows, partial
    pieces, bursts); its busy time; and 1.0 when a bandwidth pipe was the busiest."""
    r = _rates(spec, core)
    got = lambda k: float(cost.get(k, 0.0))   # noqa: E731
    mte2, mte3 = got("mte2_bytes"), got("mte3_bytes")
    if cost.get("empty"):
        return (dur, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    head = min(dur, r.head + (r.fill if mte2 else 0.0) + (r.drain if mte3 else 0.0))
    busy = dur - head
    compute = max(got("mte1_cycles"), got("cube_cycles")) if core == "aic" \
        else got("vector_cycles")
    fix = got("fix_cycles")
    scale = got("mte2_moved") / mte2 if got("mte2_moved") > mte2 > 0 else 1.0
    load = (hbm + hit / 2 if hit + hbm > 0 else mte2) * scale / r.in_bw
    store = max(got("mte3_moved"), mte3) / r.out_bw if mte3 else 0.0
    bound = busy > max(compute, fix) * (1 + 1e-6) and max(load, store) > 0
    return (head, compute, fix, load, store, scale, busy, float(bound))


def _stretched(raw: np.ndarray, aic: np.ndarray) -> np.ndarray:
    head, compute, fix, load, store, scale, busy, bound = raw.T
    widest = np.maximum(load, store)
    stretch = np.where(bound > 0, busy / np.where(widest > 0, widest, 1.0), 1.0)
    for core in (aic, ~aic):
        seen = (bound > 0) & core
        typical = float(np.median(stretch[seen])) if seen.any() else 1.0
        unseen = (bound == 0) & core & (widest > 0)
        cap = np.where(widest > 0, busy / np.where(widest > 0, widest, 1.0), 1.0)
        stretch[unseen] = np.minimum(typical, np.maximum(cap[unseen], 1.0))
    load, store = load * stretch, store * stretch
    return np.stack([head, compute, fix, load / scale, load - load / scale, store], axis=1)


def split(data: SwimlaneData, spec: MachineSpec, tasks: np.ndarray) -> np.ndarray:
    """(len(tasks), len(NAMES)) microseconds of each task's simulated duration by mechanism:
    its head, then its busy time to the busiest pipe's mechanisms."""
    p, aic = pipes(data, spec, tasks)
    out = np.zeros((len(tasks), len(NAMES)))
    out[:, NAMES.index("task_head")] = p[:, 0]
    for row in range(len(tasks)):
        head, compute, fix, load, shape, store = p[row]
        longest = max(compute, fix, load + shape, store)
        if longest <= 0:
            continue
        if longest == compute:
            out[row, NAMES.index("cube" if aic[row] else "vector")] = compute
        elif longest == fix:
            out[row, NAMES.index("fixpipe")] = fix
        elif longest == store:
            out[row, NAMES.index("store")] = store
        else:
            out[row, NAMES.index("load_bandwidth")] = load
            out[row, NAMES.index("nd2nz" if aic[row] else "burst")] = shape
    return out


def _number(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) else 0.0
