"""`deps.json`: a run's stitched task graph with the reason for each edge, and the results of
the dependency and bounds checks (`runtime_debug_mode` 3 and 4), in the run folder.

Takes the stitched tasks (`SimTask`s), the compiled program, the slot facts and the checks'
reports → one JSON file:
    {"schema": "openpto.deps/1", "kernel": ...,
     "tasks": [{"id", "name" (window-instance-call), "leaf", "root", "core", "window",
                "instance", "call", "ops", "lines"}],
     "edges": [{"src", "dst", "reason", "storage", "region"}],
     "checks": {"dependency": ... | null, "bounds": ... | null}}
An edge's reason: between tasks of one root instance, the compiler's (`passes/deps.py`):
"intra-root: FUSE" (data that stayed on chip inside a call, here between two calls through
GM), "GM" (many-to-many data through GM), "ORDER" (storage order), joined by "+" when several
tile edges make it; between instances, the stitcher's (`runtime.instance_links`): "RAW",
"WAR" or "WAW" on a storage copy both touch, with the overlapping region. "storage" and
"region" are null where no GM box of the two tasks overlaps.

Written before a failed check raises, so the user can look at the graph the error is about.
NOTE: a large run has ~10 edges per task: the file is text made per edge (`json.dumps` of
small parts only), not one big `json.dump` of dicts.
"""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

import numpy as np

from pypto.machine.result import SimTask
from pypto.runtime.dependency_check import CallSources, conflicts_by_window, task_name
from pypto.runtime.gm_conflicts import KINDS, Conflicts
from pypto.runtime.slot_facts import SlotFacts

SCHEMA = "openpto.deps/1"
FILE = "deps.json"


def call_edge_kinds(compiled: Any) -> dict[tuple[str, int, int], str]:
    """(root, pred call, call) -> the kinds of the tile edges between the two calls."""
    out: dict[tuple[str, int, int], set[str]] = {}
    for name, root in (compiled.roots.items() if compiled is not None else ()):
        call_of = {op.id: c.index for c in root.calls for op in c.ops}
        for (p, c), kind in root.graph.edges.items():
            a, b = call_of.get(p), call_of.get(c)
            if a is not None and b is not None and a != b:
                out.setdefault((name, a, b), set()).add(str(kind.name).upper())
    return {k: "+".join(sorted(v)) for k, v in out.items()}


def _edges(tasks: Sequence[SimTask]) -> tuple[np.ndarray, np.ndarray]:
    """(pred index, task index) of every edge, tasks by their index in `tasks`."""
    at = {t.id: k for k, t in enumerate(tasks)}
    src, dst = [], []
    for k, t in enumerate(tasks):
        for p in t.preds:
            j = at.get(p)
            if j is not None:
                src.append(j)
                dst.append(k)
    return np.asarray(src, np.int64), np.asarray(dst, np.int64)


def _gm_of_edges(tasks: Sequence[SimTask], src: np.ndarray, dst: np.ndarray,
                 found: list[tuple[int, Conflicts]]) -> list[str | None]:
    """Per edge, the text of its conflict (kind, storage, region) or None."""
    out: list[str | None] = [None] * len(src)
    for start, pairs in found:
        if not len(pairs):
            continue
        n = len(pairs.first)
        end = start + int(max(pairs.first.max(), pairs.second.max())) + 1
        m = np.flatnonzero((src >= start) & (src < end) & (dst >= start) & (dst < end))
        size = len(tasks) + 1
        keys = pairs.first * size + pairs.second
        a, b = src[m] - start, dst[m] - start
        want = np.minimum(a, b) * size + np.maximum(a, b)
        pos = np.minimum(np.searchsorted(keys, want), n - 1)
        hit = keys[pos] == want
        k = pos[hit]
        for e, kind, sid, r, offs, ext in zip(
                m[hit].tolist(), pairs.kind[k].tolist(), pairs.storage[k].tolist(),
                pairs.rank[k].tolist(), pairs.offsets[k].tolist(), pairs.extents[k].tolist()):
            out[e] = (f'"{KINDS[kind]}", "storage": {sid}, '
                      f'"region": {{"offsets": {offs[:r]}, "extents": {ext[:r]}}}')
    return out


def edges_text(tasks: Sequence[SimTask], compiled: Any,
               found: list[tuple[int, Conflicts]]) -> list[str]:
    """One JSON object per edge (pred -> task), as text."""
    kinds = call_edge_kinds(compiled)
    src, dst = _edges(tasks)
    gm = _gm_of_edges(tasks, src, dst, found)
    n = len(tasks)
    where = np.fromiter((t.window * (1 << 20) + t.instance for t in tasks), np.int64, n)
    intra = (where[src] == where[dst]).tolist()
    ids = [t.id for t in tasks]
    none = '"storage": null, "region": null'
    out = []
    for j, k, g, inside in zip(src.tolist(), dst.tolist(), gm, intra):
        if inside:
            p, t = tasks[j], tasks[k]
            reason = '"intra-root: ' + kinds.get((t.root, p.call, t.call), "ORDER") + '"'
            at = g.split(", ", 1)[1] if g is not None else none
        elif g is not None:
            reason, _, at = g.partition(", ")
        else:
            reason, at = '"cross-instance"', none
        out.append(f'{{"src": {ids[j]}, "dst": {ids[k]}, "reason": {reason}, {at}}}')
    return out


def tasks_text(tasks: Sequence[SimTask], sources: CallSources) -> list[str]:
    out = []
    for t in tasks:
        ops, lines = sources.of(t)
        out.append(json.dumps({"id": t.id, "name": task_name(t), "leaf": t.leaf,
                               "root": t.root, "core": t.core, "window": t.window,
                               "instance": t.instance, "call": t.call, "ops": ops,
                               "lines": lines}))
    return out


def write_deps(folder: str, kernel: str, tasks: Sequence[SimTask], compiled: Any,
               facts: SlotFacts | None, checks: dict[str, Any],
               found: list[tuple[int, Conflicts]] | None = None) -> str:
    """Write `folder`/deps.json (see the module docstring); returns its path. `checks`: name
    -> the JSON of that check's result (None: not run); `found`: the tasks'
    `conflicts_by_window`, if made already."""
    if found is None:
        found = conflicts_by_window(tasks, facts)
    sources = CallSources(compiled)
    path = os.path.join(folder, FILE)
    with open(path, "w") as f:
        f.write(f'{{"schema": "{SCHEMA}", "kernel": {json.dumps(kernel)},\n"tasks": [\n')
        f.write(",\n".join(tasks_text(tasks, sources)))
        f.write('\n],\n"edges": [\n')
        f.write(",\n".join(edges_text(tasks, compiled, found)))
        f.write(f'\n],\n"checks": {json.dumps(checks)}}}\n')
    return path
