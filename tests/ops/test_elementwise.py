"""Elementwise ops against torch: binary (tensor-tensor, tensor-scalar, reflected scalar-tensor),
unary math, activations, selection, comparisons and logical ops, with broadcasting, low-precision
rounding (compute in FP32, round once) and tail tiles of a dynamic dim."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import pypto
from _opkit import FLOATS, check, golden_fp32, kernel, rand, run

SHAPE = (8, 64)

# --------------------------------------------------------------------------------------------
# Binary ops: name -> (pypto op, torch golden, (lo, hi) of a, (lo, hi) of |b| or None)

POS = (0.5, 2.0)
BINARY = {
    "add": (pypto.add, torch.add, None, None),
    "sub": (pypto.sub, torch.sub, None, None),
    "mul": (pypto.mul, torch.mul, None, None),
    "div": (pypto.div, torch.div, None, POS),
    "pow": (pypto.pow, torch.pow, POS, None),
    "fmod": (pypto.fmod, torch.fmod, (-5.0, 5.0), POS),
    "remainder": (pypto.remainder, torch.remainder, (-5.0, 5.0), POS),
    "floor_div": (pypto.floor_div, torch.floor_divide, (-5.0, 5.0), POS),
    "maximum": (pypto.maximum, torch.maximum, None, None),
    "minimum": (pypto.minimum, torch.minimum, None, None),
    "hypot": (pypto.hypot, torch.hypot, None, None),
    "copysign": (pypto.copysign, torch.copysign, None, None),
    "atan2": (pypto.atan2, torch.atan2, None, None),
}
COMPARE = {"eq": (pypto.eq, torch.eq), "ne": (pypto.ne, torch.ne), "lt": (pypto.lt, torch.lt),
           "le": (pypto.le, torch.le), "gt": (pypto.gt, torch.gt), "ge": (pypto.ge, torch.ge),
           "greater": (pypto.greater, torch.gt)}


def _operands(name: str, dtype: torch.dtype, shape_a=SHAPE, shape_b=SHAPE):
    _, _, ra, rb = BINARY[name]
    a = rand(shape_a, dtype, *(ra or (-2.0, 2.0)), seed=1)
    if rb is None:
        b = rand(shape_b, dtype, seed=2)
    else:  # |b| in rb with a random sign: no division by (near) zero
        sign = torch.where(rand(shape_b, torch.float32, seed=3) > 0, 1.0, -1.0)
        b = (rand(shape_b, torch.float32, *rb, seed=2) * sign).to(dtype)
    return a, b


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_tensor_tensor(name, dtype):
    """Every binary op on two same-shape tensors equals torch computing in FP32, rounded once."""
    op, ref, _, _ = BINARY[name]
    a, b = _operands(name, dtype)
    check(run(op, a, b), golden_fp32(ref, a, b))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(name, dtype):
    """Binary ops broadcast numpy-style, ranks aligned from the right: [32,128] op [128] and
    [4,1,64] op [1,8,64]."""
    op, ref, _, _ = BINARY[name]
    a, b = _operands(name, dtype, (32, 128), (128,))
    check(run(op, a, b), golden_fp32(ref, a, b))
    a, b = _operands(name, dtype, (4, 1, 64), (1, 8, 64))
    check(run(op, a, b), golden_fp32(ref, a, b))


SCALAR_CASES = [  # (label, pypto form of (x, s), torch form of (x, s), s)
    ("x + s", lambda x, s: x + s, lambda x, s: x + s, 0.1),
    ("x + int", lambda x, s: x + s, lambda x, s: x + s, 2),
    ("x - s", lambda x, s: x - s, lambda x, s: x - s, 1 / 3),
    ("x * s", lambda x, s: x * s, lambda x, s: x * s, 0.3),
    ("x / s", lambda x, s: x / s, lambda x, s: x / s, 3.0),
    ("s + x", lambda x, s: s + x, lambda x, s: s + x, 3),
    ("s - x", lambda x, s: s - x, lambda x, s: s - x, 2),
    ("s * x", lambda x, s: s * x, lambda x, s: s * x, 0.7),
    ("1 / x", lambda x, s: s / x, lambda x, s: s / x, 1),
    ("s / x", lambda x, s: s / x, lambda x, s: s / x, 0.1),
    ("x ** 2", lambda x, s: x ** s, lambda x, s: x ** s, 2),
    ("pow(x, s)", lambda x, s: pypto.pow(x, s), lambda x, s: torch.pow(x, s), 0.5),
    ("-x", lambda x, s: -x, lambda x, s: -x, 0),
    ("+x", lambda x, s: +x * 1, lambda x, s: x, 0),
    ("x % s", lambda x, s: x % s, lambda x, s: torch.remainder(x, s), 0.75),
    ("fmod(x, s)", lambda x, s: pypto.fmod(x, s), lambda x, s: torch.fmod(x, s), 0.3),
    ("maximum(x, s)", lambda x, s: pypto.maximum(x, s), lambda x, s: x.clamp(min=s), 1.1),
    ("minimum(s, x)", lambda x, s: pypto.minimum(s, x), lambda x, s: x.clamp(max=s), 1),
    ("x.sub(s)", lambda x, s: x.sub(s), lambda x, s: x - s, 1.5),
    ("div(s, x)", lambda x, s: pypto.div(s, x), lambda x, s: s / x, 2.0),
    ("x > s", lambda x, s: x > s, lambda x, s: x > s, 0.1),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_binary_scalar_forms(case, dtype):
    """Tensor-scalar and reflected scalar-tensor forms (`2 - x`, `1 / x`, `3 + x`, `x ** 2`).
    Contract (api_surface §4): a Python scalar is an Element of the tensor's dtype, so it is
    rounded to that dtype first (torch does so for add/sub but keeps FP32 for mul/div)."""
    _, fn, ref, s = case
    x = rand(SHAPE, dtype, 0.5, 3.0, seed=4)
    x[0, :4] = torch.tensor([0.1, 1 / 3, 0.3, 1.1]).to(dtype)  # equal to some scalars
    s_typed = float(torch.tensor(s).to(dtype))
    golden = golden_fp32(lambda t: ref(t, s_typed), x)
    out = run(lambda t: fn(t, s), x, out_dtype=golden.dtype)
    check(out, golden, dtype=dtype)


def test_scalar_is_rounded_to_the_tensor_dtype():
    """`x == 0.1` on an FP16 tensor holding fp16(0.1) is true: the scalar becomes
    Element(DT_FP16, 0.1); an INT32 scalar outside the tensor's int range is a ValueError."""
    x = torch.full((4, 64), 0.1, dtype=torch.float16)
    assert run(lambda t: t == 0.1, x, out_dtype=torch.bool).all()
    assert not run(lambda t: t > 0.1, x, out_dtype=torch.bool).any()
    with pytest.raises(pypto.errors.PyptoValueError, match=r"add: the scalar 300 does not fit"):
        run(lambda t: t + 300, torch.zeros(4, 64, dtype=torch.int8))


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_sub_alpha(dtype):
    """`add(a, b, alpha=)` is a + alpha*b and `sub(a, b, alpha=)` is a - alpha*b, rounded once
    (0.2.0 keyword); the scalar-other and reflected forms scale the *other* operand."""
    a, b = rand(SHAPE, dtype, seed=5), rand(SHAPE, dtype, seed=6)
    check(run(lambda x, y: pypto.add(x, y, alpha=-3), a, b),
          golden_fp32(lambda x, y: torch.add(x, y, alpha=-3), a, b))
    check(run(lambda x, y: pypto.sub(x, y, alpha=0.3), a, b),
          golden_fp32(lambda x, y: torch.sub(x, y, alpha=0.3), a, b))
    check(run(lambda x: pypto.add(x, 1.5, alpha=2), a), golden_fp32(lambda x: x + 3.0, a))
    check(run(lambda x: pypto.sub(2.0, x, alpha=3), a), golden_fp32(lambda x: 2.0 - 3 * x, a))


