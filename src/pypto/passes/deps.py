"""Dependencies between the tile ops of one block.

Takes a `TileGraph` with ops → a new graph with `edges` (and `gm_storages`). Two kinds of edge:
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
from dataclasses import replace

from pypto.box_grid import BoxGrid
from pypto.ir.tensor import StorageKind
from pypto.ops.core import REGISTRY
from pypto.passes.kinds import COPY_OUT, FUSE, GM, ORDER, WHOLE, EdgeKind
from pypto.passes.tile_graph import NO_SYMBOLS, Region, TileGraph, TileOp, overlaps, split_offset
from pypto.symbolic import Const, Expr

# an offset -> (symbolic part, constant part), filled by one `link` call (`split_offset`)
Splits = dict[Expr, tuple[frozenset, int]]


def _touches(a: Region, b: Region) -> bool:
    """Whether two accesses may touch: the rule `_RegionIndex` answers without testing every
    pair (tests check it against this)."""
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
        if op.kind is COPY_OUT:
            out.add(op.output.value.storage.id)
        if op.kind is WHOLE and REGISTRY[op.src.opcode].writes:
            out.update(v.storage.id for v in op.src.outputs)
    return out


class _RegionIndex:
    """Tile ops with a region each (one entry per region: an op reading two windows of one
    storage has two), answering which earlier entries may touch a region: exactly the entries
    the all-pairs `_touches` scan keeps, in the order they were added (program order).

    Entries are grouped by rank and by the symbolic parts of their offsets (`split_offset`):
    inside a group every offset difference is a constant, so the constant parts go on a
    `BoxGrid` and a query looks at the cells its window covers, not at every earlier tile.
    Dims whose symbolic parts differ between the query and a group cannot be compared (the
    scan assumes an overlap there); such groups are scanned on their comparable dims."""

    def __init__(self, splits: Splits) -> None:
        self.splits = splits             # shared by the link call's indexes
        self.ops: list[TileOp] = []
        self.regions: list[Region] = []
        self.indexed = 0                 # entries [0, indexed) are in the structures below
        self.always: list[int] = []      # whole ops and unshaped regions: touch everything
        self.by_rank: dict[int, list[int]] = defaultdict(list)
        self.groups: dict[int, dict[tuple[frozenset, ...] | None, _Group]] = defaultdict(dict)

    def __bool__(self) -> bool:
        return bool(self.ops)

    def add(self, op: TileOp, region: Region | None = None) -> None:
        # NOTE: indexed at the next query: the reads of a storage nothing writes (inputs) are
        # never queried, so they never pay for the index
        self.ops.append(op)
        self.regions.append(region if region is not None else op.output)

    def _index(self) -> None:
        ops, regions = self.ops, self.regions
        for entry in range(self.indexed, len(ops)):
            r = regions[entry]
            if ops[entry].kind is WHOLE or not r.shape:
                self.always.append(entry)
                continue
            rank = len(r.shape)
            self.by_rank[rank].append(entry)
            keys, consts = _split(r, self.splits)
            group = self.groups[rank].get(keys)
            if group is None:
                group = self.groups[rank][keys] = _Group()
            group.add(entry, consts, r.shape)
        self.indexed = len(ops)

    def overlapping(self, region: Region, everything: bool) -> list[TileOp]:
        if not self.ops:
            return []
        if everything or not region.shape:
            return list(self.ops)
        if self.indexed < len(self.ops):
            self._index()
        rank = len(region.shape)
        found = list(self.always)
        for r, entries in self.by_rank.items():
            if r != rank:
                found.extend(entries)   # another rank (a reshaped access): assume overlap
        keys, consts = _split(region, self.splits)
        for group_keys, group in self.groups.get(rank, {}).items():
            if group_keys == keys:
                found.extend(group.touching(consts, region.shape))
                continue
            dims = [d for d, (a, b) in enumerate(zip(group_keys or _constant_parts(rank),
                                                     keys or _constant_parts(rank))) if a == b]
            found.extend(group.touching_on(dims, consts, region.shape))
        if len(found) > 1:
            found.sort()
        ops = self.ops
        return [ops[e] for e in found]


class _Group:
    """Entries of one rank whose offsets share their symbolic parts: constant boxes."""

    def __init__(self) -> None:
        self.entries: list[int] = []
        self.boxes: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self.grid = BoxGrid()

    def add(self, entry: int, consts: tuple[int, ...], shape: tuple[int, ...]) -> None:
        self.entries.append(entry)
        self.boxes[entry] = (consts, shape)
        self.grid.add(consts, shape, entry)

    def touching(self, consts: tuple[int, ...], shape: tuple[int, ...]) -> list[int]:
        out = []
        seen: set[int] | None = set() if self.grid.spread else None
        boxes = self.boxes
        for e in self.grid.near(consts, shape):
            if seen is not None:
                if e in seen:
                    continue
                seen.add(e)
            offs, ext = boxes[e]
            for ao, asz, bo, bsz in zip(offs, ext, consts, shape):
                d = ao - bo
                if d >= bsz or -d >= asz:
                    break
            else:
                out.append(e)
        return out

    def touching_on(self, dims: list[int], consts: tuple[int, ...],
                    shape: tuple[int, ...]) -> list[int]:
        """The entries touching the query on `dims` (the comparable ones), by a scan."""
        out = []
        for e in self.entries:
            offs, ext = self.boxes[e]
            for i in dims:
                d = offs[i] - consts[i]
                if d >= shape[i] or -d >= ext[i]:
                    break
            else:
                out.append(e)
        return out


def _constant_parts(rank: int) -> tuple[frozenset, ...]:
    return (NO_SYMBOLS,) * rank


def _split(r: Region, splits: Splits) -> tuple[tuple[frozenset, ...] | None, tuple[int, ...]]:
    """A region's offsets as (symbolic parts, constant parts); the symbolic parts are None
    when every offset is a constant (the usual case, checked first because it is cheap)."""
    consts = []
    for o in r.offsets:
        if type(o) is not Const:
            break
        consts.append(o.value)
    else:
        return None, tuple(consts)
    keys, consts = [], []
    for o in r.offsets:
        k, c = split_offset(o, splits)
        keys.append(k)
        consts.append(c)
    return tuple(keys), tuple(consts)


def link(graph: TileGraph) -> TileGraph:
    """`graph` with the dependency edges between its tile ops."""
    pairs: dict[tuple[int, int, int], list[tuple[TileOp, TileOp]]] = defaultdict(list)
    edges = dict(graph.edges)
    splits: Splits = {}
    accesses: dict[int, _Accesses] = defaultdict(lambda: _Accesses(splits))  # storage id
    produced_so_far: dict[int, _RegionIndex] = defaultdict(lambda: _RegionIndex(splits))
    gm = gm_resident_storages(graph)

    for op in graph.ops:
        for region in op.inputs:
            producers = produced_so_far.get(region.value.id)
            for p in producers.overlapping(region, op.kind is WHOLE) if producers else ():
                pairs[(p.src.id, op.src.id, region.value.id)].append((p, op))
            if not producers or region.value.storage.id in gm:
                _order(edges, accesses[region.value.storage.id], op, region, write=False)
        if op.output is not None:
            if op.kind is not COPY_OUT:
                produced_so_far[op.output.value.id].add(op)
            if op.kind is COPY_OUT or op.output.value.storage.id in gm:
                _order(edges, accesses[op.output.value.storage.id], op, op.output, write=True)
        if op.kind is WHOLE:
            # the op's other outputs have no producing tile op: their readers find them as
            # GM writes (they read them unproduced, which records the read for ordering), so
            # a reader waits for the op whether or not the storage lives in GM
            for v in op.src.outputs[1:] if op.output is not None else op.src.outputs:
                _order(edges, accesses[v.storage.id], op, Region(v, (), (), v.valid_shape),
                       write=True)

    for flows in pairs.values():
        _classify(edges, flows)
    return replace(graph, edges=edges, gm_storages=frozenset(gm))


class _Accesses:
    """Earlier reads and writes of one storage, for ordering edges."""

    def __init__(self, splits: Splits) -> None:
        self.reads = _RegionIndex(splits)
        self.writes = _RegionIndex(splits)


def _order(edges: dict[tuple[int, int], EdgeKind], history: _Accesses, op: TileOp, region: Region,
           write: bool) -> None:
    """Edges from earlier conflicting accesses of the same storage (read-after-write,
    write-after-read, write-after-write), then record this one."""
    whole = not region.shape
    earlier = history.writes.overlapping(region, whole)
    if write:
        earlier = earlier + history.reads.overlapping(region, whole)
    for prev in earlier:
        if prev is not op:
            edges.setdefault((prev.id, op.id), ORDER)
    (history.writes if write else history.reads).add(op, region)


def _classify(edges: dict[tuple[int, int], EdgeKind],
              flows: list[tuple[TileOp, TileOp]]) -> None:
    """Mark each edge fusible when its component has one producer or one consumer tile."""
    out_deg: dict[int, int] = defaultdict(int)
    in_deg: dict[int, int] = defaultdict(int)
    for p, c in flows:
        out_deg[p.id] += 1
        in_deg[c.id] += 1
    if max(out_deg.values()) == 1 or max(in_deg.values()) == 1:
        # Every component is a star (one producer or one consumer): all fusible. This is the
        # common case (matched tiles, broadcasts, partial-to-combine) and needs no union-find.
        for p, c in flows:
            _mark(edges, p, c, True)
        return
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p, c in flows:
        parent[find(("p", p.id))] = find(("c", c.id))
    members: dict[tuple[str, int], list[tuple[str, int]]] = defaultdict(list)
    for node in list(parent):
        members[find(node)].append(node)
    fusible_root = {root: (sum(1 for k, _ in nodes if k == "p") == 1
                           or sum(1 for k, _ in nodes if k == "c") == 1)
                    for root, nodes in members.items()}
    for p, c in flows:
        _mark(edges, p, c, fusible_root[find(("p", p.id))])


def _mark(edges: dict[tuple[int, int], EdgeKind], p: TileOp, c: TileOp, star: bool) -> None:
    ok = star and p.kind is not WHOLE and c.kind is not WHOLE
    key = (p.id, c.id)
    # Data flow decides the kind (an ORDER edge on the same pair is implied by it).
    if edges.get(key) is not GM:
        edges[key] = FUSE if ok else GM
