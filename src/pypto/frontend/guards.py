"""Global guards: the simple module globals a kernel reads become part of its compile-cache key.

Tracing runs the kernel body as Python, so `x * SCALE` or `pypto.set_vec_tile_shapes(TILE, 64)`
bakes the value the global had at trace time into the program. Like torch.compile's guards,
the key therefore holds the current value of every *simple* global the kernel's code reads, so
changing one recompiles and leaving them alone does not.

Guarded: names the code loads as globals (`LOAD_GLOBAL`), found in the kernel's code, its
nested code (comprehensions, lambdas, inner functions), and the code of the plain Python helper
functions it calls by a global name from the same module (and theirs, transitively; a
`@pypto.frontend.function` helper counts), plus the kernel's closure variables. A value is
simple when it is an int, float, bool, str, None, an enum member (pypto dtypes included), or a
tuple of those. Rebinding a guarded helper function to another function also recompiles.

Not guarded: mutable containers (list, dict, set), arrays and other objects, attributes read
through a module or object (`cfg.TILE`), globals of other modules, and helpers reached any way
other than a global name of the kernel's module. Those keep the value seen at trace time until
something else recompiles the kernel (pass such values as non-tensor arguments instead: their
values always key the cache).
"""
from __future__ import annotations

import dis
import enum
import inspect
import types
from typing import Any, Callable

_MISSING = object()
_SCALARS = (int, float, bool, str, type(None))
_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})


def simple_value(value: Any) -> tuple | None:
    """A hashable, type-exact form of a simple value (floats by repr, so -0.0 and nan key
    distinctly and stably), or None when the value is not simple."""
    if isinstance(value, enum.Enum):
        return ("enum", type(value).__qualname__, value.name)
    if isinstance(value, _SCALARS):
        return (type(value).__name__, repr(value) if isinstance(value, float) else value)
    if type(value) is tuple:
        parts = tuple(simple_value(v) for v in value)
        return None if any(p is None for p in parts) else ("tuple",) + parts
    return None


def _global_loads(code: types.CodeType) -> set[str]:
    """The global names `code` and the code objects nested in it load."""
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in _LOADS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_loads(const)
    return {n for n in names if isinstance(n, str)}


def _same_module_helper(value: Any, namespace: dict) -> types.FunctionType | None:
    """The plain function behind `value` when it is a helper defined in `namespace`'s module."""
    func = inspect.unwrap(value) if callable(value) else None
    if isinstance(func, types.FunctionType) and func.__globals__ is namespace:
        return func
    return None


class GlobalGuards:
    """The guarded globals of one kernel function; `key()` is their current values."""

    def __init__(self, func: Callable):
        self.func = func
        self._plan: tuple[list[str], list[tuple[str, Any]]] | None = None

    def _build(self) -> tuple[list[str], list[tuple[str, Any]]]:
        namespace = self.func.__globals__
        values: set[str] = set()
        helpers: list[tuple[str, Any]] = []
        seen: set[types.CodeType] = set()
        todo = [self.func.__code__]
        while todo:
            code = todo.pop()
            if code in seen:
                continue
            seen.add(code)
            for name in _global_loads(code):
                value = namespace.get(name, _MISSING)
                helper = _same_module_helper(value, namespace)
                if helper is not None:
                    helpers.append((name, value))
                    todo.append(helper.__code__)
                else:
                    values.add(name)
        return sorted(values), helpers

    def key(self) -> tuple:
        """The guarded globals' current simple values (name, value), sorted by name, followed by
        the identities of the helpers they reach; recomputed if a helper was rebound."""
        namespace = self.func.__globals__
        if self._plan is None or any(namespace.get(n, _MISSING) is not f
                                     for n, f in self._plan[1]):
            self._plan = self._build()
        names, helpers = self._plan
        out = []
        for name in names:
            frozen = simple_value(namespace.get(name, _MISSING))
            if frozen is not None:
                out.append((name, frozen))
        for cell_name, cell in zip(self.func.__code__.co_freevars, self.func.__closure__ or ()):
            try:
                frozen = simple_value(cell.cell_contents)
            except ValueError:  # an empty cell: the enclosing function has not bound it yet
                continue
            if frozen is not None:
                out.append(("<closure> " + cell_name, frozen))
        out.extend((name, f) for name, f in helpers)  # identity: a rebound helper misses
        return tuple(out)
