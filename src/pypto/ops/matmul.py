"""`pypto.matmul`: out = op(a) @ op(b) on the cube unit, 2-D to 4-D, batch dims broadcast.

Accumulation is FP32 (INT32 for INT8 inputs) and the result is cast to `out_dtype` once.
`a_trans`/`b_trans` transpose the last two dims of the stored data ([K, M] / [N, K]).
A cube TileShape (`set_cube_tile_shapes`) must be set first.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType, bytes_of
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.frontend.tracer import require_tracer
from pypto.ops.core import CUBE, broadcast_shapes, emit1, register, value_of
from pypto.symbolic import Const, binary

_FLOAT_OUT = {DataType.DT_FP16: {DataType.DT_FP16, DataType.DT_FP32, DataType.DT_INT8},
              DataType.DT_BF16: {DataType.DT_BF16, DataType.DT_FP32, DataType.DT_INT8},
              DataType.DT_FP32: {DataType.DT_FP32, DataType.DT_INT8},
              DataType.DT_INT8: {DataType.DT_INT32, DataType.DT_INT8},
              DataType.DT_FP8E4M3: {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32,
                                    DataType.DT_INT8},
              DataType.DT_FP8E5M2: {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32,
                                    DataType.DT_INT8}}


@register("MATMUL", core=CUBE, accepts_out=True)
def _matmul_compute(xs: list, at: dict) -> np.ndarray:
    a, b = xs[0], xs[1]
    if at["a_trans"]:
        a = np.swapaxes(a, -1, -2)
    if at["b_trans"]:
        b = np.swapaxes(b, -1, -2)
    k = min(a.shape[-1], b.shape[-2])
    a, b = a[..., :k], b[..., :k, :]
    # NOTE: C-contiguous operands: numpy's matmul on a transposed (strided) FP32 view can miss
    # the BLAS path here and run ~600x slower (17 ms vs 27 us for 64x64x128)
    if np.issubdtype(a.dtype, np.integer):
        out = np.matmul(np.ascontiguousarray(a, np.int64),
                        np.ascontiguousarray(b, np.int64)).astype(np.int32)
    else:
        into = at.get("_out")   # the same BLAS call, writing into the given buffer
        if into is None or into.dtype != np.float32:
            into = None
        out = np.matmul(np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32),
                        out=into)
    rest = iter(xs[2:])
    if at["bias"]:
        out = out + next(rest)
    if at["scale"] is not None:
        out = out * np.float32(at["scale"])
    if at["relu"]:
        out = np.maximum(out, 0)
    return out


def check_cube_alignment(a_dtype: DataType, tile: Any) -> None:
    """The cube TileShape `tile` (`Tracer.tile().cube`) is 32-byte aligned for `a_dtype`."""
    size = bytes_of(a_dtype)
    for name, vals in (("m", tile.m), ("k", tile.k), ("n", tile.n)):
        for v in vals:
            if (v * size) % 32:
                raise PyptoRuntimeError(
                    f"matmul: cube tile {name}={list(vals)} is not 32-byte aligned for "
                    f"{a_dtype.name} inputs (each size x {size} B must be a multiple of 32)")


def matmul(input: Any, mat2: Any, out_dtype: DataType | None = None, *, a_trans: bool = False,
           b_trans: bool = False, c_matrix_nz: bool = False,
           extend_params: dict | None = None) -> Tensor:
    """op(input) @ op(mat2) with FP32/INT32 accumulation, cast to `out_dtype`."""
    a, b = value_of(input, "matmul", "input"), value_of(mat2, "matmul", "mat2")
    if out_dtype is None:
        raise PyptoTypeError("matmul: out_dtype is required (e.g. pypto.DT_FP32)")
    if a.dtype != b.dtype:
        raise PyptoTypeError(f"matmul: input dtype {a.dtype.name} != mat2 dtype {b.dtype.name}")
    if out_dtype not in _FLOAT_OUT.get(a.dtype, set()):
        raise PyptoTypeError(f"matmul: {a.dtype.name} inputs cannot produce {out_dtype!r}")
    if c_matrix_nz:
        raise PyptoValueError("matmul: c_matrix_nz must be False")
    if a.rank != b.rank or not 2 <= a.rank <= 4:
        raise PyptoValueError(f"matmul: both operands must have the same rank, 2 to 4 "
                              f"(got {a.rank} and {b.rank})")
    tile = require_tracer("matmul").tile().cube
    if tile is not None:
        check_cube_alignment(a.dtype, tile)
    m_i, ka_i = (-1, -2) if a_trans else (-2, -1)
    kb_i, n_i = (-1, -2) if b_trans else (-2, -1)
    if a.shape[ka_i] != b.shape[kb_i]:
        raise PyptoValueError(f"matmul: K of input ({a.shape[ka_i]!r}) != K of mat2 "
                              f"({b.shape[kb_i]!r})")
    batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2]) if a.rank > 2 else ()
    shape = batch + (a.shape[m_i], b.shape[n_i])
    bvalid = tuple(binary("min", x, y) if a.shape[i] == b.shape[i] else
                   (y if a.shape[i] == Const(1) else x)
                   for i, (x, y) in enumerate(zip(a.valid_shape[:-2], b.valid_shape[:-2])))
    valid = bvalid + (a.valid_shape[m_i], b.valid_shape[n_i])
    if extend_params is not None and not isinstance(extend_params, dict):
        raise PyptoTypeError(f"matmul: extend_params must be a dict, got "
                             f"{type(extend_params).__name__}")
    params = dict(extend_params or {})
    unknown = set(params) - {"bias_tensor", "scale", "scale_tensor", "relu_type", "trans_mode"}
    if unknown:
        raise PyptoValueError(f"matmul: unknown extend_params keys {sorted(unknown)}")
    if "scale_tensor" in params:
        raise PyptoValueError("matmul: extend_params['scale_tensor'] (packed per-channel "
                              "quant scales) is not supported on the CPU backend")
    inputs = [a, b]
    bias = params.get("bias_tensor")
    if bias is not None:
        bv = value_of(bias, "matmul", "bias_tensor")
        if bv.shape[-1] != shape[-1]:
            raise PyptoValueError(f"matmul: bias_tensor last dim {bv.shape[-1]!r} != N "
                                  f"{shape[-1]!r}")
        inputs.append(bv)
    if tile is not None and tile.enable_split_k and (bias is not None or params.get("scale")
                                                     or params.get("relu_type")):
        raise PyptoValueError("matmul: enable_split_k cannot be combined with bias, scale or "
                              "relu (extend_params)")
    if tile is not None and tile.enable_split_k and out_dtype not in (DataType.DT_FP32,
                                                                      DataType.DT_INT32):
        raise PyptoValueError(f"matmul: enable_split_k needs an FP32 or INT32 out_dtype, got "
                              f"{out_dtype.name}")
    attrs = {"a_trans": bool(a_trans), "b_trans": bool(b_trans), "bias": bias is not None,
             "scale": params.get("scale"), "relu": bool(params.get("relu_type", 0))}
    return emit1("MATMUL", inputs, shape, out_dtype, valid, attrs)
