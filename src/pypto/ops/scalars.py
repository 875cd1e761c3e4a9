"""Scalar operands of ops: the typed scalar `Element`, how a Python scalar is checked against a
tensor and recorded as an op attribute (`scalar_attr`), and how the compute rounds it to the
tensor's dtype (`as_element`).

Its own module because several families take scalar operands (elementwise, selection, creation,
index) and need these rules without importing the arithmetic ops.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import DataType, check_supported, is_float, is_int, to_numpy
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.ir.tensor import TensorValue
from pypto.symbolic import Expr, SymbolicScalar


class Element:
    """A typed scalar: `pypto.Element(pypto.DT_FP16, 1.0)` keeps a scalar from defaulting to
    FP32 where an op needs an exact dtype match (e.g. `where`)."""

    __slots__ = ("dtype", "value")

    def __init__(self, dtype: DataType, value: Any):
        check_supported(dtype, "Element dtype")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PyptoTypeError(f"Element value must be an int or float, got {value!r}")
        self.dtype = dtype
        self.value = value

    def __repr__(self) -> str:
        return f"Element({self.dtype!r}, {self.value!r})"


Scalar = int | float | Element | SymbolicScalar


def scalar_attr(op: str, t: TensorValue, s: Any, what: str = "") -> int | float | Expr:
    """Canonical scalar attribute: a number, or an Expr for a runtime SymbolicScalar, rounded
    by the compute to the tensor's dtype; `what` names the operand in errors ("src")."""
    if isinstance(s, Element):
        if s.dtype != t.dtype:
            raise PyptoTypeError(f"{op}: {what + ' ' if what else ''}Element of {s.dtype.name} does not match the "
                                 f"{t.dtype.name} tensor")
        return s.value
    if isinstance(s, SymbolicScalar):
        return s.expr
    if isinstance(s, np.generic) and isinstance(s.item(), (int, float)):
        s = s.item()
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        kind = type(s)
        name = kind.__name__ if kind.__module__ == "builtins" else \
            f"{kind.__module__.split('.')[0]}.{kind.__name__}"
        hint = "; pass host tensors to the kernel as arguments" if hasattr(s, "shape") else ""
        raise PyptoTypeError(f"{op}: {what or 'operand'} must be a pypto.Tensor, int, float or Element, "
                             f"got {name}{hint}")
    if isinstance(s, float) and not is_float(t.dtype):
        raise PyptoTypeError(f"{op}: a float {what or 'scalar'} ({s}) cannot be combined with a "
                             f"{t.dtype.name} tensor; use an int or cast the tensor")
    if isinstance(s, int) and is_int(t.dtype):
        info = np.iinfo(to_numpy(t.dtype))
        if not info.min <= s <= info.max:
            raise PyptoValueError(f"{op}: the {what or 'scalar'} {s} does not fit in {t.dtype.name} "
                                  f"[{info.min}, {info.max}]")
    return s


def as_element(s: Any, dtype: DataType, compute: np.dtype) -> Any:
    """A numeric scalar rounded to the tensor's dtype, then held in the compute dtype."""
    if not isinstance(s, (int, float)):
        return s
    with np.errstate(over="ignore"):
        return np.asarray(s).astype(to_numpy(dtype)).astype(compute)
