"""Lane and byte layout ops: interleave/deinterleave (two tensors' elements alternated along
the last dim) and pack/unpack (a tensor's little-endian bytes reinterpreted as another dtype).
"""
from __future__ import annotations

import sys
from typing import Any, Sequence

import numpy as np

from pypto.dtypes import DataType, bytes_of, to_numpy
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue, TileOpFormat
from pypto.ops.core import emit, emit1, register, value_of
from pypto.ops.reshaping import reshape_valid
from pypto.ops.shape import pretty_shape
from pypto.symbolic import Const, Expr, binary, select


_INTERLEAVE_DTYPES = (DataType.DT_INT8, DataType.DT_UINT8, DataType.DT_INT16,
                      DataType.DT_UINT16, DataType.DT_INT32, DataType.DT_UINT32,
                      DataType.DT_FP16, DataType.DT_FP32, DataType.DT_BF16)


def _interleave_operand(op: str, t: Any, what: str) -> TensorValue:
    v = value_of(t, op, what)
    if v.dtype not in _INTERLEAVE_DTYPES:
        names = ", ".join(d.name for d in _INTERLEAVE_DTYPES)
        raise PyptoTypeError(f"{op}: {what} dtype {v.dtype.name} is not supported ({names})")
    if not 1 <= v.rank <= 4:
        raise PyptoValueError(f"{op}: {what} must have rank 1 to 4, got rank {v.rank}")
    if v.format is TileOpFormat.TILEOP_NZ:
        raise PyptoValueError(f"{op}: {what} must not be in NZ format")
    last = v.shape[-1]
    if not isinstance(last, Const) or last.value % 2:
        raise PyptoValueError(f"{op}: the last dim of {what} must be a static even size, got "
                              f"{last!r}")
    return v


def _pair(op: str, a: Any, b: Any) -> tuple[TensorValue, TensorValue]:
    va, vb = _interleave_operand(op, a, "input"), _interleave_operand(op, b, "other")
    if va.dtype != vb.dtype:
        raise PyptoTypeError(f"{op}: other dtype {vb.dtype.name} != input dtype {va.dtype.name}")
    if va.rank != vb.rank or any(x != y for x, y in zip(va.shape, vb.shape)):
        raise PyptoValueError(f"{op}: other shape {pretty_shape(vb.shape)} != input shape "
                              f"{pretty_shape(va.shape)}")
    return va, vb


