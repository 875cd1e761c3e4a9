"""Every public op function, gathered from the op families (re-exported by `pypto`)."""
import pypto.ops  # noqa: F401  (binds the Tensor methods first)
from pypto.ops.cast import cast
from pypto.ops.creation import arange, full, ones, zeros
from pypto.ops.elementwise import (add, atan2, axpy_, bitwise_and, bitwise_left_shift,
                                   bitwise_or, bitwise_right_shift, bitwise_xor, ceil_div,
                                   copysign, div, eq, expand_exp_dif, floor_div, fmod, gcd, ge,
                                   greater, gt, hypot, le, logical_and, logical_or, lt, maximum,
                                   minimum, mul, ne, pow, prelu, remainder, sub)
from pypto.ops.index import (gather, index_add, index_add_, index_put_, index_select, scatter,
                             scatter_, scatter_update)
from pypto.ops.matmul import matmul
from pypto.ops.ordering import argsort, gathermask, one_hot, topk, tril, tril_, triu, triu_
from pypto.ops.quant import dequantize, quant_mx, quantize
from pypto.ops.reduce import (amax, amin, argmax, argmin, cumprod, cumsum, mean, prod,
                              rms_norm, softmax, sum, var)
from pypto.ops.layout import deinterleave, interleave, pack, unpack
from pypto.ops.reshaping import reshape, squeeze, unsqueeze
from pypto.ops.selection import clip, where
from pypto.ops.shape import clone, concat, expand_clone, fillpad, pad, permute, transpose, view
from pypto.ops.unary import (abs, acos, acosh, asin, asinh, atan, atanh, bitwise_not, cbrt, ceil,
                             cos, cosh, erf, erfc, exp, exp2, expm1, floor, isfinite, isnan, log,
                             log1p, log2, log10, logical_not, lrelu, neg, reciprocal, relu, round,
                             rsqrt, sigmoid, sign, signbit, sin, sinh, sqrt, tan, tanh, trunc)
from pypto.ops.writes import assemble, atomic_add, move

__all__ = [
    "cast", "arange", "full", "ones", "zeros", "abs", "acos", "acosh", "add", "asin", "asinh",
    "atan", "atan2", "atanh", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "cbrt", "ceil", "clip", "copysign", "cos", "cosh",
    "div", "eq", "erf", "erfc", "exp", "exp2", "expand_exp_dif", "expm1", "floor", "floor_div",
    "fmod", "gcd", "ge", "greater", "gt", "hypot", "isfinite", "isnan", "le", "log", "log1p",
    "log2", "log10", "logical_and", "logical_not", "logical_or", "lrelu", "lt", "maximum",
    "minimum", "mul", "ne", "neg", "pow", "prelu", "reciprocal", "relu", "remainder", "round",
    "rsqrt", "sigmoid", "sign", "signbit", "sin", "sinh", "sqrt", "sub", "tan", "tanh", "trunc",
    "where", "matmul", "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "mean", "prod",
    "rms_norm", "softmax", "sum", "var", "assemble", "clone", "concat", "expand_clone",
    "fillpad", "move", "pad", "permute", "reshape", "squeeze", "transpose", "unsqueeze", "view",
    "argsort", "gather", "gathermask", "index_add", "index_add_", "index_put_", "index_select",
    "one_hot", "scatter", "scatter_", "scatter_update", "topk", "tril", "tril_", "triu", "triu_",
    "axpy_", "ceil_div", "atomic_add", "interleave", "deinterleave", "pack", "unpack",
    "quantize", "dequantize", "quant_mx",
]