INT_BINARY = [
    ("add", pypto.add, torch.add), ("sub", pypto.sub, torch.sub), ("mul", pypto.mul, torch.mul),
    ("maximum", pypto.maximum, torch.maximum), ("minimum", pypto.minimum, torch.minimum),
    ("remainder", pypto.remainder, torch.remainder), ("fmod", pypto.fmod, torch.fmod),
    ("floor_div", pypto.floor_div, torch.floor_divide),
    ("bitwise_and", pypto.bitwise_and, torch.bitwise_and),
    ("bitwise_or", pypto.bitwise_or, torch.bitwise_or),
    ("bitwise_xor", pypto.bitwise_xor, torch.bitwise_xor),
    ("gcd", pypto.gcd, torch.gcd),
]


@pytest.mark.parametrize("name,op,ref", INT_BINARY, ids=[c[0] for c in INT_BINARY])
def test_int32_binary(name, op, ref):
    """INT32 binary ops are exact and match torch (divisors kept non-zero)."""
    a = rand(SHAPE, torch.int32, -50, 50, seed=7)
    b = rand(SHAPE, torch.int32, 1, 9, seed=8) * torch.where(a % 2 == 0, 1, -1).int()
    check(run(op, a, b), ref(a, b))
    check(run(lambda x: op(x, 3), a), ref(a, torch.tensor(3, dtype=torch.int32)))


