"""The error-bound rule of every value-making op: how the intervals of its inputs' values
become the interval of its result (see runtime/error_bounds.py for the model they serve).

Takes one op as the reference ran it (`OpCall`: inputs, their bounds, attributes, stored
results) → the bound of each result, as float64 arrays of the results' shapes. Every rule
keeps the invariant that the other execution's result lies within its bound of the
reference's; `RULES` maps each value-making opcode to its rule. The interval → bound step the
rules share is `runtime.error_interval`; the writes into existing destinations (and the index
adds the value forms share) are `runtime.write_rules`.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

from pypto.dtypes import DataType, is_float
from pypto.ops.core import REGISTRY, crop_inputs
from pypto.ops.elementwise import POINTWISE
from pypto.passes.expand_matmul import split_k_chunks
from pypto.runtime import rounding
from pypto.runtime.error_interval import INF, OpCall, as_f64, hull, widen
from pypto.runtime.write_rules import accumulate


# --------------------------------------------------------------------------------------------
# Rules

def move(call: OpCall, index_inputs: tuple[int, ...] = (), **zero_attrs: Any) -> list:
    """Data moves or is selected without arithmetic: the bounds move with it (index inputs
    stay the real indices; fill values carry no error). An index with an error: unbounded."""
    if any(call.erroneous(i) for i in index_inputs):
        return [np.full(r.shape, INF) for r in call.refs]
    es = [call.xs[i] if i in index_inputs else call.es[i] for i in range(len(call.xs))]
    out = call.run(es, **zero_attrs)
    return [np.asarray(o, np.float64) for o in (out if isinstance(out, tuple) else (out,))]


def bits(call: OpCall) -> list:
    """The bytes are reinterpreted: exact when the input is, unbounded otherwise."""
    wild = any(call.erroneous(i) for i in range(len(call.xs)))
    return [np.full(r.shape, INF if wild else 0.0) for r in call.refs]


def exact(call: OpCall) -> list:
    """Values made from attributes alone (full, arange)."""
    return [np.zeros(r.shape) for r in call.refs]


# Inputs where an interval reaching zero leaves no bound: divisors, the arguments of log,
# rsqrt and reciprocal, powers' bases, and the operands of zero tests.
_ZERO_SENSITIVE = {
    "DIV": (1,), "FMOD": (1,), "REMAINDER": (1,), "FLOOR_DIV": (1,), "CEIL_DIV": (1,),
    "RECIPROCAL": (0,), "RSQRT": (0,), "LOG": (0,), "LOG2": (0,), "LOG10": (0,),
    "POW": (0,), "ATAN2": (0, 1), "LOGICAL_AND": (0, 1), "LOGICAL_OR": (0, 1),
    "LOGICAL_NOT": (0,), "LOGICAL_ANDS": (0,), "LOGICAL_ORS": (0,), "POWS": (0,),
}
_SCALAR_DIVISIONS = {"DIVS", "FMODS", "REMAINDERS", "FLOOR_DIVS", "CEIL_DIVS"}

# Pointwise ops whose result is not correctly rounded (or whose implementation depends on the
# CPU path): they get LIBRARY_ULPS of slack even on exact inputs.
LIBRARY = frozenset({
    "EXP", "EXP2", "EXPM1", "LOG", "LOG1P", "LOG2", "LOG10", "SIGMOID", "TANH", "ERF", "ERFC",
    "SIN", "COS", "TAN", "SINH", "COSH", "ASIN", "ACOS", "ATAN", "ASINH", "ACOSH", "ATANH",
    "CBRT", "POW", "POWS", "HYPOT", "HYPOTS", "ATAN2", "ATAN2S"})


def _zero_crossing(call: OpCall, shape: tuple) -> np.ndarray:
    """Elements whose zero-sensitive input interval contains zero (with a nonzero radius)."""
    code = call.op.opcode
    picks = _ZERO_SENSITIVE.get(code, ())
    if code in _SCALAR_DIVISIONS and call.at.get("reverse"):
        picks = (0,)
    hit = np.zeros(shape, bool)
    for i in picks:
        if i >= len(call.xs) or not call.erroneous(i):
            continue
        x, e = as_f64(call.xs[i]), call.es[i]
        inside = (e > 0) & (np.abs(x) <= e)
        hit |= _to_shape(inside, call.at, shape)
    return hit


def _to_shape(a: np.ndarray, at: dict, shape: tuple) -> np.ndarray:
    """An input-shaped mask cut and broadcast to the output's valid shape (as crop=True)."""
    a = crop_inputs([a], at.get("_out_valid", shape))[0] if a.ndim else a
    return np.broadcast_to(a, shape) if a.ndim <= len(shape) else a.reshape(shape)


