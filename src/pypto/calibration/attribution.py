"""Which of the model's constants a board's gap points at, found by re-simulating the kernel.

`toolkit.compare` attributes a gap from the traces alone, which cannot tell mechanisms apart
whose effect depends on what else runs (a load's time is its bytes over the bandwidth share
the other tasks leave). With the kernel at hand the question has an exact form: re-time the
same compiled kernel with one constant changed at a time, fit that one constant alone to the
board, and see how much of the gap (the robust cost of `fit`) it removes. A planted change is
found because its own constant removes the whole gap, while a stand-in (a bandwidth for a
row-shape overhead) removes only part of it when the kernel has tasks of several shapes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.calibration import constants
from pypto.calibration.calibrate import Problem, add_schedule_noise
from pypto.calibration.fit import fit
from pypto.calibration.observed import Target
from pypto.calibration.runs import KernelCall
from pypto.profiling.swimlane import SwimlaneData

# constants tried besides the fitted ones: the sourced rates and heads (mechanism per name)
SOURCED = {
    "dma.gm_to_l1.bw": "load_bandwidth", "dma.gm_to_ub.bw": "load_bandwidth",
    "memory.hbm_bytes_per_cycle": "load_bandwidth", "dma.ub_to_gm.bw": "store",
    "dma.l0c_to_gm.bw": "store", "dma.fixpipe.row": "fixpipe",
    "task.head_cycles_aic": "task_head", "task.head_cycles_aiv": "task_head",
    "aicpu.completion_cycles": "aicpu", "aicpu.dispatch_cycles_per_task": "aicpu",
}
EXPLAINS = 0.5   # a constant that removes at least this share of the gap ...
MOVED = 0.1      # ... by a change of at least 10 % is one the gap points at


def mechanism(name: str) -> str:
    """The mechanism of `toolkit.mechanisms` a constant belongs to."""
    if name in SOURCED:
        return SOURCED[name]
    if name.startswith("vector."):
        return "vector"
    if name.startswith("cube."):
        return "cube"
    return {"dma.shape.nd2nz_row_bytes": "nd2nz",
            "dma.shape.burst_overhead_bytes": "burst"}.get(name, "aicpu")


def attribute(call: KernelCall, board: SwimlaneData, table: dict) -> dict[str, Any]:
    """Each constant fitted alone to `board` (see the module docstring): the rows, sorted by
    the share of the gap each removes, and the ones the gap points at."""
    target = Target.of(call.name, call.trace_on(table), board)
    names = [n for n in [*constants.FITTED, *SOURCED] if constants.get(table, n)]
    add_schedule_noise(Problem([call], [target], table, names))   # weighed as calibrate does
    before, rows = 0.0, []
    for name in names:
        alone = Problem([call], [target], table, [name])
        result = fit(alone.residuals, [name], max_iter=6)
        before = result.cost[0]   # (the gap as is: the same for every constant)
        if result.status[0] != "fitted":
            continue
        rows.append({"constant": name, "mechanism": mechanism(name),
                     "scale": float(np.exp(result.p[0])),
                     "explains": 1.0 - result.cost[1] / before if before > 0 else 0.0})
    rows.sort(key=lambda r: -r["explains"])
    points = [r for r in rows
              if r["explains"] >= EXPLAINS and abs(np.log(r["scale"])) >= np.log1p(MOVED)]
    best = points[0]["explains"] if points else 0.0
    return {"status": "ok", "gap_cost": before, "rows": rows,
            "points_at": [r for r in points if r["explains"] >= best - 0.05]}
