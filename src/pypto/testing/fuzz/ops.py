"""The elementwise op tables of the generator: each op written as a user writes it in a kernel
and as torch writes it in the golden, with the input range where it is defined and the range of
its result (so chains stay finite and away from poles)."""
from __future__ import annotations

import math
import random

from pypto.testing.fuzz.builder import Builder, Val

# name: (kernel text, golden text, applicable(v), result range (lo, hi) from v)
UNARY_FLOAT = {
    "abs": ("pypto.abs({x})", "torch.abs({x})", lambda v: True, lambda v: (0.0, v.mag)),
    "neg": ("-{x}", "-{x}", lambda v: True, lambda v: (-v.hi, -v.lo)),
    "exp": ("pypto.exp({x})", "torch.exp({x})", lambda v: v.hi <= 3,
            lambda v: (math.exp(v.lo), math.exp(v.hi))),
    "sqrt": ("pypto.sqrt({x})", "torch.sqrt({x})", lambda v: v.lo >= 0,
             lambda v: (math.sqrt(v.lo), math.sqrt(v.hi))),
    "rsqrt": ("pypto.rsqrt({x})", "torch.rsqrt({x})", lambda v: v.lo >= 0.25,
              lambda v: (1 / math.sqrt(v.hi), 1 / math.sqrt(v.lo))),
    "reciprocal": ("pypto.reciprocal({x})", "1.0 / {x}", lambda v: v.lo >= 0.25,
                   lambda v: (1 / v.hi, 1 / v.lo)),
    "log": ("pypto.log({x})", "torch.log({x})", lambda v: v.lo >= 0.25,
            lambda v: (math.log(v.lo), math.log(v.hi))),
    "tanh": ("pypto.tanh({x})", "torch.tanh({x})", lambda v: True, lambda v: (-1.0, 1.0)),
    "sigmoid": ("pypto.sigmoid({x})", "torch.sigmoid({x})", lambda v: True,
                lambda v: (0.0, 1.0)),
    "relu": ("pypto.relu({x})", "torch.relu({x})", lambda v: True,
             lambda v: (0.0, max(v.hi, 0.0))),
    "sin": ("pypto.sin({x})", "torch.sin({x})", lambda v: True, lambda v: (-1.0, 1.0)),
    "cos": ("pypto.cos({x})", "torch.cos({x})", lambda v: True, lambda v: (-1.0, 1.0)),
    # floor/ceil only on exact inputs: an ulp of upstream drift would move an integer step
    "floor": ("pypto.floor({x})", "torch.floor({x})", lambda v: v.depth == 0,
              lambda v: (math.floor(v.lo), math.floor(v.hi))),
    "ceil": ("pypto.ceil({x})", "torch.ceil({x})", lambda v: v.depth == 0,
             lambda v: (math.ceil(v.lo), math.ceil(v.hi))),
    "clip": ("pypto.clip({x}, -1.5, 1.0)", "torch.clamp({x}, -1.5, 1.0)", lambda v: True,
             lambda v: (min(max(v.lo, -1.5), 1.0), min(max(v.hi, -1.5), 1.0))),
    "exp2": ("pypto.exp2({x})", "torch.exp2({x})", lambda v: v.hi <= 4,
             lambda v: (2.0 ** v.lo, 2.0 ** v.hi)),
    "expm1": ("pypto.expm1({x})", "torch.expm1({x})", lambda v: v.hi <= 3,
              lambda v: (math.expm1(v.lo), math.expm1(v.hi))),
    "log1p": ("pypto.log1p({x})", "torch.log1p({x})", lambda v: v.lo >= -0.5,
              lambda v: (math.log1p(v.lo), math.log1p(v.hi))),
    "erf": ("pypto.erf({x})", "torch.erf({x})", lambda v: True, lambda v: (-1.0, 1.0)),
    "lrelu": ("pypto.lrelu({x}, 0.125)", "torch.nn.functional.leaky_relu({x}, 0.125)",
              lambda v: True, lambda v: (min(v.lo * 0.125, v.lo), max(v.hi, v.hi * 0.125))),
    "square": ("pypto.pow({x}, 2.0)", "torch.pow({x}, 2.0)", lambda v: v.mag <= 8,
               lambda v: (0.0, v.mag ** 2)),
    "pow_half": ("pypto.pow({x}, 0.5)", "torch.pow({x}, 0.5)", lambda v: v.lo >= 0.25,
                 lambda v: (math.sqrt(v.lo), math.sqrt(v.hi))),
    # discontinuous: only on exact inputs (no upstream ulp can cross a step)
    "round": ("pypto.round({x})", "torch.round({x})", lambda v: v.depth == 0,
              lambda v: (round(v.lo) - 1, round(v.hi) + 1)),
    "trunc": ("pypto.trunc({x})", "torch.trunc({x})", lambda v: v.depth == 0,
              lambda v: (math.trunc(v.lo), math.trunc(v.hi))),
    "sign": ("pypto.sign({x})", "torch.sign({x})", lambda v: v.depth == 0,
             lambda v: (-1.0, 1.0)),
}