def pointwise(call: OpCall) -> list:
    """f over the corners of the inputs' error box, with the center; then rounding."""
    ref = call.refs[0]
    wrong = [i for i in range(len(call.xs)) if call.erroneous(i)]
    library = call.op.opcode in LIBRARY
    # exactly rounded ops on exact inputs give every faithful execution the same bits (not so
    # the exact result of a float op: forward bounds count the op's own rounding)
    exact_here = not library and not (call.forward and is_float(call.dtype))
    if not wrong and exact_here:
        return [np.zeros(ref.shape)]
    xs = [as_f64(x) for x in call.xs]
    runs = [call.run]
    if call.forward and call.op.opcode == "CAST" and is_float(call.dtype):
        runs = [_identity]       # exactly, a float cast changes nothing: its rounding is error
    elif call.forward and is_float(call.at.get("dtype")) and call.op.opcode != "CAST":
        # a scalar operand is an element of the tensor's dtype: exactly, it is the number
        runs.append(lambda arrays: call.run(arrays, dtype=DataType.DT_DOUBLE))
    try:
        values = [run(xs) for run in runs]
        for signs in itertools.product((-1.0, 1.0), repeat=len(wrong)):
            corner = list(xs)
            for i, s in zip(wrong, signs):
                corner[i] = xs[i] + s * call.es[i]
            values += [run(corner) for run in runs]
    except TypeError:            # an integer-only op (bitwise, shifts) on inexact inputs
        return [np.where(_spread(call, ref.shape) > 0, INF, 0.0)]
    lo, hi = hull([np.reshape(v, ref.shape) if np.size(v) == ref.size else v
                   for v in values])
    if library:
        slack = rounding.LIBRARY_ULPS * rounding.ulp(np.maximum(np.abs(lo), np.abs(hi)),
                                                     _compute_precision(call))
        lo, hi = widen(lo, hi, slack)
    e = call.settle(ref, lo, hi)
    e = np.where(_zero_crossing(call, ref.shape), INF, e)
    if exact_here and wrong:
        # inputs that are exact element by element give this op's exact (bitwise) result
        spread = _spread(call, ref.shape)
        e = np.where(spread > 0, e, 0.0)
    return [e]


def _identity(xs: list) -> np.ndarray:
    return xs[0]


def _compute_precision(call: OpCall) -> DataType:
    """FP64 when any operand or the result is FP64, else FP32 (see rounding.compute_precision)."""
    dtypes = [v.dtype for v in call.op.inputs] + [call.dtype]
    return DataType.DT_DOUBLE if DataType.DT_DOUBLE in dtypes else DataType.DT_FP32


def _spread(call: OpCall, shape: tuple) -> np.ndarray:
    """Per output element: the sum of its inputs' bounds (zero iff they are all exact)."""
    total = np.zeros(shape)
    for e in crop_inputs(call.es, call.at.get("_out_valid", shape)):
        total = total + (np.broadcast_to(e, shape) if e.ndim <= len(shape) else e.reshape(shape))
    return total


def compare_equal(call: OpCall) -> list:
    """eq / ne: the answer may flip where the operands' intervals touch."""
    ref = call.refs[0]
    if not any(call.erroneous(i) for i in range(len(call.xs))):
        return [np.zeros(ref.shape)]
    scalar = call.op.opcode.endswith("S")
    sub = REGISTRY["SUBS" if scalar else "SUB"].compute
    with np.errstate(all="ignore"):
        gap = np.abs(np.asarray(sub([as_f64(x) for x in call.xs], call.at), np.float64))
    reach = _spread(call, ref.shape)
    return [np.where((reach > 0) & (gap.reshape(ref.shape) <= reach), 1.0, 0.0)]


