"""Views, writes and reshapes: view, assemble/move/atomic_add/set_element, reshape,
transpose/permute, squeeze, concat, expand_clone, clone/copy, pad/fillpad (the lane and byte
layout ops are `layout`, the indexing rules of `t[key]` / `t[key] = v` are `indexing`).

Reading a view copies the window when the op runs (program order), so a later write to the
parent does not change an earlier view. `reshape(..., inplace=True)` instead aliases the
parent's storage, so writes through it land in the parent (e.g. a kernel output).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pypto.dtypes import DataType, bytes_of, check_supported, to_numpy
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.frontend.tracer import require_tracer
from pypto.ir.tensor import TensorValue
from pypto.ops.core import (NONE, emit1, emit_write, norm_dim, register, shape_exprs,
                            static_dims, value_of)
from pypto.symbolic import Const, Expr, SymbolicScalar, binary


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


def _check_window(op: str, v: TensorValue, offsets: Sequence[Expr], sizes: Sequence[int]) -> None:
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
    _check_window("view", v, offs, [0] * len(sizes))
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


# --------------------------------------------------------------------------------------------
# Writes

def write_region(what: str, src: np.ndarray, dst: np.ndarray, at: dict) -> tuple:
    """The slices of `dst` that `src` lands on at `at["offsets"]`; a region reaching outside
    the destination is an error naming the dim."""
    region = []
    for d, (o, n, size) in enumerate(zip(at["offsets"], src.shape, dst.shape)):
        if n and (o < 0 or o + n > size):
            raise PyptoRuntimeError(f"{what} [{o}, {o + n}) of dim {d}, outside the "
                                    f"destination (size {size})", at.get("_loc"))
        region.append(slice(o, o + n))
    return tuple(region)


@register("ASSEMBLE", core=NONE, writes=True, widen=False)
def _assemble_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    src = xs[0]
    dst[write_region("assemble writes", src, dst, at)] = src


def assemble(src: Any, offsets: Any = None, dst: Any = None, parallel: bool = False) -> None:
    """Copy `src` (its valid region) into `dst` at `offsets`. Also `assemble([(src, offs),
    ...], dst)`. Returns None."""
    if isinstance(src, (list, tuple)) and dst is None:
        pairs, dst = src, offsets
        for item in pairs:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise PyptoTypeError("assemble: expected a list of (src, offsets) pairs")
            assemble(item[0], item[1], dst, parallel)
        return None
    s, d = value_of(src, "assemble", "src"), value_of(dst, "assemble", "dst")
    offs = shape_exprs(offsets, "assemble", "offsets")
    if s.rank != d.rank or len(offs) != d.rank:
        raise PyptoValueError(f"assemble: src rank {s.rank}, dst rank {d.rank} and "
                              f"{len(offs)} offsets must all match")
    if s.dtype != d.dtype:
        raise PyptoTypeError(f"assemble: src dtype {s.dtype.name} != dst dtype {d.dtype.name}")
    # The written extent is src's valid region; a symbolic one is checked when the op runs.
    sizes = [x.value if isinstance(x, Const) else 0 for x in s.valid_shape]
    _check_window("assemble", d, offs, sizes)
    emit_write("ASSEMBLE", d, [s], {"offsets": offs, "parallel": bool(parallel)})
    return None


def move(dst: Any, src: Any) -> None:
    """`dst[:] = src` / `dst.move(src)`: `dst` takes `src`'s data (same shape and dtype)."""
    d, s = value_of(dst, "move", "destination"), value_of(src, "move", "source")
    if s.dtype != d.dtype:
        raise PyptoTypeError(f"move: source dtype {s.dtype.name} != destination dtype "
                             f"{d.dtype.name}; cast it first")
    if s.rank != d.rank or any(isinstance(a, Const) and isinstance(b, Const) and a != b
                               for a, b in zip(s.shape, d.shape)):
        raise PyptoValueError(f"move: source shape {[repr(x) for x in s.shape]} does not "
                              f"match destination shape {[repr(x) for x in d.shape]} "
                              f"(t[:] = v replaces the whole tensor; it does not broadcast)")
    emit_write("ASSEMBLE", d, [s], {"offsets": tuple(Const(0) for _ in d.shape), "move": True})


@register("ATOMIC_ADD", core=NONE, writes=True)
def _atomic_add_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    src = xs[0]
    key = write_region("atomic_add adds into", src, dst, at)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.issubdtype(dst.dtype, np.integer):
            dst[key] = (dst[key].astype(np.int64) + src.astype(np.int64)).astype(dst.dtype)
        else:
            dst[key] = (dst[key].astype(np.float32) + src.astype(np.float32)).astype(dst.dtype)


_ATOMIC_ADD_DTYPES = (DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16, DataType.DT_INT8,
                      DataType.DT_INT16, DataType.DT_INT32)


