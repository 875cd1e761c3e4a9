"""Run-time checks of a block's symbolic extents: a valid extent or view offset that evaluates
negative is an error naming the op, the dim, the value and the user's line.

Both executors clamp valid extents to [0, size] when they read or write a window, which is
right for a tile past a tensor's valid edge but turned a user's `valid_shape=[n - 20, 64]`
that came out negative into an op that silently wrote nothing (issue 13). A zero extent
stays legal (an empty task); a negative view offset would read from the wrong end.

NOTE: a block's checks are compiled into one function evaluated per block instance, before
the block runs (the execution plan keeps them: `ExecutionPlan.checks`). Checks whose expressions read tensor elements (`kv_len[b]`) run after the
block instead: the element may be produced inside it.
"""
from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import PyptoRuntimeError
from pypto.ir.operation import Operation
from pypto.ir.program import Block
from pypto.symbolic import Bin, CodeGen, Const, Expr, free_symbols, reads_elements, tuple_code


@dataclass(frozen=True)
class _Check:
    op: Operation
    what: str     # "valid_shape[1]", "offset of dim 0"
    expr: Expr


class BlockChecks:
    """The compiled checks of one block: `before(V, R)` and `after(V, R)` raise on a
    negative extent."""

    def __init__(self, block: Block):
        checks = _collect(block)
        self._before = _compile([c for c in checks if not reads_elements(c.expr)])
        self._after = _compile([c for c in checks if reads_elements(c.expr)])

    def before(self, values: dict, read_element) -> None:
        if self._before is not None:
            _run(self._before, values, read_element)

    def after(self, values: dict, read_element) -> None:
        if self._after is not None:
            _run(self._after, values, read_element)


def _collect(block: Block) -> list[_Check]:
    """Every symbolic valid extent of an op output in `block` (blamed on the first op that
    produces it) and every symbolic view offset, except extents clamped at 0 by construction."""
    seen: set = set()
    out = []

    def add(op: Operation, what: str, e: Expr) -> None:
        if (type(e) is Const and e.value >= 0) or _clamped(e) or e in seen:
            return
        seen.add(e)
        out.append(_Check(op, what, e))
    for op in block.ops:
        for v in op.outputs:
            for d, e in enumerate(v.valid_shape):
                add(op, f"valid_shape[{d}] of its output" if op.opcode != "VIEW"
                    else f"valid_shape[{d}]", e)
        if op.opcode == "VIEW":
            for d, e in enumerate(op.attrs.get("offsets", ())):
                if isinstance(e, Expr):
                    add(op, f"offset of dim {d}", e)
    return out


def _clamped(e: Expr) -> bool:
    """max(0, x), or min(a, b) of two clamped or non-negative parts: never negative."""
    if type(e) is Const:
        return e.value >= 0
    if isinstance(e, Bin) and e.op == "max":
        return _clamped(e.a) or _clamped(e.b)
    if isinstance(e, Bin) and e.op == "min":
        return _clamped(e.a) and _clamped(e.b)
    return False


def _compile(checks: list[_Check]):
    if not checks:
        return None
    gen = CodeGen()
    return gen.function(tuple_code([gen.expr(c.expr) for c in checks]), "checks"), checks


def _run(compiled, values: dict, read_element) -> None:
    fn, checks = compiled
    try:
        got = fn(values, read_element)
    except (KeyError, ZeroDivisionError, TypeError):
        return   # the op's own evaluation reports an unbound symbol or a division by zero
    if min(got) >= 0:
        return
    k = next(i for i, x in enumerate(got) if x < 0)
    c = checks[k]
    names = sorted(free_symbols(c.expr))
    bound = ", ".join(f"{n.split('#')[0]}={values[n]}" for n in names if n in values)
    raise PyptoRuntimeError(
        f"{_op_name(c.op)}: {c.what} evaluates to {got[k]} at run time ({c.expr!r}"
        f"{' with ' + bound if bound else ''}); an extent may be 0 but not negative",
        c.op.loc)


def _op_name(op: Operation) -> str:
    return op.opcode.lower()
