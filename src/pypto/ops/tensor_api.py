"""The op methods and operators of `Tensor`: which op function each one calls, and the source
of `frontend/tensor_methods.py`, where they are defined.

`frontend` sits below `ops` and may not import it, yet `x.exp()` and `x + y` must reach the op
functions. So each method is defined, as code a reader and an editor's go-to-definition find,
in the generated `frontend/tensor_methods.py` (`TensorMethods`, which `Tensor` derives from),
and forwards through a table that `ops` binds at import (`tensor_methods.bind(METHODS)`).
`python -c "import pypto.ops.tensor_api as t; t.main()"` writes that file from `METHODS`;
tests/frontend/test_tensor_methods.py fails when it is not current.
"""
from __future__ import annotations

import inspect
import pathlib
from typing import Any, Callable

from pypto.dtypes import DataType, is_int
from pypto.errors import PyptoRuntimeError
from pypto.frontend.tensor import Tensor
from pypto.frontend.tracer import require_tracer
from pypto.ops import (cast, creation, elementwise, index, indexing, layout, matmul, ordering,
                       quant, reduce, reshaping, selection, shape, unary, writes)

FAMILIES = (cast, creation, elementwise, index, layout, matmul, ordering, quant, reduce,
            reshaping, selection, shape, unary, writes)

# Tensor methods that forward to the op function of the same name (first argument = self).
FORWARDED = [
    "add", "sub", "mul", "div", "fmod", "remainder", "hypot", "prelu", "greater", "maximum",
    "minimum", "matmul", "reshape", "unsqueeze", "squeeze", "view", "clone", "sin", "cos",
    "sinh", "cosh", "asinh", "acosh", "sigmoid", "softmax", "lrelu", "exp", "exp2",
    "expm1", "erf", "erfc", "tanh", "sign", "signbit", "log", "log1p", "log2", "log10",
    "logical_not", "amax", "amin", "argmax", "argmin", "sum", "mean", "prod", "var", "round",
    "rsqrt", "sqrt", "ceil", "floor", "trunc", "reciprocal", "relu", "abs", "neg", "permute",
    "transpose", "cumsum", "cumprod", "triu", "tril", "expand_clone", "pad", "fillpad",
    "gather", "scatter", "scatter_", "scatter_update", "index_add", "index_add_", "topk",
    "cast", "clip", "pow", "isnan", "isfinite", "gcd", "argsort", "index_select",
    "triu_", "tril_", "gathermask", "index_put_", "axpy_", "ceil_div", "quant_mx", "copy",
]


def _find(name: str) -> Callable:
    for mod in FAMILIES:
        fn = getattr(mod, name, None)
        if callable(fn):
            return fn
    raise AssertionError(f"internal: no op function '{name}' for its Tensor method")


def _matmul_operator(a: Tensor, b: Any) -> Tensor:
    """`a @ b`: the output dtype is the rhs dtype for FP16/BF16/FP32, INT32 for INT8."""
    dt = b.dtype
    if dt is DataType.DT_INT8:
        return matmul.matmul(a, b, DataType.DT_INT32)
    if dt not in (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32):
        raise PyptoRuntimeError(f"a @ b is not supported for {dt.name}; use pypto.matmul")
    return matmul.matmul(a, b, dt)


def _floordiv(a: Any, b: Any) -> Tensor:
    """`a // b`: floor(div(a, b)) for float tensors as in PyPTO; for integer tensors, whose div
    truncates, a flooring integer division (so -7 // 2 == -4, as in Python and torch)."""
    t = a if isinstance(a, Tensor) else b
    if is_int(t.dtype):
        return elementwise.floor_div(a, b)
    return unary.floor(elementwise.div(a, b))


def _fill(self: Tensor, value: Any) -> Tensor:
    """Fill the tensor with `value` in place."""
    writes.move(self, creation.full(self.shape, value, self.dtype))
    return self


def _set_cache_policy(self: Tensor, policy: Any, value: bool = True) -> None:
    """Record a cache-policy hint for this tensor's buffer (read by the simulator)."""
    tracer = require_tracer("Tensor.set_cache_policy")
    tracer.cache_policies.setdefault(self.value.storage.id, {})[int(policy)] = bool(value)


def _get_cache_policy(self: Tensor, policy: Any) -> bool:
    """Whether a cache-policy hint is set for this tensor's buffer."""
    tracer = require_tracer("Tensor.get_cache_policy")
    return tracer.cache_policies.get(self.value.storage.id, {}).get(int(policy), False)


