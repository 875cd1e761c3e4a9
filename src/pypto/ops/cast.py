"""`pypto.cast`: dtype conversion with PyPTO's rounding (`CastMode`) and overflow
(`SaturationMode`) rules.

Float -> int rounds by the mode (CAST_NONE and unsupported modes truncate). A narrowing float
conversion rounds by the mode too: RINT (nearest even) for CAST_NONE/CAST_RINT, FLOOR, CEIL,
TRUNC, ROUND (nearest, ties away from zero) and CAST_ODD (round to odd, FP32 -> FP16 only; RINT
elsewhere); widening conversions are exact and ignore the mode. SaturationMode.ON clamps to the
target's range; OFF wraps integers modulo 2**bits and lets floats overflow to inf.
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from pypto.dtypes import DataType, check_supported, is_int, to_numpy
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ops.core import emit1, register, value_of


class CastMode(enum.IntEnum):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


class SaturationMode(enum.IntEnum):
    ON = 0
    OFF = 1


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


_ROUNDERS = {
    CastMode.CAST_RINT: np.rint,
    CastMode.CAST_ROUND: _round_half_away,
    CastMode.CAST_FLOOR: np.floor,
    CastMode.CAST_CEIL: np.ceil,
    CastMode.CAST_TRUNC: np.trunc,
}


def _wrap(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Integer-valued floats to `target` modulo 2**bits, like a truncating hardware convert."""
    bits = target.itemsize * 8
    m = np.mod(x, 2.0 ** bits)  # exact: fmod of IEEE doubles is exact
    if np.issubdtype(target, np.signedinteger):
        m = np.where(m >= 2.0 ** (bits - 1), m - 2.0 ** bits, m)
    return m.astype(target)


def _to_int(x: np.ndarray, target: np.dtype, mode: CastMode, saturate: bool) -> np.ndarray:
    """Float -> int: round by `mode` (TRUNC for CAST_NONE/CAST_ODD), then clamp or wrap."""
    x = np.asarray(x, np.float64)
    x = _ROUNDERS.get(mode, np.trunc)(x)
    if saturate:
        info = np.iinfo(target)
        x = np.clip(np.nan_to_num(x, nan=0.0), info.min, info.max)
        return x.astype(target)
    return _wrap(np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0), target)


def _round_to_odd(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Round to odd: truncate toward zero, and set the last mantissa bit if inexact."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(target)
    toward_zero = np.where(np.abs(r.astype(np.float32)) > np.abs(x),
                           np.nextafter(r, np.zeros_like(r)), r).astype(target)
    inexact = (toward_zero.astype(np.float32) != x) & np.isfinite(x)
    bits = toward_zero.view(np.uint16) | inexact.astype(np.uint16)
    return bits.view(target)


def _infinity(target: np.dtype) -> Any:
    """+inf of `target`, or its largest finite value for types without infinities (FP8E4M3)."""
    inf = np.array(np.inf).astype(target)
    import ml_dtypes  # NOTE: on first use; see pypto.dtypes
    return ml_dtypes.finfo(target).max if np.isnan(inf.astype(np.float32)) else inf


def _narrow_float(x: np.ndarray, target: np.dtype, mode: CastMode) -> np.ndarray:
    """FP32 values to a narrower float type: RINT (nearest even) unless `mode` is FLOOR, CEIL,
    TRUNC or ROUND (nearest, ties away from zero); CAST_ODD is round-to-odd for FP16 only."""
    x = np.asarray(x, np.float32)
    if mode is CastMode.CAST_ODD and target == np.dtype(np.float16):
        return _round_to_odd(x, target)
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.astype(target)
        if mode not in (CastMode.CAST_FLOOR, CastMode.CAST_CEIL, CastMode.CAST_TRUNC,
                        CastMode.CAST_ROUND):
            return r
        rf = r.astype(np.float64)
        xf = x.astype(np.float64)
        inf = np.full_like(r, _infinity(target))
        if mode is CastMode.CAST_FLOOR:
            return np.where(rf > xf, np.nextafter(r, -inf), r).astype(target)
        if mode is CastMode.CAST_CEIL:
            return np.where(rf < xf, np.nextafter(r, inf), r).astype(target)
        zero = np.zeros_like(r)
        toward = np.where(np.abs(rf) > np.abs(xf), np.nextafter(r, zero), r).astype(target)
        if mode is CastMode.CAST_TRUNC:
            return toward
        away = np.nextafter(toward, np.where(xf < 0, -inf, inf).astype(target)).astype(target)
        tf, af = np.abs(toward.astype(np.float64)), np.abs(away.astype(np.float64))
        tie = (np.abs(xf) - tf) == (af - np.abs(xf))
        return np.where(tie & (tf != np.abs(xf)), away, r).astype(target)


@register("CAST")
def _cast_compute(xs: list, at: dict) -> np.ndarray:
    x = xs[0]
    dst: DataType = at["dtype"]
    target = to_numpy(dst)
    mode, saturate = CastMode(at["mode"]), at["satmode"] == SaturationMode.ON
    if dst is DataType.DT_BOOL:
        return x != 0
    if is_int(dst):
        if np.issubdtype(x.dtype, np.integer) or x.dtype == np.bool_:
            if saturate:
                info = np.iinfo(target)
                return np.clip(x.astype(np.int64), info.min, info.max).astype(target)
            return x.astype(np.int64).astype(target)
        return _to_int(x, target, mode, saturate)
    x = np.asarray(x)
    if saturate:  # clamp to the finite range of the target (NaN stays NaN)
        import ml_dtypes  # NOTE: on first use; see pypto.dtypes
        limit = float(ml_dtypes.finfo(target).max)
        x = np.clip(x.astype(np.float64) if x.dtype.kind != "f" else x, -limit, limit)
    if target.itemsize < 4:
        return _narrow_float(x, target, mode)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(target)  # widening (or FP32 -> FP32): exact, the mode is ignored


def cast(input: Any, dtype: DataType, mode: CastMode = CastMode.CAST_NONE,
         satmode: SaturationMode = SaturationMode.OFF) -> Tensor:
    """Convert `input` to `dtype` (see the module docstring for rounding and overflow)."""
    v = value_of(input, "cast")
    check_supported(dtype, "cast dtype")
    for name, val, enum_t in (("mode", mode, CastMode), ("satmode", satmode, SaturationMode)):
        if isinstance(val, bool) or not isinstance(val, int):
            raise PyptoTypeError(f"cast: {name} must be a pypto.{enum_t.__name__}, got {val!r}")
        if val not in {m.value for m in enum_t}:
            raise PyptoValueError(f"cast: {name} {val} is not a {enum_t.__name__} "
                                  f"({', '.join(m.name for m in enum_t)})")
    return emit1("CAST", [v], v.shape, dtype, v.valid_shape,
                 {"dtype": dtype, "mode": int(mode), "satmode": int(satmode)}, op="cast")
