"""Robust least squares over machine constants whose model is a simulation.

The unknowns are log factors on the constants (0: as the machine has them). The residuals
are log(ours / board's) per feature (`observed`) in units of the board's standard error of
that feature, from a re-simulation per evaluation, so the
Jacobian is taken by forward differences with a step large enough to see through the
scheduling's small discontinuities. Levenberg-Marquardt steps on a soft-L1 loss (iteratively
re-weighted: a feature off by far more than `F_SCALE` errors, a task the board ran differently,
counts less than its square). A constant no feature moves is "not observed"; constants the
features move only together (near-collinear Jacobian columns) are "under-determined" and keep
their value; so do those the fit leaves uncertain by more than ~22 % or drives to the search
bound, after which the rest is fitted again without them. Nothing is invented: every status
says what the traces could and could not tell.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

F_SCALE = 3.0         # residual (in standard errors) at which the soft-L1 loss turns linear
STEP = 0.05           # forward-difference step in log factor (5 %)
BOUND = float(np.log(10.0))   # a factor of 10 either way is as far as the search goes
SEEN = 1.0            # a Jacobian column norm below this (a 10 % change moving no feature
                      # by a tenth of its standard error): the constant is not observed
COLLINEAR = 0.05      # a normalised singular value below this: a direction the data miss
LOOSE = 0.2           # a 1-sigma log uncertainty above this (~22 %): not determined


@dataclass
class FitResult:
    """Per constant (in the order given): the fitted log factor, its 1-sigma uncertainty
    (log), and its status ("fitted", "not observed", "under-determined: with ...",
    "at the search bound"); the robust cost before and after, and the evaluations made."""

    p: np.ndarray
    sigma: np.ndarray
    status: list[str]
    cost: tuple[float, float]
    evaluations: int


def fit(fun: Callable[[np.ndarray], np.ndarray], names: list[str],
        max_iter: int = 12) -> FitResult:
    """Fit log factors p (one per name) so that `fun(p)` (the stacked residuals) is small."""
    n = len(names)
    counter = _Counted(fun)
    p = np.zeros(n)
    r0 = counter(p)
    status = ["fitted"] * n
    active = np.ones(n, dtype=bool)
    r = r0
    jac = _jacobian(counter, p, r, active)
    flat = np.linalg.norm(jac, axis=0) < SEEN
    for j in np.flatnonzero(flat):
        status[j], active[j] = "not observed by these traces", False
    for j, others in _confounded(jac, active & ~flat).items():
        status[j] = "under-determined: moves the same features as " + \
            ", ".join(names[k] for k in others)
        active[j], p[j] = False, 0.0
    if not active.all():
        r = counter(p)
    p, r, jac = _descend(counter, p, r, jac, active, max_iter)
    sigma = _sigma(jac, r, active)
    loose = [j for j in np.flatnonzero(active) if abs(p[j]) >= BOUND - 1e-9 or
             sigma[j] > LOOSE]
    if loose:   # not determined after all: as they were, and the rest fitted without them
        for j in loose:
            status[j] = ("at the search bound (x10): the model lacks what the board shows"
                         if abs(p[j]) >= BOUND - 1e-9 else
                         f"under-determined: +-{100 * np.expm1(sigma[j]):.0f} % (1 sigma)")
            active[j], p[j] = False, 0.0
        r = counter(p)
        p, r, jac = _descend(counter, p, r, _jacobian(counter, p, r, active), active, max_iter)
        sigma = _sigma(jac, r, active)
    return FitResult(p, sigma, status, (robust_cost(r0), robust_cost(r)), counter.calls)


class _Counted:
    def __init__(self, fun: Callable[[np.ndarray], np.ndarray]):
        self.fun, self.calls = fun, 0

    def __call__(self, p: np.ndarray) -> np.ndarray:
        self.calls += 1
        return np.asarray(self.fun(p), dtype=np.float64)


def _jacobian(fun: _Counted, p: np.ndarray, r: np.ndarray, active: np.ndarray) -> np.ndarray:
    jac = np.zeros((len(r), len(p)))
    for j in np.flatnonzero(active):
        q = p.copy()
        q[j] += STEP
        jac[:, j] = (fun(q) - r) / STEP
    return jac


def _confounded(jac: np.ndarray, active: np.ndarray) -> dict[int, list[int]]:
    """The active constants in a direction the features barely see (a near-zero singular
    value of the column-normalised Jacobian), each with the others in it."""
    cols = np.flatnonzero(active)
    if len(cols) < 2:
        return {}
    sub = jac[:, cols] / np.linalg.norm(jac[:, cols], axis=0)
    _, s, vt = np.linalg.svd(sub, full_matrices=True)
    s = np.concatenate((s, np.zeros(len(cols) - len(s))))   # more constants than features
    out: dict[int, list[int]] = {}
    for k in np.flatnonzero(s < COLLINEAR):
        members = [int(cols[i]) for i in np.flatnonzero(np.abs(vt[k]) > 0.3)]
        for j in members:
            out.setdefault(j, [])
            out[j] += [m for m in members if m != j and m not in out[j]]
    return out


def _weights(r: np.ndarray) -> np.ndarray:
    """Soft-L1 IRLS weights (1 for small residuals, ~F_SCALE/|r| for large ones)."""
    return 1.0 / np.sqrt(1.0 + (r / F_SCALE) ** 2)


def robust_cost(r: np.ndarray) -> float:
    """The soft-L1 cost the fit minimises (residuals in standard errors)."""
    return float(np.sum(2 * F_SCALE ** 2 * (np.sqrt(1.0 + (r / F_SCALE) ** 2) - 1.0)))


def _descend(fun: _Counted, p: np.ndarray, r: np.ndarray, jac: np.ndarray, active: np.ndarray,
             max_iter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Levenberg-Marquardt on the active constants; -> (p, residuals, Jacobian at p)."""
    cols = np.flatnonzero(active)
    lam = 1e-2
    for _ in range(max_iter if len(cols) else 0):
        w = _weights(r)
        jw = jac[:, cols] * w[:, None]
        a, g = jw.T @ jac[:, cols], jw.T @ r
        improved = False
        while lam < 1e6:
            delta = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
            q = p.copy()
            q[cols] = np.clip(p[cols] + delta, -BOUND, BOUND)
            rq = fun(q)
            if robust_cost(rq) < robust_cost(r):
                improved, lam = True, max(lam / 3, 1e-6)
                break
            lam *= 4
        if not improved:
            break
        small = np.max(np.abs(q - p)) < 2e-3 or robust_cost(r) - robust_cost(rq) < 1e-6 * robust_cost(r)
        p, r = q, rq
        jac = _jacobian(fun, p, r, active)
        if small:
            break
    return p, r, jac


def _sigma(jac: np.ndarray, r: np.ndarray, active: np.ndarray) -> np.ndarray:
    """1-sigma uncertainty of each active log factor from the weighted normal matrix,
    widened by the residual scatter where it exceeds the errors; inf for the others."""
    sigma = np.full(jac.shape[1], np.inf)
    cols = np.flatnonzero(active)
    if not len(cols):
        return sigma
    w = _weights(r)
    jw = jac[:, cols] * np.sqrt(w)[:, None]
    dof = max(1, len(r) - len(cols))
    # the residuals are in standard errors: a fit worse than they allow widens the result
    scatter = max(float(np.sum(w * r ** 2)) / dof, 1.0)
    cov = scatter * np.linalg.pinv(jw.T @ jw)
    sigma[cols] = np.sqrt(np.maximum(np.diag(cov), 0.0))
    return sigma
