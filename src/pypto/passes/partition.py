"""Depth-direction partition: group the tile ops of one block into subgraphs.

Takes a linked `TileGraph` → subgraphs (lists of tile ops), each on one core type, in a
topological order. Rules, in order:
1. `sg_set_scope`: tile ops with the same scope id (not -1) connected by data flow are forced
   into one subgraph, whatever the dependency shape or latency; scoped subgraphs are then
   closed to automatic merging.
2. Automatic merging along fusible edges (one-to-one, broadcast, partial-to-combine) when the
   core types match and the merged latency estimate stays within `pg_upper_bound` cycles (or
   one side adds no latency: a copy-out joins its producer even past the bound).
3. Never merge when it would make the graph of subgraphs cyclic (a path from one to the other
   through a third subgraph); "whole" ops stay alone; ops on a run-time grid (DYNAMIC-shaped
   tensors) join only ops of the same grid along one-to-one edges.
"""
from __future__ import annotations

import heapq
from collections import defaultdict

from pypto.passes.kinds import FUSE, ORDER, WHOLE, EdgeKind
from pypto.passes.tile_graph import TileGraph, TileOp


class _Sets:
    """Union-find over tile ops with per-set latency and members, plus a topological order of
    the sets (the graph whose nodes are the sets, an edge wherever some op edge crosses two).

    NOTE: a cycle among sets need not be a path among ops: with a -> x and y -> b, x and y in
    one set, merging a with b closes {a, b} -> {x, y} -> {a, b} although no op path leads from
    x to y (issue 13). So reachability is searched over sets, not ops. The order keeps the
    search local (Pearce & Kelly's dynamic topological order): a path from a to b only passes
    sets placed between them. Two searches run in turns, forward from a and backward from b,
    and the first to finish decides (a big set's descendants may be many, a single consumer's
    ancestors few); merging then moves only the sets that search found."""

    def __init__(self, graph: TileGraph):
        self.ops = graph.ops
        self.pos = {op.id: i for i, op in enumerate(graph.ops)}
        self.parent = {op.id: op.id for op in graph.ops}
        self.members = {op.id: [op.id] for op in graph.ops}
        self.latency = {op.id: op.latency for op in graph.ops}
        # successor and predecessor sets of each set (entries may name sets merged since:
        # resolved by find when read)
        self.succ: dict[int, set[int]] = {op.id: set() for op in graph.ops}
        self.pred: dict[int, set[int]] = {op.id: set() for op in graph.ops}
        for (p, c) in graph.edges:
            self.succ[p].add(c)
            self.pred[c].add(p)
        # program order is a topological order of the op edges (tile_graph.py); `slots` holds
        # the sets in a topological order with holes where merged sets were, `at` their slot
        self.slots: list[int | None] = [op.id for op in graph.ops]
        self.at = dict(self.pos)

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def _resolved(self, table: dict[int, set[int]], r: int) -> set[int]:
        """The sets set `r` has edges to (table = succ) or from (pred), stored back."""
        out = {self.find(s) for s in table[r]}
        out.discard(r)
        table[r] = out
        return out

    def _between(self, a: int, b: int) -> tuple[bool, set[int]] | None:
        """With `a` placed before `b`: None when a path a -> x -> ... -> b exists (merging
        would close a cycle); otherwise (forward, found): the sets placed between them that
        `a` reaches (forward) or that reach `b` (backward), whichever search ended first.
        The two take turns, backward first: a consumer joining its producer is usually fed
        by nothing else placed between them, so one step back decides and the producer's
        successors are never listed."""
        at, lo, hi = self.at, self.at[a], self.at[b]
        fwd: set[int] = set()
        bwd: set[int] = set()
        f_stack, b_stack = [a], [b]
        backward = True
        while True:
            if backward:
                y = b_stack.pop()
                preds = self._resolved(self.pred, y)
                for p in preds:
                    if p == a:
                        if y != b:
                            return None
                    elif p in fwd:
                        return None
                    elif p not in bwd and at[p] > lo:
                        bwd.add(p)
                        b_stack.append(p)
                if not b_stack:
                    return False, bwd
                backward = False
            else:
                x = f_stack.pop()
                succs = self._resolved(self.succ, x)
                for s in succs:
                    if s == b:
                        if x != a:
                            return None
                    elif s in bwd:
                        return None
                    elif s not in fwd and at[s] < hi:
                        fwd.add(s)
                        f_stack.append(s)
                if not f_stack:
                    return True, fwd
                backward = True

    def merge_if_acyclic(self, a: int, b: int) -> bool:
        """Unite sets `a` and `b` unless a path between them through another set exists."""
        if self.at[a] > self.at[b]:
            a, b = b, a
        found = self._between(a, b)
        if found is None:
            return False
        forward, moved = found
        slots, at = self.slots, self.at
        order: list[int] = []
        begin = 0
        if moved and forward:
            # the merged set takes b's slot and the sets a reaches move after it, in their
            # order (nothing they feed lies before b's slot, nothing feeding b is among them)
            begin, hi = min(at[r] for r in moved), at[b]
            window = [r for r in slots[begin:hi] if r is not None]
            order = [r for r in window if r not in moved] + [b] + \
                [r for r in window if r in moved]
            slots[begin:hi + 1] = order + [None] * (hi + 1 - begin - len(order))
        elif moved:
            # mirrored: the merged set takes a's slot and the sets reaching b move before it
            lo, last = at[a], max(at[r] for r in moved)
            window = [r for r in slots[lo + 1:last + 1] if r is not None]
            order = [r for r in window if r in moved] + [a] + \
                [r for r in window if r not in moved]
            begin = last + 1 - len(order)
            slots[lo:last + 1] = [None] * (begin - lo) + order
        for i, r in enumerate(order, begin):
            at[r] = i
        self._unite(a, b, at[b] if forward else at[a])
        return True

    def _unite(self, a: int, b: int, slot: int) -> None:
        """Union of sets `a` and `b`, placed at `slot` (one of theirs). The representative is
        the set whose first op comes first in program order."""
        slots, at = self.slots, self.at
        slots[at.pop(a)] = slots[at.pop(b)] = None
        keep, gone = (a, b) if self.pos[a] < self.pos[b] else (b, a)
        slots[slot] = keep
        at[keep] = slot
        self.parent[gone] = keep
        self.members[keep].extend(self.members.pop(gone))
        self.latency[keep] += self.latency.pop(gone)
        self.succ[keep] |= self.succ.pop(gone)
        self.pred[keep] |= self.pred.pop(gone)


