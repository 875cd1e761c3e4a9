"""Errors a user can cause, each pointing at the user's own source line.

Every error raised for bad input is a `PyptoError`. The concrete classes also derive from the
builtin type PyPTO raises in the same situation (ValueError, TypeError, RuntimeError), so user
code written against PyPTO that catches those keeps working. Advice that does not stop a kernel
(e.g. a TileShape so small that the expression table overflows) is a `PyptoWarning`.
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in user code: the file, the line and the function it is in."""

    file: str
    line: int
    func: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def short(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"


def _is_internal(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE_DIR) or filename.startswith("<frozen")


def user_location(skip_internal: bool = True) -> SourceLoc | None:
    """The innermost stack frame that belongs to user code (outside the pypto package)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (skip_internal and _is_internal(name)) and not name.startswith("<"):
            return SourceLoc(name, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


class PyptoError(Exception):
    """Base of every error the user can cause. The message names the culprit and its location."""

    def __init__(self, message: str, loc: SourceLoc | None = None, *, locate: bool = True):
        if loc is None and locate:
            loc = user_location()
        self.loc = loc
        self.raw_message = message
        super().__init__(f"{message} [at {loc}]" if loc else message)


class PyptoValueError(PyptoError, ValueError):
    """A value (shape, dtype, option value, annotation) does not fit."""


class PyptoTypeError(PyptoError, TypeError):
    """An argument of the wrong kind."""


class PyptoRuntimeError(PyptoError, RuntimeError):
    """A rule of the programming model was broken (tiling, tracing, control flow)."""


class PyptoDependencyError(PyptoRuntimeError):
    """runtime_debug_mode=3: two tasks touch overlapping GM, one writing, with no order between
    them in the stitched task graph (a race)."""


class PyptoBoundsError(PyptoRuntimeError):
    """runtime_debug_mode=4: GM accesses outside their tensor (a view or assemble window)."""


class ConcreteValueError(PyptoValueError):
    """A symbolic scalar was used where a Python value is needed."""


class PyptoWarning(UserWarning):
    """Advice about a kernel that still compiles and runs (issued with `warnings`)."""


def _user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """`tb` with every frame inside the pypto package (and Python's frozen modules) left out."""
    kept = []
    while tb is not None:
        if not _is_internal(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def user_facing(fn: Callable[..., T]) -> Callable[..., T]:
    """Mark a public entry point: a `PyptoError` raised anywhere below it is re-raised from
    here with the internal frames dropped, so the traceback shows the user's own frames (the
    caller's, and the kernel body's when the error came from tracing it) plus this one entry
    frame. Other exceptions (internal faults) keep their full traceback. Marking twice, or a
    call from one entry point into another, still leaves a single entry frame."""
    if getattr(fn, "__pypto_entry__", False):
        return fn

    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except PyptoError as e:
            raise e.with_traceback(_user_frames(e.__traceback__)) from e.__cause__
    entry.__pypto_entry__ = True  # type: ignore[attr-defined]
    return entry


def user_facing_methods(cls: type) -> type:
    """Mark every method and property a user can call on `cls` (its public names and its
    operators) as an entry point, in place; `__init__` included, `__new__` and the attribute
    and pickling protocol left alone."""
    for name, member in list(vars(cls).items()):
        if name in _NOT_ENTRY or (name.startswith("_") and not _is_dunder(name)
                                  and name != "__init__"):
            continue
        if isinstance(member, property):
            setattr(cls, name, property(user_facing(member.fget) if member.fget else None,
                                        user_facing(member.fset) if member.fset else None,
                                        member.fdel, member.__doc__))
        elif isinstance(member, (staticmethod, classmethod)):
            setattr(cls, name, type(member)(user_facing(member.__func__)))
        elif inspect.isfunction(member):
            setattr(cls, name, user_facing(member))
    return cls


_NOT_ENTRY = frozenset({"__new__", "__getattribute__", "__getattr__", "__setattr__",
                        "__delattr__", "__init_subclass__",
                        "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__",
                        "__repr__", "__str__", "__hash__", "__dir__", "__format__",
                        "__sizeof__", "__subclasshook__"})


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def user_facing_namespace(namespace: dict[str, Any], classes: tuple[type, ...] = ()) -> None:
    """Mark every public function in a module namespace (a package's `globals()`) and every
    method of `classes` as an entry point: what the user can name is what reports errors at
    the user's line with the internal frames dropped."""
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        if inspect.isfunction(value) and value.__module__.startswith("pypto") \
                and not getattr(value, "__pypto_entry__", False):
            entry = user_facing(value)
            # pickled by reference as <namespace>.<name>, where it now lives
            entry.__module__, entry.__qualname__ = namespace["__name__"], name
            namespace[name] = entry
    for cls in classes:
        user_facing_methods(cls)
