"""The dependency edges between a run's tasks: the flows the trace draws (the direct
dependencies only, `direct_edges`) and each task's latest predecessor end (`latest_pred_ends`,
which the ready counters and the bubble report read).

Its own module because it is graph work on task ids, apart from how anything is written:
edges are resolved to task positions for whole arrays at once (`TaskPositions`) and reduced
transitively, which the swimlane's columns and the reports both build on.
"""
from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import Iterable

import numpy as np

from pypto.machine.result import SimResult, TaskRun


def direct_flows(result: SimResult, runs: list[TaskRun]) -> tuple[list[int], list[int]]:
    """The resolved edges between written tasks, sorted by (pred id, succ id), as task
    positions."""
    pred, succ = edge_array(result.flows)
    order = np.lexsort((succ, pred))
    pred, succ = pred[order], succ[order]
    first = np.ones(len(pred), dtype=bool)              # drop repeated edges
    first[1:] = (pred[1:] != pred[:-1]) | (succ[1:] != succ[:-1])
    find = TaskPositions(runs)
    src, dst = find(pred[first]), find(succ[first])
    known = (src >= 0) & (dst >= 0)
    src, dst = src[known].tolist(), dst[known].tolist()
    keep = direct_edges(len(runs), src, dst)
    return [src[k] for k in keep], [dst[k] for k in keep]


def direct_edges(n: int, src: list[int], dst: list[int]) -> list[int]:
    """Indices of the edges (src[k] -> dst[k] over nodes 0..n-1) that no other path implies:
    the transitive reduction, in the given order. A dropped edge's predecessor ends before a
    kept one's, so every task keeps its last-finishing predecessor (the dependency that held
    it back: critical path, bubbles and ready times read the same), and dependency
    highlighting still reaches every ancestor; a 10k-task run keeps ~20k of its ~90k edges.
    NOTE: reachability as Python-int bitsets, nodes in reverse topological order, each node's
    successors nearest first: an edge is implied iff its target is already reached."""
    succs: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for k, (a, b) in enumerate(zip(src, dst)):
        succs[a].append(k)
        indeg[b] += 1
    topo = [v for v in range(n) if not indeg[v]]
    for v in topo:                                      # Kahn: topo grows while it is walked
        for k in succs[v]:
            b = dst[k]
            indeg[b] -= 1
            if not indeg[b]:
                topo.append(b)
    if len(topo) < n:                                   # a cycle: nothing is implied
        return list(range(len(src)))
    rank = [0] * n
    for i, v in enumerate(topo):
        rank[v] = i
    dst_rank = [rank[b] for b in dst]
    nearest_first: list[list[int]] = [[] for _ in range(n)]
    for k in sorted(range(len(dst)), key=dst_rank.__getitem__):
        nearest_first[src[k]].append(k)
    reach = [0] * n                                     # by rank: the nodes a node reaches
    kept: list[int] = []
    for i in range(n - 1, -1, -1):
        mine = 0
        for k in nearest_first[topo[i]]:
            r = dst_rank[k]
            if not mine >> r & 1:
                kept.append(k)
                mine |= reach[r] | (1 << r)
        reach[i] = mine
    kept.sort()
    return kept


def edge_array(edges: Iterable[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(pred ids, succ ids) of (pred, succ) pairs."""
    flat = np.fromiter(chain.from_iterable(edges), dtype=np.int64)
    return flat[0::2], flat[1::2]


class TaskPositions:
    """Task id (unique: the simulator numbers the tasks) -> position in `runs`, looked up for
    whole arrays of ids; -1 for an id not among them."""

    def __init__(self, runs: list[TaskRun]):
        ids = np.fromiter((r.task.id for r in runs), dtype=np.int64, count=len(runs))
        self.positions = np.argsort(ids, kind="stable")
        self.ids = ids[self.positions]

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        if not len(self.ids):
            return np.full(len(ids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return np.where(self.ids[at] == ids, self.positions[at], -1)


def latest_pred_ends(result: SimResult) -> dict[int, float]:
    """Task id -> latest end (cycles) of its predecessors among the run's tasks (from the
    resolved flows and the task's own preds); tasks without one are left out."""
    runs = result.tasks
    tasks = list(map(attrgetter("task"), runs))
    pred_lists = list(map(attrgetter("preds"), tasks))
    flow_pred, flow_succ = edge_array(result.flows)
    own_pred = np.fromiter(chain.from_iterable(pred_lists), dtype=np.int64)
    own_succ = np.repeat(np.fromiter(map(attrgetter("id"), tasks), dtype=np.int64,
                                     count=len(tasks)), list(map(len, pred_lists)))
    find = TaskPositions(runs)
    pred = find(np.concatenate([flow_pred, own_pred]))
    succ = find(np.concatenate([flow_succ, own_succ]))
    known = (pred >= 0) & (succ >= 0)
    end = np.array([r.end for r in runs], dtype=np.float64)
    latest = np.full(len(runs), -np.inf)
    np.maximum.at(latest, succ[known], end[pred[known]])
    has = np.flatnonzero(latest > -np.inf)
    return dict(zip([tasks[i].id for i in has.tolist()], latest[has].tolist()))
