"""Leaf functions and root (execute) graphs.

Takes the subgraphs of one block → a `RootFunction`: one call op per subgraph, each calling a
leaf function shared by all isomorphic subgraphs (same tile ops in the same order, with the same
tile shapes, dtypes, non-offset attributes and internal wiring; offsets and valid extents are
call arguments), plus the dependencies between call ops.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from pypto.ir.operation import Operation
from pypto.passes.kinds import COPY_OUT, WHOLE, Core
from pypto.passes.tile_graph import TileGraph, TileOp, freeze
from pypto.symbolic import Expr


@dataclass(frozen=True, eq=False)
class Leaf:
    index: int
    name: str
    core: Core
    signature: str
    op_count: int


@dataclass(frozen=True, slots=True, eq=False)
class CallOp:
    """One subgraph instance in the execute graph."""

    index: int
    ops: list[TileOp]
    leaf: Leaf
    preds: tuple[int, ...] = ()
    # breadth merges (passes/merge.py): pass name ("vec_nbuffer", "cube_l1_reuse",
    # "cube_nbuffer") -> merge_settings.GroupInfo(group, key, size, merged), for every
    # subgraph that took part in the pass; the group / key is what to put in that pass's
    # setting dict
    merge_info: dict[str, Any] = field(default_factory=dict)
    # GM loads (Regions) several matmul tile ops of this call read: loaded into L1 once
    shared_loads: tuple[Any, ...] = ()

    @property
    def core(self) -> Core:
        return self.leaf.core

    @property
    def grid(self) -> Any:
        """The run-time tile grid its ops share (ops on DYNAMIC-shaped tensors), or None:
        such a call runs as one task per tile."""
        return self.ops[0].grid if self.ops else None


@dataclass(frozen=True, eq=False)
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


class Signatures:
    """Isomorphism keys of one compilation's subgraphs: equal keys share a leaf (and a merge
    group). A big block has thousands of isomorphic subgraphs, so the tables that make keys
    cheap live here, one per compilation (nothing compiled stays reachable from module state):
    each tile op's part, each distinct part's text, each tensor op's attrs key (the attrs repr
    dominates on big blocks), each distinct digest."""

    def __init__(self) -> None:
        self._parts: dict[int, str] = {}              # tile op id -> its part of a key
        self._src_attrs: dict[Operation, tuple] = {}  # tensor op -> its attrs key
        self._texts: dict[tuple, str] = {}
        self._digests: dict[tuple, str] = {}

    def of(self, ops: list[TileOp], preds: dict[int, list[int]]) -> str:
        """The key of the subgraph `ops`: each op's part and its wiring inside the subgraph."""
        local = {op.id: i for i, op in enumerate(ops)}
        parts = []
        known = self._parts
        for op in ops:
            part = known.get(op.id)
            if part is None:
                part = known[op.id] = self._part(op)
            wiring = [local[p] for p in preds[op.id] if p in local]
            if len(wiring) > 1:
                wiring.sort()
            parts.append((part, tuple(wiring)))
        key = tuple(parts)
        digest = self._digests.get(key)
        if digest is None:
            digest = self._digests[key] = hashlib.sha1(
                "|".join(f"{p}{w}" for p, w in key).encode()).hexdigest()[:16]
        return digest

    def _part(self, op: TileOp) -> str:
        """What a tile op contributes to its subgraph's key, before wiring."""
        src_attrs = self._src_attrs.get(op.src)
        if src_attrs is None:
            src_attrs = self._src_attrs[op.src] = _attrs_key(op.src.attrs)
        ins = tuple((r.shape, r.value.dtype) for r in op.inputs)
        out = (op.output.shape, op.output.value.dtype) if op.output else None
        key = (op.kind, op.opcode, op.core, ins, out, src_attrs, _attrs_key(op.attrs))
        text = self._texts.get(key)
        if text is None:
            # the kinds as plain strings: the text (and so every leaf hash) predates the enums
            text = self._texts[key] = repr((
                str(op.kind), op.opcode, str(op.core),
                tuple((shape, dtype.name) for shape, dtype in ins),
                (out[0], out[1].name) if out else None, src_attrs, key[-1]))
        return text


def build_root(graph: TileGraph, subgraphs: list[list[TileOp]], views: dict,
               annotations: list | None = None, signatures: Signatures | None = None,
               shared: frozenset[int] = frozenset()) -> RootFunction:
    """The root function of one block's (merged) subgraphs. `annotations`: one
    merge.Annotation per subgraph (merge info, shared loads, known signature) or None;
    `shared`: values other blocks read (they escape to GM). Finishes the block's draft tile
    ops (which inputs they read locally) and freezes them."""
    signatures = signatures or Signatures()
    preds = graph.preds()
    where = {op.id: i for i, sg in enumerate(subgraphs) for op in sg}
    leaves: dict[str, Leaf] = {}
    call_preds: list[set[int]] = [set() for _ in subgraphs]
    for (p, c) in graph.edges:
        a, b = where[p], where[c]
        if a != b:
            call_preds[b].add(a)
    calls = []
    for i, ops in enumerate(subgraphs):
        note = annotations[i] if annotations is not None else None
        sig = (note.signature if note is not None else None) or signatures.of(ops, preds)
        leaf = leaves.get(sig)
        if leaf is None:
            leaf = Leaf(len(leaves), f"{graph.block_name}_leaf{len(leaves)}", ops[0].core, sig,
                        len(ops))
            leaves[sig] = leaf
        calls.append(CallOp(i, ops, leaf, tuple(sorted(call_preds[i])),
                            dict(note.info) if note is not None else {},
                            tuple(note.shared_loads) if note is not None else ()))
    _set_local_inputs(graph, where, preds)
    freeze(graph.ops)
    graph = replace(graph, escaping=_escaping(graph, where) | shared)
    return RootFunction(graph.block_name, graph, calls, list(leaves.values()), views)


def _set_local_inputs(graph: TileGraph, where: dict[int, int],
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
            if prod.output is not None and prod.kind is not COPY_OUT:
                v = prod.output.value.id
                in_task[v] = in_task.get(v, True) and where[p] == home
        op.local_inputs = tuple(op.kind is not WHOLE and in_task.get(r.value.id, False)
                                and r.value.storage.id not in gm for r in op.inputs)


def _escaping(graph: TileGraph, where: dict[int, int]) -> frozenset[int]:
    """Values whose tiles another subgraph (or a whole op) reads must be written to GM."""
    by_id = {op.id: op for op in graph.ops}
    out = set(graph.escaping)
    for op in graph.ops:
        if op.output is not None and op.output.value.storage.id in graph.gm_storages:
            out.add(op.output.value.id)
    for (p, c) in graph.edges:
        prod = by_id[p]
        if prod.output is None or prod.kind is COPY_OUT:
            continue
        if where[p] != where[c] or by_id[c].kind is WHOLE:
            out.add(prod.output.value.id)
    return frozenset(out)
