"""Dependencies between the tile ops of one block.

Takes a `TileGraph` with ops → the same graph with `edges`. Two kinds of edge:
- data flow: a tile op reads a region that tile ops of this block produce. Between one
  producer tensor op and one consumer tensor op the tile-level edges form components; a
  component with a single producer tile or a single consumer tile (one-to-one, broadcast,
  partial-to-combine) may stay on chip and is marked fusible; a many-to-many component
  (mismatched TileShapes) must go through GM and is not.
- storage order: reads and writes of GM storages (kernel parameters, locals, assemble targets)
  in program order: read-after-write, write-after-read, write-after-write on overlapping
  windows. These edges only order; they are never fused across.
"""
from __future__ import annotations

from collections import defaultdict

from pypto.ops.core import REGISTRY
from pypto.passes.tile_graph import FUSE, GM, ORDER, Region, TileGraph, TileOp, overlaps


def _touches(a: Region, b: Region) -> bool:
    if not a.shape or not b.shape or len(a.shape) != len(b.shape):
        return True  # whole or reshaped access: assume overlap
    return overlaps(a.offsets, a.shape, b.offsets, b.shape)


def gm_resident_storages(graph: TileGraph) -> set[int]:
    """Storages that live in GM for the whole block: kernel parameters and locals, and op
    results that an assemble/move or an in-place op writes into (reads of those always go to
    GM, and their producers always write GM)."""
    out = set()
    for op in graph.ops:
        for r in op.inputs + ([op.output] if op.output is not None else []):
            if r.value.storage.kind.value != "temp":
                out.add(r.value.storage.id)
        if op.kind == "copy_out":
            out.add(op.output.value.storage.id)
        if op.kind == "whole" and REGISTRY[op.src.opcode].writes:
            out.update(v.storage.id for v in op.src.outputs)
    return out


def link(graph: TileGraph) -> TileGraph:
    pairs: dict[tuple[int, int, int], list[tuple[TileOp, TileOp]]] = defaultdict(list)
    accesses: dict[int, list[tuple[TileOp, Region, bool]]] = defaultdict(list)  # storage id
    produced_so_far: dict[int, list[TileOp]] = defaultdict(list)
    gm = graph.gm_storages = gm_resident_storages(graph)

    for op in graph.ops:
        for region in op.inputs:
            producers = produced_so_far.get(region.value.id)
            for p in producers or ():
                if op.kind == "whole" or p.kind == "whole" or _touches(p.output, region):
                    pairs[(p.src.id, op.src.id, region.value.id)].append((p, op))
            if not producers or region.value.storage.id in gm:
                _order(graph, accesses[region.value.storage.id], op, region, write=False)
        if op.output is not None:
            if op.kind != "copy_out":
                produced_so_far[op.output.value.id].append(op)
            if op.kind == "copy_out" or op.output.value.storage.id in gm:
                _order(graph, accesses[op.output.value.storage.id], op, op.output, write=True)
        if op.kind == "whole":
            for v in op.src.outputs[1:] if op.output is not None else op.src.outputs:
                if v.storage.id in gm:
                    _order(graph, accesses[v.storage.id], op,
                           Region(v, (), (), v.valid_shape), write=True)

    for edges in pairs.values():
        _classify(graph, edges)
    return graph


def _order(graph: TileGraph, history: list, op: TileOp, region: Region, write: bool) -> None:
    """Edges from earlier conflicting accesses of the same storage, then record this one."""
    for prev, prev_region, prev_write in history:
        if prev is op or not (write or prev_write):
            continue
        if _touches(prev_region, region):
            graph.edges.setdefault((prev.id, op.id), ORDER)
    history.append((op, region, write))


def _classify(graph: TileGraph, edges: list[tuple[TileOp, TileOp]]) -> None:
    """Mark each edge fusible when its component has one producer or one consumer tile."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p, c in edges:
        parent[find(("p", p.id))] = find(("c", c.id))
    members: dict[tuple[str, int], list[tuple[str, int]]] = defaultdict(list)
    for node in list(parent):
        members[find(node)].append(node)
    fusible_root = {root: (sum(1 for k, _ in nodes if k == "p") == 1
                           or sum(1 for k, _ in nodes if k == "c") == 1)
                    for root, nodes in members.items()}
    for p, c in edges:
        ok = fusible_root[find(("p", p.id))] and p.kind != "whole" and c.kind != "whole"
        key = (p.id, c.id)
        # Data flow decides the kind (an ORDER edge on the same pair is implied by it).
        if graph.edges.get(key) != GM:
            graph.edges[key] = FUSE if ok else GM
