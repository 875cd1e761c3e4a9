"""`pypto.is_loop_begin` / `is_loop_end`, decided at trace time wherever the loop's range
already decides them.

PyPTO has the two tests so that first/last-iteration special cases do not multiply a body's
control paths (compiler_runtime §2.4). Traced as plain branches they would: a body unrolled k
times that tests both edges on each copy would have 2^(2k) paths, nearly all of which no
iteration can take (glm attention's KV loop unrolled 4x: 256 paths, 4 reachable). Here an
edge test is a branch only where an iteration could go either way:
- with a constant step, a copy past the first (index + p steps, p > 0) is never the first
  iteration: the copy's index is at least one step past the loop's start;
- in a tier of a several-factor `unroll_list` (factor k > 1, whose iterations cover k whole
  indices of the range, `control._plan_variants`) only the last copy can be the last iteration;
- on one path, once the copy p steps along is the last iteration, every later copy is too
  (their next index is even further past the end), and once it is not, no earlier copy is;
  once one copy is the first iteration, no other copy is;
- the same test made twice on one path has the same outcome.
Every other outcome is a branch, as any runtime condition. The undecided tests keep PyPTO's
conditions, so which path runs where is unchanged; only paths no iteration takes are gone.
"""
from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.program import Loop, LoopVariant
from pypto.symbolic import Const, Expr, binary


@dataclass(frozen=True)
class Edge:
    """One loop-edge test: `kind` ("begin" or "end") of the loop index `index` (a Sym name)
    `steps` steps along (the unrolled copy it names), or None where the offset is not a
    whole number of a constant step."""

    kind: str
    index: str
    steps: int | None


def begin_condition(e: Expr, loop: Loop) -> Expr:
    return binary("eq", e, loop.start)


def end_condition(e: Expr, loop: Loop) -> Expr:
    nxt = binary("add", e, loop.step)
    negative = isinstance(loop.step, Const) and loop.step.value < 0
    return binary("le" if negative else "ge", nxt, loop.stop)


def steps_along(offset: int, loop: Loop) -> int | None:
    """How many steps past the loop index `offset` is, if a whole number of a constant step."""
    if not isinstance(loop.step, Const) or offset % loop.step.value:
        return None
    return offset // loop.step.value


def decided(edge: Edge, cond: Expr, loop: Loop, variant: LoopVariant,
            taken: list[tuple[Expr, bool]], edges: dict[Expr, Edge]) -> bool | None:
    """The test's outcome when the loop's range or the path's earlier edge outcomes decide it
    (see the module docstring), else None (a branch)."""
    for c, value in taken:   # the same test again on this path: the same answer
        if c == cond:
            return value
    p = edge.steps
    if p is None:
        return None
    if edge.kind == "begin" and p > 0:
        return False
    whole_copies = len(loop.unroll_list) > 1 and variant.factor > 1
    if edge.kind == "end" and whole_copies and p < variant.factor - 1:
        return False
    for cond, value in taken:
        other = edges.get(cond)
        if other is None or other.index != edge.index or other.kind != edge.kind \
                or other.steps is None:
            continue
        if edge.kind == "begin" and value and other.steps != p:
            return False
        if edge.kind == "end" and value and other.steps <= p:
            return True
        if edge.kind == "end" and not value and other.steps >= p:
            return False
    return None
