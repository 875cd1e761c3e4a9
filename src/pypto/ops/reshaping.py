"""Reshapes: reshape (same elements in row-major order, with one -1 inferred), unsqueeze and
squeeze, and `reshape_valid`, which maps a partial valid shape onto the new dims.

Its own module because the valid-shape mapping (groups of dims with equal products) is an idea
of its own that `layout` also uses. `reshape(..., inplace=True)` aliases the parent's storage
instead of copying, so writes through it land in the parent (e.g. a kernel output).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pypto.errors import PyptoRuntimeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.frontend.tracer import require_tracer
from pypto.ir.tensor import TensorValue
from pypto.ops.core import NONE, emit1, norm_dim, register, shape_exprs, value_of
from pypto.ops.shape import check_valid_shape
from pypto.symbolic import Const, Expr, binary


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