def where(call: OpCall) -> list:
    """Selection: the chosen operand's bound; where the condition may flip, either operand."""
    ref = call.refs[0]
    cond = np.asarray(call.xs[0], bool)
    zero = {k: (0.0 if call.at.get(k) is not None else None) for k in ("a", "b")}
    es = [np.zeros(cond.shape)] + list(call.es[1:])
    chosen = np.asarray(call.run([cond] + es[1:], **zero), np.float64)
    if not call.erroneous(0):
        return [chosen.reshape(ref.shape)]
    picks = []
    for side in (True, False):
        forced = np.full(cond.shape, side)
        value = np.asarray(call.run([forced] + [as_f64(x) for x in call.xs[1:]]), np.float64)
        bound = np.asarray(call.run([forced] + es[1:], **zero), np.float64)
        picks.append(np.abs(value - ref) + bound)
    flip = _to_shape(call.es[0] > 0, call.at, ref.shape)
    return [np.where(flip, np.maximum(*picks), chosen)]


def summation(call: OpCall) -> list:
    """sum, mean, cumsum: monotone in every input, so the corners x - E and x + E bound the
    exact result; the other execution adds in another order (gamma_n * sum|x|)."""
    ref = call.refs[0]
    if np.asarray(call.xs[0]).dtype.kind in "iub":   # integer sums are exact in any order
        return [np.asarray(call.run([call.es[0]]), np.float64).reshape(ref.shape)]
    x, e = as_f64(call.xs[0]), call.es[0]
    lo, hi = call.run([x - e]), call.run([x + e])
    terms = _terms(call, x, ref)
    precision = rounding.compute_precision(call.op.inputs[0].dtype)
    slack = rounding.gamma(terms, precision) * np.asarray(call.run([np.abs(x) + e]))
    lo, hi = widen(np.asarray(lo), np.asarray(hi), slack)
    return [call.settle(ref, lo.reshape(ref.shape), hi.reshape(ref.shape))]


