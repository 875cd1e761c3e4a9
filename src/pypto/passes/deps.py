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

import itertools
from collections import defaultdict

from pypto.ir.tensor import StorageKind
from pypto.ops.core import REGISTRY
from pypto.symbolic import Const
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
            if r.value.storage.kind is not StorageKind.TEMP:
                out.add(r.value.storage.id)
        if op.kind == "copy_out":
            out.add(op.output.value.storage.id)
        if op.kind == "whole" and REGISTRY[op.src.opcode].writes:
            out.update(v.storage.id for v in op.src.outputs)
    return out


class _RegionIndex:
    """Tile ops with the region each touches, indexed by grid cell when the regions tile the
    tensor uniformly with constant offsets (the usual case), so that finding the ops touching a
    region is a lookup, not a scan of every earlier tile."""

    def __init__(self) -> None:
        self.ops: list[TileOp] = []
        self.regions: dict[int, Region] = {}
        self.cells: dict[tuple[int, ...], list[TileOp]] | None = {}
        self.tile: tuple[int, ...] | None = None

    def __bool__(self) -> bool:
        return bool(self.ops)

    def add(self, op: TileOp, region: Region | None = None) -> None:
        r = region if region is not None else op.output
        self.ops.append(op)
        self.regions[op.id] = r
        if self.cells is None:
            return
        offs = _const_offsets(r)
        if op.kind == "whole" or offs is None or not r.shape or (
                self.tile is not None and r.shape != self.tile):
            self.cells = None
            return
        self.tile = r.shape
        cell = _aligned_cell(offs, r.shape)
        if cell is None:
            self.cells = None
            return
        self.cells.setdefault(cell, []).append(op)

    def overlapping(self, region: Region, everything: bool) -> list[TileOp]:
        if not self.ops:
            return []
        offs = _const_offsets(region)
        if everything or self.cells is None or offs is None or len(offs) != len(self.tile):
            return [p for p in self.ops if everything or p.kind == "whole"
                    or _touches(self.regions[p.id], region)]
        cell = _aligned_cell(offs, self.tile) if region.shape == self.tile else None
        if cell is not None:
            # exactly one cell, whose ops are in program order (= id order): the usual read
            # of a tile that matches its producer's
            return list(self.cells.get(cell, ()))
        ranges = [range(o // t, -(-(o + s) // t)) for o, s, t in zip(offs, region.shape,
                                                                    self.tile)]
        found = []
        for cell in itertools.product(*ranges):
            found.extend(self.cells.get(cell, ()))
        found.sort(key=lambda p: p.id)
        return found


def _aligned_cell(offsets: tuple[int, ...], tile: tuple[int, ...]) -> tuple[int, ...] | None:
    """The grid cell of a window at `offsets` on a grid of `tile`, None when off the grid."""
    cell = []
    for o, t in zip(offsets, tile):
        q, rest = divmod(o, t)
        if rest:
            return None
        cell.append(q)
    return tuple(cell)


def _const_offsets(r: Region) -> tuple[int, ...] | None:
    out = []
    for o in r.offsets:
        if not isinstance(o, Const):
            return None
        out.append(o.value)
    return tuple(out)


def link(graph: TileGraph) -> TileGraph:
    pairs: dict[tuple[int, int, int], list[tuple[TileOp, TileOp]]] = defaultdict(list)
    accesses: dict[int, _Accesses] = defaultdict(_Accesses)  # storage id
    produced_so_far: dict[int, _RegionIndex] = defaultdict(_RegionIndex)
    gm = graph.gm_storages = gm_resident_storages(graph)

    for op in graph.ops:
        for region in op.inputs:
            producers = produced_so_far.get(region.value.id)
            for p in producers.overlapping(region, op.kind == "whole") if producers else ():
                pairs[(p.src.id, op.src.id, region.value.id)].append((p, op))
            if not producers or region.value.storage.id in gm:
                _order(graph, accesses[region.value.storage.id], op, region, write=False)
        if op.output is not None:
            if op.kind != "copy_out":
                produced_so_far[op.output.value.id].add(op)
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


class _Accesses:
    """Earlier reads and writes of one storage, for ordering edges."""

    def __init__(self) -> None:
        self.reads = _RegionIndex()
        self.writes = _RegionIndex()


def _order(graph: TileGraph, history: _Accesses, op: TileOp, region: Region,
           write: bool) -> None:
    """Edges from earlier conflicting accesses of the same storage (read-after-write,
    write-after-read, write-after-write), then record this one."""
    whole = not region.shape
    earlier = history.writes.overlapping(region, whole)
    if write:
        earlier = earlier + history.reads.overlapping(region, whole)
    for prev in earlier:
        if prev is not op:
            graph.edges.setdefault((prev.id, op.id), ORDER)
    (history.writes if write else history.reads).add(op, region)


def _classify(graph: TileGraph, edges: list[tuple[TileOp, TileOp]]) -> None:
    """Mark each edge fusible when its component has one producer or one consumer tile."""
    out_deg: dict[int, int] = defaultdict(int)
    in_deg: dict[int, int] = defaultdict(int)
    for p, c in edges:
        out_deg[p.id] += 1
        in_deg[c.id] += 1
    if max(out_deg.values()) == 1 or max(in_deg.values()) == 1:
        # Every component is a star (one producer or one consumer): all fusible. This is the
        # common case (matched tiles, broadcasts, partial-to-combine) and needs no union-find.
        for p, c in edges:
            _mark(graph, p, c, True)
        return
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
        _mark(graph, p, c, fusible_root[find(("p", p.id))])


def _mark(graph: TileGraph, p: TileOp, c: TileOp, star: bool) -> None:
    ok = star and p.kind != "whole" and c.kind != "whole"
    key = (p.id, c.id)
    # Data flow decides the kind (an ORDER edge on the same pair is implied by it).
    if graph.edges.get(key) != GM:
        graph.edges[key] = FUSE if ok else GM
