"""Control flow while tracing: `pypto.loop`, `pypto.loop_unroll`, `pypto.cond`, loop-edge tests.

`pypto.loop` is a generator. For each unroll variant and each control path of its body it
yields the symbolic index once per unrolled copy; the user's `for` body runs once per yield, so
the body is traced once per (variant, path). Python `for` over a range simply unrolls into the
current block, as in PyPTO. The `unroll_list` of a `pypto.loop` / `pypto.loop_unroll` call is
a knob site (`unroll@FILE:LINE`, `frontend.knobs`): an override replaces it, checked as the
call checks its own.
"""
from __future__ import annotations

from typing import Any, Iterator

from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError, user_location
from pypto.frontend import knobs, loop_edges
from pypto.frontend.tracer import PathExplorer, Tracer, require_tracer
from pypto.ir.program import Loop, LoopVariant
from pypto.symbolic import (Const, Expr, Sym, SymbolicScalar, as_expr, binary, wrap, polynomial)


def _bound(v: Any, what: str) -> Expr:
    if isinstance(v, float) or isinstance(v, bool):
        raise PyptoTypeError(f"pypto.loop {what} must be an int or SymbolicScalar, got {v!r}")
    try:
        return as_expr(v)
    except PyptoTypeError:
        raise PyptoTypeError(f"pypto.loop {what} must be an int or SymbolicScalar, "
                             f"got {type(v).__name__}") from None


def _parse_bounds(bounds: tuple) -> tuple[Expr, Expr, Expr]:
    if not 1 <= len(bounds) <= 3:
        raise PyptoTypeError(f"pypto.loop takes 1 to 3 positional bounds (stop | start, stop"
                             f"[, step]), got {len(bounds)}")
    if len(bounds) == 1:
        start, stop, step = Const(0), _bound(bounds[0], "stop"), Const(1)
    else:
        start, stop = _bound(bounds[0], "start"), _bound(bounds[1], "stop")
        step = _bound(bounds[2], "step") if len(bounds) == 3 else Const(1)
    if isinstance(step, Const) and step.value == 0:
        raise PyptoValueError("pypto.loop step must not be 0")
    return start, stop, step


def _unroll_factors(unroll_list: Any) -> tuple[int, ...]:
    if unroll_list is None:
        return (1,)
    if not isinstance(unroll_list, (list, tuple)) or not unroll_list:
        raise PyptoTypeError(f"unroll_list must be a non-empty list of ints, got {unroll_list!r}")
    for f in unroll_list:
        if isinstance(f, bool) or not isinstance(f, int) or f <= 0:
            raise PyptoValueError(f"unroll_list entries must be positive ints, got {f!r}")
    return tuple(sorted(set(unroll_list), reverse=True))


def _plan_variants(start: Expr, stop: Expr, step: Expr,
                   factors: tuple[int, ...]) -> list[tuple[int, Expr, Expr, Expr]]:
    """(factor, start, stop, step) per variant. A single factor steps over the whole range (the
    tail copies get zero valid shape); several factors split the range greedily, largest first,
    each continuing where the previous one stopped, so every index is covered exactly once."""
    if len(factors) == 1:
        k = factors[0]
        return [(k, start, stop, binary("mul", step, k))]
    if factors[-1] != 1:
        raise PyptoValueError(f"unroll_list {list(factors)} must contain 1 (it handles the "
                              f"remainder of the range)")
    if not (isinstance(step, Const) and step.value > 0):
        raise PyptoValueError("a loop with several unroll factors needs a positive int step")
    plans = []
    cur = start
    for k in factors:
        chunk = binary("mul", step, k)
        if k == 1:
            end = binary("max", cur, stop)
        else:
            span = binary("max", binary("sub", stop, cur), 0)
            end = binary("add", cur, binary("mul", binary("floordiv", span, chunk), chunk))
        plans.append((k, cur, end, chunk))
        cur = end
    return plans


