"""A task's measured duration split by the cost model's terms, for many tasks at once.

`machine/timing.py task_cycles` times a task as head + first-load latency + its busiest pipe
+ last-store latency. Given each task's duration and its cost-model inputs (a `SimTask`'s
fields, or the `cost` arg our trace keeps of them), `term_cycles` splits the duration into:

* `head`    - the task's fixed cost (at most its duration)
* `latency` - the first load's and the last store's latencies (non-empty tasks)
* `cube` / `vector` - the core's compute work (the roofline's work), up to the busy time
* `mte1`    - L1 -> L0 moves beyond the cube (cube core: the moves were the busier)
* `mte2` / `mte3` / `fixpipe` - the busy time beyond the compute: a GM transfer (or the
  fixpipe's drain) was the busiest pipe; given to whichever of the load (MTE2), the store
  (MTE3) and the fixpipe takes longest at the core's own rates (the contended HBM / L2 shares
  the simulator used are not in the inputs, so this names the likely pipe, not a measured one)

The terms sum to the duration (but for an empty task's or a very short task's head and
latencies). `benchmarks/models.py task_time_split` (the busiest core type's time by term)
reads the same split from a `SimResult`; the toolkit's kernel statistics from a trace.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np

from pypto.machine.spec import MachineSpec

TERMS = ("head", "latency", "cube", "vector", "mte1", "mte2", "mte3", "fixpipe")
# the cost-model inputs `term_cycles` reads (the trace's `cost` arg keeps the non-zero ones)
FIELDS = ("mte2_bytes", "mte3_bytes", "mte2_moved", "mte3_moved", "cube_cycles",
          "vector_cycles", "mte1_cycles", "fix_cycles", "empty")


def inputs_of_tasks(tasks: list) -> dict[str, np.ndarray]:
    """The `FIELDS` of `SimTask`s as arrays."""
    return {k: np.fromiter(map(attrgetter(k), tasks), dtype=np.float64, count=len(tasks))
            for k in FIELDS}


def inputs_of_costs(costs: list[Any]) -> dict[str, np.ndarray] | None:
    """The `FIELDS` of each task's `cost` arg (a dict of its non-zero inputs) as arrays; None
    when no task has one (not our trace). NOTE: tasks share their cost dicts (the reader
    restores them from one table): each distinct dict is read once."""
    ids = np.fromiter(map(id, costs), dtype=np.int64, count=len(costs))
    distinct, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    rows = [costs[i] for i in first.tolist()]
    if not any(isinstance(r, dict) for r in rows):
        return None
    table = np.array([[_number(r.get(k)) if isinstance(r, dict) else 0.0 for k in FIELDS]
                      for r in rows], dtype=np.float64).reshape(len(rows), len(FIELDS))
    return {k: table[inverse.reshape(-1), j] for j, k in enumerate(FIELDS)}


def _number(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) else 0.0


def term_cycles(cube: np.ndarray, dur: np.ndarray, inputs: dict[str, np.ndarray],
                spec: MachineSpec) -> dict[str, np.ndarray]:
    """Each task's `dur` (cycles) split by `TERMS` (see the module docstring); `cube`: whether
    each task ran on a cube core; `inputs`: the `FIELDS` arrays."""
    dma, task = spec.dma, spec.task
    cube = np.asarray(cube, dtype=bool)
    dur = np.asarray(dur, dtype=np.float64)

    def per_core(aic: Any, aiv: Any) -> np.ndarray:
        return np.where(cube, float(aic), float(aiv))
    head = np.minimum(dur, per_core(task["head_cycles_aic"], task["head_cycles_aiv"]))
    empty = inputs["empty"] > 0
    mte2, mte3 = inputs["mte2_bytes"], inputs["mte3_bytes"]
    latency = np.where(mte2 > 0, per_core(dma["gm_to_l1"]["latency"],
                                          dma["gm_to_ub"]["latency"]), 0.0)
    latency = np.where(empty, 0.0, latency + np.where(
        mte3 > 0, per_core(dma["l0c_to_gm"]["latency"], dma["ub_to_gm"]["latency"]), 0.0))
    pipe = np.maximum(0.0, dur - head - latency)
    work = np.where(cube, inputs["cube_cycles"], inputs["vector_cycles"])
    compute = np.where(cube, np.maximum(inputs["mte1_cycles"], inputs["cube_cycles"]),
                       inputs["vector_cycles"])
    done = np.where(empty, 0.0, np.minimum(work, pipe))
    beyond = np.where(empty, 0.0, np.maximum(0.0, pipe - compute))
    load = np.maximum(inputs["mte2_moved"], mte2) / per_core(dma["gm_to_l1"]["bw"],
                                                             dma["gm_to_ub"]["bw"])
    store = np.maximum(inputs["mte3_moved"], mte3) / per_core(dma["l0c_to_gm"]["bw"],
                                                              dma["ub_to_gm"]["bw"])
    busiest = np.argmax(np.stack([load, store, inputs["fix_cycles"]]), axis=0)
    return {"head": head, "latency": latency,
            "cube": np.where(cube, done, 0.0), "vector": np.where(cube, 0.0, done),
            "mte1": np.where(cube & ~empty, np.maximum(0.0, np.minimum(compute, pipe) - work),
                             0.0),
            "mte2": np.where(busiest == 0, beyond, 0.0),
            "mte3": np.where(busiest == 1, beyond, 0.0),
            "fixpipe": np.where(busiest == 2, beyond, 0.0)}
