"""Views and whole-tensor rearrangements: view (and its dtype reinterpretation), transpose/
permute, concat, expand_clone, clone/copy, pad/fillpad, plus the shape checks the other shape
families share. Writes into a tensor are `writes`, reshapes `reshaping`, the lane and byte
layout ops `layout`, and the indexing rules of `t[key]` / `t[key] = v` are `indexing`.

Reading a view copies the window when the op runs (program order), so a later write to the
parent does not change an earlier view.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pypto.dtypes import DataType, bytes_of, check_supported, to_numpy
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue
from pypto.ops.core import NONE, emit1, norm_dim, register, shape_exprs, static_dims, value_of
from pypto.symbolic import Const, Expr, binary


def pretty_shape(shape: Sequence[Expr]) -> str:
    return "[" + ", ".join(repr(d) for d in shape) + "]"


def tensor_name(v: TensorValue) -> str:
    return f"'{v.name}'" if v.name else f"a [{', '.join(repr(d) for d in v.shape)}] tensor"


def _clamped_valid(parent_valid: Expr, offset: Expr, size: int) -> Expr:
    """min(size, max(0, parent_valid - offset)): how much of a window holds real data."""
    return binary("min", size, binary("max", 0, binary("sub", parent_valid, offset)))


def check_valid_shape(op: str, valid: Sequence[Expr], shape: Sequence[Expr]) -> None:
    """Static valid_shape entries lie in [0, size] (symbolic ones are checked when the kernel
    runs: runtime/extent_checks.py)."""
    for d, (vs, n) in enumerate(zip(valid, shape)):
        if isinstance(vs, Const) and vs.value < 0:
            raise PyptoValueError(f"{op}: valid_shape[{d}] = {vs.value} is negative")
        if isinstance(vs, Const) and isinstance(n, Const) and vs.value > n.value:
            raise PyptoValueError(f"{op}: valid_shape[{d}] = {vs.value} exceeds the size "
                                  f"{n.value} of dim {d}")


def check_window(op: str, v: TensorValue, offsets: Sequence[Expr],
                 sizes: Sequence[int]) -> None:
    """A window of `sizes` at static `offsets` lies inside `v` (symbolic offsets are checked
    when the op runs); shared by view and the writes."""
    for d, (off, size, dim) in enumerate(zip(offsets, sizes, v.shape)):
        if isinstance(off, Const) and off.value < 0:
            raise PyptoValueError(f"{op}: offset {off.value} of dim {d} is negative")
        if isinstance(off, Const) and isinstance(dim, Const) and off.value + size > dim.value:
            raise PyptoValueError(
                f"{op}: window [{off.value}, {off.value + size}) of dim {d} lies outside its "
                f"parent (size {dim.value}); parent shape {[repr(x) for x in v.shape]}")


@register("VIEW", core=NONE, full_inputs=True, widen=False, accepts_out=True)
def _view_compute(xs: list, at: dict) -> np.ndarray:
    x = xs[0]
    valid = tuple(at["_out_valid"])
    src = tuple(slice(min(o, n), min(o + v, n)) for o, v, n in zip(at["offsets"], valid, x.shape))
    got = x[src]
    out = at.get("_out")
    if out is None or out.dtype != x.dtype:
        out = np.zeros(valid, dtype=x.dtype)
    elif got.shape != valid:
        out.fill(0)   # the window reaches past the parent's edge
    out[tuple(slice(0, s) for s in got.shape)] = got
    return out


def view(input: Any, shape: Any = None, offsets: Any = None, *, valid_shape: Any = None,
         dtype: DataType | None = None) -> Tensor:
    """A window of static `shape` at `offsets` (ints or SymbolicScalars). The valid shape
    defaults to the part of the window inside the parent's valid region."""
    v = value_of(input, "view")
    if shape is None and offsets is None and dtype is not None:
        return _reinterpret(v, dtype)
    if shape is None:
        raise PyptoTypeError("view: shape is required")
    sizes = static_dims(shape, "view", "shape")
    offs = shape_exprs(offsets if offsets is not None else [0] * len(sizes), "view", "offsets")
    if len(sizes) != v.rank or len(offs) != v.rank:
        raise PyptoValueError(f"view: shape {list(sizes)} and offsets need {v.rank} entries "
                              f"(the parent's rank)")
    # A window may reach past the parent's edge (a tail): only its valid part is read. One
    # that starts at or past the edge (static offset and dim) holds nothing: an error.
    check_window("view", v, offs, [0] * len(sizes))
    for d, (off, dim) in enumerate(zip(offs, v.shape)):
        if isinstance(off, Const) and isinstance(dim, Const) and off.value >= dim.value:
            raise PyptoValueError(f"view: offset {off.value} of dim {d} of {tensor_name(v)} "
                                  f"starts at or past its end (size {dim.value})")
    if valid_shape is not None:
        valid = shape_exprs(valid_shape, "view", "valid_shape")
        if len(valid) != v.rank:
            raise PyptoValueError(f"view: valid_shape needs {v.rank} entries")
        for d, (vs, s, off, dim) in enumerate(zip(valid, sizes, offs, v.shape)):
            if isinstance(vs, Const) and vs.value > s:
                raise PyptoValueError(f"view: valid_shape[{d}] = {vs.value} exceeds the view "
                                      f"size {s}")
            if isinstance(vs, Const) and vs.value < 0:
                raise PyptoValueError(f"view: valid_shape[{d}] = {vs.value} is negative")
            if all(isinstance(x, Const) for x in (vs, off, dim)) and \
                    off.value + vs.value > dim.value:
                raise PyptoValueError(
                    f"view: valid_shape[{d}] = {vs.value} at offset {off.value} reaches past "
                    f"the end of dim {d} of {tensor_name(v)} (size {dim.value})")
    else:
        valid = tuple(_clamped_valid(pv, o, s) for pv, o, s in zip(v.valid_shape, offs, sizes))
    out = emit1("VIEW", [v], tuple(Const(s) for s in sizes), v.dtype, valid,
                {"offsets": offs})
    if dtype is not None:
        return _reinterpret(out.value, dtype)
    return out


