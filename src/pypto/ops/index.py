"""Index ops: gather / index_select, scatter / scatter_ / scatter_update, index_add(_) and
index_put_ (topk / argsort, triu / tril, one_hot and gathermask are `ordering`).

Takes traced tensors (plus INT32/INT64 index tensors) → records one op each; the registered
numpy semantics run on the valid regions. Conventions shared by the family:

- Index tensors are DT_INT32 or DT_INT64 (one_hot also takes INT8/INT16 class ids). An index
  value outside its axis raises `PyptoRuntimeError` naming the op and the user's line when the
  kernel runs; negative values are errors except in `index_put_`, which wraps them like torch.
- Along the indexed axis an index may address any position of the input's *shape*; positions
  past the input's valid extent read as 0 (the padding), as a tile on the NPU would.
- Off the indexed axis, a result holds real data only where every operand does: its valid
  extent is the smallest valid extent of the operands (as for elementwise ops).
- `scatter_`, `index_add_` and `index_put_` write into the input's storage (program order);
  `scatter`, `index_add` and `scatter_update` return a new tensor. As for every write, a view
  is a copy: writing into `pypto.view(x, ...)` does not reach `x` (assemble it back).
- BF16/FP16 data is moved exactly; accumulating updates (`reduce="add"`, `index_add`,
  `accumulate=True`) are computed in FP32 and rounded once.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pypto.dtypes import DataType, is_float
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError, SourceLoc
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue
from pypto.ops.core import emit1, emit_write, norm_dim, register, value_of
from pypto.ops.shape import pretty_shape
from pypto.symbolic import Const, Expr, binary

_INDEX_DTYPES = (DataType.DT_INT32, DataType.DT_INT64)
_REDUCE_MODES = (None, "add", "multiply")


# --------------------------------------------------------------------------------------------
# Trace-time checks

def index_value(t: Any, op: str, what: str = "index",
                 dtypes: tuple[DataType, ...] = _INDEX_DTYPES) -> TensorValue:
    v = value_of(t, op, what)
    if v.dtype not in dtypes:
        names = "/".join(d.name[3:] for d in dtypes)
        raise PyptoTypeError(f"{op}: {what} must be an {names} tensor, got {v.dtype.name}")
    return v


def _same_dtype(op: str, a: TensorValue, b: TensorValue, a_name: str, b_name: str) -> None:
    if a.dtype != b.dtype:
        raise PyptoTypeError(f"{op}: {b_name} dtype {b.dtype.name} does not match {a_name} "
                             f"dtype {a.dtype.name}")


def check_rank_between(op: str, v: TensorValue, what: str, lo: int, hi: int) -> None:
    if not lo <= v.rank <= hi:
        want = f"rank {lo}" if lo == hi else f"rank {lo} to {hi}"
        raise PyptoValueError(f"{op}: {what} must have {want}, got rank {v.rank} "
                              f"(shape {pretty_shape(v.shape)})")


def _static_le(op: str, small: TensorValue, big: TensorValue, s_name: str, b_name: str,
               skip: int | None = None) -> None:
    """small.shape[d] <= big.shape[d] wherever both are static (and d != skip)."""
    for d, (a, b) in enumerate(zip(small.shape, big.shape)):
        if d != skip and isinstance(a, Const) and isinstance(b, Const) and a.value > b.value:
            raise PyptoValueError(f"{op}: {s_name} dim {d} is {a.value}, larger than {b_name} "
                                  f"dim {d} ({b.value}); {s_name} shape "
                                  f"{pretty_shape(small.shape)}, {b_name} shape "
                                  f"{pretty_shape(big.shape)}")


def _static_eq(op: str, what: str, got: Expr, want: Expr, why: str) -> None:
    if isinstance(got, Const) and isinstance(want, Const) and got.value != want.value:
        raise PyptoValueError(f"{op}: {what} is {got.value}, expected {want.value} ({why})")


def min_valid(*dims: Expr) -> Expr:
    out = dims[0]
    for d in dims[1:]:
        out = binary("min", out, d)
    return out


# --------------------------------------------------------------------------------------------
# Run-time helpers (numpy)

def _region(valid: Sequence[int]) -> tuple[slice, ...]:
    return tuple(slice(0, int(n)) for n in valid)


def _valid(xs: list, at: dict, i: int) -> np.ndarray:
    """Input i cut to its valid region (for ops registered with full_inputs=True)."""
    return xs[i][_region(at["_in_valid"][i])]


def _padded(x: np.ndarray, valid: Sequence[int], copy: bool = True) -> np.ndarray:
    """x with zeros outside its valid region; a fresh array unless `copy` is False and x is
    wholly valid (then x itself, for read-only use)."""
    if not copy and tuple(valid) == x.shape:
        return x
    out = np.zeros_like(x)
    region = _region(valid)
    out[region] = x[region]
    return out


def check_index_range(op: str, what: str, idx: np.ndarray, size: int, axis: int | None,
                 loc: SourceLoc | None, allow_negative: bool = False) -> np.ndarray:
    """Raise if an index value lies outside [0, size) (or [-size, size) when negative values
    wrap); return the indices as int64 with negative values wrapped."""
    lo = -size if allow_negative else 0
    bad = (idx < lo) | (idx >= size)
    if bad.any():
        pos = tuple(int(p) for p in np.argwhere(bad)[0])
        where = f"dim {axis} (size {size})" if axis is not None else f"{size} classes"
        raise PyptoRuntimeError(f"{op}: {what} value {int(idx[pos])} at position {list(pos)} is "
                                f"out of range [{lo}, {size}) for {where}", loc)
    idx = idx.astype(np.int64, copy=False)
    if allow_negative:
        idx = np.where(idx < 0, idx + size, idx)
    return idx


def _coords(idx: np.ndarray, dim: int) -> tuple:
    """Fancy-index tuple addressing position `idx[p]` along `dim` and `p` elsewhere."""
    coords = list(np.indices(idx.shape, sparse=True))
    coords[dim] = idx
    return tuple(coords)


def _accumulate(dst: np.ndarray, coords: tuple, vals: Any, mode: str) -> None:
    """dst[coords] (+|*)= vals with repeated positions accumulating; low-precision floats are
    accumulated in FP32 and rounded once."""
    ufunc = np.add if mode == "add" else np.multiply
    if dst.dtype in (np.float32, np.float64) or np.issubdtype(dst.dtype, np.integer):
        ufunc.at(dst, coords, vals)
        return
    tmp = dst.astype(np.float32)
    ufunc.at(tmp, coords, vals)
    dst[...] = tmp.astype(dst.dtype)


def _scatter_into(op: str, dst: np.ndarray, dim: int, idx: np.ndarray, src: Any,
                  reduce: str | None, loc: SourceLoc | None) -> None:
    """torch.scatter_ on numpy: dst[..., idx[p], ...] = src[p] for every position p of idx."""
    for d, (n, size) in enumerate(zip(idx.shape, dst.shape)):
        if d != dim and n > size:
            raise PyptoRuntimeError(f"{op}: index dim {d} has {n} valid entries but the input "
                                    f"has only {size}", loc)
    idx = check_index_range(op, "index", idx, dst.shape[dim], dim, loc)
    coords = _coords(idx, dim)
    vals = np.broadcast_to(np.asarray(src), idx.shape)
    if reduce is None:
        dst[coords] = vals
    else:
        _accumulate(dst, coords, vals, reduce)


def _index_add_into(op: str, dst: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray,
                    alpha: int | float, loc: SourceLoc | None) -> None:
    """dst[..., idx[i], ...] += alpha * src[..., i, ...] over the common valid region."""
    n = min(idx.shape[0], src.shape[dim])
    idx = check_index_range(op, "index", idx[:n], dst.shape[dim], dim, loc)
    cut = [slice(0, min(s, t)) for s, t in zip(src.shape, dst.shape)]
    cut[dim] = slice(0, n)
    src = src[tuple(cut)]
    target = list(cut)
    target[dim] = idx
    vals = src * alpha if alpha != 1 else src
    _accumulate(dst, tuple(target), vals, "add")


# --------------------------------------------------------------------------------------------
# gather / index_select

@register("GATHER", full_inputs=True, widen=False)
def _gather_compute(xs: list, at: dict) -> np.ndarray:
    dim = at["dim"]
    x = _padded(xs[0], at["_in_valid"][0], copy=False)
    idx = xs[1][_region(at["_out_valid"])]
    idx = check_index_range("gather", "index", idx, x.shape[dim], dim, at["_loc"])
    return x[_coords(idx, dim)]


def gather(input: Any, dim: int, index: Any) -> Tensor:
    """torch.gather: `out[i][j][k] = input[index[i][j][k]][j][k]` for dim=0 (likewise for
    other dims).

    `index` is an INT32/INT64 tensor of the same rank as `input` with `index.shape[d] <=
    input.shape[d]` for every d != dim. The result has `index`'s shape and `input`'s dtype;
    its valid extent is `index`'s, capped off `dim` by `input`'s. Index values must lie in
    `[0, input.shape[dim])` (checked when the kernel runs); positions past `input`'s valid
    extent read as 0. PyPTO does not tile the `dim` axis of `input`. `t[dim:index]` is the
    same op.
    """
    v = value_of(input, "gather")
    iv = index_value(index, "gather")
    d = norm_dim(dim, v.rank, "gather")
    if iv.rank != v.rank:
        raise PyptoValueError(f"gather: index must have the same rank as input ({v.rank}), "
                              f"got rank {iv.rank} (shape {pretty_shape(iv.shape)})")
    _static_le("gather", iv, v, "index", "input", skip=d)
    valid = tuple(iv.valid_shape[i] if i == d else min_valid(iv.valid_shape[i],
                                                              v.valid_shape[i])
                  for i in range(v.rank))
    return emit1("GATHER", [v, iv], iv.shape, v.dtype, valid, {"dim": d})


@register("INDEX_SELECT", full_inputs=True, widen=False)
def _index_select_compute(xs: list, at: dict) -> np.ndarray:
    dim = at["dim"]
    x = _padded(xs[0], at["_in_valid"][0], copy=False)
    idx = _valid(xs, at, 1)
    idx = check_index_range("index_select", "index", idx, x.shape[dim], dim, at["_loc"])
    out = np.take(x, idx, axis=dim)
    return out[_region(at["_out_valid"])]


def index_select(input: Any, dim: int, index: Any) -> Tensor:
    """torch.index_select: the slices `input[..., index[i], ...]` along `dim`, stacked.

    `index` is a 1-D (or 2-D) INT32/INT64 tensor; the result's shape is `input.shape` with
    dim `dim` replaced by `index.shape` (so a 2-D index adds a dim) and its dtype is
    `input`'s. Index values must lie in `[0, input.shape[dim])` (checked at run time). The
    vector TileShape has the result's rank.
    """
    v = value_of(input, "index_select")
    iv = index_value(index, "index_select")
    d = norm_dim(dim, v.rank, "index_select")
    check_rank_between("index_select", iv, "index", 1, 2)
    shape = v.shape[:d] + iv.shape + v.shape[d + 1:]
    valid = v.valid_shape[:d] + iv.valid_shape + v.valid_shape[d + 1:]
    return emit1("INDEX_SELECT", [v, iv], shape, v.dtype, valid, {"dim": d},
                 tile_rank=len(shape))


# --------------------------------------------------------------------------------------------
# scatter / scatter_

def _scatter_args(op: str, input: Any, dim: Any, index: Any, src: Any,
                  reduce: Any) -> tuple[TensorValue, list[TensorValue], dict]:
    v = value_of(input, op)
    iv = index_value(index, op)
    d = norm_dim(dim, v.rank, op)
    if iv.rank != v.rank:
        raise PyptoValueError(f"{op}: index must have the same rank as input ({v.rank}), "
                              f"got rank {iv.rank} (shape {pretty_shape(iv.shape)})")
    _static_le(op, iv, v, "index", "input", skip=d)
    if reduce not in _REDUCE_MODES:
        raise PyptoValueError(f"{op}: reduce must be None, 'add' or 'multiply', got {reduce!r}")
    attrs: dict[str, Any] = {"dim": d, "reduce": reduce}
    inputs = [iv]
    if isinstance(src, Tensor):
        sv = src.value
        _same_dtype(op, v, sv, "input", "src")
        if sv.rank != v.rank:
            raise PyptoValueError(f"{op}: src must have the same rank as input ({v.rank}), "
                                  f"got rank {sv.rank}")
        _static_le(op, iv, sv, "index", "src")
        inputs.append(sv)
    else:
        from pypto.ops.scalars import scalar_attr
        attrs["scalar"] = scalar_attr(op, v, src, "src")
    return v, inputs, attrs


def _scatter_region(xs: list, at: dict, first: int) -> tuple[np.ndarray, Any]:
    """(index, src) cut to the region where both hold data: the common valid extent."""
    idx_valid = at["_in_valid"][first]
    if "scalar" in at:
        return xs[first][_region(idx_valid)], at["scalar"]
    region = _region([min(a, b) for a, b in zip(idx_valid, at["_in_valid"][first + 1])])
    return xs[first][region], xs[first + 1][region]


@register("SCATTER_", writes=True, full_inputs=True)
def _scatter_inplace_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    idx, src = _scatter_region(xs, at, 0)
    _scatter_into("scatter_", dst, at["dim"], idx, src, at["reduce"], at["_loc"])


def scatter_(input: Any, dim: int, index: Any, src: Any, *, reduce: str | None = None) -> Tensor:
    """torch.scatter_, in place: `input[index[i][j]][j] = src[i][j]` for dim=0 (likewise for
    other dims); `src` may be a tensor or a scalar (int, float, Element, SymbolicScalar).

    `index` is INT32/INT64 with `input`'s rank, `index.shape[d] <= input.shape[d]` for d != dim
    and `<= src.shape[d]` for every d; `src` has `input`'s dtype. Only the region where `index`
    (and a tensor `src`) is valid is scattered. `reduce="add"` / `"multiply"` combines with the
    old value (repeated indices accumulate); with `reduce=None` and repeated indices the last
    write wins (PyPTO leaves it unspecified). Index values must lie in
    `[0, input.shape[dim])`. Writes into `input`'s storage and returns `input`.
    `t[dim:index] = src` is the same op.
    """
    v, inputs, attrs = _scatter_args("scatter_", input, dim, index, src, reduce)
    emit_write("SCATTER_", v, inputs, attrs)
    return input


@register("SCATTER", full_inputs=True)
def _scatter_compute(xs: list, at: dict) -> np.ndarray:
    out = _padded(xs[0], at["_in_valid"][0])
    idx, src = _scatter_region(xs, at, 1)
    _scatter_into("scatter", out, at["dim"], idx, src, at["reduce"], at["_loc"])
    return out[_region(at["_out_valid"])]


def scatter(input: Any, dim: int, index: Any, src: Any, *, reduce: str | None = None) -> Tensor:
    """torch.scatter: like `scatter_` but returns a new tensor and leaves `input` unchanged.
    The result has `input`'s shape, dtype and valid shape."""
    v, inputs, attrs = _scatter_args("scatter", input, dim, index, src, reduce)
    return emit1("SCATTER", [v] + inputs, v.shape, v.dtype, v.valid_shape, attrs)