def test_int32_shifts_and_not():
    """bitwise shifts take a tensor or an int shift; bitwise_not is ~x."""
    a = rand(SHAPE, torch.int32, -1000, 1000, seed=9)
    s = rand(SHAPE, torch.int32, 0, 8, seed=10)
    check(run(pypto.bitwise_left_shift, a, s), torch.bitwise_left_shift(a, s))
    check(run(pypto.bitwise_right_shift, a, s), torch.bitwise_right_shift(a, s))
    check(run(lambda x: pypto.bitwise_left_shift(x, 3), a), a << 3)
    check(run(pypto.bitwise_not, a), ~a)


def test_int32_div_truncates():
    """Contract (api_surface §4.2): INT32 `div` is computed in FP32 and converted back to INT32,
    which truncates toward zero (torch `/` would give a float tensor instead)."""
    a = rand(SHAPE, torch.int32, -100, 100, seed=11)
    b = rand(SHAPE, torch.int32, 1, 7, seed=12)
    check(run(pypto.div, a, b), torch.div(a, b, rounding_mode="trunc").int())
    check(run(lambda x: x / 4, a), torch.div(a, 4, rounding_mode="trunc").int())


@pytest.mark.parametrize("dtype", FLOATS)
def test_floordiv_operator_is_floor_of_div(dtype):
    """Contract (api_surface §3): `a // b` is floor(div(a, b)) for float tensors: floor of the
    rounded quotient (torch.floor_divide differs only when the quotient rounds onto an int)."""
    a, b = _operands("floor_div", dtype)
    quotient = golden_fp32(torch.div, a, b)  # div rounds to the dtype, then floor
    check(run(lambda x, y: x // y, a, b), golden_fp32(torch.floor, quotient))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons_give_bool(name, dtype):
    """eq/ne/lt/le/gt/ge (and the operators) return DT_BOOL, with broadcasting and scalars."""
    op, ref = COMPARE[name]
    a = rand((16, 64), dtype, -3, 3, seed=13)
    b = a.clone()
    b[::2] = rand((8, 64), dtype, -3, 3, seed=14)  # half the rows equal, half random
    check(run(op, a, b, out_dtype=torch.bool), ref(a, b))
    row = b[3]
    check(run(op, a, row, out_dtype=torch.bool), ref(a, row))
    check(run(lambda x: op(x, 1), a, out_dtype=torch.bool), ref(a, 1))


def test_comparison_operators():
    """`< <= > >= == !=` on tensors map to lt/le/gt/ge/eq/ne with BOOL output."""
    a, b = rand(SHAPE, seed=15), rand(SHAPE, seed=16)
    b[0] = a[0]
    for fn in (lambda x, y: x < y, lambda x, y: x <= y, lambda x, y: x > y,
               lambda x, y: x >= y, lambda x, y: x == y, lambda x, y: x != y):
        check(run(fn, a, b, out_dtype=torch.bool), fn(a, b))


def test_logical_ops():
    """logical_and/or/not give BOOL; a non-zero float counts as True."""
    a = (rand(SHAPE, seed=17) > 0)
    b = (rand(SHAPE, seed=18) > 0)
    check(run(pypto.logical_and, a, b), torch.logical_and(a, b))
    check(run(pypto.logical_or, a, b), torch.logical_or(a, b))
    check(run(pypto.logical_not, a), torch.logical_not(a))
    x = rand(SHAPE, seed=19).round()
    check(run(pypto.logical_not, x, out_dtype=torch.bool), torch.logical_not(x))
    check(run(lambda u, v: pypto.logical_and(u, v), x, x.flip(0), out_dtype=torch.bool),
          torch.logical_and(x, x.flip(0)))


# --------------------------------------------------------------------------------------------
# Unary ops: opcode -> (pypto fn, torch golden, (lo, hi) input range)

def _cbrt(x):
    return torch.sign(x) * x.abs().pow(1.0 / 3.0)


UNARY = {
    "NEG": (pypto.neg, torch.neg, None), "ABS": (pypto.abs, torch.abs, None),
    "EXP": (pypto.exp, torch.exp, None), "EXP2": (pypto.exp2, torch.exp2, None),
    "EXPM1": (pypto.expm1, torch.expm1, None), "LOG": (pypto.log, torch.log, (0.1, 4.0)),
    "LOG1P": (pypto.log1p, torch.log1p, (-0.9, 4.0)), "LOG2": (pypto.log2, torch.log2, (0.1, 4)),
    "LOG10": (pypto.log10, torch.log10, (0.1, 4.0)), "SQRT": (pypto.sqrt, torch.sqrt, (0, 4)),
    "RSQRT": (pypto.rsqrt, torch.rsqrt, (0.1, 4.0)),
    "RECIPROCAL": (pypto.reciprocal, torch.reciprocal, (0.25, 4.0)),
    "CEIL": (pypto.ceil, torch.ceil, (-5, 5)), "FLOOR": (pypto.floor, torch.floor, (-5, 5)),
    "TRUNC": (pypto.trunc, torch.trunc, (-5, 5)), "SIGN": (pypto.sign, torch.sign, None),
    "SIGNBIT": (pypto.signbit, torch.signbit, None), "RELU": (pypto.relu, torch.relu, None),
    "SIGMOID": (pypto.sigmoid, torch.sigmoid, (-6, 6)), "TANH": (pypto.tanh, torch.tanh, None),
    "ERF": (pypto.erf, torch.erf, None), "ERFC": (pypto.erfc, torch.erfc, None),
    "SIN": (pypto.sin, torch.sin, (-4, 4)), "COS": (pypto.cos, torch.cos, (-4, 4)),
    "TAN": (pypto.tan, torch.tan, (-1.2, 1.2)), "SINH": (pypto.sinh, torch.sinh, None),
    "COSH": (pypto.cosh, torch.cosh, None), "ASIN": (pypto.asin, torch.asin, (-0.99, 0.99)),
    "ACOS": (pypto.acos, torch.acos, (-0.99, 0.99)), "ATAN": (pypto.atan, torch.atan, (-4, 4)),
    "ASINH": (pypto.asinh, torch.asinh, None), "ACOSH": (pypto.acosh, torch.acosh, (1.0, 4.0)),
    "ATANH": (pypto.atanh, torch.atanh, (-0.95, 0.95)), "CBRT": (pypto.cbrt, _cbrt, (-8, 8)),
    "LOGICAL_NOT": (pypto.logical_not, torch.logical_not, (-1, 1)),
    "ISFINITE": (pypto.isfinite, torch.isfinite, None), "ISNAN": (pypto.isnan, torch.isnan, None),
}


def test_unary_table_covers_every_unary_opcode():
    """Every opcode in unary._UNARY is exercised here (BITWISE_NOT in the INT32 tests)."""
    from pypto.ops import unary
    assert set(unary._UNARY) == set(UNARY) | {"BITWISE_NOT"}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("code", sorted(UNARY))
def test_unary(code, dtype):
    """Every unary op equals torch computing in FP32 on the rounded input, rounded once;
    signbit/logical_not/isfinite/isnan return DT_BOOL."""
    op, ref, rng = UNARY[code]
    x = rand(SHAPE, dtype, *(rng or (-2.0, 2.0)), seed=20)
    if code in ("ISFINITE", "ISNAN", "SIGN", "ABS", "NEG", "RELU", "SIGNBIT"):
        x[0, :4] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0])
    if code in ("CEIL", "FLOOR", "TRUNC", "LOGICAL_NOT"):
        x[0, :4] = torch.tensor([-2.0, 0.0, 3.0, -0.5])  # integers and zero are fixed points
    golden = ref(x.float())
    golden = golden if golden.dtype == torch.bool else golden.to(dtype)
    out = run(op, x, out_dtype=golden.dtype)
    check(out, golden, dtype=dtype)


