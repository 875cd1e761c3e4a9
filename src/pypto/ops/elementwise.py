"""Elementwise ops with two operands: arithmetic (incl. ceil_div and the in-place axpy_),
comparisons, logical and bitwise ops, prelu. One-input math and activations are `unary`, typed
scalars `scalars`, where and clip `selection`.

Shape: numpy broadcasting with ranks aligned from the right; operands of one shape may carry
different valid extents, and the result is computed on (and valid over) the smallest. Dtype: two
tensor operands must have the same dtype; a Python scalar becomes an Element of the tensor's
dtype (rounded to it; a float scalar needs a float tensor, an int one must fit an int tensor);
comparisons give DT_BOOL. BF16/FP16 inputs are computed in FP32 and rounded once.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pypto.dtypes import DataType, is_float, is_int
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import Tensor
from pypto.ops.core import (broadcast_shapes, broadcast_valid, crop_inputs, emit1, emit_write,
                            register, value_of)
from pypto.ops.scalars import as_element, scalar_attr
from pypto.ops.unary import UNARY_OPCODES, exp, out_for
from pypto.symbolic import Const


def _binary(op: str, opcode: str, a: Any, b: Any, *, bool_out: bool = False,
            attrs: dict | None = None) -> Tensor:
    """Record a binary op with at least one tensor operand. A scalar operand becomes the
    `scalar` attribute of the `<OPCODE>S` form (`reverse=True` when it is the left operand)."""
    if not isinstance(a, Tensor) and isinstance(b, Tensor):
        va = value_of(b, op)
        out_dtype = DataType.DT_BOOL if bool_out else va.dtype
        extra = dict(attrs or {}, scalar=scalar_attr(op, va, a), reverse=True, dtype=va.dtype)
        return emit1(opcode + "S", [va], va.shape, out_dtype, va.valid_shape, extra, op=op)
    va = value_of(a, op, "input")
    if isinstance(b, Tensor):
        vb = b.value
        if va.dtype != vb.dtype:
            raise PyptoTypeError(f"{op}: operands have different dtypes ({va.dtype.name} and "
                                 f"{vb.dtype.name}); cast one of them with pypto.cast")
        shape = broadcast_shapes(op, va.shape, vb.shape)
        out_dtype = DataType.DT_BOOL if bool_out else va.dtype
        return emit1(opcode, [va, vb], shape, out_dtype, broadcast_valid([va, vb], shape),
                     attrs, tile_rank=len(shape), op=op)
    out_dtype = DataType.DT_BOOL if bool_out else va.dtype
    extra = dict(attrs or {}, scalar=scalar_attr(op, va, b), reverse=False, dtype=va.dtype)
    if opcode in _INT_DIVISIONS and is_int(va.dtype) and type(extra["scalar"]) is int \
            and extra["scalar"] == 0:
        raise PyptoValueError(f"{op}: integer division by zero (the scalar divisor is 0)")
    return emit1(opcode + "S", [va], va.shape, out_dtype, va.valid_shape, extra, op=op)


def _register_binary(opcode: str, fn: Callable[..., Any], widen: bool = True,
                     accepts_out: bool = False) -> None:
    """Register `opcode` (tensor op tensor) and `opcode`S (tensor op scalar / scalar op tensor).
    An `alpha` attribute (add/sub) scales the right-hand operand in the same rounding step.
    With `accepts_out`, `fn` takes an `out=` keyword like a numpy ufunc."""
    check = _OPERAND_CHECKS.get(opcode)

    def tensor_form(xs: list, at: dict) -> Any:
        x, y = xs
        alpha = at.get("alpha", 1)
        y = y if alpha == 1 else y * np.asarray(alpha, y.dtype)
        if check is not None:
            check(opcode, x, y, at)
        if accepts_out:
            return fn(x, y, out=out_for(at, x, y))
        return fn(x, y)

    def scalar_form(xs: list, at: dict) -> Any:
        s, x = at["scalar"], xs[0]
        alpha = at.get("alpha", 1)
        s_arr = as_element(s, at["dtype"], x.dtype)
        if at["reverse"]:
            a, b = s_arr, x if alpha == 1 else x * np.asarray(alpha, x.dtype)
        else:
            a, b = x, s_arr if alpha == 1 else s_arr * np.asarray(alpha, x.dtype)
        if check is not None:
            check(opcode, a, b, at)
        if accepts_out:
            return fn(a, b, out=out_for(at, a, b))
        return fn(a, b)

    register(opcode, widen=widen, crop=True, accepts_out=accepts_out)(tensor_form)
    register(opcode + "S", widen=widen, accepts_out=accepts_out)(scalar_form)


# Integer division and remainder: a zero divisor raises (as torch does), where numpy would give
# 0 (floor_divide, mod, fmod) or FP32 inf truncated to garbage (div). Floats stay IEEE.
_INT_DIVISIONS = {"DIV": "div", "FLOOR_DIV": "floor_div", "FMOD": "fmod",
                  "REMAINDER": "remainder"}


def _no_int_zero_divisor(opcode: str, x: Any, y: Any, at: dict) -> None:
    y, x = np.asarray(y), np.asarray(x)
    if y.dtype.kind not in "iu" or x.dtype.kind not in "iu" or y.all() or x.size == 0:
        return
    raise PyptoRuntimeError(f"{_INT_DIVISIONS[opcode]}: integer division by zero (the divisor "
                            f"{'is 0' if y.ndim == 0 else 'holds 0'}); integers have no inf or nan "
                            f"(only float division gives them)", at.get("_loc"))


def _no_int_negative_power(opcode: str, x: Any, y: Any, at: dict) -> None:
    """An integer base to a negative integer power has no integer result (torch raises)."""
    y, x = np.asarray(y), np.asarray(x)
    if y.dtype.kind != "i" or x.dtype.kind not in "iu" or x.size == 0 or not (y < 0).any():
        return
    raise PyptoRuntimeError(f"pow: an integer tensor raised to a negative power (the exponent "
                            f"holds {int(y.min())}); cast the base to a float type first",
                            at.get("_loc"))


_OPERAND_CHECKS = {**{code: _no_int_zero_divisor for code in _INT_DIVISIONS},
                   "POW": _no_int_negative_power}


def _int_safe_div(x: Any, y: Any, out: np.ndarray | None = None) -> Any:
    if np.issubdtype(np.asarray(x).dtype, np.integer):
        # NOTE: integer division is computed in FP32 and truncated, as the vector unit does.
        return (np.asarray(x, np.float32) / np.asarray(y, np.float32))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(x, y, out=out)


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
# ops whose function takes out= (numpy ufuncs, or _int_safe_div): see ops/core.py
_BINARY_OUT = frozenset({"ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM"})
for _code, _fn in _BINARY.items():
    _register_binary(_code, _fn, accepts_out=_code in _BINARY_OUT)

# Opcodes whose every output element depends only on the input elements at the same index
# (broadcast extent-1 dims aside): the tile executor may run many tiles of them as one call.
POINTWISE = UNARY_OPCODES | frozenset(_BINARY) | frozenset(c + "S" for c in _BINARY)


def _alpha(op: str, alpha: Any, *operands: Any) -> dict:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise PyptoTypeError(f"{op}: alpha must be an int or float, got {alpha!r}")
    for t in operands:
        if isinstance(t, Tensor) and isinstance(alpha, float) and not is_float(t.dtype):
            raise PyptoTypeError(f"{op}: a float alpha ({alpha}) cannot scale a "
                                 f"{t.dtype.name} tensor")
    return {} if alpha == 1 else {"alpha": alpha}


def add(input: Any, other: Any, *, alpha: int | float = 1) -> Tensor:
    """input + alpha * other, with broadcasting, rounded once (`alpha` is the 0.2.0 keyword)."""
    return _binary("add", "ADD", input, other, attrs=_alpha("add", alpha, input, other))


def sub(input: Any, other: Any, *, alpha: int | float = 1) -> Tensor:
    """input - alpha * other, with broadcasting, rounded once (`alpha` is the 0.2.0 keyword)."""
    return _binary("sub", "SUB", input, other, attrs=_alpha("sub", alpha, input, other))


# --------------------------------------------------------------------------------------------
# ceil_div and axpy_

_CEIL_DIV_DTYPES = (DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32)
_CEIL_DIV_LIMIT = 1 << 24


def _ceil_div_exact(op: str, x: Any, y: Any, loc: Any) -> np.ndarray:
    """ceil(x / y) of integer arrays, after checking the contract's value range and y != 0."""
    x64, y64 = np.asarray(x, np.int64), np.asarray(y, np.int64)
    for what, a in (("self", x64), ("other", y64)):
        if a.size and int(np.max(np.abs(a))) > _CEIL_DIV_LIMIT:
            bad = int(a.flat[int(np.argmax(np.abs(a)))])
            raise PyptoRuntimeError(f"{op}: {what} holds {bad}, outside [-2^24, 2^24] (values "
                                    f"must convert to FP32 exactly)", loc)
    if y64.size and not np.all(y64):
        raise PyptoRuntimeError(f"{op}: other holds 0 (division by zero)", loc)
    return -((-x64) // y64)


@register("CEIL_DIV", crop=True)
def _ceil_div_compute(xs: list, at: dict) -> np.ndarray:
    return _ceil_div_exact("ceil_div", xs[0], xs[1], at.get("_loc"))


@register("CEIL_DIVS")
def _ceil_div_scalar_compute(xs: list, at: dict) -> np.ndarray:
    return _ceil_div_exact("ceil_div", xs[0], at["scalar"], at.get("_loc"))


def ceil_div(self: Any, other: Any) -> Tensor:
    """ceil(self / other) of integer tensors, elementwise with broadcasting (`other` may also be
    a Python int). Both tensors must have the same dtype, DT_INT8, DT_INT16 or DT_INT32; the
    result has that dtype. As on the NPU, where the quotient is computed in FP32, every value of
    both operands must lie in [-2^24, 2^24] and `other` must not be 0: a value outside that
    range or a zero divisor raises `PyptoRuntimeError` when the kernel runs (a scalar `other`
    is checked while tracing). Within the range the result is the exact integer ceiling."""
    op = "ceil_div"
    v = value_of(self, op, "self")
    if v.dtype not in _CEIL_DIV_DTYPES:
        raise PyptoTypeError(f"{op}: self must be a DT_INT8, DT_INT16 or DT_INT32 tensor, got "
                             f"{v.dtype.name}")
    if not isinstance(other, Tensor):
        if isinstance(other, bool) or not isinstance(other, int):
            raise PyptoTypeError(f"{op}: other must be a Tensor or an int, got "
                                 f"{type(other).__name__}")
        if other == 0:
            raise PyptoValueError(f"{op}: other is 0 (division by zero)")
        if not -_CEIL_DIV_LIMIT <= other <= _CEIL_DIV_LIMIT:
            raise PyptoValueError(f"{op}: other = {other} is outside [-2^24, 2^24]")
    return _binary(op, "CEIL_DIV", self, other)


@register("AXPY_", writes=True)
def _axpy_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    valid = [max(0, min(int(n), s)) for n, s in zip(at["valid"], dst.shape)]
    region = tuple(slice(0, n) for n in valid)
    x = crop_inputs(xs, valid)[0]
    alpha = as_element(at["alpha"], at["dtype"], np.dtype(np.float32))
    y = dst[region].astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        dst[region] = (y + np.asarray(x, np.float32) * alpha).astype(dst.dtype)


_AXPY_DTYPES = (DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16)


def axpy_(y: Any, x: Any, alpha: int | float = 1.0) -> Tensor:
    """y += alpha * x, in place: writes into `y`'s storage and returns `y`.

    `y` and `x` are DT_FP32, DT_FP16 or DT_BF16 of one dtype, or `y` DT_FP32 with `x` DT_FP16.
    They have the same rank (1 to 4); `x` broadcasts to `y` (each dim of `x` equals `y`'s or is
    1) but `y` never broadcasts. `alpha` (int or float) is first rounded to `y`'s dtype; the
    update is computed in FP32 (alpha * x, then + y) and rounded once to `y`'s dtype. Only the
    region where `y` and the non-broadcast dims of `x` are valid is updated. Earlier views of
    `y` keep their values; later reads of `y` see the update (program order)."""
    op = "axpy_"
    vy, vx = value_of(y, op, "y"), value_of(x, op, "x")
    for what, v in (("y", vy), ("x", vx)):
        if v.dtype not in _AXPY_DTYPES:
            raise PyptoTypeError(f"{op}: {what} must be DT_FP32, DT_FP16 or DT_BF16, got "
                                 f"{v.dtype.name}")
    if vx.dtype != vy.dtype and not (vy.dtype is DataType.DT_FP32
                                     and vx.dtype is DataType.DT_FP16):
        raise PyptoTypeError(f"{op}: x dtype {vx.dtype.name} cannot update a {vy.dtype.name} y "
                             f"(same dtype, or y DT_FP32 with x DT_FP16)")
    if vx.rank != vy.rank or not 1 <= vy.rank <= 4:
        raise PyptoValueError(f"{op}: y and x must have the same rank, 1 to 4 (got {vy.rank} and "
                              f"{vx.rank})")
    for d, (a, b) in enumerate(zip(vy.shape, vx.shape)):
        if b != a and b != Const(1):
            raise PyptoValueError(f"{op}: x dim {d} ({b!r}) does not broadcast to y dim {d} "
                                  f"({a!r}); y is updated in place and does not broadcast")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise PyptoTypeError(f"{op}: alpha must be an int or float, got {alpha!r}")
    valid = broadcast_valid([vy, vx], vy.shape)
    emit_write("AXPY_", vy, [vx], {"alpha": alpha, "dtype": vy.dtype, "valid": valid}, op=op)
    return y


def _int_only(op: str, t: Any) -> None:
    if isinstance(t, Tensor) and not is_int(t.dtype) and t.dtype is not DataType.DT_BOOL:
        raise PyptoTypeError(f"{op} needs an integer tensor, got {t.dtype.name}")


def _make_binary(op: str, opcode: str, doc: str, *, bool_out: bool = False,
                 int_only: bool = False) -> Callable[..., Tensor]:
    """A public binary op: tensor/tensor with broadcasting, or tensor/scalar either way."""
    def fn(input: Any, other: Any) -> Tensor:
        if int_only:
            _int_only(op, input)
        return _binary(op, opcode, input, other, bool_out=bool_out)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = doc
    return fn


def div(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """input / other. Integer tensors are divided in FP32 and truncated back."""
    return _binary("div", "DIV", input, other)


def pow(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """input ** other (elementwise, with broadcasting)."""
    base = input if isinstance(input, Tensor) else other
    if isinstance(base, Tensor) and is_int(base.dtype) and isinstance(other, int) \
            and not isinstance(other, bool) and other < 0:
        raise PyptoValueError(f"pow: an integer tensor cannot be raised to the negative power "
                              f"{other}; cast it to a float type first")
    return _binary("pow", "POW", input, other)


def fmod(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """Truncated remainder (sign of the dividend), like torch.fmod."""
    return _binary("fmod", "FMOD", input, other)


def remainder(input: Any, other: Any, precision_type: Any = None) -> Tensor:
    """a - b * floor(a / b) (sign of the divisor), like torch.remainder."""
    return _binary("remainder", "REMAINDER", input, other)


mul = _make_binary("mul", "MUL", "input * other, with broadcasting.")
floor_div = _make_binary("floor_div", "FLOOR_DIV", "floor(input / other), flooring for ints.")
maximum = _make_binary("maximum", "MAXIMUM", "Elementwise maximum (NaN propagates).")
minimum = _make_binary("minimum", "MINIMUM", "Elementwise minimum (NaN propagates).")
hypot = _make_binary("hypot", "HYPOT", "sqrt(input**2 + other**2).")
copysign = _make_binary("copysign", "COPYSIGN", "|input| with the sign of other.")
atan2 = _make_binary("atan2", "ATAN2", "atan(input / other) in the right quadrant.")
gcd = _make_binary("gcd", "GCD", "Greatest common divisor of integer tensors.")
eq = _make_binary("eq", "EQ", "input == other, as DT_BOOL.", bool_out=True)
ne = _make_binary("ne", "NE", "input != other, as DT_BOOL.", bool_out=True)
lt = _make_binary("lt", "LT", "input < other, as DT_BOOL.", bool_out=True)
le = _make_binary("le", "LE", "input <= other, as DT_BOOL.", bool_out=True)
gt = _make_binary("gt", "GT", "input > other, as DT_BOOL.", bool_out=True)
ge = _make_binary("ge", "GE", "input >= other, as DT_BOOL.", bool_out=True)
greater = gt
logical_and = _make_binary("logical_and", "LOGICAL_AND", "Both nonzero, as DT_BOOL.",
                           bool_out=True)
logical_or = _make_binary("logical_or", "LOGICAL_OR", "Either nonzero, as DT_BOOL.",
                          bool_out=True)
bitwise_and = _make_binary("bitwise_and", "BITWISE_AND", "Bitwise AND of integer tensors.",
                           int_only=True)
bitwise_or = _make_binary("bitwise_or", "BITWISE_OR", "Bitwise OR of integer tensors.",
                          int_only=True)
bitwise_xor = _make_binary("bitwise_xor", "BITWISE_XOR", "Bitwise XOR of integer tensors.",
                           int_only=True)
bitwise_left_shift = _make_binary("bitwise_left_shift", "SHL", "input << other (integers).",
                                  int_only=True)
bitwise_right_shift = _make_binary("bitwise_right_shift", "SHR", "input >> other (integers).",
                                   int_only=True)


@register("PRELU")
def _prelu_compute(xs: list, at: dict) -> Any:
    if not at["channel"]:
        x, w = crop_inputs(xs, at["_out_valid"])
        return np.where(x >= 0, x, x * w)
    x, w = xs  # a 1-D weight: one slope per channel of dim 1 (x is the output's valid region)
    w = w if w.shape[0] == 1 else w[:x.shape[1]]
    return np.where(x >= 0, x, x * w.reshape((1, w.shape[0]) + (1,) * (x.ndim - 2)))


def prelu(input: Any, weight: Any) -> Tensor:
    """x where x >= 0, else weight * x. As in torch, a 1-D weight holds one slope per channel
    (dim 1 of the input) or a single shared slope; a weight of the input's rank broadcasts."""
    v, w = value_of(input, "prelu"), value_of(weight, "prelu", "weight")
    if v.dtype != w.dtype:
        raise PyptoTypeError(f"prelu: weight dtype {w.dtype.name} != input {v.dtype.name}")
    channel = w.rank == 1 and v.rank >= 2
    if channel:
        if w.shape[0] != Const(1) and w.shape[0] != v.shape[1]:
            raise PyptoValueError(f"prelu: a 1-D weight needs 1 or {v.shape[1]!r} (dim 1 of the "
                                  f"input) slopes, got {w.shape[0]!r}")
        return emit1("PRELU", [v, w], v.shape, v.dtype, v.valid_shape, {"channel": True},
                     op="prelu")
    shape = broadcast_shapes("prelu", v.shape, w.shape)
    return emit1("PRELU", [v, w], shape, v.dtype, broadcast_valid([v, w], shape),
                 {"channel": False}, tile_rank=len(shape), op="prelu")


def expand_exp_dif(input: Any, other: Any) -> Tensor:
    """exp(input - other) with broadcasting."""
    return exp(sub(input, other))

