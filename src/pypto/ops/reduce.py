"""Reductions over one dim (sum, amax, amin, prod, mean, var, argmax, argmin), cumulative
sums, and the composite normalisations built from them (softmax, rms_norm).

Only the valid region is reduced. BF16/FP16 inputs are accumulated in FP32 and rounded once.
Reduced dims are dropped, or kept with size 1 when `keepdim=True`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType, is_float
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue
from pypto.ops.core import emit1, norm_dim, register, value_of
from pypto.symbolic import Const, Expr


def _reduced(v: TensorValue, dims: tuple[int, ...], keepdim: bool) -> tuple[tuple, tuple]:
    shape: list[Expr] = []
    valid: list[Expr] = []
    for i, (s, vs) in enumerate(zip(v.shape, v.valid_shape)):
        if i in dims:
            if keepdim:
                shape.append(Const(1))
                valid.append(Const(1))
        else:
            shape.append(s)
            valid.append(vs)
    return tuple(shape), tuple(valid)


def _reduce(op: str, opcode: str, input: Any, dim: Any, keepdim: bool,
            out_dtype: DataType | None = None, extra: dict | None = None) -> Tensor:
    v = value_of(input, op)
    if dim is None:
        dims = tuple(range(v.rank))
    elif isinstance(dim, (list, tuple)):
        dims = tuple(sorted({norm_dim(d, v.rank, op) for d in dim}))
    else:
        dims = (norm_dim(dim, v.rank, op),)
    if not isinstance(keepdim, bool):
        raise PyptoTypeError(f"{op}: keepdim must be a bool, got {keepdim!r}")
    shape, valid = _reduced(v, dims, keepdim)
    if not shape:
        shape, valid = (Const(1),), (Const(1),)
    attrs = {"dims": dims, "keepdim": keepdim, **(extra or {})}
    return emit1(opcode, [v], shape, out_dtype or v.dtype, valid, attrs, tile_rank=v.rank,
                 op=op)


def _fit(result: np.ndarray, at: dict) -> np.ndarray:
    return np.asarray(result).reshape(tuple(at["_out_valid"]))


def _register_reduce(opcode: str, fn: Any) -> None:
    @register(opcode)
    def compute(xs: list, at: dict) -> np.ndarray:
        x = xs[0]
        if any(x.shape[d] == 0 for d in at["dims"]):
            return np.zeros(tuple(at["_out_valid"]), x.dtype)
        with np.errstate(all="ignore"):
            return _fit(fn(x, axis=at["dims"], keepdims=True), at)


_register_reduce("REDUCE_SUM", np.sum)
_register_reduce("REDUCE_MAX", np.max)
_register_reduce("REDUCE_MIN", np.min)
_register_reduce("REDUCE_PROD", np.prod)
_register_reduce("REDUCE_MEAN", np.mean)


@register("REDUCE_VAR")
def _var_compute(xs: list, at: dict) -> np.ndarray:
    x = xs[0]
    with np.errstate(all="ignore"):
        return _fit(np.var(x, axis=at["dims"], ddof=at["correction"], keepdims=True), at)


@register("ARGMAX")
def _argmax_compute(xs: list, at: dict) -> np.ndarray:
    return _fit(np.argmax(xs[0], axis=at["dims"][0], keepdims=True), at)


@register("ARGMIN")
def _argmin_compute(xs: list, at: dict) -> np.ndarray:
    return _fit(np.argmin(xs[0], axis=at["dims"][0], keepdims=True), at)


def sum(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Sum over `dim` (FP32 accumulation for low-precision floats)."""
    return _reduce("sum", "REDUCE_SUM", input, dim, keepdim)


