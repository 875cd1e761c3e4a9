"""Leaf functions and root (execute) graphs.

Takes the subgraphs of one block → a `RootFunction`: one call op per subgraph, each calling a
leaf function shared by all isomorphic subgraphs (same tile ops in the same order, with the same
tile shapes, dtypes, non-offset attributes and internal wiring; offsets and valid extents are
call arguments), plus the dependencies between call ops.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.operation import Operation
from pypto.passes.tile_graph import TileGraph, TileOp
from pypto.symbolic import Expr


@dataclass(eq=False)
class Leaf:
    index: int
    name: str
    core: str
    signature: str
    op_count: int


@dataclass(eq=False)
class CallOp:
    """One subgraph instance in the execute graph."""

    index: int
    ops: list[TileOp]
    leaf: Leaf
    preds: list[int] = field(default_factory=list)
    # breadth merges (passes/merge.py): pass name ("vec_nbuffer", "cube_l1_reuse",
    # "cube_nbuffer") -> merge.GroupInfo(group, key, size, merged), for every subgraph that
    # took part in the pass; the group / key is what to put in that pass's setting dict
    merge_info: dict[str, Any] = field(default_factory=dict)
    # GM loads (Regions) several matmul tile ops of this call read: loaded into L1 once
    shared_loads: list[Any] = field(default_factory=list)
    # executor cache: PyPTO-style operand hints (inputs, outputs) for the swimlane
    operand_hints: Any = field(default=None, repr=False)

    @property
    def core(self) -> str:
        return self.leaf.core

    @property
    def grid(self) -> Any:
        """The run-time tile grid its ops share (ops on DYNAMIC-shaped tensors), or None:
        such a call runs as one task per tile."""
        return self.ops[0].grid if self.ops else None


@dataclass(eq=False)
class RootFunction:
    name: str
    graph: TileGraph
    calls: list[CallOp]
    leaves: list[Leaf]
    views: dict[int, Any]

    @property
    def subgraph_count(self) -> int:
        return len(self.calls)


def _has_expr(x: Any) -> bool:
    if isinstance(x, Expr):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_expr(v) for v in x)
    return False


def _attrs_key(attrs: dict[str, Any]) -> tuple:
    if not attrs:
        return ()
    return tuple(sorted((k, repr(v)) for k, v in attrs.items() if not _has_expr(v)))


def _op_key(op: TileOp) -> str:
    """What a tile op contributes to its subgraph's signature, before wiring."""
    ins = tuple((r.shape, r.value.dtype) for r in op.inputs)
    out = (op.output.shape, op.output.value.dtype) if op.output else None
    return _op_key_text(op.kind, op.opcode, op.core, ins, out, _src_attrs_key(op.src),
                        _attrs_key(op.attrs))


@lru_cache(maxsize=1024)
def _src_attrs_key(src: Operation) -> tuple:
    """The attrs key of a tensor op, which every tile op expanded from it repeats."""
    return _attrs_key(src.attrs)


@lru_cache(maxsize=4096)
def _op_key_text(kind: str, opcode: str, core: str, ins: tuple, out: tuple | None,
                 src_attrs: tuple, attrs: tuple) -> str:
    """The text of an op key; cached, as the tiles of one tensor op repeat it."""
    ins = tuple((shape, dtype.name) for shape, dtype in ins)
    out = (out[0], out[1].name) if out else None
    return repr((kind, opcode, core, ins, out, src_attrs, attrs))


def signature(ops: list[TileOp], preds: dict[int, list[int]]) -> str:
    """The isomorphism key of a subgraph: equal keys share a leaf (and a merge group)."""
    local = {op.id: i for i, op in enumerate(ops)}
    parts = []
    for op in ops:
        if op.sig_part is None:  # NOTE: cached; the attrs repr dominates on big blocks
            op.sig_part = _op_key(op)
        wiring = [local[p] for p in preds[op.id] if p in local]
        if len(wiring) > 1:
            wiring.sort()
        parts.append((op.sig_part, tuple(wiring)))
    return _digest(tuple(parts))


@lru_cache(maxsize=1024)
def _digest(parts: tuple[tuple[str, tuple[int, ...]], ...]) -> str:
    """The hash of a subgraph's (op key, wiring) list: isomorphic subgraphs (thousands in a
    big block) hash once."""
    return hashlib.sha1("|".join(f"{key}{wiring}" for key, wiring in parts)
                        .encode()).hexdigest()[:16]


def build_root(graph: TileGraph, subgraphs: list[list[TileOp]], views: dict,
               annotations: list | None = None) -> RootFunction:
    """`annotations`: one merge.Annotation per subgraph (merge info, shared loads) or None."""
    preds = graph.preds()
    where = {op.id: i for i, sg in enumerate(subgraphs) for op in sg}
    leaves: dict[str, Leaf] = {}
    calls = []
    for i, ops in enumerate(subgraphs):
        known = annotations[i].signature if annotations is not None else None
        sig = known or signature(ops, preds)
        leaf = leaves.get(sig)
        if leaf is None:
            leaf = Leaf(len(leaves), f"{graph.block_name}_leaf{len(leaves)}", ops[0].core, sig,
                        len(ops))
            leaves[sig] = leaf
        call = CallOp(i, ops, leaf)
        if annotations is not None:
            call.merge_info = dict(annotations[i].info)
            call.shared_loads = list(annotations[i].shared_loads)
        calls.append(call)
    for (p, c) in graph.edges:
        a, b = where[p], where[c]
        if a != b and a not in calls[b].preds:
            calls[b].preds.append(a)
    for call in calls:
        call.preds.sort()
    _mark_escaping(graph, where)
    _mark_local_inputs(graph, where, preds)
    return RootFunction(graph.block_name, graph, calls, list(leaves.values()), views)


def _mark_local_inputs(graph: TileGraph, where: dict[int, int],
                       preds: dict[int, list[int]]) -> None:
    """An input is read from the task's local buffer when every tile op that produced the
    region runs in the same task and the storage does not live in GM."""
    by_id = {op.id: op for op in graph.ops}
    gm = graph.gm_storages
    for op in graph.ops:
        home = where[op.id]
        # value id -> whether every predecessor producing it runs in this op's task
        in_task: dict[int, bool] = {}
        for p in preds[op.id]:
            prod = by_id[p]
            if prod.output is not None and prod.kind != "copy_out":
                v = prod.output.value.id
                in_task[v] = in_task.get(v, True) and where[p] == home
        op.local_inputs = [op.kind != "whole" and in_task.get(r.value.id, False)
                           and r.value.storage.id not in gm for r in op.inputs]


def _mark_escaping(graph: TileGraph, where: dict[int, int]) -> None:
    """Values whose tiles another subgraph (or a whole op) reads must be written to GM."""
    by_id = {op.id: op for op in graph.ops}
    for op in graph.ops:
        if op.output is not None and op.output.value.storage.id in graph.gm_storages:
            graph.escaping.add(op.output.value.id)
    for (p, c), _ in graph.edges.items():
        prod = by_id[p]
        if prod.output is None or prod.kind == "copy_out":
            continue
        if where[p] != where[c] or by_id[c].kind == "whole":
            graph.escaping.add(prod.output.value.id)