def _terms(call: OpCall, x: np.ndarray, ref: np.ndarray) -> int:
    """How many input elements each result of a reduction (or a cumulative op's last) adds."""
    if "dim" in call.at:                          # cumsum, cumprod: along one axis
        return x.shape[call.at["dim"]]
    return max(1, x.size // max(ref.size, 1))


def extreme(call: OpCall) -> list:
    """max / min: monotone, exact, order-free: the corners are the whole story."""
    ref = call.refs[0]
    x, e = as_f64(call.xs[0]), call.es[0]
    lo, hi = call.run([x - e]), call.run([x + e])
    return [call.settle(ref, np.reshape(lo, ref.shape), np.reshape(hi, ref.shape))]


def product(call: OpCall) -> list:
    """prod, cumprod: |prod(|x| + E) - prod|x|| plus the rounding of n factors, around the
    reference's own product."""
    ref = call.refs[0]
    x, e = as_f64(call.xs[0]), call.es[0]
    mag, grown = np.abs(call.run([np.abs(x)])), np.abs(call.run([np.abs(x) + e]))
    terms = _terms(call, x, ref)
    precision = rounding.compute_precision(call.op.inputs[0].dtype)
    radius = (grown - mag) + 2 * rounding.gamma(terms, precision) * grown
    center = np.asarray(call.run([x]), np.float64)
    lo, hi = widen(center, center, radius)
    return [call.settle(ref, lo.reshape(ref.shape), hi.reshape(ref.shape))]


def variance(call: OpCall) -> list:
    """var: sum((x - mean)^2) / (n - ddof) grows by at most its value at |x - mean| + E + Ē;
    plus the rounding of the mean, the squares and the sum."""
    ref = call.refs[0]
    x, e = as_f64(call.xs[0]), call.es[0]
    dims = call.at["dims"]
    n = max(1, x.size // max(ref.size, 1))
    mean = np.mean(x, axis=dims, keepdims=True)
    dev = np.abs(x - mean)
    denom = max(n - call.at["correction"], 1)
    grown = np.sum((dev + e + np.mean(e, axis=dims, keepdims=True)) ** 2, axis=dims) / denom
    exact_var = np.sum(dev ** 2, axis=dims) / denom
    precision = rounding.compute_precision(call.op.inputs[0].dtype)
    g = rounding.gamma(n + 3, precision)
    mean_err = g * np.mean(np.abs(x), axis=dims, keepdims=True)
    radius = (grown - exact_var) + 2 * g * exact_var + \
        4 * np.sum(dev * mean_err, axis=dims) / denom
    center = np.asarray(call.run([x]), np.float64).reshape(radius.shape)
    lo, hi = widen(center, center, radius)
    return [call.settle(ref, lo.reshape(ref.shape), hi.reshape(ref.shape))]


def rows_ambiguous(x: np.ndarray, e: np.ndarray, axis: int) -> np.ndarray:
    """Per row along `axis`: do two values' intervals overlap (one of them inexact)? Sorted by
    value, an overlap anywhere implies one between neighbours."""
    order = np.argsort(x, axis=axis, kind="stable")
    xs, es = np.take_along_axis(x, order, axis), np.take_along_axis(e, order, axis)
    a, b = [np.take(v, np.arange(v.shape[axis] - 1), axis) for v in (xs, es)]
    c, d = [np.take(v, np.arange(1, v.shape[axis]), axis) for v in (xs, es)]
    touch = (a + b >= c - d) & ((b > 0) | (d > 0))
    touch |= np.isnan(a) | np.isnan(c)
    return np.any(touch, axis=axis, keepdims=True)


def ordering(call: OpCall) -> list:
    """argmax/argmin/argsort/topk: indices exact unless the row's intervals overlap; topk's
    values are order statistics (monotone: the corners bound them)."""
    x, e = as_f64(call.xs[0]), call.es[0]
    code = call.op.opcode
    axis = call.at["dims"][0] if "dims" in call.at else call.at.get("dim", x.ndim - 1)
    if code == "TOPK":
        axis = x.ndim - 1
    wild = rows_ambiguous(x, e, axis) if call.erroneous(0) else None
    out = []
    for k, ref in enumerate(call.refs):
        if wild is None:
            out.append(np.zeros(ref.shape))
        elif code == "TOPK" and k == 0:
            lo, hi = call.run([x - e])[0], call.run([x + e])[0]
            out.append(call.settle(ref, np.minimum(lo, hi), np.maximum(lo, hi)))
        else:
            mask = wild.reshape(ref.shape) if wild.size == ref.size else \
                np.broadcast_to(wild, ref.shape)
            out.append(np.where(mask, INF, 0.0))
    return out


def matmul(call: OpCall) -> list:
    """|A| E_B + E_A |B| + E_A E_B + 2 gamma_K |A||B| around the reference's own product (|A||B|
    bounded by row and column norms); split-K partials and their adds rounded in the output's
    dtype; bias, scale and relu after."""
    ref = call.refs[0]
    wrong_a, wrong_b = call.erroneous(0), call.erroneous(1)
    if np.asarray(call.xs[0]).dtype.kind in "iu" and not (wrong_a or wrong_b):
        return [np.zeros(ref.shape)]           # integer products add exactly
    a, b = as_f64(call.xs[0]), as_f64(call.xs[1])
    ea, eb = call.es[0], call.es[1]
    plain = {"bias": False, "scale": None, "relu": False} if "bias" in call.at else {}

    def product(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.asarray(call.run([p, q] + call.xs[2:], **plain), np.float64)

    mags = _magnitudes(call, a, b).reshape(ref.shape)
    radius = np.zeros(ref.shape)
    # NOTE: products of an exact operand's zero bounds are skipped (a matmul each)
    if wrong_b:
        radius += product(np.abs(a), eb).reshape(ref.shape)
    if wrong_a:
        radius += product(ea, np.abs(b)).reshape(ref.shape)
    if wrong_a and wrong_b:
        radius += product(ea, eb).reshape(ref.shape)
    radius *= 1 + 2.0 ** -20                    # the bounds themselves were summed in FP32
    terms = _contraction(call)
    radius += 2 * float(rounding.gamma(terms, DataType.DT_FP32)) * mags
    chunks = split_k_chunks(call.op, terms)
    if chunks > 1:
        radius += 2 * chunks * rounding.unit_roundoff(call.dtype) * mags
    if call.at.get("bias"):
        bias = np.broadcast_to(as_f64(call.xs[2]), ref.shape)
        radius = radius + np.broadcast_to(call.es[2], ref.shape) + 4 * rounding.unit_roundoff(
            DataType.DT_FP32) * (mags + np.abs(bias))
    if call.at.get("scale") is not None:
        radius = radius * abs(float(call.at["scale"]))
    # NOTE: an FP32 result is stored as computed: the reference's product is its result
    center = ref if call.dtype is DataType.DT_FP32 else \
        np.asarray(call.run(call.xs), np.float64).reshape(ref.shape)
    lo, hi = widen(center, center, radius)
    if call.at.get("relu"):
        lo = np.maximum(lo, 0.0)
    return [call.settle(ref, lo.reshape(ref.shape), hi.reshape(ref.shape))]


def _magnitudes(call: OpCall, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """An upper bound on sum_k |a_ik| |b_kj| without a matmul: the product of the row's and
    the column's 2-norms (Cauchy-Schwarz; about pi/2 times the sum for random data)."""
    k = _contraction(call)
    if call.op.opcode == "TRANSPOSED_BMM":      # (M, B, K) @ (B, K, N) -> (M, B, N)
        rows = np.sqrt(np.sum(np.square(a[..., :k]), axis=-1, keepdims=True))
        cols = np.sqrt(np.sum(np.square(b[:, :k, :]), axis=1))[None]
        return rows * cols
    a = np.swapaxes(a, -1, -2) if call.at.get("a_trans") else a
    b = np.swapaxes(b, -1, -2) if call.at.get("b_trans") else b
    rows = np.sqrt(np.sum(np.square(a[..., :k]), axis=-1, keepdims=True))
    cols = np.sqrt(np.sum(np.square(b[..., :k, :]), axis=-2, keepdims=True))
    return rows * cols


def _contraction(call: OpCall) -> int:
    """K: the terms each output element of a matmul adds (the operands' common valid K)."""
    a, b = np.shape(call.xs[0]), np.shape(call.xs[1])
    if call.op.opcode == "TRANSPOSED_BMM":      # (M, B, K) @ (B, K, N)
        return min(a[2], b[1])
    ka = a[-2] if call.at.get("a_trans") else a[-1]
    kb = b[-1] if call.at.get("b_trans") else b[-2]
    return min(ka, kb)


# The rule of every opcode that is not pointwise. Moves name their index inputs and the
# attributes that become zero when the rule replays them on bounds.
RULES: dict[str, Callable[[OpCall], list]] = {
    **{code: pointwise for code in POINTWISE},
    **{code: pointwise for code in ("CAST", "ROUND", "LRELU", "PRELU", "CLIP", "QUANTIZE",
                                    "DEQUANTIZE", "CEIL_DIV", "CEIL_DIVS")},
    "EQ": compare_equal, "NE": compare_equal, "EQS": compare_equal, "NES": compare_equal,
    "WHERE": where,
    "REDUCE_SUM": summation, "REDUCE_MEAN": summation, "CUMSUM": summation,
    "REDUCE_MAX": extreme, "REDUCE_MIN": extreme,
    "REDUCE_PROD": product, "CUMPROD": product, "REDUCE_VAR": variance,
    "ARGMAX": ordering, "ARGMIN": ordering, "ARGSORT": ordering, "TOPK": ordering,
    "MATMUL": matmul, "TRANSPOSED_BMM": matmul,
    "VIEW": move, "RESHAPE": move, "TRANSPOSE": move, "CONCAT": move, "EXPAND": move,
    "COPY": move, "TRIL": move, "TRIU": move, "GATHERMASK": move, "INTERLEAVE": move,
    "DEINTERLEAVE": move,
    "FILLPAD": lambda c: move(c, value=0.0), "PAD": lambda c: move(c, value=0.0),
    "GATHER": lambda c: move(c, (1,)), "INDEX_SELECT": lambda c: move(c, (1,)),
    "SCATTER_UPDATE": lambda c: move(c, (1,)),
    "ONE_HOT": bits,
    "BITCAST": bits, "PACK": bits, "UNPACK": bits,
    "FULL": exact, "ARANGE": exact,
    "SCATTER": lambda c: [accumulate(c, None, None, (1,))] if c.at["reduce"] else
    move(c, (1,), **({"scalar": 0.0} if "scalar" in c.at else {})),
    "INDEX_ADD": lambda c: [accumulate(c, None, None, (1,))],
}