def atomic_add(src: Any, offsets: Any, dst: Any) -> None:
    """dst[offsets[0]:offsets[0] + n0, ...] += src, in `dst`'s storage. Returns None.

    Like `assemble`, the region is `src`'s valid region placed at `offsets` (ints or
    SymbolicScalars, one per dim); `src` and `dst` have the same rank and dtype (DT_FP32,
    DT_FP16, DT_BF16, DT_INT8, DT_INT16 or DT_INT32). Floats are added in FP32 and rounded once
    to `dst`'s dtype; integers wrap on overflow. The region must lie inside `dst`: statically
    known offsets are checked while tracing, symbolic ones when the op runs. The caller keeps
    `dst`'s valid shape right, and the region of `dst` must hold data before the add. Additions
    run in program order, so overlapping adds from several loop iterations all accumulate."""
    op = "atomic_add"
    s, d = value_of(src, op, "src"), value_of(dst, op, "dst")
    offs = shape_exprs(offsets, op, "offsets")
    if s.rank != d.rank or len(offs) != d.rank:
        raise PyptoValueError(f"{op}: src rank {s.rank}, dst rank {d.rank} and {len(offs)} "
                              f"offsets must all match")
    if s.dtype != d.dtype:
        raise PyptoTypeError(f"{op}: src dtype {s.dtype.name} != dst dtype {d.dtype.name}")
    if d.dtype not in _ATOMIC_ADD_DTYPES:
        raise PyptoTypeError(f"{op}: dst dtype {d.dtype.name} is not supported (DT_FP32, DT_FP16, "
                             f"DT_BF16, DT_INT8, DT_INT16 or DT_INT32)")
    sizes = [x.value if isinstance(x, Const) else 0 for x in s.valid_shape]
    _check_window(op, d, offs, sizes)
    emit_write("ATOMIC_ADD", d, [s], {"offsets": offs}, op=op)
    return None


@register("SET_ELEMENT", core=NONE, writes=True, widen=False)
def _set_element_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    index = tuple(int(i) for i in at["index"])
    if any(not 0 <= i < n for i, n in zip(index, dst.shape)):
        # a symbolic index is known only now; numpy would wrap a negative one
        raise PyptoRuntimeError(f"t[i, j] = v: index {list(index)} is outside the tensor's "
                                f"shape {list(dst.shape)}", at.get("_loc"))
    dst[index] = at["scalar"]


def set_element(t: TensorValue, index: Sequence[Expr], value: Any) -> None:
    if isinstance(value, SymbolicScalar):
        value = value.expr
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PyptoTypeError(f"t[i, j] = v needs a scalar v, got {type(value).__name__}")
    emit_write("SET_ELEMENT", t, [], {"index": tuple(index), "scalar": value})


# --------------------------------------------------------------------------------------------
# Reshapes and layout

@register("RESHAPE", core=NONE, full_inputs=True, widen=False)
def _reshape_compute(xs: list, at: dict) -> np.ndarray:
    x = xs[0]
    shape = tuple(at["shape"])
    if x.size != int(np.prod(shape, dtype=np.int64)):
        # A dynamic dim makes the input's element count known only now (issue 13, F4).
        raise PyptoRuntimeError(
            f"reshape: the input has shape {list(x.shape)} at run time ({x.size} elements), "
            f"which cannot become {list(shape)} ({int(np.prod(shape, dtype=np.int64))} "
            f"elements)", at.get("_loc"))
    if at["inplace"]:
        return None  # the output aliases the input's storage; nothing moves
    out = x.reshape(shape)
    return out[tuple(slice(0, v) for v in at["_out_valid"])]