def _clip_to(valid: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(max(0, min(int(v), int(s))) for v, s in zip(valid, shape))


def _crop(x: np.ndarray, valid: Sequence[int]) -> np.ndarray:
    return x[tuple(slice(0, n) for n in _clip_to(valid, x.shape))]


@register("INTERLEAVE", full_inputs=True, widen=False)
def _interleave_compute(xs: list, at: dict) -> tuple[np.ndarray, np.ndarray]:
    a, b = xs
    n = a.shape[-1]
    stream = np.stack([a, b], axis=-1).reshape(a.shape[:-1] + (2 * n,))
    return _crop(stream[..., :n], at["valid0"]), _crop(stream[..., n:], at["valid1"])


def interleave(input: Any, other: Any) -> tuple[Tensor, Tensor]:
    """Interleave two tensors along the last dim and split the stream in two halves.

    Per row of the last dim (length n, static and even), the stream is `s[2k] = input[k]`,
    `s[2k + 1] = other[k]` (length 2n); the first output holds `s[:n]` and the second `s[n:]`.
    `input` and `other` have one shape (rank 1 to 4, ND format) and one dtype (INT8, UINT8,
    INT16, UINT16, INT32, UINT32, FP16, FP32 or BF16); both outputs have that shape and dtype.
    Values move bit-exactly. With a partial valid region the stream holds data up to twice the
    smaller valid extent of the last dim; each output is valid over its part of that prefix
    (and over the common valid extent of the other dims). The inverse is `deinterleave(out0,
    out1)`. Returns `(out0, out1)`."""
    op = "interleave"
    va, vb = _pair(op, input, other)
    n = va.shape[-1]
    rows = tuple(binary("min", x, y) for x, y in zip(va.valid_shape[:-1], vb.valid_shape[:-1]))
    pairs = binary("mul", binary("min", va.valid_shape[-1], vb.valid_shape[-1]), 2)
    valid0 = rows + (binary("min", n, pairs),)
    valid1 = rows + (binary("max", 0, binary("sub", pairs, n)),)
    out = emit("INTERLEAVE", [va, vb], [(va.shape, va.dtype, valid0), (va.shape, va.dtype, valid1)],
               {"valid0": valid0, "valid1": valid1}, op=op)
    return out[0], out[1]


@register("DEINTERLEAVE", full_inputs=True, widen=False)
def _deinterleave_compute(xs: list, at: dict) -> tuple[np.ndarray, np.ndarray]:
    stream = xs[0] if len(xs) == 1 else np.concatenate(xs, axis=-1)
    return _crop(stream[..., 0::2], at["valid0"]), _crop(stream[..., 1::2], at["valid1"])


def deinterleave(input: Any, other: Any = None) -> tuple[Tensor, Tensor]:
    """Split an interleaved stream into its even and odd positions along the last dim.

    - `deinterleave(input)`: `input` holds the whole stream (last dim 2n, static and even);
      returns `(input[..., 0::2], input[..., 1::2])`, each with last dim n.
    - `deinterleave(input, other)`: the stream is `input` followed by `other` along the last
      dim (one shape and dtype, last dim n static and even); returns its even and odd positions,
      each of `input`'s shape. This inverts `interleave`: `deinterleave(*interleave(a, b))` is
      `(a, b)`.

    Dtypes: INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, FP32 or BF16 (kept, values move
    bit-exactly); rank 1 to 4, ND format. The stream holds data up to its first padding: the
    valid extent of `input` if that is partial, else n plus that of `other`; position k of an
    output is valid when its stream position is."""
    op = "deinterleave"
    if other is None:
        va = _interleave_operand(op, input, "input")
        half = Const(va.shape[-1].value // 2)
        shape = va.shape[:-1] + (half,)
        rows, data = va.valid_shape[:-1], va.valid_shape[-1]
        vals = [va]
    else:
        va, vb = _pair(op, input, other)
        shape = va.shape
        rows = tuple(binary("min", x, y) for x, y in zip(va.valid_shape[:-1],
                                                         vb.valid_shape[:-1]))
        n = va.shape[-1]
        full = binary("ge", va.valid_shape[-1], n)
        data = select(full, binary("add", n, vb.valid_shape[-1]), va.valid_shape[-1])
        vals = [va, vb]
    valid0 = tuple(rows) + (binary("floordiv", binary("add", data, 1), 2),)
    valid1 = tuple(rows) + (binary("floordiv", data, 2),)
    out = emit("DEINTERLEAVE", vals, [(shape, va.dtype, valid0), (shape, va.dtype, valid1)],
               {"valid0": valid0, "valid1": valid1}, op=op)
    return out[0], out[1]


# --------------------------------------------------------------------------------------------
# pack / unpack (byte reinterpretation)

_PACK_DTYPES = (DataType.DT_BF16, DataType.DT_FP16, DataType.DT_FP32, DataType.DT_INT64,
                DataType.DT_UINT64, DataType.DT_INT32, DataType.DT_UINT32, DataType.DT_INT16,
                DataType.DT_UINT16, DataType.DT_INT8, DataType.DT_UINT8)


def _little_endian_bytes(x: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(x)
    big = arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big")
    if big and arr.dtype.itemsize > 1:
        arr = arr.byteswap()
    return arr.reshape(-1).view(np.uint8)


@register("PACK", full_inputs=True, widen=False)
def _pack_compute(xs: list, at: dict) -> np.ndarray:
    return _little_endian_bytes(xs[0])[:at["_out_valid"][0]]


def pack(x: Any) -> Tensor:
    """The bytes of `x` as a 1-D DT_UINT8 tensor: `x` is flattened in row-major order and each
    element contributes its `bytes_of(dtype)` bytes, least significant first (little endian),
    so an INT32 0x03040506 packs to [6, 5, 4, 3]. Length = numel * bytes_of(dtype).

    Dtypes: BF16, FP16, FP32, INT64, UINT64, INT32, UINT32, INT16, UINT16, INT8, UINT8; rank 1
    to 4, ND format. The output is valid over the bytes of the valid elements, which must form
    a row-major prefix of `x` (only the outermost non-1 dim may be partial)."""
    op = "pack"
    v = value_of(x, op, "x")
    if v.dtype not in _PACK_DTYPES:
        raise PyptoTypeError(f"{op}: dtype {v.dtype.name} is not supported (BF16, FP16, FP32, "
                             f"INT64, UINT64, INT32, UINT32, INT16, UINT16, INT8, UINT8)")
    if not 1 <= v.rank <= 4:
        raise PyptoValueError(f"{op}: x must have rank 1 to 4, got rank {v.rank}")
    if v.format is TileOpFormat.TILEOP_NZ:
        raise PyptoValueError(f"{op}: x must not be in NZ format")
    numel: Expr = Const(1)
    for d in v.shape:
        numel = binary("mul", numel, d)
    flat = reshape_valid(v.shape, v.valid_shape, (numel,))
    if flat is None:
        raise PyptoValueError(f"{op}: the valid region {pretty_shape(v.valid_shape)} of x "
                              f"(shape {pretty_shape(v.shape)}) is not a row-major prefix; "
                              f"fillpad the tensor first")
    size = int(bytes_of(v.dtype))
    return emit1("PACK", [v], (binary("mul", numel, size),), DataType.DT_UINT8,
                 (binary("mul", flat[0], size),), op=op)


@register("UNPACK", full_inputs=True, widen=False)
def _unpack_compute(xs: list, at: dict) -> np.ndarray:
    target = to_numpy(at["dtype"]).newbyteorder("<")
    out = np.ascontiguousarray(xs[0]).view(target).astype(to_numpy(at["dtype"]))
    return out[:at["_out_valid"][0]]


def unpack(x: Any, dtype: DataType) -> Tensor:
    """The inverse of `pack`: a 1-D DT_UINT8 tensor whose bytes are read as `dtype` elements
    (little endian, `bytes_of(dtype)` bytes each). `dtype` is UINT8, INT8, UINT16, INT16,
    UINT32, INT32, UINT64, INT64, BF16, FP16 or FP32. The length of `x` must be a static
    multiple of `bytes_of(dtype)`; the output has length len(x) / bytes_of(dtype) and is valid
    over the whole elements inside `x`'s valid bytes."""
    op = "unpack"
    v = value_of(x, op, "x")
    if v.dtype is not DataType.DT_UINT8:
        raise PyptoTypeError(f"{op}: x must be a DT_UINT8 tensor, got {v.dtype.name}")
    if v.rank != 1:
        raise PyptoValueError(f"{op}: x must be 1-D, got rank {v.rank}")
    if not isinstance(dtype, DataType) or dtype not in _PACK_DTYPES:
        raise PyptoTypeError(f"{op}: dtype must be one of UINT8, INT8, UINT16, INT16, UINT32, "
                             f"INT32, UINT64, INT64, BF16, FP16, FP32, got {dtype!r}")
    size = int(bytes_of(dtype))
    n = v.shape[0]
    if not isinstance(n, Const) or n.value % size:
        raise PyptoValueError(f"{op}: the length of x ({n!r}) must be a static multiple of "
                              f"{size} (the size of {dtype.name})")
    valid = binary("floordiv", v.valid_shape[0], size)
    return emit1("UNPACK", [v], (Const(n.value // size),), dtype, (valid,), {"dtype": dtype},
                 op=op)
