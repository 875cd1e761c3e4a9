"""Ordering and mask ops: topk / argsort (stable, NaN-aware sorts along a dim), triu / tril
(triangular masks, also in place), one_hot (class ids to 0/1 rows) and gathermask (a fixed
pattern of elements per row).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType, is_float, is_int
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.frontend.tracer import require_tracer
from pypto.ops.core import emit, emit1, norm_dim, register, value_of
from pypto.ops.index import check_index_range, check_rank_between, index_value, min_valid
from pypto.symbolic import Const, Expr, SymbolicScalar, binary

_CLASS_DTYPES = (DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64)
_GATHERMASK_PATTERNS = {1: (0, 2), 2: (1, 2), 3: (0, 4), 4: (1, 4), 5: (2, 4), 6: (3, 4),
                        7: (0, 1)}


def _diagonal_attr(op: str, diagonal: Any) -> int | Expr:
    if isinstance(diagonal, SymbolicScalar):
        return diagonal.expr
    if isinstance(diagonal, bool) or not isinstance(diagonal, int):
        raise PyptoTypeError(f"{op}: diagonal must be an int or SymbolicScalar, "
                             f"got {diagonal!r}")
    return diagonal


def _stable_argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable argsort; equal values keep their original order in both directions. NaN sorts
    as the largest value."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(rev, axis=axis)


@register("TOPK")
def _topk_compute(xs: list, at: dict) -> tuple[np.ndarray, np.ndarray]:
    x = xs[0]
    k = at["_out_valid"][-1]
    order = _stable_argsort(x, -1, at["largest"])[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


def topk(input: Any, k: int, dim: int | None = None, largest: bool = True,
         algo: Any = None) -> tuple[Tensor, Tensor]:
    """The k largest (or smallest, `largest=False`) entries of each row along the last axis,
    sorted, with their positions: `(values, indices)`, indices DT_INT32.

    Only the last axis is supported (`dim` None, -1 or rank-1). `1 <= k <= input.shape[-1]`
    and k must not exceed the last vector tile dim (PyPTO keeps a row's top k in one tile).
    Equal values keep their original order; NaN counts as the largest value. If a row has
    fewer than k valid entries only those are returned (the valid shape says how many). `algo`
    (pypto.TopKAlgo) is accepted; both algorithms give the same result.
    """
    op = "topk"
    v = value_of(input, op)
    if dim is not None and norm_dim(dim, v.rank, op) != v.rank - 1:
        raise PyptoValueError(f"{op}: only the last axis is supported (dim=-1 or "
                              f"{v.rank - 1}), got dim={dim}")
    if isinstance(k, bool) or not isinstance(k, int):
        raise PyptoTypeError(f"{op}: k must be an int, got {k!r}")
    last = v.shape[-1]
    if k < 1 or (isinstance(last, Const) and k > last.value):
        raise PyptoValueError(f"{op}: k must be in [1, {last!r}] (the last dim), got {k}")
    if not isinstance(largest, bool):
        raise PyptoTypeError(f"{op}: largest must be a bool, got {largest!r}")
    if v.dtype not in (DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16,
                       DataType.DT_INT32, DataType.DT_INT16):
        raise PyptoTypeError(f"{op}: input must be FP32/FP16/BF16/INT32/INT16, got "
                             f"{v.dtype.name}")
    tile = require_tracer(op).tile().vec
    if tile is not None and len(tile) == v.rank and k > tile[-1]:
        raise PyptoValueError(f"{op}: k={k} exceeds the last vector tile dim {tile[-1]}; "
                              f"set_vec_tile_shapes with a last dim >= k")
    shape = v.shape[:-1] + (Const(k),)
    valid = v.valid_shape[:-1] + (min_valid(Const(k), v.valid_shape[-1]),)
    vals, idx = emit("TOPK", [v], [(shape, v.dtype, valid), (shape, DataType.DT_INT32, valid)],
                     {"largest": largest, "algo": int(algo) if algo is not None else 0})
    return vals, idx


@register("ARGSORT")
def _argsort_compute(xs: list, at: dict) -> np.ndarray:
    return _stable_argsort(xs[0], at["dim"], at["descending"]).astype(np.int32)


def argsort(input: Any, dim: int | None = None, descending: bool = False) -> Tensor:
    """Stable sort positions along `dim` (default: the last axis), DT_INT32, same shape as
    `input`: equal values keep their original order (torch.argsort(stable=True)); NaN counts
    as the largest value. Only the valid region of each row is sorted. PyPTO does not tile
    the `dim` axis."""
    op = "argsort"
    v = value_of(input, op)
    d = v.rank - 1 if dim is None else norm_dim(dim, v.rank, op)
    if not isinstance(descending, bool):
        raise PyptoTypeError(f"{op}: descending must be a bool, got {descending!r}")
    if not (is_float(v.dtype) or is_int(v.dtype)):
        raise PyptoTypeError(f"{op}: input must be a numeric tensor, got {v.dtype.name}")
    return emit1("ARGSORT", [v], v.shape, DataType.DT_INT32, v.valid_shape,
                 {"dim": d, "descending": descending})


# --------------------------------------------------------------------------------------------
# triu / tril

@register("TRIU", widen=False)
def _triu_compute(xs: list, at: dict) -> np.ndarray:
    return np.triu(xs[0], at["diagonal"])


@register("TRIL", widen=False)
def _tril_compute(xs: list, at: dict) -> np.ndarray:
    return np.tril(xs[0], at["diagonal"])


def _tri(op: str, opcode: str, x: Any, diagonal: Any) -> Tensor:
    v = value_of(x, op)
    if v.rank < 2:
        raise PyptoValueError(f"{op}: input must have rank >= 2, got rank {v.rank}")
    return emit1(opcode, [v], v.shape, v.dtype, v.valid_shape,
                 {"diagonal": _diagonal_attr(op, diagonal)})


def triu(x: Any, diagonal: int | SymbolicScalar = 0) -> Tensor:
    """Upper triangle of the last two dims: element (i, j) is kept where `j - i >= diagonal`
    and set to 0 elsewhere (torch.triu). `diagonal` may be a SymbolicScalar (evaluated when
    the kernel runs). Rank >= 2; same shape, dtype and valid shape."""
    return _tri("triu", "TRIU", x, diagonal)


def tril(x: Any, diagonal: int | SymbolicScalar = 0) -> Tensor:
    """Lower triangle of the last two dims: element (i, j) is kept where `j - i <= diagonal`
    and set to 0 elsewhere (torch.tril). `diagonal` may be a SymbolicScalar."""
    return _tri("tril", "TRIL", x, diagonal)


def triu_(x: Any, diagonal: int | SymbolicScalar = 0) -> Tensor:
    """In-place `triu`: moves `triu(x, diagonal)` into `x` and returns `x`."""
    from pypto.ops.writes import move
    move(x, _tri("triu_", "TRIU", x, diagonal))
    return x


def tril_(x: Any, diagonal: int | SymbolicScalar = 0) -> Tensor:
    """In-place `tril`: moves `tril(x, diagonal)` into `x` and returns `x`."""
    from pypto.ops.writes import move
    move(x, _tri("tril_", "TRIL", x, diagonal))
    return x


# --------------------------------------------------------------------------------------------
# one_hot / gathermask

@register("ONE_HOT", widen=False)
def _one_hot_compute(xs: list, at: dict) -> np.ndarray:
    n = at["num_classes"]
    x = check_index_range("one_hot", "input", xs[0], n, None, at["_loc"])
    return (x[..., None] == np.arange(n)).astype(np.int64)


def one_hot(input: Any, num_classes: int) -> Tensor:
    """One-hot encoding: `out[..., c] = 1 if input[...] == c else 0`, shape
    `input.shape + [num_classes]`, dtype DT_INT64 (as PyPTO). `input` is an INT8/16/32/64
    tensor of rank 1 to 3 whose values must lie in `[0, num_classes)` (checked at run time).
    The vector TileShape has the result's rank; PyPTO needs its last dim == num_classes."""
    op = "one_hot"
    v = index_value(input, op, "input", _CLASS_DTYPES)
    check_rank_between(op, v, "input", 1, 3)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise PyptoValueError(f"{op}: num_classes must be a positive int, got {num_classes!r}")
    shape = v.shape + (Const(num_classes),)
    valid = v.valid_shape + (Const(num_classes),)
    return emit1("ONE_HOT", [v], shape, DataType.DT_INT64, valid, {"num_classes": num_classes},
                 tile_rank=len(shape))


@register("GATHERMASK", widen=False)
def _gathermask_compute(xs: list, at: dict) -> np.ndarray:
    start, step = _GATHERMASK_PATTERNS[at["pattern_mode"]]
    return xs[0][..., start::step][..., :at["_out_valid"][-1]]


def gathermask(x: Any, pattern_mode: int) -> Tensor:
    """Fixed-pattern pick along the last axis: 1 = even positions (0, 2, ...), 2 = odd
    positions, 3..6 = one element of every 4 starting at 0..3, 7 = every element.

    The last dim must be a static multiple of 2 (modes 1, 2) or 4 (modes 3..6); the result's
    last dim is that dim / 2, / 4 or unchanged, other dims as `x`, dtype `x`'s."""
    op = "gathermask"
    v = value_of(x, op)
    if isinstance(pattern_mode, bool) or pattern_mode not in _GATHERMASK_PATTERNS:
        raise PyptoValueError(f"{op}: pattern_mode must be an int in 1..7, got {pattern_mode!r}")
    start, step = _GATHERMASK_PATTERNS[pattern_mode]
    last = v.shape[-1]
    if not isinstance(last, Const) or last.value % step:
        raise PyptoValueError(f"{op}: pattern_mode {pattern_mode} needs a static last dim that "
                              f"is a multiple of {step}, got {last!r}")
    vl = v.valid_shape[-1]
    out_valid = binary("max", 0, binary("floordiv", binary("add", vl, step - 1 - start), step))
    shape = v.shape[:-1] + (Const(last.value // step),)
    return emit1("GATHERMASK", [v], shape, v.dtype, v.valid_shape[:-1] + (out_valid,),
                 {"pattern_mode": pattern_mode})
