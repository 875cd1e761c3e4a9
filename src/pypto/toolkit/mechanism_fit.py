"""Which mechanism of the cost model a board's durations disagree with.

Per paired task the simulation's pipes are known (`mechanisms.pipes`: head, compute, fixpipe,
load, the load's shape overhead, store); the duration formula is head + the longest pipe. A
mechanism's hypothesis scales its pipe (on its core type) and re-times every task with the
same formula, so a scale that makes another pipe the longest is followed, as the model would.
Each mechanism alone is fitted (its one scale, searched on a log scale), and the error it
leaves is compared with the error of the model as it is: the mechanisms whose own scale
explains most of the gap, with that scale far from 1, are what the gap points at. A joint fit
(all scales, by coordinate descent from the single fits) gives the table's scales.

The error is the mean relative error |predicted / board - 1| over the tasks, the worst 5 %
left out (a task the board ran next to something we do not model must not decide).
What the pairs cannot tell apart is said, not guessed: a mechanism whose pipe holds under
`MIN_SHARE` of the simulated time is "too little time"; one whose pipe is a multiple of an
earlier one's on every task is "not separable from" it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.toolkit.mechanisms import MECHANISMS, NAMES, PIPE_OF, PIPES

MIN_SHARE = 0.01      # of the simulated pipe time, for a mechanism to be fitted
POINT_OFF = 0.10      # |scale - 1| beyond which a mechanism is named
POINT_EXPLAINS = 0.25  # ... and the share of the error its own scale must remove
_TRIM = 0.95
_LOG_RANGE = (np.log(0.2), np.log(5.0))
_BOUNDS = (0.2 * 1.01, 5.0 / 1.01)   # a best scale beyond these sits on the search bound
_SAME = 1e-3


def fit_scales(pipes: np.ndarray, aic: np.ndarray, board: np.ndarray) -> dict[str, Any]:
    """{"status", "rows": per mechanism its share of the simulated time, its own scale and
    what it explains, its joint scale and status; "points_at": the mechanisms the gap
    points at, the most explaining first; "error": of the model as it is and as fitted}."""
    if not len(board) or pipes.sum() <= 0:
        return {"status": "no-info", "why": "the simulated run's trace has no cost inputs "
                "(not one of ours) or no task was paired", "rows": [], "points_at": [],
                "error": None}
    columns = {m: _column(pipes, aic, m) for m in NAMES}
    total = pipes.sum()
    shares = {m: float(columns[m].sum() / total) for m in NAMES}
    present = [m for m in sorted(NAMES, key=lambda m: -shares[m]) if shares[m] >= MIN_SHARE]
    fitted, alias = _independent(columns, present)
    base = _error(pipes, aic, board, {})
    single = {m: _search(pipes, aic, board, {}, m) for m in fitted}
    joint = _joint(pipes, aic, board, single)
    rows = [_row(m, shares[m], single.get(m), joint, alias, base) for m in NAMES]
    return {"status": "ok", "rows": rows, "points_at": _points_at(rows),
            "error": {"as_is": base, "fitted": _error(pipes, aic, board, joint)}}


def predict(pipes: np.ndarray, aic: np.ndarray, scales: dict[str, float]) -> np.ndarray:
    """Every task's duration with the mechanisms' pipes scaled: head + the longest pipe."""
    s = {m: scales.get(m, 1.0) for m in NAMES}
    compute = np.where(aic, s["cube"], s["vector"])
    shape = np.where(aic, s["nd2nz"], s["burst"])
    head, comp, fix, load, extra, store = pipes.T
    longest = np.maximum.reduce([comp * compute, fix * s["fixpipe"],
                                 load * s["load_bandwidth"] + extra * shape,
                                 store * s["store"]])
    return head * s["task_head"] + longest


def _error(pipes: np.ndarray, aic: np.ndarray, board: np.ndarray,
           scales: dict[str, float]) -> float:
    rel = np.sort(np.abs(predict(pipes, aic, scales) / np.maximum(board, 1e-12) - 1.0))
    return float(rel[:max(1, int(np.ceil(_TRIM * len(rel))))].mean())


def _search(pipes: np.ndarray, aic: np.ndarray, board: np.ndarray, fixed: dict[str, float],
            m: str) -> tuple[float, float]:
    """(scale, error) of mechanism `m` with the others at `fixed`: a grid on a log scale,
    then golden-section refinement around its best point."""
    def err(x: float) -> float:
        return _error(pipes, aic, board, {**fixed, m: float(np.exp(x))})
    grid = np.linspace(*_LOG_RANGE, 33)
    errors = [err(x) for x in grid]
    k = int(np.argmin(errors))
    lo, hi = grid[max(0, k - 1)], grid[min(len(grid) - 1, k + 1)]
    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(24):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if err(a) <= err(b):
            hi = b
        else:
            lo = a
    x = (lo + hi) / 2
    return float(np.exp(x)), err(x)


def _joint(pipes: np.ndarray, aic: np.ndarray, board: np.ndarray,
           single: dict[str, tuple[float, float]]) -> dict[str, float]:
    """All fitted scales at once: coordinate descent from 1, the most explaining first."""
    scales = {m: 1.0 for m in single}
    for _ in range(3):
        for m in sorted(single, key=lambda m: single[m][1]):
            scales[m] = _search(pipes, aic, board, scales, m)[0]
    return scales


def _column(pipes: np.ndarray, aic: np.ndarray, m: str) -> np.ndarray:
    pipe, core = PIPE_OF[m]
    col = pipes[:, PIPES.index(pipe)]
    if core is not None:
        col = np.where(aic if core == "aic" else ~aic, col, 0.0)
    return col


def _independent(columns: dict[str, np.ndarray], order: list[str]
                 ) -> tuple[list[str], dict[str, str]]:
    """The mechanisms (in `order`) whose pipe is not a multiple of an earlier one's, and for
    each other the one it follows."""
    chosen: list[str] = []
    alias: dict[str, str] = {}
    for m in order:
        col = columns[m]
        same = [c for c in chosen
                if np.linalg.norm(col - columns[c] * (col @ columns[c]) /
                                  max(columns[c] @ columns[c], 1e-30))
                <= _SAME * np.linalg.norm(col)]
        if same:
            alias[m] = same[0]
        else:
            chosen.append(m)
    return chosen, alias


def _row(m: str, share: float, single: tuple[float, float] | None, joint: dict[str, float],
         alias: dict[str, str], base: float) -> dict[str, Any]:
    row = {"mechanism": m, "share": share, "what": MECHANISMS[m][0],
           "constants": MECHANISMS[m][1], "scale": None, "alone_scale": None,
           "explains": None}
    if single is not None:
        row.update(status="fitted", scale=joint[m], alone_scale=single[0],
                   explains=(base - single[1]) / base if base > 0 else 0.0)
        if not _BOUNDS[0] < single[0] < _BOUNDS[1]:
            row["status"] = "at the search bound (the gap is beyond what this scale explains)"
    elif m in alias:
        row.update(status=f"not separable from {alias[m]}", scale=joint.get(alias[m]))
    else:
        row["status"] = "too little time"
    return row


def _points_at(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    named = [r for r in rows if r["status"] == "fitted" and r["explains"] >= POINT_EXPLAINS
             and abs(r["alone_scale"] - 1.0) > POINT_OFF]
    named.sort(key=lambda r: -r["explains"])
    return [{"mechanism": r["mechanism"], "scale": r["alone_scale"],
             "explains": r["explains"], "constants": r["constants"]} for r in named]
