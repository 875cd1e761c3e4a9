"""Which of the user's source lines each leaf function's task time comes from.

Takes a `CompiledProgram` → per leaf function (by name) its source lines with each one's share
of the leaf's task time, by cost term: `{leaf: [[file, line, {term: share}], ...]}`, lines in
order of first appearance, shares summing to 1 over a leaf's lines and terms. The trace keeps
this table (`profiling.swimlane`, shared arg `lines`) so `pypto-toolkit analyze --by-line`
and the viewer's Source tab work from the file alone.

The attribution rule (once per leaf, not per task): a task's duration is split over the cost
model's terms in proportion to their cycles, then each term over the tile ops that charged it,
and each tile op's part goes to the source line of the tensor op it came from. The terms
(`TERMS`) are the pipes `machine.timing` times: `mte2` (GM reads, their occupied bytes at the
core's GM -> L1 / UB rate), `vector`, `cube`, `mte1` (L1 -> L0 moves), `fix` (fixpipe drains)
and `mte3` (GM writes at the core's out rate); each tile op is charged as `task_cost.CallCost`
charges it, op by op (an L1 load shared with an earlier op of the task is paid by that one).
So a line's share of term t is `cycles(line, t) / sum of every term's cycles` of the leaf, and
the task head and load / store latencies, which no op causes, are spread in the same
proportions. A leaf whose ops charge nothing (every extent empty) splits its time evenly over
its ops' lines, as term `head`.

The shares are computed at full tiles: valid extents that are symbolic (tails, dynamic shapes)
count as the tile's static size, symbolic dims of a tensor as `SYMBOLIC_DIM`; every task of a
leaf then gets the same split (the `analyses.by_line` part scales it by each task's duration).
Ops without a source line count under file "" and line 0.
"""
from __future__ import annotations

from typing import Any

from pypto.dtypes import bytes_of
from pypto.machine.result import SimTask
from pypto.machine.spec import MachineSpec
from pypto.machine.timing import CoreTiming
from pypto.passes import CompiledProgram
from pypto.passes.functions import CallOp
from pypto.passes.kinds import WHOLE
from pypto.passes.tile_graph import TileOp
from pypto.runtime.task_cost import CallCost, add_whole_op
from pypto.symbolic import Const

TERMS = ("mte2", "vector", "cube", "mte1", "fix", "mte3")
EMPTY_TERM = "head"
# a tensor dim that is symbolic (a dynamic shape), for the layout of its GM transfers
SYMBOLIC_DIM = 1 << 16

LineShares = dict[str, list[list[Any]]]


def leaf_line_shares(compiled: CompiledProgram) -> LineShares:
    """Per leaf function, its source lines' shares of its task time (see the module
    docstring); leaves in program order, each from its first call op."""
    out: LineShares = {}
    spec = compiled.spec
    for root in compiled.roots.values():
        escaping = set(root.graph.escaping)
        for call in root.calls:
            if call.leaf.name not in out:
                out[call.leaf.name] = call_line_shares(call, escaping, spec)
    return out


def call_line_shares(call: CallOp, escaping: set[int], spec: MachineSpec) -> list[list[Any]]:
    """[[file, line, {term: share}], ...] of one call op's tile ops (module docstring)."""
    timing = CoreTiming.of(spec, str(call.core))
    shared: set = set()
    per_line: dict[tuple[str, int], dict[str, float]] = {}
    for op in call.ops:
        cycles = op_term_cycles(op, escaping, spec, timing, shared)
        loc = op.src.loc
        terms = per_line.setdefault((loc.file, loc.line) if loc is not None else ("", 0), {})
        for term, c in zip(TERMS, cycles):
            if c > 0:
                terms[term] = terms.get(term, 0.0) + c
    total = sum(sum(t.values()) for t in per_line.values())
    if total <= 0:
        share = 1.0 / len(per_line) if per_line else 0.0
        return [[f, line, {EMPTY_TERM: share}] for f, line in per_line]
    return [[f, line, {t: c / total for t, c in terms.items()}]
            for (f, line), terms in per_line.items()]


def op_term_cycles(op: TileOp, escaping: set[int], spec: MachineSpec, timing: CoreTiming,
                   shared: set) -> tuple[float, ...]:
    """The cycles one tile op charges each of `TERMS` at full tiles; `shared`: the L1 loads
    the task's earlier ops paid for (updated)."""
    part = SimTask(-1, -1, -1, "", -1, -1, "", -1, "")
    if op.kind == WHOLE:
        in_bytes = sum(_whole_bytes(v) for v in op.src.inputs)
        out_bytes = sum(_whole_bytes(v) for v in op.src.outputs)
        add_whole_op(part, in_bytes, out_bytes, spec, [], [])
    else:
        windows = [_full_window(r) for r in (*op.inputs, *(() if op.output is None
                                                            else (op.output,)))]
        CallCost([op], [tuple(windows)], escaping, spec, _static_shape, shared).apply(
            part, [tuple(windows)])
    mte3 = part.mte3_moved if part.mte3_moved > part.mte3_bytes else part.mte3_bytes
    return (part.mte2_moved / timing.in_bw if part.mte2_moved else
            part.mte2_bytes / timing.in_bw,
            part.vector_cycles, part.cube_cycles, part.mte1_cycles, part.fix_cycles,
            mte3 / timing.out_bw)


def _dim(d: Any, fallback: int) -> int:
    return d.value if isinstance(d, Const) else fallback


def _full_window(region: Any) -> tuple[tuple, tuple[int, ...]]:
    """(offsets, valid extents) of a region at full tile: a symbolic offset stands as its
    text (it only tells which loads coincide), a symbolic valid extent as the tile's size."""
    offsets = tuple(o.value if isinstance(o, Const) else repr(o) for o in region.offsets)
    return offsets, tuple(_dim(v, s) for v, s in zip(region.valid, region.shape))


def _static_shape(value: Any) -> tuple[int, ...]:
    return tuple(_dim(d, SYMBOLIC_DIM) for d in value.shape)


def _whole_bytes(value: Any) -> float:
    n = 1
    for d in _static_shape(value):
        n *= d
    return float(n * bytes_of(value.dtype))