@register("BITCAST", core=NONE, full_inputs=True, widen=False)
def _bitcast_compute(xs: list, at: dict) -> np.ndarray:
    return np.ascontiguousarray(xs[0]).view(to_numpy(at["dtype"]))


def _reinterpret(v: TensorValue, dtype: DataType) -> Tensor:
    check_supported(dtype, "view dtype")
    ratio = bytes_of(v.dtype) / bytes_of(dtype)
    last = v.shape[-1]
    if not isinstance(last, Const) or (last.value * ratio) % 1:
        raise PyptoValueError(f"view: cannot reinterpret a last dim of {last!r} "
                              f"{v.dtype.name} as {dtype.name}")
    shape = v.shape[:-1] + (Const(int(last.value * ratio)),)
    return emit1("BITCAST", [v], shape, dtype, v.valid_shape[:-1] + (shape[-1],),
                 {"dtype": dtype})


@register("TRANSPOSE", widen=False)
def _transpose_compute(xs: list, at: dict) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(xs[0], at["perm"]))


def permute(input: Any, perm: Sequence[int]) -> Tensor:
    """Reorder dims: output dim i is input dim perm[i]."""
    v = value_of(input, "permute")
    if sorted(norm_dim(p, v.rank, "permute") for p in perm) != list(range(v.rank)):
        raise PyptoValueError(f"permute: {list(perm)} is not a permutation of {v.rank} dims")
    p = tuple(norm_dim(x, v.rank, "permute") for x in perm)
    return emit1("TRANSPOSE", [v], tuple(v.shape[i] for i in p), v.dtype,
                 tuple(v.valid_shape[i] for i in p), {"perm": p})


# Hardware limits of transpose (api_surface §4.6): any pair in 2-D/3-D.
_TRANSPOSE_PAIRS = {4: {(0, 2), (1, 3), (2, 3), (1, 2)}, 5: {(3, 4)}}