def partition(graph: TileGraph, upper_bound: int) -> list[list[TileOp]]:
    sets = _Sets(graph)
    by_id = {op.id: op for op in graph.ops}

    def mergeable(p: TileOp, c: TileOp, kind: EdgeKind = FUSE) -> bool:
        # tile ops on a run-time grid share a subgraph only with ops of the same grid, tile
        # to tile (each task runs one tile of them all)
        return (p.core == c.core and p.kind is not WHOLE and c.kind is not WHOLE
                and p.grid == c.grid and (p.grid is None or kind is FUSE))

    # 1. forced scopes (a scan of every edge, so only when some op has a scope)
    scoped = any(op.scope != -1 for op in graph.ops)
    for (p_id, c_id), kind in graph.edges.items() if scoped else ():
        p, c = by_id[p_id], by_id[c_id]
        data_flow = kind is not ORDER
        if data_flow and p.scope != -1 and p.scope == c.scope and mergeable(p, c, kind):
            a, b = sets.find(p_id), sets.find(c_id)
            if a != b:
                sets.merge_if_acyclic(a, b)
    # 2. automatic depth merging, consumers in program order
    incoming: dict[int, list[int]] = defaultdict(list)
    for (p_id, c_id), kind in graph.edges.items():
        if kind is FUSE:
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
            sets.merge_if_acyclic(a, b)
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
