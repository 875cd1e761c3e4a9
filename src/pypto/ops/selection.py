"""Selection ops: where (pick either operand per element by a DT_BOOL condition) and clip
(clamp to scalar or tensor bounds), with the elementwise ops' broadcasting and valid extents.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue
from pypto.ops.core import broadcast_shapes, broadcast_valid, emit1, register, value_of
from pypto.ops.scalars import Element, as_element, scalar_attr


def _operand_value(op: str, x: Any, like: DataType | None) -> tuple[TensorValue | None, Any]:
    if isinstance(x, Tensor):
        return x.value, None
    if isinstance(x, Element):
        return None, x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PyptoTypeError(f"{op}: operand must be a Tensor, float or Element, got {x!r}")
    return None, Element(DataType.DT_FP32, float(x))


@register("WHERE", crop=True)
def _where_compute(xs: list, at: dict) -> Any:
    it = iter(xs)
    cond = next(it)
    a = next(it) if at["a"] is None else np.asarray(at["a"])  # exact; rounded once on store
    b = next(it) if at["b"] is None else np.asarray(at["b"])
    return np.where(cond, a, b)


def where(condition: Any, input: Any, other: Any) -> Tensor:
    """Pick `input` where `condition` is true, else `other`. A float scalar is an FP32 Element,
    so with a non-FP32 tensor use `pypto.Element(dtype, v)`. All tensors must have the same rank."""
    c = value_of(condition, "where", "condition")
    if c.dtype is not DataType.DT_BOOL:
        raise PyptoTypeError(f"where: condition must be DT_BOOL, got {c.dtype.name}")
    va, ea = _operand_value("where", input, None)
    vb, eb = _operand_value("where", other, None)
    tensors = [v for v in (va, vb) if v is not None]
    dtypes = {v.dtype for v in tensors} | {e.dtype for e in (ea, eb) if e is not None}
    if len(dtypes) != 1:
        names = ", ".join(sorted(d.name for d in dtypes))
        raise PyptoTypeError(f"where: input and other have different dtypes ({names}); use "
                             f"pypto.Element(dtype, value) for scalars")
    for v in tensors:
        if v.rank != c.rank:
            raise PyptoValueError(f"where: all tensors must have the same rank (condition "
                                  f"rank {c.rank}, operand rank {v.rank})")
    out_dtype = dtypes.pop()
    vals = [c] + tensors
    shape = broadcast_shapes("where", *(v.shape for v in vals))
    attrs = {"a": None if ea is None else ea.value, "b": None if eb is None else eb.value}
    return emit1("WHERE", vals, shape, out_dtype, broadcast_valid(vals, shape), attrs,
                 tile_rank=len(shape), op="where")


@register("CLIP", crop=True)
def _clip_compute(xs: list, at: dict) -> Any:
    x = xs[0]
    rest = iter(xs[1:])
    lo = next(rest) if at["lo_tensor"] else at["lo"]
    hi = next(rest) if at["hi_tensor"] else at["hi"]
    if lo is not None:
        x = np.maximum(x, as_element(lo, at["dtype"], x.dtype))
    if hi is not None:
        x = np.minimum(x, as_element(hi, at["dtype"], x.dtype))
    return x


def clip(input: Any, min: Any = None, max: Any = None) -> Tensor:
    """Clamp to [min, max]; both bounds scalars/Elements or both tensors (broadcastable)."""
    v = value_of(input, "clip")
    if min is None and max is None:
        return input
    kinds = {isinstance(b, Tensor) for b in (min, max) if b is not None}
    if len(kinds) > 1:
        raise PyptoTypeError("clip: min and max must both be tensors or both be scalars")
    attrs: dict[str, Any] = {"lo_tensor": isinstance(min, Tensor),
                             "hi_tensor": isinstance(max, Tensor), "lo": None, "hi": None,
                             "dtype": v.dtype}
    vals = [v]
    for key, b in (("lo", min), ("hi", max)):
        if isinstance(b, Tensor):
            if b.dtype != v.dtype:
                raise PyptoTypeError(f"clip: bound dtype {b.dtype.name} != {v.dtype.name}")
            vals.append(b.value)
        elif b is not None:
            attrs[key] = scalar_attr("clip", v, b)
    shape = broadcast_shapes("clip", *(x.shape for x in vals))
    return emit1("CLIP", vals, shape, v.dtype, broadcast_valid(vals, shape), attrs,
                 tile_rank=len(shape), op="clip")