def loop(*bounds: Any, name: str | None = None, idx_name: str | None = None,
         unroll_list: list[int] | None = None, submit_before_loop: bool = False,
         parallel: bool = False) -> Iterator[SymbolicScalar]:
    """A device loop: `for i in pypto.loop(stop | start, stop[, step], name=..., ...)`.

    Each (unroll factor, control path) of the body becomes one root function; iterations are
    instantiated at run time. `unroll_list=[k, ..., 1]` traces the body k times per root so
    that one root instance covers k consecutive indices; it does not change what is computed.
    """
    tracer = require_tracer("pypto.loop")
    for what, value in (("name", name), ("idx_name", idx_name)):
        if value is not None and not isinstance(value, str):
            raise PyptoTypeError(f"pypto.loop {what} must be a str, got {value!r}")
    start, stop, step = _parse_bounds(bounds)
    factors = _unroll_factors(unroll_list)
    unroll = knobs.at_site(
        "unroll", None if unroll_list is None else factors,
        check=lambda u: _plan_variants(start, stop, step, _unroll_factors(u)),
        note=("pypto.loop", _trips(start, stop, step)))
    return _loop(tracer, start, stop, step, _unroll_factors(unroll), name, idx_name,
                 submit_before_loop, parallel)


def _loop(tracer: Tracer, start: Expr, stop: Expr, step: Expr, factors: tuple[int, ...],
          name: str | None, idx_name: str | None, submit_before_loop: bool,
          parallel: bool) -> Iterator[SymbolicScalar]:
    plans = _plan_variants(start, stop, step, factors)
    n = tracer.next_loop_number()
    lp = Loop(name or f"loop_{n}", idx_name or f"loop_idx_{n}", start, stop, step, factors,
              bool(submit_before_loop), bool(parallel), loc=user_location())
    return _trace_loop(tracer, lp, plans, step)


