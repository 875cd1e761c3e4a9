"""The indexing rules of `t[key]` (a view, or a scalar element read) and `t[key] = v` (an
assemble, or a scalar element write), installed as `Tensor.__getitem__`/`__setitem__`.
"""
from __future__ import annotations

from typing import Any

from pypto.dtypes import DataType
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue
from pypto.ops.core import value_of
from pypto.ops.reshaping import internal_reshape
from pypto.ops.shape import tensor_name, view
from pypto.ops.writes import assemble, move, set_element
from pypto.symbolic import Const, ElementRead, Expr, SymbolicScalar, as_expr, binary, wrap


def _normalize_key(v: TensorValue, key: Any) -> list[Any]:
    items = list(key) if isinstance(key, tuple) else [key]
    if any(isinstance(k, Tensor) for k in items):
        raise PyptoTypeError("t[key]: a tensor cannot index a tensor (no advanced indexing); "
                             "use pypto.gather or pypto.index_select")
    ellipses = [i for i, k in enumerate(items) if k is Ellipsis]  # `is`: `==` would trace an op
    if len(ellipses) > 1:
        raise PyptoValueError("t[key]: an index can contain only one '...'")
    if ellipses:
        i = ellipses[0]
        fill = v.rank - (len(items) - 1)
        items = items[:i] + [slice(None)] * fill + items[i + 1:]
    if len(items) > v.rank:
        raise PyptoValueError(f"t[key]: too many indices ({len(items)}) for a rank-{v.rank} "
                              f"tensor")
    return items + [slice(None)] * (v.rank - len(items))


def _norm_index(e: Any, dim: Expr, what: str) -> Expr:
    if isinstance(e, (float, bool)) or not isinstance(e, (int, SymbolicScalar)):
        raise PyptoTypeError(f"t[key]: {what} must be an int or SymbolicScalar, got {e!r}")
    x = as_expr(e)
    if isinstance(x, Const) and x.value < 0:
        x = binary("add", dim, x)
    return x


def _check_bounds(op: str, v: TensorValue, d: int, start: Expr, stop: Expr | None,
                  key: Any) -> None:
    """A slice (or int index, stop = start + 1) whose bounds and dim are static must lie inside
    the dim after Python-style wrapping of negative values; unlike torch, an out-of-range
    bound is not clamped (a clamped slice changes the shape and a partial write leaves part of
    the destination unwritten). Symbolic bounds keep their run-time window semantics."""
    dim = v.shape[d]
    if not isinstance(dim, Const):
        return
    n = dim.value
    bad = (isinstance(start, Const) and not 0 <= start.value < n) or \
        (isinstance(stop, Const) and not 0 < stop.value <= n)
    if bad:
        raise PyptoValueError(
            f"{op}: {key} is out of bounds for dim {d} of {tensor_name(v)} (size {n}; "
            f"static bounds must lie in [-{n}, {n}], negative ones count from the end)")


def _slice_bounds(s: slice, v: TensorValue, d: int, op: str = "t[key]") -> tuple[Expr, Expr]:
    dim = v.shape[d]
    if s.step not in (None, 1):
        raise PyptoValueError(f"{op}: slice step must be 1, got {s.step} on dim {d}")
    start = Const(0) if s.start is None else _norm_index(s.start, dim, f"slice start of dim {d}")
    stop = dim if s.stop is None else _norm_index(s.stop, dim, f"slice stop of dim {d}")
    _check_bounds(op, v, d, start, stop, f"slice [{_bound(s.start)}:{_bound(s.stop)}]")
    return start, stop


def _bound(b: Any) -> str:
    return "" if b is None else repr(b)


