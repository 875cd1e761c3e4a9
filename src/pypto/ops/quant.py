"""Quantization: `quantize` (FP32 -> INT8/UINT8), `dequantize` (INT8/INT16/INT32 -> FP32), and
`quant_mx`, which OpenPTO rejects (see its docstring).

The scale (and the optional zero point) is per tensor or per slice along `axis`:

- a Python int/float, used for every element (held as an FP32 value);
- a DT_FP32 tensor with the input's shape minus `axis` (`[..., row]` for axis=-1 on a
  `[..., row, col]` input, `[..., col]` for axis=-2), or the same shape with `axis` kept as 1
  (`[..., row, 1]`, as `amax(x, -1, keepdim=True)` gives). Its value is broadcast along `axis`,
  so for axis=-1 each row has its own scale. A 1-D input takes a `[1]` tensor.

`axis` is one of the last two dims (-1 or -2, or rank-1 / rank-2); a 1-D input only takes -1.
Arithmetic is FP32 with one rounding per step, as on the vector unit. The result is valid where
the input and every tensor parameter are valid.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType
from pypto.enums import DequantScaleRoundingMode
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue, TileOpFormat
from pypto.ops.core import crop_inputs, emit1, register, value_of
from pypto.ops.shape import pretty_shape
from pypto.symbolic import Const, Expr, binary

_QUANT_OUT = {DataType.DT_INT8: (-128, 127), DataType.DT_UINT8: (0, 255)}
_DEQUANT_IN = (DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32)


def _axis(op: str, axis: Any, rank: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise PyptoTypeError(f"{op}: axis must be an int, got {axis!r}")
    legal = (-1, rank - 1) if rank == 1 else (-1, -2, rank - 1, rank - 2)
    if axis not in legal:
        raise PyptoValueError(f"{op}: axis {axis} is not supported for a rank-{rank} input; "
                              f"only the last two dims (-1 or -2) can be the quantization axis"
                              + (" (a 1-D input only takes -1)" if rank == 1 else ""))
    return axis % rank


def _param(op: str, what: str, p: Any, x: TensorValue, axis: int,
           inputs: list[TensorValue]) -> dict[str, Any]:
    """Check a scale / zero-point argument; a tensor is appended to `inputs`. Returns the
    attributes that describe it to the compute function."""
    if isinstance(p, Tensor):
        v = p.value
        if v.dtype is not DataType.DT_FP32:
            raise PyptoTypeError(f"{op}: {what} must be a DT_FP32 tensor, got {v.dtype.name}")
        reduced = x.shape[:axis] + x.shape[axis + 1:]
        kept = x.shape[:axis] + (Const(1),) + x.shape[axis + 1:]
        if x.rank == 1:
            reduced = kept
        same = (lambda s: v.rank == len(s) and all(a == b for a, b in zip(v.shape, s)))
        if not (same(reduced) or same(kept)):
            raise PyptoValueError(
                f"{op}: {what} shape {pretty_shape(v.shape)} does not fit an input of shape "
                f"{pretty_shape(x.shape)} with axis {axis - x.rank}: expected "
                f"{pretty_shape(reduced)} or {pretty_shape(kept)}")
        inputs.append(v)
        return {f"{what}_tensor": True, f"{what}_keep": v.rank == x.rank}
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise PyptoTypeError(f"{op}: {what} must be a float or a DT_FP32 tensor, got "
                             f"{type(p).__name__}")
    return {f"{what}_tensor": False, what: float(p)}


def _param_valid(x: TensorValue, axis: int, params: list[TensorValue]) -> tuple[Expr, ...]:
    """The input's valid shape, cut by each tensor parameter's valid extent off `axis`."""
    valid = list(x.valid_shape)
    for p in params:
        pv = p.valid_shape if p.rank == x.rank else \
            p.valid_shape[:axis] + (Const(1),) + p.valid_shape[axis:]
        for d in range(x.rank):
            if d != axis:
                valid[d] = binary("min", valid[d], pv[d])
    return tuple(valid)


def _operands(xs: list, at: dict) -> tuple[np.ndarray, Any, Any]:
    """(x, scale, zero point) as FP32 arrays broadcastable to x, cut to the output's region."""
    it = iter(xs)
    x = next(it)
    axis = at["axis"]
    vals: list[Any] = []
    for what in ("scale", "zero_points"):
        if at.get(f"{what}_tensor"):
            p = next(it)
            vals.append(p if at[f"{what}_keep"] or x.ndim == 1 else np.expand_dims(p, axis))
        elif at.get(what) is not None:
            vals.append(np.float32(at[what]))
        else:
            vals.append(None)
    arrays = crop_inputs([x] + [v for v in vals if isinstance(v, np.ndarray)], at["_out_valid"])
    x, rest = arrays[0], iter(arrays[1:])
    scale, zp = (next(rest) if isinstance(v, np.ndarray) else v for v in vals)
    return np.asarray(x), scale, zp