@pytest.mark.parametrize("code", ["NEG", "ABS", "SIGN", "RELU"])
def test_unary_int32(code):
    """neg/abs/sign/relu keep INT32 and are exact."""
    op, ref, _ = UNARY[code]
    x = rand(SHAPE, torch.int32, -100, 100, seed=21)
    check(run(op, x), ref(x))


def test_unary_float_only_rejects_int():
    """Float-only math (exp, sqrt, ...) on an INT32 tensor is a pypto TypeError naming the op
    and pointing at the user's line."""
    x = rand(SHAPE, torch.int32, 0, 9)
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"exp needs a floating-point.*"
                       r"test_elementwise\.py:\d+"):
        run(lambda t: pypto.exp(t), x)


def test_precision_type_keyword_is_accepted():
    """`precision_type=` (HEAD) is accepted by the math ops and does not change CPU results."""
    x = rand(SHAPE, torch.float32, 0.5, 2.0)
    check(run(lambda t: pypto.exp(t, precision_type=None), x), torch.exp(x))
    check(run(lambda t: pypto.div(t, t, precision_type=None), x), x / x)


# --------------------------------------------------------------------------------------------
# round, activations, where, clip

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("decimals", [0, 1, 2])
def test_round_half_to_even(decimals, dtype):
    """round(x, decimals) rounds half to even, like torch.round."""
    x = rand(SHAPE, dtype, -10, 10, seed=22)
    x[0, :8] = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.25])
    check(run(lambda t: pypto.round(t, decimals), x),
          golden_fp32(lambda t: torch.round(t, decimals=decimals), x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_lrelu(dtype):
    """lrelu(x, slope) is x for x >= 0 else slope * x (default slope 0.01)."""
    x = rand(SHAPE, dtype, seed=23)
    check(run(pypto.lrelu, x), golden_fp32(lambda t: F.leaky_relu(t, 0.01), x))
    check(run(lambda t: t.lrelu(0.2), x), golden_fp32(lambda t: F.leaky_relu(t, 0.2), x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_prelu(dtype):
    """prelu(x, weight) follows torch: a 1-D weight holds one slope per channel (dim 1) or one
    shared slope; a weight of the input's rank broadcasts."""
    x = rand((4, 64), dtype, seed=24)
    w = rand((64,), dtype, 0, 1, seed=25)
    check(run(pypto.prelu, x, w), golden_fp32(F.prelu, x, w))
    x3 = rand((2, 8, 64), dtype, seed=26)
    w8 = rand((8,), dtype, 0, 1, seed=27)
    check(run(pypto.prelu, x3, w8, out_shape=x3.shape), golden_fp32(F.prelu, x3, w8))
    w1 = rand((1,), dtype, 0, 1, seed=28)
    check(run(pypto.prelu, x3, w1, out_shape=x3.shape), golden_fp32(F.prelu, x3, w1))
    wfull = rand((1, 1, 64), dtype, 0, 1, seed=29)
    check(run(pypto.prelu, x3, wfull),
          golden_fp32(lambda t, w: torch.where(t >= 0, t, t * w), x3, wfull))


@pytest.mark.parametrize("dtype", FLOATS)
def test_where(dtype):
    """where(cond, a, b) picks a where cond is true; operands are tensors (same rank,
    broadcastable), floats (FP32 Elements) or Elements of the tensors' dtype."""
    c = rand(SHAPE, seed=30) > 0
    a, b = rand(SHAPE, dtype, seed=31), rand(SHAPE, dtype, seed=32)
    check(run(pypto.where, c, a, b, out_dtype=dtype), torch.where(c, a, b))
    row = rand((1, 64), dtype, seed=33)
    check(run(pypto.where, c, a, row, out_dtype=dtype), torch.where(c, a, row))
    e = pypto.Element(pypto.DT_FP32 if dtype == torch.float32 else
                      {torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}[dtype], -1.5)
    check(run(lambda cc, x: pypto.where(cc, x, e), c, a, out_dtype=dtype),
          torch.where(c, a, torch.tensor(-1.5, dtype=dtype)))
    check(run(lambda cc, x: pypto.where(cc, e, x), c, a, out_dtype=dtype),
          torch.where(c, torch.tensor(-1.5, dtype=dtype), a))
    cc = rand((1, 64), seed=34) > 0
    check(run(pypto.where, cc, a, b, out_dtype=dtype), torch.where(cc, a, b))


def test_where_float_scalars_are_fp32():
    """A float scalar in where is an FP32 Element: fine with FP32 tensors, a pypto TypeError with
    FP16 ones (use pypto.Element). Different ranks are a ValueError."""
    c = rand(SHAPE, seed=35) > 0
    a = rand(SHAPE, seed=36)
    check(run(lambda cc, x: pypto.where(cc, x, 0.5), c, a, out_dtype=torch.float32),
          torch.where(c, a, 0.5))
    check(run(lambda cc: pypto.where(cc, 1.0, -1.0), c, out_dtype=torch.float32),
          torch.where(c, 1.0, -1.0))
    with pytest.raises(pypto.errors.PyptoTypeError, match="where: input and other"):
        run(lambda cc, x: pypto.where(cc, x, 0.5), c, a.half(), out_dtype=torch.float16)
    with pytest.raises(pypto.errors.PyptoValueError, match="where: all tensors must have"):
        run(lambda cc, x: pypto.where(cc, x, x), c[0], a, out_dtype=torch.float32)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
def test_clip(dtype):
    """clip(x, min, max) clamps; bounds are both scalars or both (broadcastable) tensors;
    either may be None; both None returns the input."""
    x = rand(SHAPE, dtype, -4, 4, seed=37)
    lo, hi = (-1, 2) if dtype == torch.int32 else (-1.25, 2.5)
    check(run(lambda t: pypto.clip(t, lo, hi), x), torch.clamp(x, lo, hi))
    check(run(lambda t: pypto.clip(t, min=lo), x), torch.clamp(x, min=lo))
    check(run(lambda t: pypto.clip(t, max=hi), x), torch.clamp(x, max=hi))
    check(run(lambda t: pypto.clip(t) + 0, x), x)
    tlo = rand((64,), dtype, -3, -1, seed=38)
    thi = rand((8, 1), dtype, 1, 3, seed=39)
    check(run(lambda t, a, b: pypto.clip(t, a, b), x, tlo, thi),
          torch.minimum(torch.maximum(x, tlo), thi))
    if dtype.is_floating_point:
        with pytest.raises(pypto.errors.PyptoTypeError, match="clip: min and max"):
            run(lambda t, a: pypto.clip(t, a, 1.0), x, tlo)


def test_expand_exp_dif():
    """expand_exp_dif(a, b) = exp(a - b) with broadcasting."""
    a, b = rand((8, 64), seed=40), rand((8, 1), seed=41)
    check(run(pypto.expand_exp_dif, a, b), torch.exp(a - b))


# --------------------------------------------------------------------------------------------
# Dtype and shape errors

def test_binary_errors_name_op_and_line():
    """Mixed dtypes, unbroadcastable shapes and a float scalar with an INT32 tensor are pypto
    errors that name the op and the user's file:line."""
    a, h = rand(SHAPE), rand(SHAPE, torch.float16)
    with pytest.raises(pypto.errors.PyptoTypeError,
                       match=r"add: operands have different dtypes.*test_elementwise\.py:\d+"):
        run(lambda x, y: x + y, a, h)
    with pytest.raises(pypto.errors.PyptoValueError, match=r"mul: shapes .* cannot be broadcast"):
        run(lambda x, y: x * y, a, rand((32,)), out_shape=SHAPE)
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"sub: a float scalar"):
        run(lambda x: x - 0.5, rand(SHAPE, torch.int32, 0, 5))
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"mul: operand must be"):
        run(lambda x: x * "2", a)
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"bitwise_and needs an integer"):
        run(pypto.bitwise_and, a, a)


def test_missing_or_wrong_rank_tile_is_an_error():
    """A vector op needs a vec TileShape of the op's rank with a 32-byte-aligned last dim."""
    a = rand(SHAPE)
    with pytest.raises(pypto.errors.PyptoRuntimeError, match=r"add: the vector TileShape"):
        run(lambda x: x + 1, a, tile=(4, 4, 64))
    with pytest.raises(pypto.errors.PyptoRuntimeError, match=r"exp: the last tile dim 12"):
        run(pypto.exp, a, tile=(4, 12))
    out = torch.zeros(SHAPE)

    def body(x, o):
        o[:] = x + 1

    with pytest.raises(pypto.errors.PyptoRuntimeError, match=r"add: no vector TileShape"):
        kernel(body, ["x", "o"])(a, out)


# --------------------------------------------------------------------------------------------
# Valid shapes: tails of a dynamic dim, and inputs whose valid regions differ

def _tail_kernel(fn, n_rows_inputs: int, n_static: int, rows: int, explicit: bool):
    """Loop over row blocks of the dynamic first dim; each block is a [rows, ...] view whose
    valid rows are min(rows, N - i) (given explicitly, or derived by x[i:i+rows])."""
    def body(*ts):
        xs, statics, out = ts[:n_rows_inputs], ts[n_rows_inputs:-1], ts[-1]
        n = xs[0].shape[0]
        for i in pypto.loop(0, n, rows, name="rows", idx_name="i"):
            if explicit:
                views = [pypto.view(x, [rows] + x.shape[1:], [i] + [0] * (x.dim - 1),
                                    valid_shape=[(n - i).min(rows)] + x.shape[1:]) for x in xs]
            else:
                views = [x[i:i + rows, ...] for x in xs]
            out[i:, ...] = fn(*views, *statics)

    names = [f"x{j}" for j in range(n_rows_inputs)] + [f"s{j}" for j in range(n_static)] + ["out"]
    dyn = [pypto.DYNAMIC, ...]
    shapes = [dyn] * n_rows_inputs + [[]] * n_static + [dyn]
    return kernel(body, names, shapes=shapes, tile=(8, 64))


TAIL_CASES = [
    ("add_bcast", lambda x, w: x + w, lambda x, w: x + w, 1, 1),
    ("mul_two_views", lambda x, y: x * y, lambda x, y: x * y, 2, 0),
    ("rsub_scalar", lambda x: 2 - x, lambda x: 2 - x, 1, 0),
    ("exp", pypto.exp, torch.exp, 1, 0),
    ("sigmoid", pypto.sigmoid, torch.sigmoid, 1, 0),
    ("where", lambda x, y: pypto.where(x > y, x, y), torch.maximum, 2, 0),
    ("clip", lambda x: pypto.clip(x, -0.5, 0.5), lambda x: x.clamp(-0.5, 0.5), 1, 0),
    ("maximum_bcast", pypto.maximum, torch.maximum, 1, 1),
]


@pytest.mark.parametrize("explicit", [True, False], ids=["view_valid_shape", "slice_auto"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", TAIL_CASES, ids=[c[0] for c in TAIL_CASES])
def test_tail_tiles(case, dtype, explicit):
    """In a pypto.loop over a DYNAMIC dim of 37 rows with 16-row views, the last view has a
    partial valid shape; results equal torch on every valid row and nothing is written past N."""
    _, fn, ref, n_rows, n_static = case
    n = 37
    xs = [rand((n, 64), dtype, seed=50 + j) for j in range(n_rows)]
    statics = [rand((64,), dtype, seed=60 + j) for j in range(n_static)]
    out = torch.full((n, 64), 7.0, dtype=dtype)
    k = _tail_kernel(fn, n_rows, n_static, 16, explicit)
    k(*xs, *statics, out)
    check(out, golden_fp32(ref, *xs, *statics))
    n2 = 5  # a second size: same compiled kernel, only a tail block
    xs2 = [x[:n2].contiguous() for x in xs]
    out2 = torch.full((n2, 64), 7.0, dtype=dtype)
    k(*xs2, *statics, out2)
    check(out2, golden_fp32(ref, *xs2, *statics))
    assert k.compile_count == 1


def test_binary_inputs_with_different_valid_rows():
    """When two operands of the same shape have different valid extents, the result's valid
    region is the smaller one and the op computes only there."""
    a, b = rand((16, 64), seed=70), rand((16, 64), seed=71)
    out = torch.full((16, 64), 7.0)

    def body(x, y, o):
        xv = pypto.view(x, [16, 64], [0, 0], valid_shape=[5, 64])
        r = xv + y
        assert [int(d) for d in r.valid_shape] == [5, 64]
        o[0:, :] = r
        o[8:, :] = pypto.view(y, [8, 64], [0, 0], valid_shape=[3, 64]) * xv[0:8, :]

    kernel(body, ["x", "y", "o"], tile=(8, 64))(a, b, out)
    expect = torch.full((16, 64), 7.0)
    expect[:5] = a[:5] + b[:5]
    expect[8:11] = b[:3] * a[:3]
    check(out, expect)


def test_elementwise_row_view_with_one_valid_row_against_full_tensor():
    """A [4,64] view with one valid row combined with a full [4,64] tensor computes one row (the
    valid extent 1 is not a broadcast)."""
    a, b = rand((4, 64), seed=72), rand((4, 64), seed=73)
    out = torch.full((4, 64), 7.0)

    def body(x, y, o):
        o[1:, :] = pypto.view(x, [4, 64], [0, 0], valid_shape=[1, 64]) - y

    kernel(body, ["x", "y", "o"], tile=(4, 64))(a, b, out)
    expect = torch.full((4, 64), 7.0)
    expect[1] = a[0] - b[0]
    check(out, expect)


def test_math_constants():
    """Spot values: exp(0)=1, log(1)=0, sqrt(4)=2, rsqrt(0)=inf, sqrt(-1)=nan."""
    x = torch.tensor([[0.0, 1.0, 4.0, -1.0] * 16])
    out = run(lambda t: pypto.sqrt(t), x)
    assert out[0, 2] == 2.0 and math.isnan(out[0, 3])
    out = run(pypto.rsqrt, x)
    assert out[0, 0] == math.inf


def test_symbolic_and_element_scalars():
    """A SymbolicScalar operand (a loop index, a dynamic dim) is read at run time; an Element of
    the tensor's dtype is a typed scalar, and an Element of another dtype is a TypeError."""
    x = rand((12, 64), seed=74)
    out = torch.zeros(12, 64)

    def body(t, o):
        for i in pypto.loop(0, 3, name="L", idx_name="i"):
            v = t[i * 4:i * 4 + 4, :]
            o[i * 4:, :] = v * i + (t.shape[0] - v) - pypto.Element(pypto.DT_FP32, 0.5)

    kernel(body, ["t", "o"], shapes=[[pypto.DYNAMIC, 64], []], tile=(4, 64))(x, out)
    idx = torch.arange(12).div(4, rounding_mode="floor").float()[:, None]
    check(out, x * idx + (12 - x) - 0.5)
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"add: Element of DT_FP16 does not"):
        run(lambda t: t + pypto.Element(pypto.DT_FP16, 1.0), x)


def test_where_int32_element_is_exact():
    """where with INT32 tensors and an INT32 Element keeps large values exact."""
    c = rand((4, 64), seed=75) > 0
    a = rand((4, 64), torch.int32, 2 ** 30, 2 ** 31 - 1, seed=76)
    e = pypto.Element(pypto.DT_INT32, 2 ** 31 - 3)
    check(run(lambda cc, x: pypto.where(cc, x, e), c, a, out_dtype=torch.int32),
          torch.where(c, a, torch.tensor(2 ** 31 - 3, dtype=torch.int32)))


def test_argument_errors_are_pypto_errors():
    """Non-tensor inputs and malformed arguments raise pypto errors that name the op."""
    x = rand(SHAPE)
    cases = [
        (lambda t: pypto.exp(2.0), pypto.errors.PyptoTypeError, r"exp: input must be a pypto"),
        (lambda t: pypto.add(1, 2), pypto.errors.PyptoTypeError, r"add: input must be a pypto"),
        (lambda t: pypto.add(t, t, alpha="2"), pypto.errors.PyptoTypeError, r"add: alpha must"),
        (lambda t: pypto.round(t, 1.5), pypto.errors.PyptoTypeError, r"round: decimals must"),
        (lambda t: pypto.lrelu(t, "x"), pypto.errors.PyptoTypeError, r"lrelu: negative_slope"),
        (lambda t: pypto.prelu(t, rand((3,))), pypto.errors.PyptoTypeError,
         r"prelu: weight must be a pypto.Tensor, got torch.Tensor"),
        (lambda t: pypto.where(t, t, t), pypto.errors.PyptoTypeError,
         r"where: condition must be DT_BOOL"),
        (lambda t: pypto.cast(t, pypto.DT_INT32) ** -1, pypto.errors.PyptoValueError,
         r"pow: an integer tensor cannot be raised to the negative power"),
    ]
    for fn, err, msg in cases:
        with pytest.raises(err, match=msg):
            run(fn, x)


def test_prelu_weight_must_match_channels():
    """A 1-D prelu weight needs 1 or C (= input dim 1) slopes."""
    x, w = rand((2, 8, 64)), rand((5,))
    with pytest.raises(pypto.errors.PyptoValueError, match=r"prelu: a 1-D weight needs 1 or 8"):
        run(pypto.prelu, x, w, out_shape=x.shape)


def test_tensor_methods_forward():
    """Tensor methods forward to the op of the same name with self first; `x.where(c, y)` is
    torch's `where(c, x, y)`."""
    x, y = rand(SHAPE, seed=77), rand(SHAPE, seed=78)
    c = x > y
    check(run(lambda a, b, cc: a.where(cc, b), x, y, c), torch.where(c, x, y))
    check(run(lambda a, b: a.add(b).mul(2).sub(b).div(4.0), x, y), (((x + y) * 2) - y) / 4)
    check(run(lambda a: a.abs().sqrt().exp().log(), x), x.abs().sqrt().exp().log())
    check(run(lambda a, b: a.maximum(b).minimum(0.5), x, y), torch.clamp(torch.maximum(x, y),
                                                                        max=0.5))
    check(run(lambda a: a.clip(-0.5, 0.5).neg().relu(), x), torch.relu(-x.clamp(-0.5, 0.5)))
    check(run(lambda a, b: a.greater(b), x, y, out_dtype=torch.bool), x > y)


def test_int32_floordiv_operator_floors():
    """`//` on INT32 tensors floors like Python and torch (-7 // 2 == -4), and the reflected
    forms `7 // t`, `7 % t`, `2 ** t` exist."""
    a = rand(SHAPE, torch.int32, -100, 100, seed=31)
    b = rand(SHAPE, torch.int32, 1, 7, seed=32)
    check(run(lambda x, y: x // y, a, b), torch.div(a, b, rounding_mode="floor").int())
    check(run(lambda y: 7 // y, b), torch.div(7, b, rounding_mode="floor").int())
    check(run(lambda y: 7 % y, b), torch.remainder(7, b).int())


@pytest.mark.parametrize("dtype", FLOATS)
def test_reflected_pow(dtype):
    """`2 ** t` is pow(2, t) with the scalar as base."""
    a = rand(SHAPE, dtype, -2, 2, seed=33)
    check(run(lambda x: 2 ** x, a), golden_fp32(lambda x: torch.pow(2.0, x), a))
