"""`pypto.cast`: dtype conversion with PyPTO's rounding (`CastMode`) and overflow
(`SaturationMode`) rules.

Float -> int rounds by the mode (CAST_NONE and unsupported modes truncate); float -> float
rounds to nearest even (CAST_ODD rounds to odd, FP32 -> FP16 only). SaturationMode.ON clamps to
the target range; OFF wraps integers (and lets floats overflow to inf).
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from pypto.dtypes import DataType, check_supported, is_float, is_int, to_numpy
from pypto.errors import PyptoTypeError
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


def _to_int(x: np.ndarray, target: np.dtype, mode: CastMode, saturate: bool) -> np.ndarray:
    x = np.asarray(x, np.float64)
    x = _ROUNDERS.get(mode, np.trunc)(x)
    info = np.iinfo(target)
    if saturate:
        x = np.clip(np.nan_to_num(x, nan=0.0), info.min, info.max)
        return x.astype(target)
    # Wrap around like a hardware truncating conversion.
    x = np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0).astype(np.int64)
    return x.astype(target)


def _round_to_odd_fp16(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float32)
    r = x.astype(np.float16)
    toward_zero = np.where(np.abs(r.astype(np.float32)) > np.abs(x),
                           np.nextafter(r, np.float16(0)), r).astype(np.float16)
    inexact = toward_zero.astype(np.float32) != x
    bits = toward_zero.view(np.uint16) | np.where(inexact & np.isfinite(x), 1, 0).astype(np.uint16)
    return bits.view(np.float16)


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
    if mode is CastMode.CAST_ODD and dst is DataType.DT_FP16:
        return _round_to_odd_fp16(x)
    if saturate and is_float(dst) and np.issubdtype(np.asarray(x).dtype, np.floating):
        finfo = float(np.finfo(target).max) if target.kind == "f" else None
        if finfo is not None:
            x = np.clip(x, -finfo, finfo)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x).astype(np.float32).astype(target) if target.itemsize < 4 \
            else np.asarray(x).astype(target)


def cast(input: Any, dtype: DataType, mode: CastMode = CastMode.CAST_NONE,
         satmode: SaturationMode = SaturationMode.OFF) -> Tensor:
    """Convert `input` to `dtype` (see the module docstring for rounding and overflow)."""
    v = value_of(input, "cast")
    check_supported(dtype, "cast dtype")
    if not isinstance(mode, (CastMode, int)) or not isinstance(satmode, (SaturationMode, int)):
        raise PyptoTypeError("cast: mode must be a pypto.CastMode and satmode a "
                             "pypto.SaturationMode")
    return emit1("CAST", [v], v.shape, dtype, v.valid_shape,
                 {"dtype": dtype, "mode": int(mode), "satmode": int(satmode)})
