"""The interval arithmetic every error-bound rule shares: an op as the reference ran it
(`OpCall`), and how the interval its other execution may land in becomes the bound of its
result (`settle`, or `forward_bound` for the distance to exact arithmetic).

Its own module: the rules (`runtime.error_rules` for values, `runtime.write_rules` for
writes) differ in how they find an op's interval; turning an interval into a bound — rounding
its ends to the result's dtype, and what NaN or infinite ends mean — is one definition they
all keep (see runtime/error_bounds.py for the model they serve).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType, is_float
from pypto.ir.operation import Operation
from pypto.ops.core import REGISTRY
from pypto.runtime import rounding

INF = np.inf


class OpCall:
    """One op as the reference ran it: its inputs as the compute function got them (`xs`),
    their bounds (`es`, float64, same shapes), its attributes and its stored results."""

    def __init__(self, op: Operation, xs: list, es: list, at: dict, refs: list,
                 forward: bool = False):
        self.op = op
        self.compute = REGISTRY[op.opcode].compute
        self.xs, self.es, self.at, self.refs = xs, es, at, refs
        self.forward = forward   # bound the distance to exact arithmetic (error_bounds.py)

    def settle(self, ref: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return settle(ref, lo, hi, self.dtype, self.forward)

    def run(self, xs: list, **overrides: Any) -> Any:
        """The op's own compute function on other arrays (and attributes)."""
        at = dict(self.at, **overrides) if overrides else self.at
        with np.errstate(all="ignore"):
            return self.compute(xs, at)

    def erroneous(self, i: int) -> bool:
        return bool(np.any(self.es[i] != 0))

    @property
    def dtype(self) -> DataType:
        return self.op.outputs[0].dtype


# --------------------------------------------------------------------------------------------
# The interval of a result → its bound

def settle(ref: np.ndarray, lo: np.ndarray, hi: np.ndarray, dtype: DataType,
           forward: bool = False) -> np.ndarray:
    """The bound of a result whose other execution lies in [lo, hi] before rounding to
    `dtype`: max(|R(hi) - ref|, |R(lo) - ref|), inf where that is undefined. `forward`: see
    `forward_bound`."""
    ref = np.asarray(ref, np.float64)
    if forward:
        return forward_bound(ref, lo, hi, dtype)
    with np.errstate(all="ignore"):
        # NOTE: in place where it can be: a big matmul's outputs make every pass count
        e = rounding.stored(hi, dtype)
        e -= ref
        np.abs(e, out=e)
        down = rounding.stored(lo, dtype)
        down -= ref
        np.abs(down, out=down)
        np.maximum(e, down, out=e)
        finite = np.isfinite(e)
        if finite.all():
            return e
        # a NaN end (an interval reaching outside the op's domain) or an infinite one: no bound
        # unless both ends and the reference are the same infinity
        wild = ~finite & ~((lo == hi) & (lo == ref))
    return np.where(wild, INF, np.where(np.isnan(e), 0.0, e))


def forward_bound(ref: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  dtype: DataType) -> np.ndarray:
    """A bound on how far any faithful execution, the reference and the exact arithmetic
    among them, is from the exact result, where [lo, hi] holds the op's exact result for every
    input within its bound: the interval's half width (what the inputs' errors move a smooth
    op by: a faithful execution's inputs are within their bounds of the exact ones, as the
    reference's are) plus the op's own rounding, half an ulp of `dtype` (and one of FP32 for
    a low-precision result computed in FP32). Independent of where the reference landed, so
    a golden (another faithful execution) is within it too. Integer results (steps, not
    smooth) take the whole width."""
    with np.errstate(all="ignore"):
        lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
        if is_float(dtype):
            e = (hi - lo) / 2
            mag = np.maximum(np.abs(lo), np.abs(hi))
            e += rounding.ulp(mag, dtype) / 2
            if rounding.compute_precision(dtype) is not dtype:
                e += rounding.ulp(mag, rounding.compute_precision(dtype))
        else:
            e = hi - lo
        finite = np.isfinite(e)
        if finite.all():
            return e
        wild = ~finite & ~((lo == hi) & (lo == ref))
    return np.where(wild, INF, np.where(np.isnan(e), 0.0, e))


def widen(lo: np.ndarray, hi: np.ndarray, slack: np.ndarray | float) -> tuple:
    return lo - slack, hi + slack


def hull(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise min and max over several evaluations; NaN anywhere gives NaN ends."""
    stack = np.stack([np.asarray(v, np.float64) for v in np.broadcast_arrays(*values)])
    with np.errstate(invalid="ignore"):
        return stack.min(axis=0), stack.max(axis=0)


def as_f64(x: Any) -> Any:
    """Arrays as float64 (where the rules compute), scalars as they are."""
    return np.asarray(x, np.float64) if isinstance(x, np.ndarray) else x
