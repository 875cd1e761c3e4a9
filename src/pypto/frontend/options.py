"""Scoped option state: `pypto.options`, the `set_*`/`get_*` functions, tile shapes, labels.

State is a stack of scopes kept in a context variable. A scope holds flattened keys
(`pass.sg_set_scope`, `runtime.stitch_function_max_num`, `vec_tile_shapes`, ...) and inherits
everything it does not set from the scopes below it. `pypto.options(...)` pushes a scope (as a
context manager or around each call of a decorated function); the `set_*` functions write into
the innermost scope. The tracer pushes one scope per kernel trace ("jit_scope") and one per
loop-body trace, so a tile shape set inside a loop is inherited by nested loops and forgotten
after the loop, as in PyPTO. The tile-shape setters and `set_pass_options(sg_set_scope=...)`
are knob sites (`frontend.knobs`): an active override of the calling line replaces the value.
"""
from __future__ import annotations

import contextvars
import copy
import functools
from typing import Any

from pypto import _config
from pypto.errors import PyptoTypeError, user_facing
from pypto.frontend import knobs
from pypto.frontend.tile_shapes import canonical_cube_tile, canonical_vec_tile, concrete_int
from pypto.ir.operation import CubeTile


class Scope:
    """One level of option state."""

    __slots__ = ("name", "values")

    def __init__(self, name: str, values: dict[str, Any] | None = None):
        self.name = name
        self.values: dict[str, Any] = dict(values or {})


_STACK: contextvars.ContextVar[tuple[Scope, ...]] = contextvars.ContextVar(
    "pypto_option_scopes", default=(Scope("global"),))


def _top() -> Scope:
    return _STACK.get()[-1]


def lookup(key: str, default: Any = None) -> Any:
    """The value of a flattened key in the current scope (inherited from outer scopes); an
    active knob override (`frontend.knobs`) wins over every scope."""
    overridden, value = knobs.option(key)
    if overridden:
        return value
    for scope in reversed(_STACK.get()):
        if key in scope.values:
            return scope.values[key]
    return default


def push_scope(name: str, values: dict[str, Any] | None = None) -> contextvars.Token:
    return _STACK.set(_STACK.get() + (Scope(name, values),))


def pop_scope(token: contextvars.Token) -> None:
    _STACK.reset(token)


def snapshot() -> dict[str, Any]:
    """Every key visible in the current scope, flattened (for cache keys and dumps)."""
    out: dict[str, Any] = {}
    for scope in _STACK.get():
        out.update(scope.values)
    active = knobs.active()
    if active is not None:
        out.update(active.options)
    return out


_GROUP_KWARGS = ("runtime_options", "pass_options", "host_options", "codegen_options",
                 "verify_options", "debug_options", "operation_options")


def flatten(*, codegen_options=None, host_options=None, pass_options=None, runtime_options=None,
            verify_options=None, operation_options=None, debug_options=None,
            vec_tile_shapes=None, cube_tile_shapes=None, conv_tile_shapes=None,
            matrix_size=None) -> dict[str, Any]:
    """Check every option and flatten the groups into prefixed keys."""
    groups = {"codegen": codegen_options, "host": host_options, "pass": pass_options,
              "runtime": runtime_options, "verify": verify_options,
              "operation": operation_options, "debug": debug_options}
    out: dict[str, Any] = {}
    for group, values in groups.items():
        for k, v in _config.check_dict(group, values, f"{group}_options").items():
            out[f"{group}.{k}"] = v
    if vec_tile_shapes is not None:
        out["vec_tile_shapes"] = canonical_vec_tile(tuple(vec_tile_shapes))
    if cube_tile_shapes is not None:
        if isinstance(cube_tile_shapes, CubeTile):
            out["cube_tile_shapes"] = cube_tile_shapes
        else:
            out["cube_tile_shapes"] = canonical_cube_tile(*cube_tile_shapes)
    if conv_tile_shapes is not None:
        out["conv_tile_shapes"] = conv_tile_shapes
    if matrix_size is not None:
        out["matrix_size"] = tuple(concrete_int(x, "matrix_size entry") for x in matrix_size)
    return out


_FLATTEN_KWARGS = _GROUP_KWARGS + ("vec_tile_shapes", "cube_tile_shapes", "conv_tile_shapes",
                                   "matrix_size")


def _check_kwargs(kwargs: dict, what: str) -> None:
    """An unknown keyword names itself, the closest valid one and the caller."""
    import difflib
    for k in kwargs:
        if k not in _FLATTEN_KWARGS:
            close = difflib.get_close_matches(k, _FLATTEN_KWARGS, 1)
            hint = f"; did you mean '{close[0]}'?" if close else \
                f" (valid: {', '.join(_FLATTEN_KWARGS)})"
            raise PyptoTypeError(f"{what} got an unknown keyword '{k}'{hint}")


class options:
    """`pypto.options(...)`: a scope of option values, as a context manager or a decorator.

    Scopes nest and inherit; kernels compiled while a scope is active see its values.
    """

    @user_facing
    def __init__(self, name: str = "", **kwargs: Any):
        self.name = name
        _check_kwargs(kwargs, "pypto.options")
        self.values = flatten(**kwargs)
        self._tokens: list[contextvars.Token] = []

    def __enter__(self) -> "options":
        self._tokens.append(push_scope(self.name or "options", self.values))
        return self

    def __exit__(self, *exc: Any) -> None:
        pop_scope(self._tokens.pop())

    def __call__(self, func: Any) -> Any:
        if not callable(func):
            raise PyptoTypeError("pypto.options(...) decorates a function")
        scope_name = self.name or getattr(func, "__name__", "options")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            token = push_scope(scope_name, self.values)
            try:
                return func(*args, **kwargs)
            finally:
                pop_scope(token)

        return wrapper