def getitem(t: Tensor, key: Any) -> Any:
    """PyPTO indexing: slices give a view whose sizes must be ints; int indices drop their
    dim; an all-int index reads one element as a SymbolicScalar (INT32 tensors).

    Bounds: negative ints count from the end (Python). A static bound outside the dim (after
    that wrap) is an error while tracing, not clamped as in torch (`x[8:24]` on 16 rows would
    read 8 rows where 16 were written). A symbolic start (`x[i:i + 16]`) is a window like
    `pypto.view`: at run time it may reach past the edge, and only the part inside is valid."""
    v = t.value
    if isinstance(key, slice) and isinstance(key.stop, Tensor):
        from pypto.ops.index import gather
        return gather(t, key.start if key.start is not None else 0, key.stop)
    items = _normalize_key(v, key)
    if all(not isinstance(k, slice) for k in items):
        idx = _indices(v, items, "t[key]")
        if v.dtype not in (DataType.DT_INT32, DataType.DT_INT64, DataType.DT_INT16,
                           DataType.DT_INT8):
            raise PyptoTypeError(f"t[i, j]: reading one element of a {v.dtype.name} tensor as a "
                                 f"scalar is not supported (use an INT32 tensor)")
        return wrap(ElementRead(v.id, idx, v))
    if all(isinstance(k, slice) and k == slice(None) for k in items):
        return t
    offsets, sizes, dropped = [], [], []
    for d, (k, dim) in enumerate(zip(items, v.shape)):
        if isinstance(k, slice):
            start, stop = _slice_bounds(k, v, d)
        else:
            start = _norm_index(k, dim, f"index of dim {d}")
            stop = binary("add", start, 1)
            _check_bounds("t[key]", v, d, start, stop, f"index {k!r}")
            dropped.append(d)
        size = binary("sub", stop, start)
        if not isinstance(size, Const):
            raise PyptoValueError(
                f"t[key]: slice of dim {d} has size {size!r}, which does not simplify to an int; "
                f"write x[a:a+T] with an int T, or use pypto.view(x, shape, offsets, "
                f"valid_shape=...) for dynamic extents")
        if size.value <= 0:
            raise PyptoValueError(f"t[key]: slice of dim {d} is empty (size {size.value})")
        offsets.append(start)
        sizes.append(size.value)
    out = view(t, sizes, offsets)
    if dropped:
        ov = out.value
        keep = [i for i in range(ov.rank) if i not in dropped]
        return internal_reshape(ov, tuple(ov.shape[i] for i in keep),
                                 tuple(ov.valid_shape[i] for i in keep))
    return out


def _indices(v: TensorValue, items: list, op: str) -> tuple[Expr, ...]:
    """All-int index: each wrapped (negative counts from the end) and checked when static."""
    idx = []
    for d, (k, dim) in enumerate(zip(items, v.shape)):
        i = _norm_index(k, dim, f"index of dim {d}")
        _check_bounds(op, v, d, i, binary("add", i, 1), f"index {k!r}")
        idx.append(i)
    return tuple(idx)


def setitem(t: Tensor, key: Any, value: Any) -> None:
    """PyPTO slice assignment: `t[:] = v` moves; otherwise `v` is assembled at the slice
    starts; int indices insert size-1 dims; all ints set one element.

    A missing start is 0. As in PyPTO the stop is ignored: the written extent is `v`'s valid shape
    (`out[b:b+1] = v` writes all of v's rows), and that extent must lie inside `t` (checked
    while tracing when static, when the write runs otherwise). Negative starts and ints count
    from the end; a static start or int outside the dim is an error naming it."""
    v = t.value
    if isinstance(key, slice) and isinstance(key.stop, Tensor):
        from pypto.ops.index import scatter_
        scatter_(t, key.start if key.start is not None else 0, key.stop, value)
        return
    items = _normalize_key(v, key)
    if all(not isinstance(k, slice) for k in items):
        set_element(v, _indices(v, items, "t[key] = v"), value)
        return
    src = value_of(value, "t[key] = v", "value")
    if all(isinstance(k, slice) and k.start is None and k.stop is None for k in items):
        move(t, value)
        return
    offsets = []
    for d, (k, dim) in enumerate(zip(items, v.shape)):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise PyptoValueError(f"t[key] = v: slice step must be 1, got {k.step} on dim {d}")
            if k.start is not None:
                start = _norm_index(k.start, dim, f"slice start of dim {d}")
                _check_bounds("t[key] = v", v, d, start, None, f"slice start {k.start!r}")
                offsets.append(start)
            else:
                # NOTE: PyPTO places a stop-only slice at stop - dim, which is negative (an
                # error) for every stop but the dim itself; here it starts at 0, as in torch
                offsets.append(Const(0))
        else:
            i = _norm_index(k, dim, f"index of dim {d}")
            _check_bounds("t[key] = v", v, d, i, binary("add", i, 1), f"index {k!r}")
            offsets.append(i)
    n_slices = sum(1 for k in items if isinstance(k, slice))
    if src.rank == v.rank:
        assemble(value, offsets, t)
        return
    if src.rank != n_slices:
        raise PyptoValueError(f"t[key] = v: the value has rank {src.rank} but the index "
                              f"has {n_slices} slices (and {v.rank - n_slices} ints)")
    shape, valid = [], []
    it = iter(range(src.rank))
    for k in items:
        if isinstance(k, slice):
            i = next(it)
            shape.append(src.shape[i])
            valid.append(src.valid_shape[i])
        else:
            shape.append(Const(1))
            valid.append(Const(1))
    assemble(internal_reshape(src, tuple(shape), tuple(valid)), offsets, t)
