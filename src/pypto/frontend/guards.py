"""Global guards: the simple module globals a kernel reads become part of its compile-cache key.

Tracing runs the kernel body as Python, so `x * SCALE` or `pypto.set_vec_tile_shapes(TILE, 64)`
bakes the value the global had at trace time into the program. Like torch.compile's guards,
the key therefore holds the current value of every *simple* global the kernel's code reads, so
changing one (rebinding it, or mutating a guarded list/dict) recompiles and leaving them alone
does not.

Guarded reads: names the code loads as globals (`LOAD_GLOBAL`) and one attribute read through
a global module (`cfg.TILE` where `cfg` is a module), found in the kernel's code, its nested code
(comprehensions, lambdas, inner functions) and the code of the plain Python helper functions it
calls by a global name of the same module (and theirs, transitively; a
`@pypto.frontend.function` helper counts), plus the kernel's closure variables. Rebinding such
a helper function to another function also recompiles.

Guarded values: int, float, bool, str, None, numpy scalars, enum members (pypto dtypes
included), and tuples, lists and dicts of those with at most `MAX_ENTRIES` entries in all.

Not guarded: a read whose value the kernel's own trace changes (a trace counter, a list the
body appends to: that is state, not configuration, and guarding it would recompile on every
call); larger containers, sets, arrays and other objects; attributes of objects and
classes (`self.tile`, `Cfg.TILE`) and deeper chains (`a.b.c`); globals of other modules reached
through their functions; helpers reached any way other than a global name of the kernel's
module. Those keep the value seen at trace time until something else recompiles the kernel
(pass such values as non-tensor arguments instead: their values always key the cache).
"""
from __future__ import annotations

import dis
import enum
import inspect
import types
from typing import Any, Callable

import numpy as np

MAX_ENTRIES = 64  # a bigger container is not guarded (keying on it would cost every call)

_MISSING = object()
_SCALARS = (int, float, bool, str, type(None))
_EXACT = frozenset(_SCALARS)
_OPAQUE = frozenset({types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                     enum.EnumMeta})
_LOAD_GLOBAL = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_LOAD_ATTR = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def simple_value(value: Any) -> tuple | None:
    """A hashable, type-exact form of a simple value (floats by repr, so -0.0 and nan key
    distinctly and stably), or None when the value is not simple."""
    budget = [MAX_ENTRIES]
    return _freeze(value, budget)


def _freeze(value: Any, budget: list[int]) -> tuple | None:
    kind = type(value)
    if kind in _EXACT:  # NOTE: the common cases first; this runs on every kernel call
        return (kind.__name__, repr(value) if kind is float else value)
    if kind in _OPAQUE:
        return None
    if isinstance(value, enum.Enum):
        return ("enum", type(value).__qualname__, value.name)
    if isinstance(value, _SCALARS):
        return (type(value).__name__, repr(value) if isinstance(value, float) else value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return ("numpy", value.dtype.str, repr(value.item()))
    if type(value) in (tuple, list):
        items: Any = value
    elif type(value) is dict:
        items = [x for kv in value.items() for x in kv]  # keys and values, alternating
    else:
        return None
    budget[0] -= len(items)
    if budget[0] < 0:
        return None
    parts = tuple(_freeze(v, budget) for v in items)
    if any(p is None for p in parts):
        return None
    return (type(value).__name__,) + parts


def _reads(code: types.CodeType) -> tuple[set[str], set[tuple[str, str]]]:
    """The global names `code` (and the code nested in it) loads, and the (global, attribute)
    pairs it reads as `global.attribute`."""
    names: set[str] = set()
    attrs: set[tuple[str, str]] = set()
    previous = None
    for ins in dis.get_instructions(code):
        if ins.opname in _LOAD_GLOBAL and isinstance(ins.argval, str):
            names.add(ins.argval)
        elif ins.opname in _LOAD_ATTR and previous is not None and previous.opname in \
                _LOAD_GLOBAL and isinstance(ins.argval, str):
            attrs.add((previous.argval, ins.argval))
        previous = ins
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            inner_names, inner_attrs = _reads(const)
            names |= inner_names
            attrs |= inner_attrs
    return names, attrs


def _same_module_helper(value: Any, namespace: dict) -> types.FunctionType | None:
    """The plain function behind `value` when it is a helper defined in `namespace`'s module."""
    if not callable(value):
        return None
    try:
        func = inspect.unwrap(value)
    except Exception:  # a __wrapped__ chain that never ends (mocks): not a helper
        return None
    if isinstance(func, types.FunctionType) and func.__globals__ is namespace:
        return func
    return None


class GlobalGuards:
    """The guarded globals of one kernel function; `key()` is their current values."""

    def __init__(self, func: Callable):
        self.func = func
        self._plan: tuple[list[str], list[tuple[str, str]], list[tuple[str, Any]]] | None = None
        self.state: set[str] = set()  # reads the kernel itself changes while traced

    def settle(self, before: tuple) -> tuple:
        """The key to store a program just traced under, given the key taken before tracing.

        A global the trace itself changed (a trace counter, a list the body appends to) is
        state, not configuration: keying on it would recompile on every call, so it is left
        out from now on."""
        after = self.key()
        if after == before:
            return before
        old = dict(item for item in before if isinstance(item[0], str))
        new = dict(item for item in after if isinstance(item[0], str))
        self.state |= {name for name in old.keys() | new.keys() if old.get(name) != new.get(name)}
        return self.key()

    def _build(self) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, Any]]]:
        namespace = self.func.__globals__
        values: set[str] = set()
        attrs: set[tuple[str, str]] = set()
        helpers: list[tuple[str, Any]] = []
        seen: set[types.CodeType] = set()
        todo = [self.func.__code__]
        while todo:
            code = todo.pop()
            if code in seen:
                continue
            seen.add(code)
            names, pairs = _reads(code)
            attrs |= pairs
            for name in names:
                value = namespace.get(name, _MISSING)
                helper = _same_module_helper(value, namespace)
                if helper is not None:
                    helpers.append((name, value))
                    todo.append(helper.__code__)
                else:
                    values.add(name)
        return sorted(values), sorted(attrs), helpers

    def key(self) -> tuple:
        """The guarded reads' current simple values (name, value), followed by the identities
        of the helpers they reach; the reads are found again if a helper was rebound."""
        namespace = self.func.__globals__
        if self._plan is None or any(namespace.get(n, _MISSING) is not f
                                     for n, f in self._plan[2]):
            self._plan = self._build()
        names, attrs, helpers = self._plan
        state = self.state
        out: list[tuple] = []
        for name in names:
            frozen = simple_value(namespace.get(name, _MISSING))
            if frozen is not None and name not in state:
                out.append((name, frozen))
        for name, attr in attrs:
            module = namespace.get(name, _MISSING)
            if isinstance(module, types.ModuleType):
                frozen = simple_value(vars(module).get(attr, _MISSING))
                label = f"{name}.{attr}"
                if frozen is not None and label not in state:
                    out.append((label, frozen))
        for cell_name, cell in zip(self.func.__code__.co_freevars, self.func.__closure__ or ()):
            try:
                frozen = simple_value(cell.cell_contents)
            except ValueError:  # an empty cell: the enclosing function has not bound it yet
                continue
            label = "<closure> " + cell_name
            if frozen is not None and label not in state:
                out.append((label, frozen))
        out.extend((name, f) for name, f in helpers)  # identity: a rebound helper misses
        return tuple(out)
