"""Errors a user can cause, each pointing at the user's own source line.

Every error raised for bad input is a `PyptoError`. The concrete classes also derive from the
builtin type PyPTO raises in the same situation (ValueError, TypeError, RuntimeError), so user
code written against PyPTO that catches those keeps working. Advice that does not stop a kernel
(e.g. a TileShape so small that the expression table overflows) is a `PyptoWarning`.
"""
from __future__ import annotations

import functools
import os
import sys
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


class ConcreteValueError(PyptoValueError):
    """A symbolic scalar was used where a Python value is needed."""


class PyptoWarning(UserWarning):
    """Advice about a kernel that still compiles and runs (issued with `warnings`)."""


def user_facing(fn: Callable[..., T]) -> Callable[..., T]:
    """Mark a public entry point: a `PyptoError` raised anywhere below it is re-raised from
    here with the internal frames dropped (the message already names the user's line)."""
    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except PyptoError as e:
            raise e.with_traceback(None) from None
    return entry
