"""Elementwise ops: arithmetic, math, comparisons, selection, activations.

Shape: numpy broadcasting with ranks aligned from the right. Dtype: two tensor operands must
have the same dtype; a Python int scalar takes the tensor's dtype, a float scalar needs a float
tensor; comparisons give DT_BOOL. BF16/FP16 inputs are computed in FP32 and rounded once.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from pypto.dtypes import DataType, check_supported, is_float, is_int
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ir.tensor import TensorValue
from pypto.ops.core import (broadcast_shapes, broadcast_valid, emit1, register,
                            scalar_dtype_check, value_of)
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


def _scalar(op: str, t: TensorValue, s: Any) -> int | float | Expr:
    """Canonical scalar attribute: a number, or an Expr for a runtime SymbolicScalar."""
    if isinstance(s, Element):
        if s.dtype != t.dtype:
            raise PyptoTypeError(f"{op}: Element of {s.dtype.name} does not match the "
                                 f"{t.dtype.name} tensor")
        return s.value
    if isinstance(s, SymbolicScalar):
        return s.expr
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        raise PyptoTypeError(f"{op}: operand must be a Tensor, int, float or Element, "
                             f"got {type(s).__name__}")
    scalar_dtype_check(op, t, s)
    return s


def _binary(op: str, opcode: str, a: Any, b: Any, *, bool_out: bool = False,
            attrs: dict | None = None) -> Tensor:
    """Record a binary op with at least one tensor operand."""
    if not isinstance(a, Tensor) and isinstance(b, Tensor):
        va = value_of(b, op)
        out_dtype = DataType.DT_BOOL if bool_out else va.dtype
        extra = dict(attrs or {}, scalar=_scalar(op, va, a), reverse=True)
        return emit1(opcode + "S", [va], va.shape, out_dtype, va.valid_shape, extra)
    va = value_of(a, op)
    if isinstance(b, Tensor):
        vb = b.value
        if va.dtype != vb.dtype:
            raise PyptoTypeError(f"{op}: operands have different dtypes ({va.dtype.name} and "
                                 f"{vb.dtype.name}); cast one of them with pypto.cast")
        shape = broadcast_shapes(op, va.shape, vb.shape)
        out_dtype = DataType.DT_BOOL if bool_out else va.dtype
        return emit1(opcode, [va, vb], shape, out_dtype, broadcast_valid([va, vb], shape),
                     attrs, tile_rank=len(shape))
    out_dtype = DataType.DT_BOOL if bool_out else va.dtype
    extra = dict(attrs or {}, scalar=_scalar(op, va, b), reverse=False)
    return emit1(opcode + "S", [va], va.shape, out_dtype, va.valid_shape, extra)


def _register_binary(opcode: str, fn: Callable[[Any, Any], Any], widen: bool = True) -> None:
    register(opcode, widen=widen)(lambda xs, at: fn(xs[0], xs[1]))

    def scalar_form(xs: list, at: dict) -> Any:
        s = at["scalar"]
        x = xs[0]
        s_arr = np.asarray(s, dtype=x.dtype) if isinstance(s, (int, float)) else s
        return fn(s_arr, x) if at["reverse"] else fn(x, s_arr)

    register(opcode + "S", widen=widen)(scalar_form)


def _int_safe_div(x: Any, y: Any) -> Any:
    if np.issubdtype(np.asarray(x).dtype, np.integer):
        # NOTE: integer division is computed in FP32 and truncated, as the vector unit does.
        return (np.asarray(x, np.float32) / np.asarray(y, np.float32))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(x, y)


def _errstate(fn: Callable) -> Callable:
    def wrapped(*a: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*a)
    return wrapped


_BINARY = {
    "ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": _int_safe_div,
    "POW": _errstate(np.power), "FMOD": _errstate(np.fmod), "REMAINDER": _errstate(np.mod),
    "MAXIMUM": np.maximum, "MINIMUM": np.minimum, "HYPOT": np.hypot,
    "COPYSIGN": np.copysign, "ATAN2": np.arctan2,
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
    "GT": np.greater, "GE": np.greater_equal,
    "LOGICAL_AND": np.logical_and, "LOGICAL_OR": np.logical_or,
    "BITWISE_AND": np.bitwise_and, "BITWISE_OR": np.bitwise_or, "BITWISE_XOR": np.bitwise_xor,
    "SHL": np.left_shift, "SHR": np.right_shift, "GCD": np.gcd,
    "FLOOR_DIV": _errstate(np.floor_divide),
}
for _code, _fn in _BINARY.items():
    _register_binary(_code, _fn)


def _alpha_scaled(op: str, other: Any, alpha: Any) -> Any:
    if alpha == 1:
        return other
    if isinstance(other, Tensor):
        return mul(other, alpha)
    if isinstance(other, (int, float)):
        return other * alpha
    raise PyptoTypeError(f"{op}: alpha needs a tensor or number operand")


def add(input: Any, other: Any, *, alpha: int | float = 1) -> Tensor:
    """input + alpha * other, with broadcasting."""
    return _binary("add", "ADD", input, _alpha_scaled("add", other, alpha))


def sub(input: Any, other: Any, *, alpha: int | float = 1) -> Tensor:
    """input - alpha * other, with broadcasting."""
    return _binary("sub", "SUB", input, _alpha_scaled("sub", other, alpha))


def mul(input: Any, other: Any) -> Tensor:
    return _binary("mul", "MUL", input, other)


def div(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """input / other. Integer tensors are divided in FP32 and truncated back."""
    return _binary("div", "DIV", input, other)


def pow(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    return _binary("pow", "POW", input, other)


def fmod(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """Truncated remainder (sign of the dividend), like torch.fmod."""
    return _binary("fmod", "FMOD", input, other)


def remainder(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """a - b * floor(a / b) (sign of the divisor), like torch.remainder."""
    return _binary("remainder", "REMAINDER", input, other)


def floor_div(input: Any, other: Any) -> Tensor:
    return _binary("floor_div", "FLOOR_DIV", input, other)


def maximum(input: Any, other: Any) -> Tensor:
    return _binary("maximum", "MAXIMUM", input, other)


def minimum(input: Any, other: Any) -> Tensor:
    return _binary("minimum", "MINIMUM", input, other)


def hypot(input: Any, other: Any) -> Tensor:
    return _binary("hypot", "HYPOT", input, other)


def copysign(input: Any, other: Any) -> Tensor:
    return _binary("copysign", "COPYSIGN", input, other)


def atan2(input: Any, other: Any) -> Tensor:
    return _binary("atan2", "ATAN2", input, other)


def gcd(input: Any, other: Any) -> Tensor:
    return _binary("gcd", "GCD", input, other)


def eq(input: Any, other: Any) -> Tensor:
    return _binary("eq", "EQ", input, other, bool_out=True)


def ne(input: Any, other: Any) -> Tensor:
    return _binary("ne", "NE", input, other, bool_out=True)


def lt(input: Any, other: Any) -> Tensor:
    return _binary("lt", "LT", input, other, bool_out=True)


def le(input: Any, other: Any) -> Tensor:
    return _binary("le", "LE", input, other, bool_out=True)


def gt(input: Any, other: Any) -> Tensor:
    return _binary("gt", "GT", input, other, bool_out=True)


def ge(input: Any, other: Any) -> Tensor:
    return _binary("ge", "GE", input, other, bool_out=True)


greater = gt


def logical_and(input: Any, other: Any) -> Tensor:
    return _binary("logical_and", "LOGICAL_AND", input, other, bool_out=True)


def logical_or(input: Any, other: Any) -> Tensor:
    return _binary("logical_or", "LOGICAL_OR", input, other, bool_out=True)


def _int_only(op: str, t: Any) -> None:
    if isinstance(t, Tensor) and not is_int(t.dtype) and t.dtype is not DataType.DT_BOOL:
        raise PyptoTypeError(f"{op} needs an integer tensor, got {t.dtype.name}")


def bitwise_and(input: Any, other: Any) -> Tensor:
    _int_only("bitwise_and", input)
    return _binary("bitwise_and", "BITWISE_AND", input, other)


def bitwise_or(input: Any, other: Any) -> Tensor:
    _int_only("bitwise_or", input)
    return _binary("bitwise_or", "BITWISE_OR", input, other)


def bitwise_xor(input: Any, other: Any) -> Tensor:
    _int_only("bitwise_xor", input)
    return _binary("bitwise_xor", "BITWISE_XOR", input, other)


def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    _int_only("bitwise_left_shift", input)
    return _binary("bitwise_left_shift", "SHL", input, other)


def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    _int_only("bitwise_right_shift", input)
    return _binary("bitwise_right_shift", "SHR", input, other)


# --------------------------------------------------------------------------------------------
# Unary ops

_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _via_f64(fn: Callable) -> Callable:
    return lambda x: np.asarray(fn(np.asarray(x, np.float64)), np.float64)


def _rsqrt(x: Any) -> Any:
    return 1.0 / np.sqrt(x)


def _sigmoid(x: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-x))


_UNARY: dict[str, tuple[Callable, str]] = {
    # opcode: (numpy function, output kind: "same" | "bool" | "float")
    "NEG": (np.negative, "same"), "ABS": (np.abs, "same"), "EXP": (np.exp, "float"),
    "EXP2": (np.exp2, "float"), "EXPM1": (np.expm1, "float"), "LOG": (np.log, "float"),
    "LOG1P": (np.log1p, "float"), "LOG2": (np.log2, "float"), "LOG10": (np.log10, "float"),
    "SQRT": (np.sqrt, "float"), "RSQRT": (_rsqrt, "float"),
    "RECIPROCAL": (np.reciprocal, "float"), "CEIL": (np.ceil, "same"),
    "FLOOR": (np.floor, "same"), "TRUNC": (np.trunc, "same"), "SIGN": (np.sign, "same"),
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


def _register_unary(opcode: str, fn: Callable) -> None:
    def compute(xs: list, at: dict) -> Any:
        with np.errstate(all="ignore"):
            return fn(xs[0])
    register(opcode)(compute)


for _code, (_fn, _kind) in _UNARY.items():
    _register_unary(_code, _fn)


def _unary(op: str, opcode: str, input: Any) -> Tensor:
    v = value_of(input, op)
    kind = _UNARY[opcode][1]
    if kind == "float" and not is_float(v.dtype):
        raise PyptoTypeError(f"{op} needs a floating-point tensor, got {v.dtype.name}; "
                             f"cast it first")
    out = DataType.DT_BOOL if kind == "bool" else v.dtype
    return emit1(opcode, [v], v.shape, out, v.valid_shape)


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
    return emit1("ROUND", [v], v.shape, v.dtype, v.valid_shape, {"decimals": decimals})


@register("LRELU")
def _lrelu_compute(xs: list, at: dict) -> Any:
    x = xs[0]
    return np.where(x >= 0, x, x * np.asarray(at["slope"], x.dtype))


def lrelu(input: Any, negative_slope: float = 0.01) -> Tensor:
    v = value_of(input, "lrelu")
    return emit1("LRELU", [v], v.shape, v.dtype, v.valid_shape, {"slope": negative_slope})


@register("PRELU")
def _prelu_compute(xs: list, at: dict) -> Any:
    x, w = xs
    return np.where(x >= 0, x, x * w)


def prelu(input: Any, weight: Any) -> Tensor:
    v, w = value_of(input, "prelu"), value_of(weight, "prelu", "weight")
    if v.dtype != w.dtype:
        raise PyptoTypeError(f"prelu: weight dtype {w.dtype.name} != input {v.dtype.name}")
    shape = broadcast_shapes("prelu", v.shape, w.shape)
    return emit1("PRELU", [v, w], shape, v.dtype, broadcast_valid([v, w], shape))


# --------------------------------------------------------------------------------------------
# Selection

def _operand_value(op: str, x: Any, like: DataType | None) -> tuple[TensorValue | None, Any]:
    if isinstance(x, Tensor):
        return x.value, None
    if isinstance(x, Element):
        return None, x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PyptoTypeError(f"{op}: operand must be a Tensor, float or Element, got {x!r}")
    return None, Element(DataType.DT_FP32, float(x))


@register("WHERE", full_inputs=False)
def _where_compute(xs: list, at: dict) -> Any:
    it = iter(xs)
    cond = next(it)
    a = next(it) if at["a"] is None else np.asarray(at["a"], np.float32)
    b = next(it) if at["b"] is None else np.asarray(at["b"], np.float32)
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
                 tile_rank=len(shape))


@register("CLIP")
def _clip_compute(xs: list, at: dict) -> Any:
    x = xs[0]
    rest = iter(xs[1:])
    lo = next(rest) if at["lo_tensor"] else at["lo"]
    hi = next(rest) if at["hi_tensor"] else at["hi"]
    if lo is not None:
        x = np.maximum(x, np.asarray(lo, x.dtype))
    if hi is not None:
        x = np.minimum(x, np.asarray(hi, x.dtype))
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
                             "hi_tensor": isinstance(max, Tensor), "lo": None, "hi": None}
    vals = [v]
    for key, b in (("lo", min), ("hi", max)):
        if isinstance(b, Tensor):
            if b.dtype != v.dtype:
                raise PyptoTypeError(f"clip: bound dtype {b.dtype.name} != {v.dtype.name}")
            vals.append(b.value)
        elif b is not None:
            attrs[key] = _scalar("clip", v, b)
    shape = broadcast_shapes("clip", *(x.shape for x in vals))
    return emit1("CLIP", vals, shape, v.dtype, broadcast_valid(vals, shape), attrs,
                 tile_rank=len(shape))


def expand_exp_dif(input: Any, other: Any) -> Tensor:
    """exp(input - other) with broadcasting."""
    return exp(sub(input, other))

