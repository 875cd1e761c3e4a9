"""Rounding facts of the dtypes: unit roundoff, ulps, accumulation bounds, and how an executor
rounds a result when it stores it.

Takes dtypes and float64 arrays → float64 arrays; used by `runtime/error_bounds.py`, which
bounds how far two faithful executions of one program can drift apart. Keeps the invariant that
every function here is monotone in its array argument where it rounds, so an interval's ends
bound the rounded values of everything inside it.
"""
from __future__ import annotations

import numpy as np

from pypto.dtypes import DataType, is_float, is_low_precision, to_numpy

# Significand bits (with the implicit one) of the floats a result may be rounded to.
_PRECISION = {DataType.DT_DOUBLE: 53, DataType.DT_FP32: 24, DataType.DT_FP16: 11,
              DataType.DT_BF16: 8, DataType.DT_FP8E5M2: 3, DataType.DT_FP8E4M3: 4,
              DataType.DT_FP8E8M0: 1}

# Library functions (exp, log, tanh, sin, erf, pow, ...) are not correctly rounded and their
# implementations differ by CPU path: numpy's own AVX2 and AVX-512 (SVML) loops and glibc's
# scalar fallbacks. numpy validates its float32 loops to within 4 ulps of a float64 reference
# (numpy/_core/tests/test_umath_accuracy.py with its umath-validation-set files), glibc lists a
# few ulps for the same functions ("Errors in Math Functions"); we allow this many ulps of the
# compute precision beyond the exact result.
LIBRARY_ULPS = 4


def unit_roundoff(dtype: DataType) -> float:
    """u = 2^-p: the largest relative error of rounding to nearest in `dtype` (0 for integers:
    their arithmetic is exact, in any order)."""
    if not is_float(dtype):
        return 0.0
    return 2.0 ** -_PRECISION.get(dtype, 24)


def compute_precision(dtype: DataType) -> DataType:
    """The precision an op on `dtype` values computes in: FP32 for the low-precision floats
    (they are widened, computed and rounded once), the dtype itself otherwise."""
    if is_low_precision(dtype):
        return DataType.DT_FP32
    return dtype


def gamma(n: np.ndarray | float, dtype: DataType) -> np.ndarray:
    """Higham's gamma_n = n u / (1 - n u): a sum of n terms in `dtype`, added in any order,
    is within gamma_(n-1) * sum|x| of the exact sum. inf where n u >= 1."""
    nu = np.asarray(n, np.float64) * unit_roundoff(dtype)
    with np.errstate(divide="ignore"):
        return np.where(nu < 1, nu / np.maximum(1 - nu, 1e-300), np.inf)


def ulp(x: np.ndarray, dtype: DataType) -> np.ndarray:
    """The spacing of `dtype`'s floats at |x| (subnormal spacing near zero), as float64."""
    mag = np.abs(np.asarray(x, np.float64))
    p = _PRECISION.get(dtype, 24)
    if dtype is DataType.DT_DOUBLE:
        return np.spacing(mag)
    with np.errstate(over="ignore", invalid="ignore"):
        # the spacing of a p-bit float at |x|: 2^(exponent - p + 1), floored at its subnormals
        _, exponent = np.frexp(mag)
        tiny = np.finfo(np.float32).tiny if dtype is DataType.DT_FP32 else \
            float(_finfo(dtype).tiny)
        step = np.ldexp(1.0, exponent - p)
        return np.maximum(step, tiny * 2.0 ** (1 - p))


def _finfo(dtype: DataType):
    import ml_dtypes  # NOTE: on first use, as pypto.dtypes does
    return ml_dtypes.finfo(to_numpy(dtype))


def stored(z: np.ndarray, dtype: DataType) -> np.ndarray:
    """`z` as an executor stores a result of `dtype` (executors compute low-precision floats in
    FP32 and round once; other results are converted with numpy's astype), back in float64.

    Monotone (non-decreasing) for float dtypes and for integers within their range."""
    z = np.asarray(z)
    target = to_numpy(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype is DataType.DT_DOUBLE:
            return np.array(z, np.float64)
        if is_low_precision(dtype):
            z = z.astype(np.float32)
        if not is_float(dtype) and z.dtype.kind == "f":
            z = np.nan_to_num(z, nan=0.0)
        return z.astype(target).astype(np.float64)