def transpose(input: Any, dim0: int, dim1: int | None = None) -> Tensor:
    """Swap two dims. Any pair in 2-D and 3-D; in 4-D only (0,2), (1,3), (2,3), (1,2); in 5-D
    only (3,4); swapping a dim with itself is always allowed."""
    v = value_of(input, "transpose")
    if isinstance(dim0, (list, tuple)) or dim1 is None:
        raise PyptoTypeError(f"transpose(input, dim0, dim1) swaps two dims, got dim0={dim0!r}, "
                             f"dim1={dim1!r}; use pypto.permute for a full permutation")
    a, b = norm_dim(dim0, v.rank, "transpose"), norm_dim(dim1, v.rank, "transpose")
    pair = (min(a, b), max(a, b))
    legal = _TRANSPOSE_PAIRS.get(v.rank)
    if a != b and legal is not None and pair not in legal:
        raise PyptoValueError(f"transpose: dims ({dim0}, {dim1}) cannot be swapped in a rank-"
                              f"{v.rank} tensor; the supported pairs are "
                              f"{sorted(legal)} (use pypto.permute for others)")
    perm = list(range(v.rank))
    perm[a], perm[b] = perm[b], perm[a]
    return permute(input, perm)


@register("CONCAT", full_inputs=True, widen=False)
def _concat_compute(xs: list, at: dict) -> np.ndarray:
    dim, valid = at["dim"], at["_out_valid"]
    parts = [x[tuple(slice(0, v) if d != dim else slice(None) for d, v in enumerate(valid))]
             for x in xs]
    out = np.concatenate(parts, axis=dim)
    return out[tuple(slice(0, v) for v in valid)]


def concat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """Join 2 to 128 tensors of one dtype and rank along `dim`."""
    if not isinstance(tensors, (list, tuple)) or not 2 <= len(tensors) <= 128:
        raise PyptoValueError("concat takes a list of 2 to 128 tensors")
    vals = [value_of(t, "concat", f"tensors[{i}]") for i, t in enumerate(tensors)]
    first = vals[0]
    d = norm_dim(dim, first.rank, "concat")
    for i, v in enumerate(vals[1:], 1):
        if v.dtype != first.dtype or v.rank != first.rank:
            raise PyptoTypeError(f"concat: tensors[{i}] has dtype/rank {v.dtype.name}/{v.rank}, "
                                 f"expected {first.dtype.name}/{first.rank}")
        for j in range(first.rank):
            if j != d and v.shape[j] != first.shape[j]:
                raise PyptoValueError(f"concat: tensors[{i}] dim {j} is {v.shape[j]!r}, "
                                      f"expected {first.shape[j]!r}")
    total: Expr = Const(0)
    for v in vals:
        total = binary("add", total, v.shape[d])
    shape = first.shape[:d] + (total,) + first.shape[d + 1:]
    # Each part sits at a fixed offset (the sum of the shapes before it), so along `dim` the
    # padding of a partial part is data; the result ends at the last part's valid extent.
    valid = list(first.valid_shape)
    for v in vals[1:]:
        valid = [binary("min", a, b) for a, b in zip(valid, v.valid_shape)]
    valid[d] = binary("sub", total, binary("sub", vals[-1].shape[d], vals[-1].valid_shape[d]))
    return emit1("CONCAT", vals, shape, first.dtype, tuple(valid), {"dim": d})


@register("EXPAND", widen=False, crop=True)
def _expand_compute(xs: list, at: dict) -> np.ndarray:
    return np.ascontiguousarray(np.broadcast_to(xs[0], tuple(at["_out_valid"])))