@register("QUANTIZE")
def _quantize_compute(xs: list, at: dict) -> np.ndarray:
    x, scale, zp = _operands(xs, at)
    lo, hi = at["range"]
    with np.errstate(all="ignore"):
        y = x.astype(np.float32) * np.asarray(scale, np.float32)
        if zp is not None:
            y = y + np.asarray(zp, np.float32)
        q = np.clip(np.nan_to_num(np.rint(y), nan=0.0), lo, hi)
    return q.astype(np.int64)


def quantize(input: Any, scale: Any, otype: DataType, axis: int = -1,
             zero_points: Any = None) -> Tensor:
    """round(input * scale + zero_points) saturated to `otype`, the same shape as `input`.

    `input` is DT_FP32 (rank 1 to 4, ND format); `otype` is DT_INT8 (symmetric, usually no
    zero point) or DT_UINT8 (asymmetric, with a zero point). `scale` and `zero_points` are
    floats or DT_FP32 tensors broadcast along `axis` (see the module docstring). The product and
    the sum are FP32 roundings; the result rounds half to even and clamps to [-128, 127] or
    [0, 255]; NaN becomes 0 and +-inf saturates. PyPTO's documentation states this formula
    (`+ zero_points`) even though one of its examples subtracts the zero point."""
    op = "quantize"
    x = value_of(input, op)
    if x.dtype is not DataType.DT_FP32:
        raise PyptoTypeError(f"{op}: input must be DT_FP32, got {x.dtype.name}; cast it first")
    if otype not in _QUANT_OUT:
        raise PyptoValueError(f"{op}: otype must be DT_INT8 or DT_UINT8, got {otype!r}")
    return _emit(op, "QUANTIZE", x, scale, zero_points, axis, otype,
                 {"range": _QUANT_OUT[otype]})


@register("DEQUANTIZE")
def _dequantize_compute(xs: list, at: dict) -> np.ndarray:
    x, scale, zp = _operands(xs, at)
    with np.errstate(all="ignore"):
        y = x.astype(np.float32)
        if zp is not None:
            y = y + np.asarray(zp, np.float32)
        return y * np.asarray(scale, np.float32)


def dequantize(input: Any, scale: Any, otype: DataType = DataType.DT_FP32, axis: int = -1,
               zero_points: Any = None) -> Tensor:
    """(float(input) + zero_points) * scale as DT_FP32, the same shape as `input`.

    `input` is DT_INT8, DT_INT16 or DT_INT32 (rank 1 to 4, ND format; INT32 values beyond 2^24
    round to the nearest FP32 when converted); `otype` must be DT_FP32. `scale` and
    `zero_points` are floats or DT_FP32 tensors broadcast along `axis` (see the module
    docstring). The conversion, the sum and the product each round once in FP32."""
    op = "dequantize"
    x = value_of(input, op)
    if x.dtype not in _DEQUANT_IN:
        raise PyptoTypeError(f"{op}: input must be DT_INT8, DT_INT16 or DT_INT32, got "
                             f"{x.dtype.name}")
    if otype is not DataType.DT_FP32:
        raise PyptoValueError(f"{op}: otype must be DT_FP32, got {otype!r}")
    return _emit(op, "DEQUANTIZE", x, scale, zero_points, axis, otype, {})


def _emit(op: str, opcode: str, x: TensorValue, scale: Any, zero_points: Any, axis: Any,
          otype: DataType, attrs: dict[str, Any]) -> Tensor:
    if not 1 <= x.rank <= 4:
        raise PyptoValueError(f"{op}: input must have rank 1 to 4, got rank {x.rank}")
    if x.format is TileOpFormat.TILEOP_NZ:
        raise PyptoValueError(f"{op}: input must not be in NZ format")
    ax = _axis(op, axis, x.rank)
    inputs = [x]
    attrs = dict(attrs, axis=ax, **_param(op, "scale", scale, x, ax, inputs))
    if zero_points is not None:
        attrs.update(_param(op, "zero_points", zero_points, x, ax, inputs))
    valid = _param_valid(x, ax, inputs[1:])
    return emit1(opcode, inputs, x.shape, otype, valid, attrs, op=op)


def quant_mx(input: Any, quant_dtype: DataType = DataType.DT_FP8E4M3,
             mode: DequantScaleRoundingMode = DequantScaleRoundingMode.ROUND_DOWN,
             axis: int = -1, performance_mode: bool = True) -> tuple[Tensor, Tensor]:
    """MX (microscaling) quantization to DT_FP8E4M3 with DT_FP8E8M0 shared exponents. Not
    supported: PyPTO does not specify how the shared exponent is derived from a block or how
    the elements are rounded, so no result could be guaranteed to match the NPU bit for bit.
    Always raises `PyptoValueError`."""
    value_of(input, "quant_mx")
    raise PyptoValueError("quant_mx: the MX format (FP8E4M3 elements with FP8E8M0 shared "
                          "exponents) is not supported by OpenPTO, because its exponent and "
                          "element rounding are not specified exactly; quantize per row with "
                          "amax / div / cast or pypto.quantize instead")
