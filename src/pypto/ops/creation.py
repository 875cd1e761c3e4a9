"""Creation ops: full, zeros, ones, arange (and `pypto.tensor` locals, in frontend.tensor)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pypto.dtypes import DataType, check_supported, is_float
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ops.core import emit1, register, shape_exprs
from pypto.ops.scalars import Element
from pypto.ops.shape import check_valid_shape
from pypto.symbolic import Const, SymbolicScalar


@register("FULL", widen=False)
def _full_compute(xs: list, at: dict) -> np.ndarray:
    from pypto.dtypes import to_numpy
    return np.full(tuple(at["_out_valid"]), at["value"], dtype=to_numpy(at["dtype"]))


def full(size: Any, fill_value: Any, dtype: DataType, *, valid_shape: Any = None) -> Tensor:
    """A tensor of `size` (rank 1 to 4) filled with `fill_value` (a number, an Element or a
    SymbolicScalar read at run time)."""
    check_supported(dtype, "full dtype")
    dims = shape_exprs(size, "full", "size")
    if not 1 <= len(dims) <= 4:
        raise PyptoValueError(f"full: size must have rank 1 to 4, got {len(dims)}")
    if any(isinstance(d, Const) and d.value <= 0 for d in dims):
        raise PyptoValueError(f"full: size dims must be > 0, got {[repr(d) for d in dims]}")
    if isinstance(fill_value, Element):
        fill_value = fill_value.value
    if isinstance(fill_value, SymbolicScalar):
        fill_value = fill_value.expr
    elif isinstance(fill_value, bool) or not isinstance(fill_value, (int, float)):
        if not isinstance(fill_value, Const):
            raise PyptoTypeError(f"full: fill_value must be a number, Element or "
                                 f"SymbolicScalar, got {fill_value!r}")
    if isinstance(fill_value, float) and not is_float(dtype) and not math.isfinite(fill_value):
        raise PyptoValueError(f"full: {fill_value} cannot be stored in {dtype.name}")
    valid = shape_exprs(valid_shape, "full", "valid_shape") if valid_shape is not None else dims
    if len(valid) != len(dims):
        raise PyptoValueError(f"full: valid_shape needs {len(dims)} entries, got {len(valid)}")
    check_valid_shape("full", valid, dims)
    return emit1("FULL", [], dims, dtype, valid, {"value": fill_value, "dtype": dtype},
                 tile_rank=len(dims))


def _size_args(size: tuple) -> Any:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        return list(size[0])
    return list(size)


def zeros(*size: Any, dtype: DataType | None = None) -> Tensor:
    return full(_size_args(size), 0, dtype or DataType.DT_FP32)


def ones(*size: Any, dtype: DataType | None = None) -> Tensor:
    return full(_size_args(size), 1, dtype or DataType.DT_FP32)


@register("ARANGE", widen=False)
def _arange_compute(xs: list, at: dict) -> np.ndarray:
    from pypto.dtypes import to_numpy
    n = at["_out_valid"][0]
    return (at["start"] + at["step"] * np.arange(n, dtype=np.float64)).astype(
        to_numpy(at["dtype"]))


def arange(*args: Any, dtype: DataType | None = None) -> Tensor:
    """`arange(end)`, `arange(start, end)`, `arange(start, end, step)`: 1-D; ints give INT32,
    floats FP32. Length ceil((end - start) / step)."""
    if not 1 <= len(args) <= 3:
        raise PyptoTypeError("arange takes 1 to 3 arguments")
    start, end, step = (0, args[0], 1) if len(args) == 1 else (
        args[0], args[1], args[2] if len(args) == 3 else 1)
    for x in (start, end, step):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise PyptoTypeError(f"arange bounds must be numbers, got {x!r}")
    if step == 0 or (end - start) / step <= 0:
        raise PyptoValueError(f"arange({start}, {end}, {step}) is empty")
    n = math.ceil((end - start) / step)
    if dtype is None:
        dtype = DataType.DT_INT32 if all(isinstance(x, int) for x in (start, end, step)) \
            else DataType.DT_FP32
    check_supported(dtype, "arange dtype")
    return emit1("ARANGE", [], (Const(n),), dtype, (Const(n),),
                 {"start": start, "step": step, "dtype": dtype}, tile_rank=1)