@user_facing
def set_options(**kwargs: Any) -> None:
    """Write option values into the innermost scope."""
    _check_kwargs(kwargs, "pypto.set_options")
    _top().values.update(flatten(**kwargs))


def _setter(group: str):
    def setter(**kwargs: Any) -> None:
        if group == "pass" and kwargs.get("sg_set_scope") is not None:
            # a knob site (sg_scope@FILE:LINE): an override replaces this call's scope id
            scope = _config.check_option("pass", "sg_set_scope", kwargs["sg_set_scope"])
            kwargs = {**kwargs, "sg_set_scope": knobs.at_site("sg_scope", scope)}
        set_options(**{f"{group}_options": kwargs})
    setter.__name__ = f"set_{group}_options"
    setter.__doc__ = f"Set {group}_options keys in the current scope (checked by name and range)."
    return user_facing(setter)


def _getter(group: str):
    def getter() -> dict[str, Any]:
        out = {s.name: _config.default(group, s.name)
               for s in _config.SPECS.values() if s.group == group}
        prefix = group + "."
        for k, v in snapshot().items():
            if k.startswith(prefix):
                # a copy: changing the returned dict must not change the scope
                out[k[len(prefix):]] = copy.deepcopy(v)
        return out
    getter.__name__ = f"get_{group}_options"
    return getter


set_pass_options = _setter("pass")
set_runtime_options = _setter("runtime")
set_host_options = _setter("host")
set_codegen_options = _setter("codegen")
set_verify_options = _setter("verify")
set_debug_options = _setter("debug")
set_operation_options = _setter("operation")
get_pass_options = _getter("pass")
get_runtime_options = _getter("runtime")
get_host_options = _getter("host")
get_codegen_options = _getter("codegen")
get_verify_options = _getter("verify")
get_debug_options = _getter("debug")
get_operation_options = _getter("operation")


@user_facing
def set_vec_tile_shapes(*shapes: Any) -> None:
    """Set the vector TileShape for ops recorded after this call (one size per dim)."""
    _top().values["vec_tile_shapes"] = knobs.at_site("vec_tile", canonical_vec_tile(shapes))


def get_vec_tile_shapes() -> list[int]:
    v = lookup("vec_tile_shapes")
    return list(v) if v else []


@user_facing
def set_cube_tile_shapes(m: list, k: list, n: list, enable_split_k: bool = False) -> None:
    """Set the cube TileShape `[mL0,mL1],[kL0,kL1(,kL1b)],[nL0,nL1]` for following matmuls."""
    _top().values["cube_tile_shapes"] = knobs.at_site(
        "cube_tile", canonical_cube_tile(m, k, n, enable_split_k))


def get_cube_tile_shapes() -> tuple[list[int], list[int], list[int], bool]:
    t: CubeTile | None = lookup("cube_tile_shapes")
    if t is None:
        return ([], [], [], False)
    return (list(t.m), list(t.k), list(t.n), t.enable_split_k)


@user_facing
def set_matrix_size(size: list) -> None:
    _top().values["matrix_size"] = tuple(concrete_int(x, "matrix_size entry") for x in size)


def set_conv_tile_shapes(l1: Any, l0: Any = None) -> None:
    _top().values["conv_tile_shapes"] = (l1, l0)


def get_conv_tile_shapes() -> Any:
    return lookup("conv_tile_shapes")


@user_facing
def set_semantic_label(label: str) -> None:
    """Label the ops recorded after this call (shown in the swimlane; usable as merge keys)."""
    if not isinstance(label, str):
        raise PyptoTypeError(f"set_semantic_label takes a str, got {type(label).__name__}")
    _top().values["semantic_label"] = label


def reset_options() -> None:
    """Drop every value set in the current scope."""
    _top().values.clear()


def get_current_scope() -> str:
    return _top().name


def get_options_tree() -> str:
    """A text dump of every declared key with its current value."""
    snap = snapshot()
    lines = []
    for spec in _config.SPECS.values():
        lines.append(f"{spec.key} = {snap.get(spec.key, spec.default)!r}")
    for key in ("vec_tile_shapes", "cube_tile_shapes", "matrix_size", "semantic_label"):
        lines.append(f"{key} = {snap.get(key)!r}")
    return "\n".join(lines)


def set_global_config(key: str, value: Any) -> None:
    _STACK.get()[0].values[f"global.{key}"] = value


def get_global_config(key: str) -> Any:
    return _STACK.get()[0].values.get(f"global.{key}")


__all__ = [
    "options", "set_options", "set_pass_options", "set_runtime_options", "set_host_options",
    "set_codegen_options", "set_verify_options", "set_debug_options", "get_pass_options",
    "get_runtime_options", "get_host_options", "get_codegen_options", "get_verify_options",
    "get_debug_options", "set_vec_tile_shapes", "get_vec_tile_shapes", "set_cube_tile_shapes",
    "get_cube_tile_shapes", "set_matrix_size", "set_conv_tile_shapes", "get_conv_tile_shapes",
    "set_semantic_label", "reset_options", "get_current_scope", "get_options_tree",
    "set_global_config", "get_global_config",
]