UNARY_INT = {
    "abs": ("pypto.abs({x})", "torch.abs({x})", lambda v: True, lambda v: (0, v.mag)),
    "neg": ("-{x}", "-{x}", lambda v: True, lambda v: (-v.hi, -v.lo)),
    "relu": ("pypto.relu({x})", "torch.relu({x})", lambda v: True, lambda v: (0, max(v.hi, 0))),
    "clip": ("pypto.clip({x}, -7, 9)", "torch.clamp({x}, -7, 9)", lambda v: True,
             lambda v: (max(v.lo, -7), min(v.hi, 9))),
    "sign": ("pypto.sign({x})", "torch.sign({x})", lambda v: True, lambda v: (-1, 1)),
    "not": ("pypto.bitwise_not({x})", "torch.bitwise_not({x})", lambda v: True,
            lambda v: (-v.hi - 1, -v.lo - 1)),
    "shl": ("pypto.bitwise_left_shift({x}, 2)", "torch.bitwise_left_shift({x}, 2)",
            lambda v: v.mag <= 2 ** 20, lambda v: (v.lo * 4, v.hi * 4)),
    "shr": ("pypto.bitwise_right_shift({x}, 1)", "torch.bitwise_right_shift({x}, 1)",
            lambda v: True, lambda v: (v.lo // 2, v.hi // 2)),
}

# binary: name -> (kernel text, golden text, applicable(a, b), result range)
_EXACT_SCALARS = [0.5, 1.5, 2.0, 3.0, 0.25, 0.75]


def _mul_range(a, b):
    c = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return min(c), max(c)


BINARY_FLOAT = {
    "add": ("{a} + {b}", "{a} + {b}", lambda a, b: True,
            lambda a, b: (a.lo + b.lo, a.hi + b.hi)),
    "sub": ("{a} - {b}", "{a} - {b}", lambda a, b: True,
            lambda a, b: (a.lo - b.hi, a.hi - b.lo)),
    "mul": ("{a} * {b}", "{a} * {b}", lambda a, b: a.mag * b.mag <= 64, _mul_range),
    "div": ("{a} / {b}", "{a} / {b}", lambda a, b: b.lo >= 0.25 and a.mag / b.lo <= 64,
            lambda a, b: (-a.mag / b.lo, a.mag / b.lo)),
    "maximum": ("pypto.maximum({a}, {b})", "torch.maximum({a}, {b})", lambda a, b: True,
                lambda a, b: (max(a.lo, b.lo), max(a.hi, b.hi))),
    "minimum": ("pypto.minimum({a}, {b})", "torch.minimum({a}, {b})", lambda a, b: True,
                lambda a, b: (min(a.lo, b.lo), min(a.hi, b.hi))),
    "hypot": ("pypto.hypot({a}, {b})", "torch.hypot({a}, {b})", lambda a, b: True,
              lambda a, b: (0.0, math.hypot(a.mag, b.mag))),
    "pow": ("pypto.pow({a}, {b})", "torch.pow({a}, {b})",
            lambda a, b: 0.25 <= a.lo and a.hi <= 4 and b.mag <= 2,
            lambda a, b: (min(a.lo ** b.mag, a.lo ** -b.mag), max(a.hi ** b.mag, a.hi ** -b.mag))),
    # discontinuous in an operand: only on exact operands
    "atan2": ("pypto.atan2({a}, {b})", "torch.atan2({a}, {b})",
              lambda a, b: a.depth == 0 and b.depth == 0, lambda a, b: (-math.pi, math.pi)),
    "remainder": ("pypto.remainder({a}, {b})", "torch.remainder({a}, {b})",
                  lambda a, b: a.depth == 0 and b.depth == 0 and b.lo >= 0.5,
                  lambda a, b: (0.0, b.hi)),
    "fmod": ("pypto.fmod({a}, {b})", "torch.fmod({a}, {b})",
             lambda a, b: a.depth == 0 and b.depth == 0 and b.lo >= 0.5,
             lambda a, b: (-b.hi, b.hi)),
    # a comparison picks a side: only on exact operands, where no ulp can flip it; where
    # wants operands of one rank (a named error otherwise: it does not broadcast ranks)
    "where": ("pypto.where(pypto.gt({a}, {b}), {b}, {a})", "torch.where({a} > {b}, {b}, {a})",
              lambda a, b: a.depth == 0 and b.depth == 0 and len(a.shape) == len(b.shape),
              lambda a, b: (min(a.lo, b.lo), min(a.hi, b.hi))),
}

BINARY_INT = {
    "add": BINARY_FLOAT["add"],
    "sub": BINARY_FLOAT["sub"],
    "mul": ("{a} * {b}", "{a} * {b}", lambda a, b: a.mag * b.mag <= 2 ** 20, _mul_range),
    "maximum": BINARY_FLOAT["maximum"],
    "minimum": BINARY_FLOAT["minimum"],
    "where": BINARY_FLOAT["where"],
    "and": ("pypto.bitwise_and({a}, {b})", "torch.bitwise_and({a}, {b})", lambda a, b: True,
            lambda a, b: (-max(a.mag, b.mag) - 1, max(a.mag, b.mag))),
    "xor": ("pypto.bitwise_xor({a}, {b})", "torch.bitwise_xor({a}, {b})", lambda a, b: True,
            lambda a, b: (-2 * max(a.mag, b.mag) - 2, 2 * max(a.mag, b.mag) + 2)),
    "remainder": ("pypto.remainder({a}, {b})", "torch.remainder({a}, {b})",
                  lambda a, b: b.lo >= 1, lambda a, b: (0, b.hi)),
    # the divisor range may contain 0: the golden is then undefined (a named error expected)
    "floor_div": ("pypto.floor_div({a}, {b})", "FDIV({a}, {b})", lambda a, b: True,
                  lambda a, b: (-a.mag, a.mag)),
}


def unary(b: Builder, v: Val) -> Val:
    table = UNARY_INT if v.dt == "int32" else UNARY_FLOAT
    names = [n for n, (_, _, ok, _) in table.items() if ok(v)]
    name = b.rng.choice(names)
    ktext, gtext, _, rng = table[name]
    lo, hi = rng(v)
    return b.op(ktext.format(x=v.name), gtext.format(x=v.name), v, lo=lo, hi=hi)


def scalar_op(b: Builder, v: Val) -> Val:
    """x op s or s op x with a Python scalar (exactly representable for floats)."""
    rng = b.rng
    if v.dt == "int32":
        s = rng.choice([2, 3, -4, 5])
        forms = [("{x} + {s}", lambda: (v.lo + s, v.hi + s)),
                 ("{s} - {x}", lambda: (s - v.hi, s - v.lo)),
                 ("pypto.floor_div({x}, {s})", lambda: (-v.mag, v.mag))]
        if v.mag * abs(s) <= 2 ** 20:
            forms.append(("{x} * {s}", lambda: sorted((v.lo * s, v.hi * s))))
        k, r = rng.choice(forms)
        g = k.replace("pypto.floor_div", "FDIV")
        lo, hi = r()
        return b.op(k.format(x=v.name, s=s), g.format(x=v.name, s=s), v, lo=lo, hi=hi)
    s = rng.choice(_EXACT_SCALARS)
    forms = [("{x} + {s}", lambda: (v.lo + s, v.hi + s)),
             ("{x} - {s}", lambda: (v.lo - s, v.hi - s)),
             ("{s} - {x}", lambda: (s - v.hi, s - v.lo)),
             ("{x} * {s}", lambda: (v.lo * s, v.hi * s)),
             ("{x} / {s}", lambda: (v.lo / s, v.hi / s)),
             ("pypto.maximum({x}, {s})", lambda: (max(v.lo, s), max(v.hi, s)))]
    if v.lo >= 0.25:
        forms.append(("{s} / {x}", lambda: (s / v.hi, s / v.lo)))
    k, r = rng.choice(forms)
    lo, hi = sorted(r())   # a negative scalar flips a product's or quotient's range
    return b.op(k.format(x=v.name, s=s), k.replace("pypto.maximum", "torch.clamp_min")
                .format(x=v.name, s=s), v, lo=lo, hi=hi)


def binary(b: Builder, x: Val, y: Val, shape=None) -> Val:
    """x op y for two values of one dtype (y may broadcast against x: give the result shape)."""
    table = BINARY_INT if x.dt == "int32" else BINARY_FLOAT
    names = [n for n, (_, _, ok, _) in table.items() if ok(x, y)]
    name = b.rng.choice(names)
    ktext, gtext, _, rng = table[name]
    lo, hi = rng(x, y)
    return b.op(ktext.format(a=x.name, b=y.name), gtext.format(a=x.name, b=y.name), x,
                shape=shape, lo=lo, hi=hi, depth=max(x.depth, y.depth) + 1,
                acc=max(x.acc, y.acc), scale=max(x.scale, y.scale))


def squash(b: Builder, v: Val) -> Val:
    """Bring a grown value back to a small range (tanh for floats, clip for ints)."""
    if v.dt == "int32":
        return b.op(f"pypto.clip({v.name}, -50, 50)", f"torch.clamp({v.name}, -50, 50)", v,
                    lo=max(v.lo, -50), hi=min(v.hi, 50))
    return b.op(f"pypto.tanh({v.name})", f"torch.tanh({v.name})", v, lo=-1.0, hi=1.0)


def chain(b: Builder, v: Val, steps: int, others: list[Val] = ()) -> Val:
    """`steps` random elementwise ops starting from `v` (others: same-shape operands)."""
    rng: random.Random = b.rng
    for _ in range(steps):
        if v.mag > 40:
            v = squash(b, v)
            continue
        kind = rng.random()
        partners = [o for o in others if o.shape == v.shape and o.dt == v.dt]
        if kind < 0.4:
            v = unary(b, v)
        elif kind < 0.7 or not partners:
            v = scalar_op(b, v)
        else:
            v = binary(b, v, rng.choice(partners))
    return v
