"""Every public op function, gathered from the op families (re-exported by `pypto`)."""
from pypto.ops import _install_done  # noqa: F401  (installs the Tensor methods first)
from pypto.ops.cast import cast
from pypto.ops.creation import arange, full, ones, zeros
from pypto.ops.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
                                   axpy_, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
                                   bitwise_right_shift, bitwise_xor, cbrt, ceil, ceil_div,
                                   copysign, cos, cosh, div, eq, erf, erfc, exp, exp2,
                                   expand_exp_dif, expm1, floor, floor_div, fmod, gcd, ge,
                                   greater, gt, hypot, isfinite, isnan, le, log, log1p, log2,
                                   log10, logical_and, logical_not, logical_or, lrelu, lt,
                                   maximum, minimum, mul, ne, neg, pow, prelu, reciprocal, relu,
                                   remainder, round, rsqrt, sigmoid, sign, signbit, sin, sinh,
                                   sqrt, sub, tan, tanh, trunc)
from pypto.ops.index import (gather, index_add, index_add_, index_put_, index_select, scatter,
                             scatter_, scatter_update)
from pypto.ops.matmul import matmul
from pypto.ops.ordering import argsort, gathermask, one_hot, topk, tril, tril_, triu, triu_
from pypto.ops.quant import dequantize, quant_mx, quantize
from pypto.ops.reduce import (amax, amin, argmax, argmin, cumprod, cumsum, mean, prod,
                              rms_norm, softmax, sum, var)
from pypto.ops.layout import deinterleave, interleave, pack, unpack
from pypto.ops.selection import clip, where
from pypto.ops.shape import (assemble, atomic_add, clone, concat, expand_clone, fillpad, move,
                             pad, permute, reshape, squeeze, transpose, unsqueeze, view)

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
