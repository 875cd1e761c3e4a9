"""The op library: one module per family, plus the `Tensor` methods and operators that forward
to the module-level functions (installed here, once, so `frontend` need not import `ops`)."""
from __future__ import annotations

from typing import Any, Callable

from pypto.frontend.tensor import Tensor
from pypto.ops import cast as _cast
from pypto.ops import creation as _creation
from pypto.ops import elementwise as _ew
from pypto.ops import index as _index
from pypto.ops import indexing as _indexing
from pypto.ops import layout as _layout
from pypto.ops import matmul as _matmul
from pypto.ops import ordering as _ordering
from pypto.ops import quant as _quant
from pypto.ops import reduce as _reduce
from pypto.ops import selection as _selection
from pypto.ops import shape as _shape
from pypto.ops.core import REGISTRY as REGISTRY

FAMILIES = (_cast, _creation, _ew, _index, _layout, _matmul, _ordering, _quant, _reduce,
            _selection, _shape)

# Tensor methods that forward to the function of the same name (first argument = self).
_METHODS = [
    "add", "sub", "mul", "div", "fmod", "remainder", "hypot", "prelu", "greater", "maximum",
    "minimum", "matmul", "reshape", "unsqueeze", "squeeze", "view", "clone", "sin", "cos",
    "sinh", "cosh", "asinh", "acosh", "sigmoid", "softmax", "where", "lrelu", "exp", "exp2",
    "expm1", "erf", "erfc", "tanh", "sign", "signbit", "log", "log1p", "log2", "log10",
    "logical_not", "amax", "amin", "argmax", "argmin", "sum", "mean", "prod", "var", "round",
    "rsqrt", "sqrt", "ceil", "floor", "trunc", "reciprocal", "relu", "abs", "neg", "permute",
    "transpose", "cumsum", "cumprod", "triu", "tril", "expand_clone", "pad", "fillpad",
    "gather", "scatter", "scatter_", "scatter_update", "index_add", "index_add_", "topk",
    "cast", "clip", "pow", "isnan", "isfinite", "gcd", "argsort", "index_select",
    "triu_", "tril_", "gathermask", "index_put_", "axpy_", "ceil_div", "quant_mx", "copy",
]


def _find(name: str) -> Callable | None:
    for mod in FAMILIES:
        fn = getattr(mod, name, None)
        if callable(fn):
            return fn
    return None


def _forward(fn: Callable) -> Callable:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _install() -> None:
    for name in _METHODS:
        fn = _find(name)
        if fn is not None:
            setattr(Tensor, name, _forward(fn))
    ew = _ew
    Tensor.__add__ = lambda s, o: ew.add(s, o)
    Tensor.__radd__ = lambda s, o: ew.add(o, s)
    Tensor.__sub__ = lambda s, o: ew.sub(s, o)
    Tensor.__rsub__ = lambda s, o: ew.sub(o, s)
    Tensor.__mul__ = lambda s, o: ew.mul(s, o)
    Tensor.__rmul__ = lambda s, o: ew.mul(o, s)
    Tensor.__truediv__ = lambda s, o: ew.div(s, o)
    Tensor.__rtruediv__ = lambda s, o: ew.div(o, s)
    Tensor.__floordiv__ = lambda s, o: _floordiv(s, o)
    Tensor.__rfloordiv__ = lambda s, o: _floordiv(o, s)
    Tensor.__mod__ = lambda s, o: ew.remainder(s, o)
    Tensor.__rmod__ = lambda s, o: ew.remainder(o, s)
    Tensor.__pow__ = lambda s, o: ew.pow(s, o)
    Tensor.__rpow__ = lambda s, o: ew.pow(o, s)
    Tensor.__neg__ = lambda s: ew.neg(s)
    Tensor.__pos__ = lambda s: s
    Tensor.__lt__ = lambda s, o: ew.lt(s, o)
    Tensor.__le__ = lambda s, o: ew.le(s, o)
    Tensor.__gt__ = lambda s, o: ew.gt(s, o)
    Tensor.__ge__ = lambda s, o: ew.ge(s, o)
    Tensor.__eq__ = lambda s, o: ew.eq(s, o)
    Tensor.__ne__ = lambda s, o: ew.ne(s, o)
    Tensor.__matmul__ = _tensor_matmul
    Tensor.__getitem__ = _indexing.getitem
    Tensor.__setitem__ = _indexing.setitem
    Tensor.where = lambda s, condition, other: _selection.where(condition, s, other)  # torch
    Tensor.move = lambda s, other: _shape.move(s, other)
    Tensor.assemble = lambda s, src, offsets: _shape.assemble(src, offsets, s)
    Tensor.fill_ = _fill
    Tensor.set_cache_policy = _set_cache_policy
    Tensor.get_cache_policy = _get_cache_policy


def _tensor_matmul(a: Tensor, b: Any) -> Tensor:
    """`a @ b`: the output dtype is the rhs dtype for FP16/BF16/FP32, INT32 for INT8."""
    from pypto.dtypes import DataType
    from pypto.errors import PyptoRuntimeError
    dt = b.dtype
    if dt is DataType.DT_INT8:
        return _matmul.matmul(a, b, DataType.DT_INT32)
    if dt not in (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32):
        raise PyptoRuntimeError(f"a @ b is not supported for {dt.name}; use pypto.matmul")
    return _matmul.matmul(a, b, dt)


def _floordiv(a: Any, b: Any) -> Tensor:
    """`a // b`: floor(div(a, b)) for float tensors as in PyPTO; for integer tensors, whose div
    truncates, a flooring integer division (so -7 // 2 == -4, as in Python and torch)."""
    from pypto.dtypes import is_int
    t = a if isinstance(a, Tensor) else b
    if is_int(t.dtype):
        return _ew.floor_div(a, b)
    return _ew.floor(_ew.div(a, b))


def _fill(self: Tensor, value: Any) -> Tensor:
    _shape.move(self, _creation.full(self.shape, value, self.dtype))
    return self


def _set_cache_policy(self: Tensor, policy: Any, value: bool = True) -> None:
    """Record a cache-policy hint for this tensor's buffer (read by the simulator)."""
    from pypto.frontend.tracer import require_tracer
    tracer = require_tracer("Tensor.set_cache_policy")
    tracer.cache_policies.setdefault(self.value.storage.id, {})[int(policy)] = bool(value)


def _get_cache_policy(self: Tensor, policy: Any) -> bool:
    from pypto.frontend.tracer import require_tracer
    tracer = require_tracer("Tensor.get_cache_policy")
    return tracer.cache_policies.get(self.value.storage.id, {}).get(int(policy), False)


_install()
_install_done = True