def _trips(start: Expr, stop: Expr, step: Expr) -> int | None:
    """The iteration count when the bounds are static (for the tuner's unroll candidates)."""
    if not all(isinstance(e, Const) for e in (start, stop, step)):
        return None
    return max(0, -(-(stop.value - start.value) // step.value))


def _trace_loop(tracer: Tracer, lp: Loop, plans: list, user_step: Expr) -> Iterator[Any]:
    tracer.begin_loop(lp)
    finished = False
    try:
        for factor, vstart, vstop, vstep in plans:
            index = Sym(f"{lp.idx_name}#{tracer.next_id()}", lp.idx_name)
            variant = LoopVariant(factor, index, vstart, vstop, vstep)
            lp.variants.append(variant)
            tracer.loop_indices[index.name] = (lp, variant)
            explorer = PathExplorer(lp.name)
            while True:
                frame = tracer.enter_path(lp, variant, explorer)
                for copy in range(factor):
                    yield wrap(binary("add", index, binary("mul", user_step, copy)))
                tracer.exit_path(frame)
                if not explorer.advance():
                    break
            variant.paths = explorer.paths
            variant.body = explorer.tree()
        finished = True
    finally:
        if not finished:
            tracer.abandon(lp)


def trace_default_loop(tracer: Tracer, name: str = "default_loop_1") -> tuple[Loop, Iterator]:
    """The implicit `loop(1)` around a kernel body: yields once per top-level control path."""
    lp = Loop(name, "default_idx", Const(0), Const(1), Const(1))
    return lp, _trace_loop(tracer, lp, [(1, Const(0), Const(1), Const(1))], Const(1))


def loop_unroll(*bounds: Any, name: str | None = None, idx_name: str | None = None,
                unroll_list: list[int] | None = None, submit_before_loop: bool = False,
                parallel: bool = False) -> Iterator[tuple[SymbolicScalar, int]]:
    """Yield `(idx, k)`: for each factor k (largest first, 1 always added) one `pypto.loop`
    whose iterations each cover k consecutive indices starting at idx. The range is split
    greedily from where the previous factor stopped, so with [64, 16, 4] and N=37 the tiers run
    0x64, 2x16, 1x4, 1x1 and every index is handled exactly once (PyPTO computes remainders from
    the original start, which double-processes when factors do not divide each other; that bug
    is not reproduced). `k` is a Python int, usable in static shapes and tile shapes.
    """
    tracer = require_tracer("pypto.loop_unroll")
    start, stop, step = _parse_bounds(bounds)
    if not (isinstance(step, Const) and step.value > 0):
        raise PyptoValueError("pypto.loop_unroll needs a positive int step")
    unroll = knobs.at_site("unroll", None if unroll_list is None else
                           _unroll_factors(unroll_list), check=_unroll_factors,
                           note=("pypto.loop_unroll", _trips(start, stop, step)))
    factors = tuple(sorted(set(_unroll_factors(unroll)) | {1}, reverse=True))
    base = name or f"loop_{tracer.next_loop_number()}"
    return _unroll_gen(tracer, start, stop, step, factors, base, idx_name, submit_before_loop,
                       parallel)


def _unroll_gen(tracer: Tracer, start: Expr, stop: Expr, step: Expr, factors: tuple[int, ...],
                base: str, idx_name: str | None, submit_before_loop: bool,
                parallel: bool) -> Iterator:
    cur = start
    for i, k in enumerate(factors):
        chunk = binary("mul", step, k)
        if k == 1:
            end = binary("max", cur, stop)  # the last tier takes the rest, partial step too
        else:
            span = binary("max", binary("sub", stop, cur), 0)
            end = binary("add", cur, binary("mul", binary("floordiv", span, chunk), chunk))
        # (not `loop`: a tier's loop is no knob site of its own)
        tier = _loop(tracer, cur, end, chunk, (1,), f"{base}_LoopUnroll{k}", idx_name,
                     submit_before_loop and i == 0, parallel)
        for idx in tier:
            yield idx, k
        cur = end


def _loop_of_index(idx: Any, what: str) -> tuple[Expr, Loop, LoopVariant, str, int]:
    """The loop that yielded `idx`: (idx as an Expr, its loop, the variant being traced, the
    index symbol's name, idx's constant offset from that symbol)."""
    tracer = require_tracer(what)
    e = as_expr(idx) if isinstance(idx, (SymbolicScalar, int)) else None
    if e is not None:
        poly = polynomial(e)
        syms = [m for m in poly if m]
        if len(syms) == 1 and len(syms[0]) == 1 and isinstance(syms[0][0], Sym):
            entry = tracer.loop_indices.get(syms[0][0].name)
            if entry is not None and poly[syms[0]] == 1:
                return e, entry[0], entry[1], syms[0][0].name, poly.get((), 0)
    raise PyptoValueError(f"{what}: not loop index ({idx!r} is not a variable yielded by "
                          f"pypto.loop)")


def _loop_edge(kind: str, idx: Any, what: str) -> SymbolicScalar:
    """A loop-edge test: a constant where the loop's range decides it, else a runtime
    condition (`frontend.loop_edges`)."""
    e, lp, variant, index, offset = _loop_of_index(idx, what)
    cond = (loop_edges.begin_condition if kind == "begin" else loop_edges.end_condition)(e, lp)
    edge = loop_edges.Edge(kind, index, loop_edges.steps_along(offset, lp))
    tracer = require_tracer(what)
    taken = [(c, v) for c, v, _ in tracer.frames[-1].explorer.taken] if tracer.frames else []
    known = loop_edges.decided(edge, cond, lp, variant, taken, tracer.loop_edges)
    if known is not None:
        return SymbolicScalar(Const(int(known)))
    tracer.loop_edges[cond] = edge
    return SymbolicScalar(cond)


def is_loop_begin(idx: Any) -> SymbolicScalar:
    """True (at run time) on the first iteration of the loop that yielded `idx`."""
    return _loop_edge("begin", idx, "pypto.is_loop_begin")


def is_loop_end(idx: Any) -> SymbolicScalar:
    """True (at run time) on the last iteration of the loop that yielded `idx`."""
    return _loop_edge("end", idx, "pypto.is_loop_end")


def cond(scalar: Any, file: str | None = None, lineno: int | None = None) -> bool:
    """`if pypto.cond(expr):` — a runtime branch (both outcomes are traced)."""
    if (file is None) != (lineno is None):
        raise PyptoValueError("pypto.cond: file and lineno must be given together")
    if isinstance(scalar, bool):
        return scalar
    if isinstance(scalar, int):
        return bool(scalar)
    if not isinstance(scalar, SymbolicScalar):
        raise PyptoTypeError(f"pypto.cond takes an int or SymbolicScalar, got "
                             f"{type(scalar).__name__}")
    require_tracer("pypto.cond")
    return bool(scalar)


def check_no_open_loops(tracer: Tracer) -> None:
    tracer.check_consistent()
    if len(tracer.frames) > 1:
        raise PyptoRuntimeError(f"pypto.loop '{tracer.frames[-1].loop.name}' was not finished")
