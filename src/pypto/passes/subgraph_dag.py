"""The subgraph DAG under merging: one block's subgraphs, their edges and what the merges
record on them, as subgraphs are absorbed into earlier ones.

Its own module because it is the graph bookkeeping every breadth merge shares and none decides:
union keeps edges, levels and program order right, `cyclic` answers whether a merge would close
a cycle, `topological_order` lists the survivors. The merges (`merge`) only choose who absorbs
whom. A union absorbs a later subgraph into an earlier one: the survivor keeps the smaller
original index, so the order of the merged subgraphs stays that of their first members.
"""
from __future__ import annotations

import heapq
from typing import Iterable, Iterator

from pypto.passes.functions import Signatures
from pypto.passes.kinds import AIC, AIV, FUSE, GM, WHOLE
from pypto.passes.matmul_loads import is_matmul
from pypto.passes.merge_settings import GroupInfo
from pypto.passes.tile_graph import TileGraph, TileOp


class SubgraphDag:
    """One block's subgraphs as merging changes them: their tile ops, edges, levels, and per
    subgraph the merges' records (`info`) and isomorphism keys (`sigs`)."""

    def __init__(self, graph: TileGraph, subgraphs: list[list[TileOp]], signatures: Signatures):
        self.graph = graph
        self.signatures = signatures
        self.pos = {op.id: i for i, op in enumerate(graph.ops)}
        self.op_preds = graph.preds()
        self.ops = [list(sg) for sg in subgraphs]
        self.alive = [True] * len(subgraphs)
        # per subgraph: whether it holds a "whole" op, and its signature once computed (both
        # asked by every pass for every subgraph; union updates them)
        # (ops on a run-time grid are never breadth-merged either: one task per tile already)
        self.has_whole = [any(op.kind is WHOLE or op.grid is not None for op in sg)
                          for sg in subgraphs]
        self.sigs: list[str | None] = [None] * len(subgraphs)
        self.info: list[dict[str, GroupInfo]] = [{} for _ in subgraphs]
        self.where = {op.id: i for i, sg in enumerate(subgraphs) for op in sg}
        self.succ: list[set[int]] = [set() for _ in subgraphs]
        self.pred: list[set[int]] = [set() for _ in subgraphs]
        for (p, c) in graph.edges:
            a, b = self.where[p], self.where[c]
            if a != b:
                self.succ[a].add(b)
                self.pred[b].add(a)
        # data-flow (FUSE or GM) edges between tile ops, both ways: `data_neighbours`
        self.data_preds: dict[int, list[int]] = {op.id: [] for op in graph.ops}
        self.data_succs: dict[int, list[int]] = {op.id: [] for op in graph.ops}
        for (p, c), kind in graph.edges.items():
            if kind is FUSE or kind is GM:
                self.data_succs[p].append(c)
                self.data_preds[c].append(p)
        self._into: dict[int, int] = {}   # absorbed subgraph -> the one that absorbed it
        self.merged_any = False
        self.level = _levels(self.succ, self.pred)
        self._unsorted: set[int] = set()   # subgraphs whose ops are out of program order

    def ops_of(self, i: int) -> list[TileOp]:
        """Subgraph i's tile ops in program order."""
        if i in self._unsorted:
            self._unsorted.discard(i)
            self.ops[i].sort(key=lambda op: self.pos[op.id])
        return self.ops[i]

    def live(self) -> list[int]:
        return [i for i, a in enumerate(self.alive) if a]

    def core(self, i: int) -> str | None:
        return None if self.has_whole[i] else self.ops_of(i)[0].core

    def is_vec(self, i: int) -> bool:
        return self.core(i) is AIV

    def is_cube(self, i: int) -> bool:
        return self.core(i) is AIC and any(is_matmul(op) for op in self.ops_of(i))

    def labels(self, members: Iterable[int]) -> list[str]:
        out: dict[str, None] = {}
        for i in members:
            for op in self.ops_of(i):
                out.setdefault(op.src.label, None)
        return list(out)

    def signature(self, i: int) -> str:
        if self.sigs[i] is None:
            self.sigs[i] = self.signatures.of(self.ops_of(i), self.op_preds)
        return self.sigs[i]

    def groups(self, members: list[int]) -> list[list[int]]:
        """Members grouped by isomorphism, groups in order of first appearance."""
        by_sig: dict[str, list[int]] = {}
        for i in members:
            by_sig.setdefault(self.signature(i), []).append(i)
        return list(by_sig.values())

    def _path(self, src: int, dst: int) -> bool:
        """Whether a path of two or more edges leads from src to dst.

        NOTE: levels grow along every edge, so such a path climbs at least two levels and
        passes only through levels strictly between src's and dst's: siblings (one level, what
        the breadth merges mostly ask about) answer at once, and a search never leaves the
        window. (The unpruned search walked 165M nodes for 38,592 checks of one small kernel.)"""
        level = self.level
        top = level[dst]
        if top - level[src] < 2:
            return False
        stack = [s for s in self.succ[src] if s != dst and level[s] < top]
        seen = set(stack)
        while stack:
            x = stack.pop()
            if dst in self.succ[x]:
                return True
            for s in self.succ[x]:
                if s not in seen and level[s] < top:
                    seen.add(s)
                    stack.append(s)
        return False

    def cyclic(self, a: int, b: int) -> bool:
        return self._path(a, b) or self._path(b, a)

    def union(self, a: int, b: int) -> None:
        """Absorb subgraph b into subgraph a."""
        # NOTE: put in program order when next read (ops_of): a head absorbing a long run
        # re-merged its growing list on every union (2.4M steps for 19k unions)
        self.ops[a].extend(self.ops[b])
        self._unsorted.add(a)
        self.ops[b] = []
        self.alive[b] = False
        self.has_whole[a] = self.has_whole[a] or self.has_whole[b]
        self.sigs[a] = self.sigs[b] = None
        self._into[b] = a
        for s in self.succ[b]:
            self.pred[s].discard(b)
            if s != a:
                self.pred[s].add(a)
                self.succ[a].add(s)
        for p in self.pred[b]:
            self.succ[p].discard(b)
            if p != a:
                self.succ[p].add(a)
                self.pred[a].add(p)
        self.succ[a].discard(b)
        self.pred[a].discard(b)
        self.succ[b], self.pred[b] = set(), set()
        self._relevel(a, max(self.level[a], self.level[b]))
        for k, g in self.info[b].items():
            mine = self.info[a].get(k)
            self.info[a][k] = g if mine is None else mine._replace(merged=mine.merged + g.merged)
        self.info[b] = {}
        self.merged_any = True

    def _relevel(self, a: int, level: int) -> None:
        """Give the merged subgraph `a` the higher of its parts' levels and push successors
        that are no longer above their predecessors (none, when siblings merge)."""
        levels, succ = self.level, self.succ
        levels[a] = level
        stack = [a]
        while stack:
            x = stack.pop()
            above = levels[x] + 1
            for s in succ[x]:
                if levels[s] < above:
                    levels[s] = above
                    stack.append(s)

    def data_neighbours(self, i: int, producers: bool) -> list[int]:
        """Live subgraphs feeding (or fed by) subgraph i through data edges, sorted."""
        out = set()
        adjacent = self.data_preds if producers else self.data_succs
        for op in self.ops[i]:
            for other in adjacent[op.id]:
                r = self.root(other)
                if r != i:
                    out.add(r)
        return sorted(out)

    def root(self, op_id: int) -> int:
        i = self.where[op_id]
        while not self.alive[i]:
            i = self._into[i]
        return i

    def runs(self, bucket: list[int], sizes: Iterator[int]) -> None:
        """Merge consecutive members of `bucket`: each head absorbs the following members up
        to its run size; a member whose merge would make a cycle starts the next run."""
        head, room = None, 0
        for m in bucket:
            if head is not None and room > 0 and not self.cyclic(head, m):
                self.union(head, m)
                room -= 1
            else:
                head, room = m, next(sizes, 1) - 1

    def topological_order(self) -> list[int]:
        """Live subgraphs in dependency order, ties by original index (identity when
        unmerged)."""
        live = self.live()
        indeg = {i: len(self.pred[i]) for i in live}
        heap = [i for i in live if indeg[i] == 0]
        heapq.heapify(heap)
        order = []
        while heap:
            i = heapq.heappop(heap)
            order.append(i)
            for s in sorted(self.succ[i]):
                indeg[s] -= 1
                if indeg[s] == 0:
                    heapq.heappush(heap, s)
        if len(order) != len(live):
            raise RuntimeError(f"internal: merged subgraphs of {self.graph.block_name} "
                               "form a cycle")
        return order


def _levels(succ: list[set[int]], pred: list[set[int]]) -> list[int]:
    """Longest-path levels of the subgraph DAG: every edge climbs at least one level."""
    level = [0] * len(succ)
    indeg = [len(p) for p in pred]
    ready = [i for i, d in enumerate(indeg) if d == 0]
    while ready:
        i = ready.pop()
        for s in succ[i]:
            level[s] = max(level[s], level[i] + 1)
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return level