def expand_clone(input: Any, shape: Any, *, valid_shape: Any = None) -> Tensor:
    """Materialised broadcast of size-1 dims to `shape` (same rank)."""
    v = value_of(input, "expand_clone")
    dims = shape_exprs(shape, "expand_clone")
    if len(dims) != v.rank:
        raise PyptoValueError(f"expand_clone: shape needs {v.rank} entries, got {len(dims)}")
    for i, (a, b) in enumerate(zip(v.shape, dims)):
        if a != b and a != Const(1):
            raise PyptoValueError(f"expand_clone: dim {i} of size {a!r} cannot expand to {b!r}")
    valid = shape_exprs(valid_shape, "expand_clone", "valid_shape") if valid_shape is not None \
        else tuple(b if a == Const(1) and b != Const(1) else vs
                   for a, b, vs in zip(v.shape, dims, v.valid_shape))
    if len(valid) != len(dims):
        raise PyptoValueError(f"expand_clone: valid_shape needs {len(dims)} entries, got "
                              f"{len(valid)}")
    check_valid_shape("expand_clone", valid, dims)
    return emit1("EXPAND", [v], dims, v.dtype, valid, tile_rank=len(dims), op="expand_clone")


@register("COPY", widen=False)
def _copy_compute(xs: list, at: dict) -> np.ndarray:
    return xs[0].copy()


def clone(input: Any) -> Tensor:
    """A copy of `input` (same shape, dtype and valid shape) in a new buffer."""
    v = value_of(input, "clone")
    return emit1("COPY", [v], v.shape, v.dtype, v.valid_shape, op="clone")


def copy(input: Any, name: str = "") -> Tensor:
    """`Tensor.copy(name)`: `clone(input)` whose result (and buffer) is called `name`."""
    v = value_of(input, "copy")
    if not isinstance(name, str):
        raise PyptoTypeError(f"copy: name must be a str, got {type(name).__name__}")
    return emit1("COPY", [v], v.shape, v.dtype, v.valid_shape, name=name, op="copy")


def _check_fill_value(op: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PyptoTypeError(f"{op}: value must be an int or float, got {value!r}")


@register("FILLPAD", full_inputs=True, widen=False)
def _fillpad_compute(xs: list, at: dict) -> np.ndarray:
    x = xs[0]
    out = np.full(x.shape, at["value"], dtype=x.dtype)
    region = tuple(slice(0, v) for v in at["_in_valid"][0])
    out[region] = x[region]
    return out


def fillpad(input: Any, mode: str = "constant", value: Any = 0) -> Tensor:
    """Fill the area outside the valid shape with `value`; the whole tensor becomes valid."""
    v = value_of(input, "fillpad")
    if mode != "constant":
        raise PyptoValueError(f"fillpad: only mode='constant' is supported, got {mode!r}")
    _check_fill_value("fillpad", value)
    return emit1("FILLPAD", [v], v.shape, v.dtype, v.shape, {"value": value})


@register("PAD", full_inputs=True, widen=False)
def _pad_compute(xs: list, at: dict) -> np.ndarray:
    x = xs[0]
    valid = at["_in_valid"][0]
    out = np.full(tuple(at["_out_valid"]), at["value"], dtype=x.dtype)
    region = tuple(slice(0, v) for v in valid)
    out[region] = x[region]
    return out


def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: Any = 0) -> Tensor:
    """Pad on the right of the last dim `(0, r)`, or also the bottom `(0, r, 0, b)`."""
    v = value_of(input, "pad")
    if mode != "constant":
        raise PyptoValueError(f"pad: only mode='constant' is supported, got {mode!r}")
    _check_fill_value("pad", value)
    if not isinstance(pad, (list, tuple)) or any(
            isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in pad):
        raise PyptoTypeError(f"pad: pad must be a tuple of non-negative ints, got {pad!r}")
    if len(pad) not in (2, 4) or any(pad[i] != 0 for i in range(0, len(pad), 2)):
        raise PyptoValueError(f"pad: only right/bottom padding (0, r) or (0, r, 0, b) is "
                              f"supported, got {tuple(pad)}")
    shape = list(v.shape)
    shape[-1] = binary("add", shape[-1], pad[1])
    if len(pad) == 4:
        shape[-2] = binary("add", shape[-2], pad[3])
    return emit1("PAD", [v], tuple(shape), v.dtype, tuple(shape), {"value": value})
