"""A kernel's signature, checked once at decoration and bound at every call.

Decoration resolves the annotations (string ones where the kernel was defined), requires the
tensor parameters first and rejects a return value in the source; a call binds the caller's
tensors (`binding.py`) and the non-tensor arguments against it, naming the kernel in every error.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

from pypto.errors import PyptoRuntimeError, PyptoValueError, SourceLoc
from pypto.frontend.binding import BoundTensor, bind_tensor
from pypto.frontend.tensor import TensorAnnotation


def _resolve(func: Callable, ann: Any, scope: dict[str, Any] | None) -> Any:
    """A string annotation (`from __future__ import annotations`) evaluated where the kernel
    was defined: the decorating frame's locals, the closure, then the globals. One that does
    not evaluate stays a string (a non-tensor parameter)."""
    if not isinstance(ann, str):
        return ann
    names: dict[str, Any] = dict(scope or {})
    code = getattr(func, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), func.__closure__ or ()):
        try:
            names[name] = cell.cell_contents
        except ValueError:
            pass
    try:
        return eval(ann, getattr(func, "__globals__", {}), names)  # the user's own source
    except Exception:
        return ann


def annotation_of(p: inspect.Parameter, func: Callable | None = None,
                  scope: dict[str, Any] | None = None) -> TensorAnnotation | None:
    """The tensor annotation of parameter `p`, or None for a non-tensor parameter."""
    ann = p.annotation
    if func is not None:
        ann = _resolve(func, ann, scope)
    if ann is inspect.Parameter.empty or not hasattr(ann, "to_tensor"):
        return None
    if isinstance(ann, type):
        return None
    return ann.to_tensor()


def check_source(func: Callable) -> None:
    """Reject a return annotation and `return <value>` in the kernel body, pointing at it."""
    code = func.__code__
    if "return" in getattr(func, "__annotations__", {}):
        raise PyptoValueError(
            f"kernel '{func.__name__}' has a return annotation; kernels have no return value: "
            f"write results into an output parameter (out.move(...) or out[:] = ...)",
            SourceLoc(code.co_filename, code.co_firstlineno, func.__name__))
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError):
        return  # no source (e.g. exec'd code): the runtime check on the return value remains
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return  # e.g. a lambda inside a longer expression: nothing to check statically
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return

    class Finder(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.AST) -> None:
            if node is fdef:
                self.generic_visit(node)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Lambda(self, node: ast.AST) -> None:
            return

        def visit_Return(self, node: ast.Return) -> None:
            if node.value is not None:
                line = first + node.lineno - 1
                raise PyptoValueError(
                    f"kernel '{func.__name__}' returns a value; kernels have no return value: "
                    f"write results into an output parameter (out.move(...) or out[:] = ...)",
                    SourceLoc(code.co_filename, line, func.__name__))

    Finder().visit(fdef)


class KernelSignature:
    """The tensor parameters (annotated, first, positional) and the non-tensor ones after."""

    def __init__(self, func: Callable, scope: dict[str, Any] | None):
        self.name = func.__name__
        self.tensor_params: list[tuple[str, TensorAnnotation]] = []
        self.other_params: list[inspect.Parameter] = []
        for p in inspect.signature(func).parameters.values():
            ann = annotation_of(p, func, scope)
            if ann is not None:
                if self.other_params:
                    raise PyptoValueError(
                        f"kernel '{func.__name__}': tensor parameter '{p.name}' comes after "
                        f"non-tensor parameter '{self.other_params[0].name}'; every tensor "
                        f"parameter must come first")
                if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    raise PyptoValueError(f"tensor parameter '{p.name}' must be positional")
                self.tensor_params.append((p.name, ann))
            else:
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    raise PyptoValueError(f"kernel '{func.__name__}': *args/**kwargs "
                                          f"parameters are not supported")
                self.other_params.append(p)

    def bind(self, args: tuple, kwargs: dict) -> tuple[list[BoundTensor], dict, dict[str, int]]:
        """(bound tensors, non-tensor values by name, dynamic-dim symbol values) of a call."""
        n = len(self.tensor_params)
        if len(args) < n:
            names = ", ".join(name for name, _ in self.tensor_params)
            raise PyptoRuntimeError(f"kernel '{self.name}' needs {n} tensor arguments "
                                    f"({names}) first, got {len(args)} positional arguments")
        symbols: dict[str, int] = {}
        bound = [bind_tensor(i, name, ann, args[i], symbols)
                 for i, (name, ann) in enumerate(self.tensor_params)]
        others = self._bind_others(tuple(args[n:]), kwargs)
        return bound, others, symbols

    def _bind_others(self, rest: tuple, kwargs: dict) -> dict[str, Any]:
        names = [p.name for p in self.other_params]
        if len(rest) > len(names):
            raise PyptoRuntimeError(
                f"kernel '{self.name}' takes {len(self.tensor_params)} tensor and "
                f"{len(names)} non-tensor arguments, got {len(self.tensor_params) + len(rest)} "
                f"positional")
        values = dict(zip(names, rest))
        for k, v in kwargs.items():
            if k not in names:
                raise PyptoRuntimeError(f"kernel '{self.name}' got an unknown keyword "
                                        f"argument '{k}' (non-tensor parameters: {names})")
            if k in values:
                raise PyptoRuntimeError(f"kernel '{self.name}' got '{k}' twice")
            values[k] = v
        for p in self.other_params:
            if p.name not in values:
                if p.default is inspect.Parameter.empty:
                    raise PyptoRuntimeError(f"kernel '{self.name}' is missing the "
                                            f"non-tensor argument '{p.name}'")
                values[p.name] = p.default
        return values
