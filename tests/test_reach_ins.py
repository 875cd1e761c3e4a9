"""No package reaches into another package's private names: the layering that imports cannot
show (`tests/test_layers.py` sees imports; a tuner that drives a kernel by `kernel._call` and
swaps `kernel._pending_run` imports nothing from the driver, yet depends on its insides).

A name is private when it starts with one underscore. Each package (the layer units of
`test_layers.UNIT`: `runtime`, `tune`, the base modules one by one, ...) owns the private
names it defines: `def _f`, `class _C`, module-level and class-body assignments, and attributes
it assigns through `self` / `cls`. A module may use `obj._name` (read or write) only when its
own package defines `_name`, and may import `_name` only from its own package. Names are
matched by spelling, not by type (the check reads source, not objects): a private name both
packages define passes, so the check can miss a reach-in but never invents one. The few
private names of the standard library that are its documented API (`sys._getframe`,
`namedtuple._replace`, ...) are allowed, each with its reason.

Stricter for `pypto.tune`, which the issue that made it asked to drive kernels through their
public API only: there, `obj._name` is allowed only on `self` / `cls`.
"""
from __future__ import annotations

import ast
import pathlib

from test_layers import MODULES, _unit

# private names of the standard library that are its public API
STDLIB = {
    "_getframe": "sys._getframe: the documented way to read a caller's frame",
    "_exit": "os._exit: end a forked worker without running the parent's exit handlers",
    "_replace": "namedtuple._replace: documented (the underscore avoids field clashes)",
    "_asdict": "namedtuple._asdict: documented",
    "_fields": "namedtuple._fields: documented",
    "_make": "namedtuple._make: documented",
    "_field_defaults": "namedtuple._field_defaults: documented",
    "_value_": "enum member's _value_: the documented hook of Enum.__new__",
    "_name_": "enum member's _name_: documented",
    "_missing_": "Enum._missing_: the documented lookup hook",
    "_generate_next_value_": "Enum._generate_next_value_: the documented hook",
    "_ignore_": "Enum._ignore_: documented",
}
STRICT = {"tune"}   # packages that may touch private attributes of `self` / `cls` only


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _owner_names(tree: ast.Module) -> set[str]:
    """The private names a module defines (see the module docstring)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
                    elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                            and sub.value.id in ("self", "cls"):
                        names.add(sub.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {n for n in names if _private(n)}


def reach_ins(sources: dict[str, str]) -> list[str]:
    """Every reach-in in `sources` ({dotted module name: its text}), as "module:line what"."""
    trees = {m: ast.parse(text) for m, text in sources.items()}
    owned: dict[str, set[str]] = {}
    for module, tree in trees.items():
        owned.setdefault(_unit(module), set()).update(_owner_names(tree))
    found = []
    for module, tree in trees.items():
        unit = _unit(module)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr) \
                    and node.attr not in STDLIB:
                own_object = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if own_object or (unit not in STRICT and node.attr in owned[unit]):
                    continue
                found.append(f"{module}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module \
                    and node.module.split(".")[0] == "pypto" and not node.level:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    if _private(alias.name) and target not in MODULES \
                            and _unit(node.module) != unit:
                        found.append(f"{module}:{node.lineno} import {target}")
    return found


def _tree_sources() -> dict[str, str]:
    return {m: pathlib.Path(p).read_text(encoding="utf-8") for m, p in MODULES.items()}


def test_no_module_touches_another_packages_private_names():
    found = reach_ins(_tree_sources())
    assert not found, "private names used outside their package:\n" + "\n".join(found)


def test_a_planted_reach_in_is_found():
    sources = _tree_sources()
    sources["pypto.tune.planted"] = "def f(kernel):\n    return kernel._call((), {})\n"
    sources["pypto.toolkit.planted"] = ("from pypto.frontend.knobs import _RECORDING\n"
                                        "def g(k):\n    k._pending_run = None\n")
    found = set(reach_ins(sources))
    assert {"pypto.tune.planted:2 ._call", "pypto.toolkit.planted:1 import "
            "pypto.frontend.knobs._RECORDING", "pypto.toolkit.planted:3 ._pending_run"} <= found


def test_the_tune_package_may_touch_only_its_own_objects_privates():
    """In `tune`, even a private name the package defines is off limits on another object."""
    sources = {"pypto.tune.a": "class A:\n    def __init__(self):\n        self._x = 1\n",
               "pypto.tune.b": "def f(a):\n    return a._x\n"}
    assert reach_ins(sources) == ["pypto.tune.b:2 ._x"]
