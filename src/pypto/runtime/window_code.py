"""Generated window code: every tile window of a root function, computed in one Python call.

A root instance's tile windows (offsets and clipped valid extents) are symbolic in the loop
indices. Walking the expression trees per tile op and instance cost more than the numerics;
`compile_windows` turns a root's windows into one generated function that evaluates each
distinct subexpression once and also returns a short key for the instance's valid extents
(what its costs and batch shapes depend on).
"""
from __future__ import annotations

from typing import Any

from pypto.passes.tile_graph import Region, TileOp
from pypto.symbolic import (_PY_CODE, _PY_UN_CODE, Bin, Const, Expr, Sym, Un, _to_code,
                             reads_elements)


def regions_of(op: TileOp) -> list[Region]:
    """A tile op's input regions, then its output's."""
    return list(op.inputs) + ([op.output] if op.output is not None else [])



class _WindowCode:
    """Python source computing windows, one local variable per distinct subexpression.
    NOTE: constant windows are not written out as literals but handed to the code as objects
    (K[i]): compiling a root of thousands of constant tile windows as source took seconds."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict = {}        # Expr / clamp / window text -> local variable
        self.clamps: list[str] = []  # variables holding a symbolic valid extent
        self.consts: list = []       # objects the code refers to as K[i]

    def _bind(self, key, code: str, prefix: str) -> str:
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"{prefix}{len(self.names)}"
            self.lines.append(f"    {name} = {code}")
        return name

    def const(self, value: Any) -> str:
        self.consts.append(value)
        return f"K[{len(self.consts) - 1}]"

    def expr(self, e: Expr) -> str:
        if type(e) is Const:
            return repr(e.value)
        name = self.names.get(e)
        if name is not None:
            return name
        if isinstance(e, Sym):
            code = f"V[{e.name!r}]"
        elif isinstance(e, Bin) and e.op not in ("and", "or"):
            code = _PY_CODE[e.op].format(self.expr(e.a), self.expr(e.b))
        elif isinstance(e, Un):
            code = _PY_UN_CODE[e.op].format(self.expr(e.a))
        else:   # short-circuit forms (select, and, or) stay as written
            code = _to_code(e, [])
        return self._bind(e, code, "t")

    def clamp(self, e: Expr, n: int) -> str:
        key = ("clamp", e, n)
        known = key in self.names
        name = self._bind(key, f"_max(0, _min({self.expr(e)}, {n}))", "c")
        if not known:
            self.clamps.append(name)
        return name

    def region(self, r: Region) -> tuple[str | None, tuple | None, list[str]]:
        """(code, None, valid extents as code) of a window with symbolic parts; (None, the
        window, valid extents as code) of a constant one."""
        if all(type(e) is Const for e in r.offsets) and all(type(e) is Const for e in r.valid):
            valid = tuple(max(0, min(v.value, n)) for v, n in zip(r.valid, r.shape))
            return None, (tuple(o.value for o in r.offsets), valid), [repr(v) for v in valid]
        offs = [self.expr(o) for o in r.offsets]
        valid_code = [repr(max(0, min(v.value, n))) if type(v) is Const else self.clamp(v, n)
                      for v, n in zip(r.valid, r.shape)]
        text = f"({tuple_code(offs)}, {tuple_code(valid_code)})"
        return self._bind(("window", text), text, "w"), None, valid_code


def _literal(code: str) -> bool:
    return code.lstrip("-").isdigit()


def tuple_code(items: list[str]) -> str:
    return f"({', '.join(items)},)" if items else "()"


def compile_windows(calls: list):
    """The generated function of _RootPlan, or None when a window reads tensor elements."""
    gen = _WindowCode()
    per_call, call_keys = [], []       # per call: code, or None and the constant value
    templates: dict[tuple, int] = {}   # a call's valid extents, as code -> its number
    for call in calls:
        codes, values, valid = [], [], []
        for op in call.ops:
            if op.kind == "whole" or op.grid is not None:   # (evaluated tile by tile)
                codes.append(None)
                values.append(None)
                continue
            regions = regions_of(op)
            if any(type(e) is not Const and reads_elements(e)
                   for r in regions for e in r.offsets + r.valid):
                return None
            parts = [gen.region(r) for r in regions]
            valid += [v for _, _, extents in parts for v in extents]
            if all(code is None for code, _, _ in parts):
                codes.append(None)
                values.append(tuple(value for _, value, _ in parts))
            else:
                codes.append(tuple_code([code if code is not None else gen.const(value)
                                          for code, value, _ in parts]))
                values.append(None)
        template = templates.setdefault(tuple(valid), len(templates))
        symbolic = list(dict.fromkeys(v for v in valid if not _literal(v)))
        if any(code is not None for code in codes):
            per_call.append((tuple_code([code if code is not None else gen.const(value)
                                          for code, value in zip(codes, values)]), None))
        else:
            per_call.append((None, tuple(values)))
        call_keys.append((tuple_code([str(template), *symbolic]), None) if symbolic
                         else (None, (template,)))
    if not gen.lines:   # nothing symbolic: one constant answer
        answer = ((), tuple(v for _, v in call_keys), tuple(v for _, v in per_call))
        return lambda V: answer

    def listed(items: list) -> str:
        return tuple_code([code if code is not None else gen.const(value)
                            for code, value in items])
    source = "\n".join(["def windows(V):", *gen.lines,
                        f"    return ({tuple_code(gen.clamps)}, {listed(call_keys)}, "
                        f"{listed(per_call)})"])
    scope = {"_min": min, "_max": max, "K": gen.consts}
    exec(compile(source, "<windows>", "exec"), scope)
    return scope["windows"]