def amax(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Maximum over `dim`."""
    return _reduce("amax", "REDUCE_MAX", input, dim, keepdim)


def amin(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Minimum over `dim`."""
    return _reduce("amin", "REDUCE_MIN", input, dim, keepdim)


def prod(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    return _reduce("prod", "REDUCE_PROD", input, dim, keepdim)


def mean(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    v = value_of(input, "mean")
    if not is_float(v.dtype):
        raise PyptoTypeError(f"mean needs a floating-point tensor, got {v.dtype.name}")
    return _reduce("mean", "REDUCE_MEAN", input, dim, keepdim)


def var(input: Any, dim: Any = None, *, correction: int = 1, keepdim: bool = False) -> Tensor:
    """Variance over `dim` (an int, a list of ints, or None for all) with Bessel's
    `correction`."""
    v = value_of(input, "var")
    if not is_float(v.dtype):
        raise PyptoTypeError(f"var needs a floating-point tensor, got {v.dtype.name}")
    if isinstance(correction, bool) or not isinstance(correction, int) or correction < 0:
        raise PyptoTypeError(f"var: correction must be a non-negative int, got {correction!r}")
    return _reduce("var", "REDUCE_VAR", input, dim, keepdim, extra={"correction": correction})


def argmax(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index of the maximum over `dim` (DT_INT32; first index on ties)."""
    if isinstance(dim, (list, tuple)) or dim is None:
        raise PyptoValueError("argmax takes a single int dim")
    return _reduce("argmax", "ARGMAX", input, dim, keepdim, DataType.DT_INT32)


def argmin(input: Any, dim: int = -1, keepdim: bool = False) -> Tensor:
    """Index of the minimum over `dim` (DT_INT32; first index on ties)."""
    if isinstance(dim, (list, tuple)) or dim is None:
        raise PyptoValueError("argmin takes a single int dim")
    return _reduce("argmin", "ARGMIN", input, dim, keepdim, DataType.DT_INT32)


@register("CUMSUM")
def _cumsum_compute(xs: list, at: dict) -> np.ndarray:
    return np.cumsum(xs[0], axis=at["dim"])


@register("CUMPROD")
def _cumprod_compute(xs: list, at: dict) -> np.ndarray:
    return np.cumprod(xs[0], axis=at["dim"])


def cumsum(input: Any, dim: int) -> Tensor:
    """Running sum along `dim`."""
    v = value_of(input, "cumsum")
    return emit1("CUMSUM", [v], v.shape, v.dtype, v.valid_shape,
                 {"dim": norm_dim(dim, v.rank, "cumsum")})


def cumprod(input: Any, dim: int) -> Tensor:
    """Running product along `dim`."""
    v = value_of(input, "cumprod")
    return emit1("CUMPROD", [v], v.shape, v.dtype, v.valid_shape,
                 {"dim": norm_dim(dim, v.rank, "cumprod")})


def softmax(input: Any, dim: int = -1) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `dim`, computed in FP32 and cast back (recorded
    as its component ops, as PyPTO decomposes it)."""
    from pypto.ops.cast import cast
    from pypto.ops.elementwise import div, sub
    from pypto.ops.unary import exp
    v = value_of(input, "softmax")
    if not is_float(v.dtype):
        raise PyptoTypeError(f"softmax needs a floating-point tensor, got {v.dtype.name}")
    norm_dim(dim, v.rank, "softmax")
    x = input if v.dtype is DataType.DT_FP32 else cast(input, DataType.DT_FP32)
    e = exp(sub(x, amax(x, dim, keepdim=True)))
    out = div(e, sum(e, dim, keepdim=True))
    return out if v.dtype is DataType.DT_FP32 else cast(out, v.dtype)


def rms_norm(input: Any, gamma: Any = None, epsilon: float = 1e-6) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * gamma over the last dim, computed in FP32."""
    from pypto.ops.cast import cast
    from pypto.ops.elementwise import add, div, mul
    from pypto.ops.reshaping import internal_reshape
    from pypto.ops.unary import sqrt
    v = value_of(input, "rms_norm")
    if not is_float(v.dtype):
        raise PyptoTypeError(f"rms_norm needs a floating-point tensor, got {v.dtype.name}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
        raise PyptoTypeError(f"rms_norm: epsilon must be a number, got {epsilon!r}")
    g = None
    if gamma is not None:
        gv = value_of(gamma, "rms_norm", "gamma")
        if gv.dtype != v.dtype:
            raise PyptoTypeError(f"rms_norm: gamma dtype {gv.dtype.name} != input dtype "
                                 f"{v.dtype.name}")
        if gv.rank > v.rank:
            raise PyptoValueError(f"rms_norm: gamma has rank {gv.rank} > input rank {v.rank}")
        g = gamma
        if gv.rank < v.rank:  # align gamma's rank so its cast runs under the input's tile
            ones = (Const(1),) * (v.rank - gv.rank)
            g = internal_reshape(gv, ones + gv.shape, ones + gv.valid_shape)
    x = input if v.dtype is DataType.DT_FP32 else cast(input, DataType.DT_FP32)
    ms = mean(mul(x, x), -1, keepdim=True)
    out = div(x, sqrt(add(ms, float(epsilon))))
    if g is not None:
        out = mul(out, g if g.dtype is DataType.DT_FP32 else cast(g, DataType.DT_FP32))
    return out if v.dtype is DataType.DT_FP32 else cast(out, v.dtype)
