"""Where Python enters tracing: a kernel body traced into a Program, and the helper decorators.

`trace_kernel` runs the body once per control-flow path over stand-in tensors; `function`
marks a helper inlined into the calling kernel; `dynamic` names a dynamic dim. Builtin
`min`/`max` on symbolic values mean `pypto.min`/`pypto.max` inside both. A trace applies the
active `cache_policy@PARAM` knobs (`frontend.knobs`) to the parameters' buffers.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import types
from typing import Any, Callable

from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError, user_facing
from pypto.frontend import knobs
from pypto.frontend.binding import BoundTensor
from pypto.frontend.control import check_no_open_loops, trace_default_loop
from pypto.frontend.signature import annotation_of
from pypto.frontend.tensor import Tensor
from pypto.frontend.tracer import Tracer, current_tracer, new_program
from pypto.ir.program import Param, Program
from pypto.ir.tensor import StorageKind
from pypto.symbolic import SymbolicScalar, sym_max, sym_min


def _builtin_or_symbolic(name: str) -> Callable:
    builtin = getattr(builtins, name)
    symbolic = sym_min if name == "min" else sym_max

    def pick(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 2 and not kwargs and any(isinstance(a, SymbolicScalar) for a in args):
            return symbolic(*args)
        return builtin(*args, **kwargs)
    pick.__name__ = name
    return pick


_MIN_MAX = {"min": _builtin_or_symbolic("min"), "max": _builtin_or_symbolic("max")}


def with_symbolic_min_max(func: Callable) -> Callable:
    """`func` with builtin `min(a, b)`/`max(a, b)` on a SymbolicScalar meaning pypto.min/max.

    PyPTO parses kernel bodies and maps these two-argument calls; without the mapping Python
    would compare the symbolic values and the tracer would record a runtime branch per call
    (correct, but with needless extra paths). The function runs over a copy of its globals
    (taken per trace) in which only `min` and `max` differ, unless the module defines its own.
    """
    if any(n in func.__globals__ for n in _MIN_MAX):
        return func
    namespace = dict(func.__globals__)
    namespace.update(_MIN_MAX)
    clone = types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__,
                               func.__closure__)
    clone.__kwdefaults__ = func.__kwdefaults__
    return clone


def check_not_nested(name: str, args: tuple) -> None:
    """A kernel launch while another kernel body is being traced is a mistake: a device
    kernel cannot launch a kernel. Say which kernel, where, and what to write instead."""
    tracer = current_tracer()
    if tracer is None or tracer.closed:
        return
    traced = any(isinstance(a, Tensor) for a in args)
    raise PyptoRuntimeError(
        f"kernel '{name}' is a @pypto.frontend.jit kernel and was called "
        f"{'with traced tensors ' if traced else ''}inside kernel '{tracer.kernel_name}' "
        f"while that kernel was being traced; a kernel cannot call another kernel. Make "
        f"'{name}' a helper: decorate it with @pypto.frontend.function (inlined "
        f"into the caller; it may return tensors) or call it as a plain Python function "
        f"(e.g. {name}.func(...) runs its body inline)")


def trace_kernel(name: str, func: Callable, bound: list[BoundTensor],
                 others: dict[str, Any]) -> Program:
    """The Program of kernel `func` called on `bound` tensors and `others` (non-tensor
    arguments): the body runs once per path of its runtime branches."""
    tracer = Tracer(name)
    params, stand_ins = [], []
    for i, b in enumerate(bound):
        storage = tracer.new_storage(StorageKind.ARG, b.name, b.dtype, b.dims, i)
        value = tracer.new_value(b.dims, b.dtype, b.dims, storage, b.name, b.format)
        dyn = tuple(d for d, e in enumerate(b.dims) if not e.is_const())
        params.append(Param(i, b.name, value, dyn))
        stand_ins.append(Tensor._wrap(value))
    body = with_symbolic_min_max(func)
    pinned = knobs.param_policies(name, [p.name for p in params])
    with tracer.active():
        _pin_policies(tracer, params, pinned)   # (what the body's get_cache_policy sees)
        root, paths = trace_default_loop(tracer)
        for _ in paths:
            result = body(*stand_ins, **others)
            if result is not None:
                raise PyptoValueError(
                    f"kernel '{name}' returned a value; kernels have no return "
                    f"value: write results into an output parameter")
        check_no_open_loops(tracer)
    for p in params:   # the search space's parameter sites, with the policy the body set
        knobs.note_param("cache_policy", p.name,
                         knobs.policy_name(tracer.cache_policies.get(p.value.storage.id, {})))
    _pin_policies(tracer, params, pinned)   # a knob wins over the body's own calls
    return new_program(tracer, params, root)


def _pin_policies(tracer: Tracer, params: list[Param], pinned: dict[str, str]) -> None:
    """The `cache_policy@PARAM` knobs' policies on the parameters' buffers."""
    for p in params:
        if p.name in pinned:
            tracer.cache_policies[p.value.storage.id] = knobs.policy_flags(pinned[p.name])


@user_facing
def function(func: Callable | None = None) -> Any:
    """`@pypto.frontend.function`: a helper inlined into the calling kernel. Helpers run as
    plain Python here, so this only checks annotated tensor parameters at call time."""
    def deco(f: Callable) -> Callable:
        sig = inspect.signature(f)

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                raise PyptoTypeError(f"pypto.frontend.function '{f.__name__}' takes positional "
                                     f"arguments only")
            for p, a in zip(sig.parameters.values(), args):
                ann = annotation_of(p, f)
                if ann is not None:
                    if not isinstance(a, Tensor):
                        raise PyptoTypeError(f"'{f.__name__}' parameter '{p.name}' expects a "
                                             f"tensor, got {type(a).__name__}")
                    if ann.dtype is not None and a.dtype != ann.dtype:
                        raise PyptoValueError(f"'{f.__name__}' parameter '{p.name}' expects "
                                              f"{ann.dtype.name}, got {a.dtype.name}")
            return with_symbolic_min_max(f)(*args)
        return wrapper
    return deco if func is None else deco(func)


@user_facing
def dynamic(name: str) -> Any:
    """`pypto.frontend.dynamic("N")`: a named dynamic dim shared by annotations."""
    if not isinstance(name, str) or not name:
        raise PyptoTypeError("pypto.frontend.dynamic takes a non-empty name")
    return SymbolicScalar(name)
