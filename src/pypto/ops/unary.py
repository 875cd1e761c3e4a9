"""One-input elementwise ops: the table of unary opcodes (numpy function and output kind), the
numpy compositions it needs (rsqrt, sigmoid, sign, erf), the generated public functions, and the
one-input ops with a scalar parameter (round, lrelu).

Its own module because the table, its registration and the functions generated from it are one
idea, apart from the broadcasting of two operands (`elementwise`). A "float" op needs a float
tensor; a "bool" op gives DT_BOOL; BF16/FP16 inputs are computed in FP32 and rounded once.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from pypto.dtypes import DataType, is_float
from pypto.errors import PyptoTypeError
from pypto.frontend.tensor import Tensor
from pypto.ops.core import emit1, register, value_of


def out_for(at: dict, *operands: Any) -> np.ndarray | None:
    """`at["_out"]` when every operand has its float dtype (so the result has it too); shared
    with the binary ops of `elementwise`, which sit above this module."""
    out = at.get("_out")
    if out is None or out.dtype.kind != "f":
        return None
    return out if all(np.asarray(x).dtype == out.dtype for x in operands) else None


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _via_f64(fn: Callable) -> Callable:
    return lambda x: np.asarray(fn(np.asarray(x, np.float64)), np.float64)


def _rsqrt(x: Any, out: np.ndarray | None = None) -> Any:
    if out is None:
        return 1.0 / np.sqrt(x)
    np.sqrt(x, out=out)
    return np.divide(1.0, out, out=out)


def _sign(x: Any) -> Any:
    """torch.sign: -1, 0 or 1, and 0 for NaN."""
    out = np.sign(x)
    return np.where(np.isnan(out), 0, out) if out.dtype.kind == "f" else out


def _sigmoid(x: Any, out: np.ndarray | None = None) -> Any:
    if out is None:
        return 1.0 / (1.0 + np.exp(-x))
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(1.0, out, out=out)
    return np.divide(1.0, out, out=out)


_UNARY: dict[str, tuple[Callable, str]] = {
    # opcode: (numpy function, output kind: "same" | "bool" | "float")
    "NEG": (np.negative, "same"), "ABS": (np.abs, "same"), "EXP": (np.exp, "float"),
    "EXP2": (np.exp2, "float"), "EXPM1": (np.expm1, "float"), "LOG": (np.log, "float"),
    "LOG1P": (np.log1p, "float"), "LOG2": (np.log2, "float"), "LOG10": (np.log10, "float"),
    "SQRT": (np.sqrt, "float"), "RSQRT": (_rsqrt, "float"),
    "RECIPROCAL": (np.reciprocal, "float"), "CEIL": (np.ceil, "same"),
    "FLOOR": (np.floor, "same"), "TRUNC": (np.trunc, "same"), "SIGN": (_sign, "same"),
    "SIGNBIT": (np.signbit, "bool"), "RELU": (lambda x: np.maximum(x, 0), "same"),
    "SIGMOID": (_sigmoid, "float"), "TANH": (np.tanh, "float"),
    "ERF": (_via_f64(_erf), "float"), "ERFC": (_via_f64(_erfc), "float"),
    "SIN": (np.sin, "float"), "COS": (np.cos, "float"), "TAN": (np.tan, "float"),
    "SINH": (np.sinh, "float"), "COSH": (np.cosh, "float"), "ASIN": (np.arcsin, "float"),
    "ACOS": (np.arccos, "float"), "ATAN": (np.arctan, "float"), "ASINH": (np.arcsinh, "float"),
    "ACOSH": (np.arccosh, "float"), "ATANH": (np.arctanh, "float"), "CBRT": (np.cbrt, "float"),
    "LOGICAL_NOT": (np.logical_not, "bool"), "ISFINITE": (np.isfinite, "bool"),
    "ISNAN": (np.isnan, "bool"), "BITWISE_NOT": (np.invert, "same"),
}


def _register_unary(opcode: str, fn: Callable, accepts_out: bool) -> None:
    def compute(xs: list, at: dict) -> Any:
        with np.errstate(all="ignore"):
            if accepts_out:
                return fn(xs[0], out=out_for(at, xs[0]))
            return fn(xs[0])
    register(opcode, accepts_out=accepts_out)(compute)


for _code, (_fn, _kind) in _UNARY.items():
    # ufuncs take out=, and so do the two compositions written for it
    _register_unary(_code, _fn, _kind != "bool" and (isinstance(_fn, np.ufunc)
                                                      or _fn in (_rsqrt, _sigmoid)))

# The unary opcodes, for `elementwise.POINTWISE` (every one is pointwise).
UNARY_OPCODES = frozenset(_UNARY)


def _unary(op: str, opcode: str, input: Any) -> Tensor:
    v = value_of(input, op)
    kind = _UNARY[opcode][1]
    if kind == "float" and not is_float(v.dtype):
        raise PyptoTypeError(f"{op} needs a floating-point tensor, got {v.dtype.name}; "
                             f"cast it first")
    out = DataType.DT_BOOL if kind == "bool" else v.dtype
    return emit1(opcode, [v], v.shape, out, v.valid_shape, op=op)


def _make_unary(op: str, opcode: str) -> Callable[..., Tensor]:
    def fn(input: Any, precision_type: Any = None) -> Tensor:
        return _unary(op, opcode, input)
    fn.__name__ = op
    fn.__qualname__ = op
    fn.__doc__ = f"Elementwise {op} (numpy `{getattr(_UNARY[opcode][0], '__name__', op)}`)."
    return fn


neg = _make_unary("neg", "NEG")
abs = _make_unary("abs", "ABS")
exp = _make_unary("exp", "EXP")
exp2 = _make_unary("exp2", "EXP2")
expm1 = _make_unary("expm1", "EXPM1")
log = _make_unary("log", "LOG")
log1p = _make_unary("log1p", "LOG1P")
log2 = _make_unary("log2", "LOG2")
log10 = _make_unary("log10", "LOG10")
sqrt = _make_unary("sqrt", "SQRT")
rsqrt = _make_unary("rsqrt", "RSQRT")
reciprocal = _make_unary("reciprocal", "RECIPROCAL")
ceil = _make_unary("ceil", "CEIL")
floor = _make_unary("floor", "FLOOR")
trunc = _make_unary("trunc", "TRUNC")
sign = _make_unary("sign", "SIGN")
signbit = _make_unary("signbit", "SIGNBIT")
relu = _make_unary("relu", "RELU")
sigmoid = _make_unary("sigmoid", "SIGMOID")
tanh = _make_unary("tanh", "TANH")
erf = _make_unary("erf", "ERF")
erfc = _make_unary("erfc", "ERFC")
sin = _make_unary("sin", "SIN")
cos = _make_unary("cos", "COS")
tan = _make_unary("tan", "TAN")
sinh = _make_unary("sinh", "SINH")
cosh = _make_unary("cosh", "COSH")
asin = _make_unary("asin", "ASIN")
acos = _make_unary("acos", "ACOS")
atan = _make_unary("atan", "ATAN")
asinh = _make_unary("asinh", "ASINH")
acosh = _make_unary("acosh", "ACOSH")
atanh = _make_unary("atanh", "ATANH")
cbrt = _make_unary("cbrt", "CBRT")
logical_not = _make_unary("logical_not", "LOGICAL_NOT")
isfinite = _make_unary("isfinite", "ISFINITE")
isnan = _make_unary("isnan", "ISNAN")
bitwise_not = _make_unary("bitwise_not", "BITWISE_NOT")


@register("ROUND")
def _round_compute(xs: list, at: dict) -> Any:
    return np.round(xs[0], at["decimals"])


def round(input: Any, decimals: int = 0) -> Tensor:
    """Round half to even, to `decimals` places."""
    v = value_of(input, "round")
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise PyptoTypeError(f"round: decimals must be an int, got {decimals!r}")
    return emit1("ROUND", [v], v.shape, v.dtype, v.valid_shape, {"decimals": decimals},
                 op="round")


@register("LRELU")
def _lrelu_compute(xs: list, at: dict) -> Any:
    x = xs[0]
    return np.where(x >= 0, x, x * np.asarray(at["slope"], x.dtype))


def lrelu(input: Any, negative_slope: float = 0.01) -> Tensor:
    """x where x >= 0, else negative_slope * x."""
    v = value_of(input, "lrelu")
    if isinstance(negative_slope, bool) or not isinstance(negative_slope, (int, float)):
        raise PyptoTypeError(f"lrelu: negative_slope must be a number, got {negative_slope!r}")
    return emit1("LRELU", [v], v.shape, v.dtype, v.valid_shape, {"slope": negative_slope},
                 op="lrelu")
