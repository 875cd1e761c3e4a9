"""Generated window code: the tile windows (offsets and clipped valid extents) of a tile op, or
of every tile op of a root function, computed by one Python function.

A root instance's tile windows are symbolic in the loop indices. Walking the expression trees
per tile op and instance cost more than the numerics; `root_windows` turns a root's windows into
one generated function (`symbolic.CodeGen`) that evaluates each distinct subexpression once and
also returns a short key for the instance's valid extents (what its costs and batch shapes
depend on). `op_windows` is the same code for one tile op, for windows that read tensor
elements (evaluated when the op runs, after the elements are written).
"""
from __future__ import annotations

from typing import Any, Callable

from pypto.passes.tile_graph import Region, TileOp
from pypto.symbolic import CodeGen, Const, Expr, reads_elements, tuple_code
from pypto.symbolic.evaluate import ArrayCodeGen


def regions_of(op: TileOp) -> list[Region]:
    """A tile op's input regions, then its output's."""
    return list(op.inputs) + ([op.output] if op.output is not None else [])


def window_exprs(op: TileOp) -> list[Expr]:
    """The expressions of `op`'s windows in the order its window function evaluates them."""
    return [e for r in regions_of(op) for e in (*r.offsets, *r.valid)]


def _constant(r: Region) -> tuple | None:
    """The window of a region whose offsets and valid extents are constants, else None."""
    if all(type(e) is Const for e in r.offsets) and all(type(e) is Const for e in r.valid):
        return (tuple(o.value for o in r.offsets),
                tuple(max(0, min(v.value, n)) for v, n in zip(r.valid, r.shape)))
    return None


class _WindowCode(CodeGen):
    """CodeGen plus windows: one local per distinct symbolic window and clamped extent."""

    def __init__(self) -> None:
        super().__init__()
        self.clamps: list[str] = []  # variables holding a symbolic valid extent

    def clamp(self, e: Expr, n: int) -> str:
        key = ("clamp", e, n)
        known = self.has(key)
        name = self.local(key, f"_max(0, _min({self.expr(e)}, {n}))", "c")
        if not known:
            self.clamps.append(name)
        return name

    def region(self, r: Region) -> tuple[str | None, tuple | None, list[str]]:
        """(code, None, valid extents as code) of a window with symbolic parts; (None, the
        window, valid extents as code) of a constant one."""
        window = _constant(r)
        if window is not None:
            return None, window, [repr(v) for v in window[1]]
        offs = [self.expr(o) for o in r.offsets]
        valid_code = [repr(max(0, min(v.value, n))) if type(v) is Const else self.clamp(v, n)
                      for v, n in zip(r.valid, r.shape)]
        text = f"({tuple_code(offs)}, {tuple_code(valid_code)})"
        return self.local(("window", text), text, "w"), None, valid_code

    def listed(self, items: list) -> str:
        """Code of a tuple of (code, None) or (None, constant value) items."""
        return tuple_code([code if code is not None else self.obj(value)
                           for code, value in items])


def op_windows(op: TileOp) -> Callable[..., tuple]:
    """f(V, R) -> ((offsets, clipped valid) per input region, then output); f.reads_elements
    says whether a window reads tensor elements."""
    gen = _WindowCode()
    parts = [gen.region(r) for r in regions_of(op)]
    if all(code is None for code, _, _ in parts):
        fn = gen.function(gen.obj(tuple(value for _, value, _ in parts)), "op_windows")
    else:
        fn = gen.function(gen.listed([(code, value) for code, value, _ in parts]), "op_windows")
    fn.reads_elements = gen.reads_elements
    return fn


def _literal(code: str) -> bool:
    return code.lstrip("-").isdigit()


def _call_windows(gen: _WindowCode, call: Any) -> tuple[list, list[str]] | None:
    """(per tile op: (code, None) or (None, constant windows); the call's valid extents as
    code), or None when a window reads tensor elements."""
    items, valid = [], []
    for op in call.ops:
        if op.kind == "whole" or op.grid is not None:   # (evaluated tile by tile)
            items.append((None, None))
            continue
        regions = regions_of(op)
        if any(type(e) is not Const and reads_elements(e)
               for r in regions for e in r.offsets + r.valid):
            return None
        parts = [gen.region(r) for r in regions]
        valid += [v for _, _, extents in parts for v in extents]
        if all(code is None for code, _, _ in parts):
            items.append((None, tuple(value for _, value, _ in parts)))
        else:
            items.append((gen.listed([(code, value) for code, value, _ in parts]), None))
    return items, valid


class _ArrayWindowCode(_WindowCode, ArrayCodeGen):
    """`_WindowCode` over numpy arrays (`ArrayCodeGen`)."""


def root_window_arrays(calls: list) -> Callable[..., tuple] | None:
    """`root_windows` for many instances at once: f(V), V holding a numpy array for some
    symbols (a loop's indices), gives the same nested result with an array wherever a value
    varies over them (ints where it does not). For instantiating a loop's root instances in
    bulk; None where `root_windows` is None."""
    return root_windows(calls, _ArrayWindowCode)


def root_windows(calls: list, code: type = _WindowCode) -> Callable[..., tuple] | None:
    """f(V) -> (vkey, valid key per call, windows per call per tile op) of a root function
    (plan.RootPlan), or None when a window reads tensor elements."""
    gen = code()
    per_call, call_keys = [], []       # per call: (code, None) or (None, the constant value)
    templates: dict[tuple, int] = {}   # a call's valid extents, as code -> its number
    for call in calls:
        found = _call_windows(gen, call)
        if found is None:
            return None
        items, valid = found
        template = templates.setdefault(tuple(valid), len(templates))
        symbolic = list(dict.fromkeys(v for v in valid if not _literal(v)))
        if any(code is not None for code, _ in items):
            per_call.append((gen.listed(items), None))
        else:
            per_call.append((None, tuple(value for _, value in items)))
        call_keys.append((tuple_code([str(template), *symbolic]), None) if symbolic
                         else (None, (template,)))
    if not gen.lines:   # nothing symbolic: one constant answer
        answer = ((), tuple(v for _, v in call_keys), tuple(v for _, v in per_call))
        return lambda V: answer
    return gen.function(f"({tuple_code(gen.clamps)}, {gen.listed(call_keys)}, "
                        f"{gen.listed(per_call)})", "windows")
