"""Mark what changed between two runs' graphs, level by level.

Takes two `model.load_run` results (A = before, B = after) → the same records with `diff` set
on nodes and edges (`removed` in A; `added` in B; `changed` on both sides of a match whose
`sig` differs; unset when equal), `twin` (the matched node's id in the other run) and a `diff`
count per graph. Roots pair by name, leaves by
index. Nodes pair by `key` (content, not ids, so an edited kernel still lines up); tile ops,
whose keys name the tile's region and so all differ after a TileShape edit, pair by source line
and op kind instead (equal keys first, then in order), so a retiled op is `changed` rather than
one removed and one added; only the surplus of a line that now has more or fewer tiles is
added or removed. Call ops,
which are subgraphs, pair by their member tile ops instead: equal members are the same
subgraph, and two subgraphs of which the smaller shares at least half of its members with the
other are the same one `changed` (best overlap first), so a split shows as one changed and one
added subgraph.
"""
from __future__ import annotations

from typing import Any

Graph = dict[str, Any]

_MIN_OVERLAP = 0.5


def diff_runs(a: dict[str, Any], b: dict[str, Any]) -> None:
    roots_b = {r["name"]: r for r in b["roots"]}
    seen = set()
    for ra in a["roots"]:
        rb = roots_b.get(ra["name"])
        if rb is None:
            _mark_all(ra, "removed")
            continue
        seen.add(ra["name"])
        for level in sorted(set(ra["levels"]) | set(rb["levels"])):
            diff_graphs(ra["levels"].get(level), rb["levels"].get(level))
        for leaf in sorted(set(ra["blocks"]) | set(rb["blocks"])):
            diff_graphs(ra["blocks"].get(leaf), rb["blocks"].get(leaf))
    for rb in b["roots"]:
        if rb["name"] not in seen:
            _mark_all(rb, "added")


def _mark_all(root: dict[str, Any], status: str) -> None:
    for g in list(root["levels"].values()) + list(root["blocks"].values()):
        one_sided(g, status)


def one_sided(g: Graph, status: str) -> None:
    for x in g["nodes"] + g["edges"]:
        x["diff"] = status
    g["diff"] = {"added": 0, "removed": 0, "changed": 0, "same": 0,
                 status: len(g["nodes"])}


def diff_graphs(a: Graph | None, b: Graph | None) -> None:
    if a is None or b is None:
        if a is not None or b is not None:
            one_sided(a or b, "removed" if a is not None else "added")
        return
    if a["level"] == "execute":
        pairs = _pair_subgraphs(a, b)
    elif a["level"] == "tile":
        pairs = _pair_by_source(a, b)
    else:
        pairs = _pair_by_key(a, b)
    counts = {"added": 0, "removed": 0, "changed": 0, "same": 0}
    for na, nb in pairs:
        na["twin"], nb["twin"] = nb["id"], na["id"]
        if na["sig"] == nb["sig"] and na["key"] == nb["key"]:
            counts["same"] += 1
            continue
        na["diff"] = nb["diff"] = "changed"
        counts["changed"] += 1
    paired_a = {id(na) for na, _ in pairs}
    paired_b = {id(nb) for _, nb in pairs}
    for n in a["nodes"]:
        if id(n) not in paired_a:
            n["diff"] = "removed"
            counts["removed"] += 1
    for n in b["nodes"]:
        if id(n) not in paired_b:
            n["diff"] = "added"
            counts["added"] += 1
    a["diff"] = b["diff"] = counts
    _diff_edges(a, b, pairs)


def _pair_by_key(a: Graph, b: Graph) -> list[tuple[dict, dict]]:
    by_key = {n["key"]: n for n in b["nodes"]}
    return [(n, by_key[n["key"]]) for n in a["nodes"] if n["key"] in by_key]


def _source_kind(n: dict) -> tuple[str, str]:
    return (n.get("loc") or "", n["label"])


def _pair_by_source(a: Graph, b: Graph) -> list[tuple[dict, dict]]:
    """Tile ops of one source line and op kind: equal keys pair first, the rest in order."""
    pairs = _pair_by_key(a, b)
    paired_a = {id(na) for na, _ in pairs}
    paired_b = {id(nb) for _, nb in pairs}
    rest_b: dict[tuple[str, str], list[dict]] = {}
    for n in b["nodes"]:
        if id(n) not in paired_b:
            rest_b.setdefault(_source_kind(n), []).append(n)
    for n in a["nodes"]:
        if id(n) in paired_a:
            continue
        candidates = rest_b.get(_source_kind(n))
        if candidates:
            pairs.append((n, candidates.pop(0)))
    return pairs


def _pair_subgraphs(a: Graph, b: Graph) -> list[tuple[dict, dict]]:
    """Equal member sets first, then the best remaining overlaps; deterministic by order."""
    owner_b: dict[str, int] = {}
    for j, n in enumerate(b["nodes"]):
        for k in n["_members"]:
            owner_b[k] = j
    candidates = []
    for i, n in enumerate(a["nodes"]):
        mine = set(n["_members"])
        for j in sorted({owner_b[k] for k in mine if k in owner_b}):
            theirs = set(b["nodes"][j]["_members"])
            shared = len(mine & theirs)
            score = shared / min(len(mine), len(theirs))
            if score >= _MIN_OVERLAP:
                candidates.append((-score, -shared, i, j))
    pairs, used_a, used_b = [], set(), set()
    for _, _, i, j in sorted(candidates):
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            pairs.append((a["nodes"][i], b["nodes"][j]))
    return pairs


def _diff_edges(a: Graph, b: Graph, pairs: list[tuple[dict, dict]]) -> None:
    """An edge is kept when both ends are paired and the other side has it with the same kind."""
    to_b = {na["id"]: nb["id"] for na, nb in pairs}
    in_b = {(e["s"], e["d"], e["k"]) for e in b["edges"]}
    matched = set()
    for e in a["edges"]:
        twin = (to_b.get(e["s"]), to_b.get(e["d"]), e["k"])
        if twin in in_b:
            matched.add(twin)
        else:
            e["diff"] = "removed"
    for e in b["edges"]:
        if (e["s"], e["d"], e["k"]) not in matched:
            e["diff"] = "added"
