"""Depth-direction partition: group the tile ops of one block into subgraphs.

Takes a linked `TileGraph` → subgraphs (lists of tile ops), each on one core type, in a
topological order. Rules, in order:
1. `sg_set_scope`: tile ops with the same scope id (not -1) connected by data flow are forced
   into one subgraph, whatever the dependency shape or latency; scoped subgraphs are then
   closed to automatic merging.
2. Automatic merging along fusible edges (one-to-one, broadcast, partial-to-combine) when the
   core types match and the merged latency estimate stays within `pg_upper_bound` cycles (or
   one side adds no latency: a copy-out joins its producer even past the bound).
3. Never merge when it would make the subgraph graph cyclic; "whole" ops stay alone.
"""
from __future__ import annotations

import heapq
from collections import defaultdict

from pypto.passes.tile_graph import FUSE, GM, TileGraph, TileOp


class _Sets:
    """Union-find over tile ops with per-set latency, core, scope and members."""

    def __init__(self, graph: TileGraph):
        self.ops = graph.ops
        self.pos = {op.id: i for i, op in enumerate(graph.ops)}
        self.parent = {op.id: op.id for op in graph.ops}
        self.members = {op.id: [op.id] for op in graph.ops}
        self.latency = {op.id: op.latency for op in graph.ops}
        self.succ: dict[int, list[int]] = defaultdict(list)
        self.pred: dict[int, list[int]] = defaultdict(list)
        for (p, c) in graph.edges:
            self.succ[p].append(c)
            self.pred[c].append(p)
        self.last = {op.id: self.pos[op.id] for op in graph.ops}  # max position per set

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def _fed_only_by(self, single: int, other: int) -> bool:
        """A one-op set that comes after every op of `other` and whose producers are all in
        `other` cannot close a cycle with it (edges only go forward in program order)."""
        members = self.members[single]
        return (len(members) == 1 and self.last[other] < self.pos[members[0]]
                and all(self.find(p) == other for p in self.pred[members[0]]))

    def cyclic_if_merged(self, a: int, b: int) -> bool:
        """Whether some path leaves one set and comes back into the other."""
        if self._fed_only_by(b, a) or self._fed_only_by(a, b):
            return False
        for src, dst in ((a, b), (b, a)):
            limit = self.last[dst]
            stack, seen = [], set()
            for m in self.members[src]:
                for s in self.succ[m]:
                    r = self.find(s)
                    if r not in (a, b) and self.pos[s] <= limit and s not in seen:
                        seen.add(s)
                        stack.append(s)
            while stack:
                n = stack.pop()
                for s in self.succ[n]:
                    r = self.find(s)
                    if r == dst:
                        return True
                    if r != src and self.pos[s] <= limit and s not in seen:
                        seen.add(s)
                        stack.append(s)
        return False

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if self.pos[ra] > self.pos[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.members[ra].extend(self.members.pop(rb))
        self.latency[ra] += self.latency.pop(rb)
        self.last[ra] = max(self.last[ra], self.last.pop(rb))


def partition(graph: TileGraph, upper_bound: int) -> list[list[TileOp]]:
    sets = _Sets(graph)
    by_id = {op.id: op for op in graph.ops}

    def mergeable(p: TileOp, c: TileOp) -> bool:
        return p.core == c.core and p.kind != "whole" and c.kind != "whole"

    # 1. forced scopes (a scan of every edge, so only when some op has a scope)
    scoped = any(op.scope != -1 for op in graph.ops)
    for (p_id, c_id), kind in graph.edges.items() if scoped else ():
        p, c = by_id[p_id], by_id[c_id]
        if kind in (FUSE, GM) and p.scope != -1 and p.scope == c.scope and mergeable(p, c):
            a, b = sets.find(p_id), sets.find(c_id)
            if a != b and not sets.cyclic_if_merged(a, b):
                sets.union(a, b)
    # 2. automatic depth merging, consumers in program order
    incoming: dict[int, list[int]] = defaultdict(list)
    for (p_id, c_id), kind in graph.edges.items():
        if kind == FUSE:
            incoming[c_id].append(p_id)
    for c in graph.ops:
        for p_id in sorted(incoming[c.id], key=sets.pos.__getitem__):
            p = by_id[p_id]
            if not mergeable(p, c) or p.scope != -1 or c.scope != -1:
                continue
            a, b = sets.find(p_id), sets.find(c.id)
            # The bound stops growth; a zero-latency op (a copy-out) still joins its producer
            # (one cube op over a long K is past the bound on its own).
            la, lb = sets.latency[a], sets.latency[b]
            if a == b or (la + lb > upper_bound and min(la, lb) > 0):
                continue
            if not sets.cyclic_if_merged(a, b):
                sets.union(a, b)
    return _topological(graph, sets)


def _topological(graph: TileGraph, sets: _Sets) -> list[list[TileOp]]:
    """Subgraphs in dependency order, ties broken by their first op (deterministic)."""
    roots = sorted(sets.members, key=sets.pos.__getitem__)
    succ: dict[int, set[int]] = defaultdict(set)
    indeg = {r: 0 for r in roots}
    for (p, c) in graph.edges:
        a, b = sets.find(p), sets.find(c)
        if a != b and b not in succ[a]:
            succ[a].add(b)
            indeg[b] += 1
    heap = [(sets.pos[r], r) for r in roots if indeg[r] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, r = heapq.heappop(heap)
        order.append(r)
        for s in succ[r]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (sets.pos[s], s))
    if len(order) != len(roots):
        raise RuntimeError(f"internal: subgraphs of {graph.block_name} form a cycle")
    by_id = {op.id: op for op in graph.ops}
    return [[by_id[m] for m in sorted(sets.members[r], key=sets.pos.__getitem__)]
            for r in order]