def _operators() -> dict[str, tuple[Callable, str]]:
    """Python's operators and the methods that differ from their op function."""
    ew = elementwise
    return {
        "__add__": (lambda s, o: ew.add(s, o), "self + other: pypto.add"),
        "__radd__": (lambda s, o: ew.add(o, s), "other + self: pypto.add"),
        "__sub__": (lambda s, o: ew.sub(s, o), "self - other: pypto.sub"),
        "__rsub__": (lambda s, o: ew.sub(o, s), "other - self: pypto.sub"),
        "__mul__": (lambda s, o: ew.mul(s, o), "self * other: pypto.mul"),
        "__rmul__": (lambda s, o: ew.mul(o, s), "other * self: pypto.mul"),
        "__truediv__": (lambda s, o: ew.div(s, o), "self / other: pypto.div"),
        "__rtruediv__": (lambda s, o: ew.div(o, s), "other / self: pypto.div"),
        "__floordiv__": (lambda s, o: _floordiv(s, o), "self // other (flooring)"),
        "__rfloordiv__": (lambda s, o: _floordiv(o, s), "other // self (flooring)"),
        "__mod__": (lambda s, o: ew.remainder(s, o), "self % other: pypto.remainder"),
        "__rmod__": (lambda s, o: ew.remainder(o, s), "other % self: pypto.remainder"),
        "__pow__": (lambda s, o: ew.pow(s, o), "self ** other: pypto.pow"),
        "__rpow__": (lambda s, o: ew.pow(o, s), "other ** self: pypto.pow"),
        "__neg__": (lambda s: unary.neg(s), "-self: pypto.neg"),
        "__pos__": (lambda s: s, "+self: the tensor itself"),
        "__lt__": (lambda s, o: ew.lt(s, o), "self < other: pypto.lt"),
        "__le__": (lambda s, o: ew.le(s, o), "self <= other: pypto.le"),
        "__gt__": (lambda s, o: ew.gt(s, o), "self > other: pypto.gt"),
        "__ge__": (lambda s, o: ew.ge(s, o), "self >= other: pypto.ge"),
        "__eq__": (lambda s, o: ew.eq(s, o), "self == other: pypto.eq (elementwise)"),
        "__ne__": (lambda s, o: ew.ne(s, o), "self != other: pypto.ne (elementwise)"),
        "__matmul__": (_matmul_operator, _matmul_operator.__doc__),
        "__getitem__": (indexing.getitem, "self[index]: a view, or an element as a scalar"),
        "__setitem__": (indexing.setitem, "self[index] = value: an assemble into the view"),
        "where": (lambda s, condition, other: selection.where(condition, s, other),
                  "where(condition, other): self where condition, else other (torch's order)"),
        "move": (lambda s, other: writes.move(s, other), "move(other): other into self"),
        "assemble": (lambda s, src, offsets: writes.assemble(src, offsets, s),
                     "assemble(src, offsets): src into self at offsets"),
        "fill_": (_fill, _fill.__doc__),
        "set_cache_policy": (_set_cache_policy, _set_cache_policy.__doc__),
        "get_cache_policy": (_get_cache_policy, _get_cache_policy.__doc__),
    }


def _forwarded(name: str) -> tuple[Callable, str]:
    fn = _find(name)
    try:
        sig = str(inspect.signature(fn))
    except (TypeError, ValueError):
        sig = "(...)"
    return fn, f"pypto.{name}{sig} on this tensor (`{fn.__module__}.{fn.__qualname__}`)"


# method name -> (the callable it forwards to, its one-line description)
METHODS: dict[str, tuple[Callable, str]] = {
    **{name: _forwarded(name) for name in FORWARDED}, **_operators()}

TARGET = pathlib.Path(__file__).resolve().parents[1] / "frontend" / "tensor_methods.py"
_HEADER = '''"""Tensor's op methods and operators, generated from `ops/tensor_api.py` METHODS by
`python -c "import pypto.ops.tensor_api as t; t.main()"`; do not edit by hand
(tests/frontend/test_tensor_methods.py fails when it is not current).

Each method forwards to the op function `ops` binds at import (`bind`): `frontend` does not
import `ops`, yet every method is defined here, where a reader and go-to-definition find it.
"""
from __future__ import annotations

from typing import Any, Callable

_OPS: dict[str, Callable[..., Any]] = {}


def bind(table: dict[str, Callable[..., Any]]) -> None:
    """The op function of each method (`ops/tensor_api.py`)."""
    _OPS.update(table)


class TensorMethods:
    """The op methods and operators of `frontend.tensor.Tensor`."""

    __slots__ = ()
    __hash__ = object.__hash__   # (defining __eq__ would otherwise unset it)
'''


def generate() -> str:
    """The source of `frontend/tensor_methods.py`."""
    out = [_HEADER]
    for name, (_, doc) in METHODS.items():
        first = " ".join(str(doc).split())
        out.append(f"\n    def {name}(self, *args: Any, **kwargs: Any) -> Any:\n"
                   f"        {_docstring(first)}\n"
                   f"        return _OPS[{name!r}](self, *args, **kwargs)\n")
    return "".join(out)


def _docstring(text: str) -> str:
    """`text` as a docstring, wrapped at words to fit 100 columns at 8 of indent."""
    lines, line = [], ""
    for word in text.replace("\\", "\\\\").replace('"""', "'''").split():
        if line and len(line) + 1 + len(word) > 84:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return '"""' + "\n        ".join(lines) + '"""'


def main() -> int:
    TARGET.write_text(generate(), encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0

