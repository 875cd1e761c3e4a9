"""The error-bound rules of writes into an existing destination (in-place ops), as
runtime/error_bounds.py applies them: which writes add into a region (`ADDS_INTO`: atomic_add,
axpy_) or accumulate by index (`accumulates`), which inputs are indices, and the rules of the
adds themselves — `accumulate` (index adds and reducing scatters, whose value forms share it
through `RULES`) and `add_into`.

Its own module: a write's bound depends on the destination's old values and bounds, which
the value rules (`runtime.error_rules`) never see; and adds that may land in another order
carry the rounding of their sums (gamma_n), which moves do not.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ops.writes import write_region
from pypto.runtime import rounding
from pypto.runtime.error_interval import INF, OpCall, as_f64


def accumulate(call: OpCall, dst: np.ndarray | None, e_dst: np.ndarray | None,
               index_inputs: tuple[int, ...]) -> np.ndarray:
    """Index adds and scatters with a reduction (value and in-place forms): the bounds add up
    at each target, and repeated targets may be added in another order (gamma over the number
    of terms that land there). `dst`/`e_dst`: the in-place form's destination before the op."""
    ref = call.refs[0]
    if any(call.erroneous(i) for i in index_inputs):
        return np.full(ref.shape, INF)
    at = call.at
    as_sum = {"reduce": "add"} if "reduce" in at else {}
    if "accumulate" in at:
        as_sum = {"accumulate": True}

    def with_alpha(value: float) -> dict:
        return {"alpha": value} if "alpha" in at else {}

    def with_scalar(value: float) -> dict:
        return {"scalar": value} if "scalar" in at else {}

    def run(base: np.ndarray | None, values: list, **attrs: Any) -> np.ndarray:
        arrays = [call.xs[i] if i in index_inputs else values[i] for i in range(len(call.xs))]
        if base is None:
            return np.asarray(call.run(arrays, **attrs), np.float64).reshape(ref.shape)
        target = np.array(base, np.float64)
        with np.errstate(all="ignore"):
            call.compute(target, arrays, dict(at, **attrs))
        return target.reshape(ref.shape)

    in_place = dst is not None
    ones = [np.ones(np.shape(x)) for x in call.xs]
    # terms landing on each target, the destination's own value included
    terms = run(np.zeros(np.shape(dst)) if in_place else None, ones, **as_sum,
                **with_alpha(1), **with_scalar(1.0)) + (1 if in_place else 0)
    magnitude = run(np.abs(as_f64(dst)) if in_place else None,
                    [np.abs(as_f64(x)) for x in call.xs], **as_sum,
                    **with_alpha(abs(at.get("alpha", 1))),
                    **with_scalar(abs(float(at.get("scalar", 0)))))
    propagated = run(e_dst if in_place else None, call.es, **as_sum,
                     **with_alpha(abs(at.get("alpha", 1))), **with_scalar(0.0))
    center = run(as_f64(dst) if in_place else None, [as_f64(x) for x in call.xs])
    precision = rounding.compute_precision(call.dtype)
    radius = propagated + rounding.gamma(np.maximum(terms - 1, 0), precision) * magnitude
    e = call.settle(ref, center - radius, center + radius)
    if at.get("reduce") == "multiply":
        # a product's bound is not a sum's: exact inputs only
        e = np.where(propagated > 0, INF, np.where(terms > 2, INF, 0.0))
    if call.forward:
        return e
    # one rounded add of exact values is the same in every execution
    return np.where((propagated == 0) & (terms <= 2), 0.0, e)


def write_index_inputs(call: OpCall) -> tuple[int, ...]:
    code = call.op.opcode
    if code in ("SCATTER_", "INDEX_ADD_"):
        return (0,)
    if code == "INDEX_PUT_":
        return tuple(range(call.at["k"]))
    return ()


def _atomic_region(dest: np.ndarray, xs: list, at: dict) -> tuple:
    return write_region("atomic_add adds into", xs[0], dest, at)


def _axpy_region(dest: np.ndarray, xs: list, at: dict) -> tuple:
    return tuple(slice(0, max(0, min(int(n), s))) for n, s in zip(at["valid"], dest.shape))


# Writes that add into a region of their destination: how to find that region.
ADDS_INTO = {"ATOMIC_ADD": _atomic_region, "AXPY_": _axpy_region}


def accumulates(code: str, at: dict) -> bool:
    """Index writes that add (or multiply) into their destination."""
    return code == "INDEX_ADD_" or (code == "SCATTER_" and bool(at.get("reduce"))) or \
        (code == "INDEX_PUT_" and bool(at.get("accumulate")))


def add_into(call: OpCall, old: np.ndarray, e_old: np.ndarray) -> np.ndarray:
    """atomic_add / axpy_ on the region they touch: R(dst + alpha * src) around the
    reference's own sum. Atomic adds may land in another order, so each one carries the
    rounding of its sum in the destination's dtype (summed over the adds: gamma_n of the terms,
    as for a sum)."""
    atomic = call.op.opcode == "ATOMIC_ADD"
    here = dict(call.at, offsets=(0,) * old.ndim) if atomic else call.at
    absolute = here if atomic else dict(here, alpha=abs(float(call.at["alpha"])))

    def run(base: np.ndarray, src: np.ndarray, at: dict) -> np.ndarray:
        target = np.array(base, np.float64)
        with np.errstate(all="ignore"):
            call.compute(target, [src], at)
        return target

    x = as_f64(call.xs[0])
    center = run(old, x, here)
    # NOTE: the compute functions add in FP32; (1 + 2^-20) covers that rounding of the bounds
    radius = run(e_old, call.es[0], absolute) * (1 + 2.0 ** -20)
    if atomic:
        magnitude = run(np.abs(as_f64(old)), np.abs(x), absolute)
        radius = radius + 2 * rounding.unit_roundoff(call.dtype) * magnitude
    e = call.settle(call.refs[0], center - radius, center + radius)
    touched = run(np.zeros(old.shape), np.ones(np.shape(x)), absolute) != 0
    changed = touched if call.forward else touched & (radius > 0)
    return np.where(changed, e, e_old)