def reshape(input: Any, shape: Any, *, valid_shape: Any = None, inplace: bool = False) -> Tensor:
    """New shape, same elements in row-major order. One -1 is inferred. `inplace=True` aliases
    the input's buffer (writes through the result reach the input) and accepts symbolic dims."""
    v = value_of(input, "reshape")
    dims = list(shape_exprs(shape, "reshape", "shape"))
    total = None
    if v.static_shape() is not None:
        total = int(np.prod(v.static_shape()))
    if sum(1 for d in dims if d == Const(-1)) > 1:
        raise PyptoValueError("reshape: only one -1 is allowed in the shape")
    if Const(-1) in dims:
        known = [d.value for d in dims if isinstance(d, Const) and d.value != -1]
        if total is None or len(known) != len(dims) - 1:
            raise PyptoValueError("reshape: -1 needs a static input shape and static dims")
        dims[dims.index(Const(-1))] = Const(total // int(np.prod(known) or 1))
    if not inplace and not all(isinstance(d, Const) for d in dims):
        raise PyptoValueError(f"reshape: inplace=False needs an all-int shape, got "
                              f"{[repr(d) for d in dims]}; use inplace=True for symbolic dims")
    static_new = [d.value for d in dims if isinstance(d, Const)]
    if total is not None and len(static_new) == len(dims) and int(np.prod(static_new)) != total:
        raise PyptoValueError(f"reshape: cannot reshape {v.static_shape()} ({total} elements) "
                              f"into {static_new}")
    new_shape = tuple(dims)
    if valid_shape is not None:
        valid = shape_exprs(valid_shape, "reshape", "valid_shape")
        if len(valid) != len(new_shape):
            raise PyptoValueError(f"reshape: valid_shape needs {len(new_shape)} entries, got "
                                  f"{len(valid)}")
        check_valid_shape("reshape", valid, new_shape)
    else:
        inferred = reshape_valid(v.shape, v.valid_shape, new_shape)
        if inferred is None:
            raise PyptoValueError(
                f"reshape: the input's valid shape {[repr(x) for x in v.valid_shape]} (shape "
                f"{[repr(x) for x in v.shape]}) has no rectangular image in {list(new_shape)}; "
                f"pass valid_shape=[...] explicitly")
        valid = inferred
    if inplace:
        tracer = require_tracer("reshape")
        op_id = tracer.next_id()
        out = tracer.new_value(new_shape, v.dtype, valid, storage=v.storage, producer=op_id)
        from pypto.errors import user_location
        tracer.record("RESHAPE", (v,), (out,), {"shape": new_shape, "inplace": True},
                      user_location())
        return Tensor._wrap(out)
    return emit1("RESHAPE", [v], new_shape, v.dtype, valid,
                 {"shape": new_shape, "inplace": False})


def _reshape_groups(old: Sequence[int], new: Sequence[int]) -> list[tuple[list, list]] | None:
    """Split two static shapes of equal size into runs of dims with equal products."""
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        gi, gj, po, pn = [], [], 1, 1
        if i < len(old):
            po, i = old[i], i + 1
            gi.append(i - 1)
        if j < len(new):
            pn, j = new[j], j + 1
            gj.append(j - 1)
        while po != pn:
            if po < pn and i < len(old):
                po, i = po * old[i], i + 1
                gi.append(i - 1)
            elif pn < po and j < len(new):
                pn, j = pn * new[j], j + 1
                gj.append(j - 1)
            else:
                return None
        groups.append((gi, gj))
    return groups


def reshape_valid(old: Sequence[Expr], valid: Sequence[Expr],
                   new: tuple[Expr, ...]) -> tuple[Expr, ...] | None:
    """The valid shape of a reshape: the whole new shape when the input is fully valid; else,
    per group of dims with equal products, a partial extent on the group's outermost non-1 dim
    (inner dims full) maps to the outermost non-1 new dim when the inner sizes divide. None
    when the valid region has no rectangular image."""
    if all(a == b for a, b in zip(old, valid)):
        return new
    if not all(isinstance(d, Const) for d in tuple(old) + new):
        return None
    o = [d.value for d in old]
    n = [d.value for d in new]
    groups = _reshape_groups(o, n)
    if groups is None:
        return None
    out: list[Expr] = list(new)
    for gi, gj in groups:
        partial = [k for k in gi if valid[k] != old[k] and o[k] != 1]
        if not partial:
            continue
        big_i = [k for k in gi if o[k] != 1]
        big_j = [k for k in gj if n[k] != 1]
        if partial != big_i[:1] or not big_j:
            return None
        inner_old = int(np.prod([o[k] for k in big_i[1:]], dtype=np.int64))
        inner_new = int(np.prod([n[k] for k in big_j[1:]], dtype=np.int64))
        if inner_old % inner_new:
            return None
        out[big_j[0]] = binary("mul", valid[partial[0]], inner_old // inner_new)
    return tuple(out)


def unsqueeze(input: Any, dim: int) -> Tensor:
    v = value_of(input, "unsqueeze")
    d = norm_dim(dim, v.rank + 1, "unsqueeze")
    shape = v.shape[:d] + (Const(1),) + v.shape[d:]
    valid = v.valid_shape[:d] + (Const(1),) + v.valid_shape[d:]
    return internal_reshape(v, shape, valid)


def squeeze(input: Any, dim: int | None = None) -> Tensor:
    v = value_of(input, "squeeze")
    if dim is None:
        keep = [i for i, d in enumerate(v.shape) if d != Const(1)]
    else:
        d = norm_dim(dim, v.rank, "squeeze")
        keep = [i for i in range(v.rank) if i != d or v.shape[i] != Const(1)]
    if len(keep) == v.rank:
        return input
    return internal_reshape(v, tuple(v.shape[i] for i in keep),
                             tuple(v.valid_shape[i] for i in keep))


def internal_reshape(v: TensorValue, shape: tuple[Expr, ...], valid: tuple[Expr, ...]) -> Tensor:
    return emit1("RESHAPE", [v], shape, v.dtype, valid, {"shape": shape, "inplace": False})


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
