"""The compiler: a traced `Program` → tile graphs, subgraphs, leaf and root functions.

The pipeline is `compile_program`, read top to bottom; each step is one module. Each step
returns new values and leaves its inputs alone; the compiled objects (`CompiledProgram`,
`RootFunction`, `CallOp`, `TileOp`, `TileGraph`) are frozen and hold nothing the run side
caches. The one exception on the way: tile ops are built as mutable drafts and frozen in place
by `build_root` (why: tile_graph.py). Whatever a compilation caches (interned constants,
offset splits, signature parts) lives in tables owned by that compilation, not the module.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from pypto._config import CompileOptions, CompStage
from pypto.ir.program import Program
from pypto.machine.spec import MachineSpec
from pypto.symbolic import Expr, element_reads
from pypto.passes.capacity import check_capacity
from pypto.passes.deps import link
from pypto.passes.expr_table import check_expression_table
from pypto.passes.untiled import warn_untiled
from pypto.passes.expand import expand_block
from pypto.passes.functions import RootFunction, Signatures, build_root
from pypto.passes.merge import breadth_merge
from pypto.passes.merge_settings import block_settings
from pypto.passes.partition import partition
from pypto.passes.tile_graph import TileGraph, TileOp, freeze

# Synthetic values (reduction partials) get ids far above any traced id.
_SYNTHETIC_IDS = 1 << 40


@dataclass(frozen=True, eq=False)
class CompiledProgram:
    program: Program
    spec: MachineSpec
    roots: dict[str, RootFunction]
    # host_options.compile_stage the pipeline stopped after (ALL_COMPLETE: it did not stop);
    # stopped after TILE_GRAPH, `partitions` holds each block's tile graph and subgraphs
    stage: CompStage = CompStage.ALL_COMPLETE
    partitions: dict[str, tuple[TileGraph, list[list[TileOp]]]] = field(default_factory=dict)

    @property
    def subgraph_counts(self) -> dict[str, int]:
        return {name: r.subgraph_count for name, r in self.roots.items()}

    @property
    def leaf_counts(self) -> dict[str, int]:
        return {name: len(r.leaves) for name, r in self.roots.items()}


def compile_program(program: Program, spec: MachineSpec,
                    options: CompileOptions = CompileOptions()) -> CompiledProgram:
    """Compile every block; `options.stop_after` (host_options.compile_stage) ends early:
    TENSOR_GRAPH after the tensor-level checks, TILE_GRAPH after partition and merging (before
    leaves and call ops exist); later stages compile fully."""
    stop_after = options.stop_after
    pg_upper_bound = options.pg_upper_bound
    # Tensor level: warn about TileShapes too small for the expression table.
    check_expression_table(program)
    if stop_after == CompStage.TENSOR_GRAPH:
        return CompiledProgram(program, spec, {}, stop_after)
    bound = pg_upper_bound if pg_upper_bound is not None else spec.partition["pg_upper_bound"]
    partitions = {}
    ids = itertools.count(_SYNTHETIC_IDS)
    shared = _values_shared_across_blocks(program)
    signatures = Signatures()
    roots = {}
    merge_opts = options.merge   # the scope's; ops recorded their own (merge_settings.py)
    for magic, block in enumerate(program.blocks()):
        # Tensor graph -> tile graph on each op's recorded TileShape.
        graph, views = expand_block(block, spec, ids, shared)
        # Fail before running when a tile cannot fit its buffer.
        check_capacity(graph, spec)
        # Data-flow (fusible or through GM) and storage-order dependencies.
        graph = link(graph)
        # Depth merge into subgraphs (scopes, one-to-one rule, latency bound).
        subgraphs = partition(graph, bound)
        # Breadth merge of isomorphic subgraphs: vec NBuffer, cube L1 reuse, cube NBuffer.
        subgraphs, notes = breadth_merge(graph, subgraphs,
                                         block_settings(block, spec, merge_opts, magic),
                                         signatures)
        warn_untiled(program.name, [graph])
        if stop_after == CompStage.TILE_GRAPH:
            freeze(graph.ops)
            partitions[block.name] = (graph, subgraphs)
            continue
        # Isomorphic subgraphs share a leaf; the root lists one call op per subgraph.
        roots[block.name] = build_root(graph, subgraphs, views, notes, signatures, shared)
    return CompiledProgram(program, spec, roots, stop_after, partitions)


def _values_shared_across_blocks(program: Program) -> frozenset[int]:
    """Ids of values read outside the block that produced them (they must reach GM)."""
    produced: dict[int, str] = {}
    for block in program.blocks():
        for op in block.ops:
            for v in op.outputs:
                produced.setdefault(v.id, block.name)
    shared = set()
    for block in program.blocks():
        for op in block.ops:
            for v in op.inputs:
                if v.id in produced and produced[v.id] != block.name:
                    shared.add(v.id)
            for a in op.attrs.values():
                shared |= _element_reads(a)
            for v in op.outputs:
                for d in v.valid_shape:
                    shared |= _element_reads(d)
    for loop in program.loops():
        for e in (loop.start, loop.stop, loop.step):
            shared |= _element_reads(e)
    return frozenset(shared)


def _element_reads(x) -> set[int]:
    """Ids of the tensors whose elements `x` (an Expr, or a list/tuple of them) reads."""
    if isinstance(x, Expr):
        return {r.tensor_id for r in element_reads(x)}
    if isinstance(x, (list, tuple)):
        return set().union(*(_element_reads(v) for v in x)) if x else set()
    return set()