# --------------------------------------------------------------------------------------------
# scatter_update (paged KV cache)

@register("SCATTER_UPDATE", full_inputs=True, widen=False)
def _scatter_update_compute(xs: list, at: dict) -> np.ndarray:
    op, loc = "scatter_update", at["_loc"]
    x_valid, i_valid, s_valid = at["_in_valid"]
    out = _padded(xs[0], x_valid)
    idx, src = xs[1], xs[2]
    if out.ndim == 2:
        s = idx.shape[1]
        rows = np.arange(i_valid[0])[:, None] * s + np.arange(i_valid[1])[None, :]
        keep = rows < s_valid[0]
        target = check_index_range(op, "index", idx[:i_valid[0], :i_valid[1]][keep], out.shape[0],
                              0, loc)
        ncol = min(s_valid[1], out.shape[1])
        out[target, :ncol] = src[rows[keep], :ncol]
    else:
        b, s = min(i_valid[0], s_valid[0]), min(i_valid[1], s_valid[1])
        block = out.shape[1]
        flat = check_index_range(op, "index", idx[:b, :s].reshape(-1), out.shape[0] * block, 0, loc)
        ncol = min(s_valid[3], out.shape[3])
        out[flat // block, flat % block, 0, :ncol] = src[:b, :s, 0, :ncol].reshape(-1, ncol)
    return out[_region(at["_out_valid"])]


def scatter_update(input: Any, dim: int, index: Any, src: Any) -> Tensor:
    """Paged KV-cache update; returns the updated cache as a new tensor (`input` unchanged):
    write it back with `cache.move(pypto.scatter_update(cache, -2, index, src))`.

    - 2-D: `input` [blockNum * blockSize, d], `index` [b, s], `src` [b * s, d]:
      `out[index[i][j]] = src[i * s + j]`.
    - 4-D: `input` [blockNum, blockSize, 1, d], `index` [b, s], `src` [b, s, 1, d]:
      `out[index[i][j] // blockSize][index[i][j] % blockSize][0] = src[i][j][0]`.

    `dim` must be -2. `index` is INT32/INT64; `src` has `input`'s dtype. Slots must lie in
    `[0, blockNum * blockSize)` (checked at run time); with repeated slots the last write
    wins. Only entries where `index` and `src` are valid are written. The vector TileShape has
    `src`'s rank, and PyPTO does not split the last axis.
    """
    op = "scatter_update"
    v = value_of(input, op)
    iv = index_value(index, op)
    sv = value_of(src, op, "src")
    _same_dtype(op, v, sv, "input", "src")
    if v.rank not in (2, 4):
        raise PyptoValueError(f"{op}: input must have rank 2 ([blockNum*blockSize, d]) or 4 "
                              f"([blockNum, blockSize, 1, d]), got rank {v.rank}")
    if isinstance(dim, bool) or not isinstance(dim, int) or dim not in (-2, v.rank - 2):
        raise PyptoValueError(f"{op}: dim must be -2, got {dim!r}")
    check_rank_between(op, iv, "index", 2, 2)
    if sv.rank != v.rank:
        raise PyptoValueError(f"{op}: src must have the same rank as input ({v.rank}), got "
                              f"rank {sv.rank} (shape {pretty_shape(sv.shape)})")
    _static_eq(op, "src last dim", sv.shape[-1], v.shape[-1], "it must equal input's last dim")
    if v.rank == 2:
        _static_eq(op, "src dim 0", sv.shape[0], binary("mul", iv.shape[0], iv.shape[1]),
                   "it must be index.shape[0] * index.shape[1]")
    else:
        _static_eq(op, "input dim 2", v.shape[2], Const(1), "input is [blockNum, blockSize, 1, d]")
        _static_eq(op, "src dim 2", sv.shape[2], Const(1), "src is [b, s, 1, d]")
        _static_eq(op, "src dim 0", sv.shape[0], iv.shape[0], "it must equal index.shape[0]")
        _static_eq(op, "src dim 1", sv.shape[1], iv.shape[1], "it must equal index.shape[1]")
    return emit1("SCATTER_UPDATE", [v, iv, sv], v.shape, v.dtype, v.valid_shape, {"dim": -2},
                 tile_rank=sv.rank)


# --------------------------------------------------------------------------------------------
# index_add / index_add_ / index_put_

def _index_add_args(op: str, input: Any, dim: Any, index: Any, source: Any,
                    alpha: Any) -> tuple[TensorValue, TensorValue, TensorValue, dict]:
    v = value_of(input, op)
    iv = index_value(index, op)
    sv = value_of(source, op, "source")
    d = norm_dim(dim, v.rank, op)
    check_rank_between(op, iv, "index", 1, 1)
    _same_dtype(op, v, sv, "input", "source")
    if sv.rank != v.rank:
        raise PyptoValueError(f"{op}: source must have the same rank as input ({v.rank}), got "
                              f"rank {sv.rank} (shape {pretty_shape(sv.shape)})")
    _static_eq(op, f"source dim {d}", sv.shape[d], iv.shape[0], "it must equal len(index)")
    for i in range(v.rank):
        if i != d:
            _static_eq(op, f"source dim {i}", sv.shape[i], v.shape[i],
                       "off `dim`, source must match input")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise PyptoTypeError(f"{op}: alpha must be an int or float, got {alpha!r}")
    if isinstance(alpha, float) and not is_float(v.dtype):
        raise PyptoTypeError(f"{op}: a float alpha ({alpha}) needs a floating-point input, "
                             f"got {v.dtype.name}")
    return v, iv, sv, {"dim": d, "alpha": alpha}


@register("INDEX_ADD_", writes=True, full_inputs=True)
def _index_add_inplace_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    _index_add_into("index_add_", dst, at["dim"], _valid(xs, at, 0), _valid(xs, at, 1),
                    at["alpha"], at["_loc"])


def index_add_(input: Any, dim: int, index: Any, source: Any, *,
               alpha: int | float = 1) -> Tensor:
    """torch.index_add_, in place: `input[..., index[i], ...] += alpha * source[..., i, ...]`
    along `dim`; repeated indices accumulate.

    `index` is a 1-D INT32/INT64 tensor of length `source.shape[dim]`; `source` has `input`'s
    dtype and rank and matches `input` off `dim`. Index values must lie in
    `[0, input.shape[dim])` (checked at run time). Low-precision floats accumulate in FP32.
    A float `alpha` needs a float input. Writes into `input`'s storage and returns `input`.
    """
    v, iv, sv, attrs = _index_add_args("index_add_", input, dim, index, source, alpha)
    emit_write("INDEX_ADD_", v, [iv, sv], attrs)
    return input


@register("INDEX_ADD", full_inputs=True)
def _index_add_compute(xs: list, at: dict) -> np.ndarray:
    out = _padded(xs[0], at["_in_valid"][0])
    _index_add_into("index_add", out, at["dim"], _valid(xs, at, 1), _valid(xs, at, 2),
                    at["alpha"], at["_loc"])
    return out[_region(at["_out_valid"])]


def index_add(input: Any, dim: int, index: Any, source: Any, *,
              alpha: int | float = 1) -> Tensor:
    """torch.index_add: like `index_add_` but returns a new tensor (`input`'s shape, dtype and
    valid shape) and leaves `input` unchanged."""
    v, iv, sv, attrs = _index_add_args("index_add", input, dim, index, source, alpha)
    return emit1("INDEX_ADD", [v, iv, sv], v.shape, v.dtype, v.valid_shape, attrs)


@register("INDEX_PUT_", writes=True, full_inputs=True)
def _index_put_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    k = at["k"]
    idxs = [_valid(xs, at, j) for j in range(k)]
    vals = _valid(xs, at, k)
    n = min([len(i) for i in idxs] + [vals.shape[0]])
    tail = tuple(slice(0, min(a, b)) for a, b in zip(vals.shape[1:], dst.shape[k:]))
    wrapped = tuple(check_index_range("index_put_", f"indices[{j}]", idxs[j][:n], dst.shape[j], j,
                                 at["_loc"], allow_negative=True) for j in range(k))
    vals = vals[(slice(0, n),) + tail]
    if at["accumulate"]:
        _accumulate(dst, wrapped + tail, vals, "add")
    else:
        dst[wrapped + tail] = vals


def index_put_(input: Any, indices: Any, values: Any, accumulate: bool = False) -> None:
    """torch.index_put_: `input[indices[0][i], ..., indices[k-1][i]] = values[i]` (`+=` with
    `accumulate=True`, where repeated positions accumulate). Returns None.

    `indices` is a tuple of 1 to rank(input) 1-D INT32/INT64 tensors of one length L; `values`
    has `input`'s dtype and shape `[L] + input.shape[k:]` (no broadcasting; so
    `rank(input) + 1 == k + rank(values)`). Index values may be negative (counted from the
    end) and must lie in `[-size, size)`. Without accumulate, repeated positions keep the last
    value (PyPTO leaves it unspecified). The vector TileShape is 1-D (it splits L).
    """
    op = "index_put_"
    v = value_of(input, op)
    if isinstance(indices, Tensor):
        indices = (indices,)
    if not isinstance(indices, (tuple, list)) or not 1 <= len(indices) <= v.rank:
        raise PyptoTypeError(f"{op}: indices must be a tuple of 1 to {v.rank} index tensors, "
                             f"got {indices!r}")
    ivs = [index_value(t, op, f"indices[{j}]") for j, t in enumerate(indices)]
    k = len(ivs)
    for j, iv in enumerate(ivs):
        check_rank_between(op, iv, f"indices[{j}]", 1, 1)
        _static_eq(op, f"len(indices[{j}])", iv.shape[0], ivs[0].shape[0],
                   "all index tensors must have the same length")
    vv = value_of(values, op, "values")
    _same_dtype(op, v, vv, "input", "values")
    if v.rank + 1 != k + vv.rank:
        raise PyptoValueError(f"{op}: values must have rank {v.rank + 1 - k} (input rank "
                              f"{v.rank} + 1 - {k} index tensors), got rank {vv.rank}")
    _static_eq(op, "values dim 0", vv.shape[0], ivs[0].shape[0], "it must equal len(indices[0])")
    for i in range(1, vv.rank):
        _static_eq(op, f"values dim {i}", vv.shape[i], v.shape[k + i - 1],
                   f"it must equal input dim {k + i - 1}")
    if not isinstance(accumulate, bool):
        raise PyptoTypeError(f"{op}: accumulate must be a bool, got {accumulate!r}")
    emit_write("INDEX_PUT_", v, ivs + [vv], {"k": k, "accumulate": accumulate}, tile_rank=1)
    return None
