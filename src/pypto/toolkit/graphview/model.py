"""A run's compile dumps → the graph model the page draws.

Takes an `output/output_<ts>/` folder written with `compile_debug_mode=1` (the files listed in
`pypto.passes.dump`) → one record per root function holding up to four graph levels:

* `tensor`  - tensor ops, data edges; tensors are separate records (Tensor+Op view);
* `tile`    - tile ops coloured by the subgraph they landed in, edges by kind (fuse/gm/order);
* `execute` - call ops (= subgraphs after merging) coloured by leaf, with merge groups; each
  dependency is classed by the tile edges behind it: `1:1` (fusible, one-to-one or tree-shaped),
  `M:N` (many-to-many through GM) or `order` (storage ordering only);
* `block`   - per leaf, its tile ops in order coloured by compute pipe, with buffer totals.

Every graph has `nodes` and `edges` with exactly the counts of its dump, so a page can be
checked against the files. Node ids are strings unique in their graph (`o`/`t`/`c`/`b` + the
dump's id). A node's `key` names it by content (opcode, ordinal, regions) rather than by id, so
two runs of an edited kernel can be matched (`diff.py`); `sig` is what must be equal for the
match to count as unchanged. Keys starting with `_` are for the diff only and not written out.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
from collections import Counter, defaultdict
from typing import Any

from pypto.ir.dump import CODEGEN_PASS, TENSOR_PASS, TILE_PASS
from pypto.toolkit.errors import ToolkitError

Graph = dict[str, Any]


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ToolkitError(f"{path}: cannot read graph dump ({e})") from None


def _shape(xs: list[Any] | None) -> str:
    return "[" + ",".join(str(x) for x in xs or []) + "]"


def _kib(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n} B" if n < 1024 else f"{n / 1024:g} KiB"


def _ordinals(items: list[str]) -> list[str]:
    """`x` → `x#k`, k counting earlier equal items: stable names for repeated content."""
    seen: Counter[str] = Counter()
    out = []
    for it in items:
        out.append(f"{it}#{seen[it]}")
        seen[it] += 1
    return out


def _sig(*parts: Any) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def _search(*parts: Any) -> str:
    return " ".join(str(p) for p in parts if p not in (None, "")).lower()


# ---- tensor graph ---------------------------------------------------------------------------

def tensor_graph(d: dict[str, Any]) -> tuple[Graph, dict[int, str]]:
    """The tensor graph, and op id → key (tile-op keys build on it)."""
    keys = dict(zip((op["id"] for op in d["ops"]), _ordinals([op["opcode"] for op in d["ops"]])))
    nodes, tensors = [], {}
    for op in d["ops"]:
        outs = op["outputs"]
        names = [t["name"] for t in op["inputs"] + outs]
        info = [["op id", op["id"]], ["tile", json.dumps(op["tile"])], ["scope", op["scope"]]]
        info += [[f"in {i}", f"{t['name']} {t['dtype']} {_shape(t['shape'])}"]
                 for i, t in enumerate(op["inputs"])]
        info += [[f"out {i}", f"{t['name']} {t['dtype']} {_shape(t['shape'])}"]
                 for i, t in enumerate(outs)]
        info += [[k, json.dumps(v)] for k, v in op["attrs"].items()]
        if op.get("label"):
            info.append(["label", op["label"]])
        nodes.append({"id": f"o{op['id']}", "label": op["opcode"],
                      "sub": _shape(outs[0]["shape"]) if outs else "", "group": None,
                      "loc": op["loc"], "info": info, "key": keys[op["id"]],
                      "sig": _sig(op["tile"], op["scope"], op["attrs"],
                                  [t["shape"] for t in op["inputs"] + outs]),
                      "search": _search(op["opcode"], op["id"], op.get("label"), *names)})
        for t in op["inputs"]:
            tensors.setdefault(t["id"], (t, [], []))[2].append(f"o{op['id']}")
        for t in outs:
            tensors.setdefault(t["id"], (t, [], []))[1].append(f"o{op['id']}")
    edges = [{"s": f"o{e['src']}", "d": f"o{e['dst']}", "k": "data"} for e in d["edges"]]
    return {"level": "tensor", "nodes": nodes, "edges": edges,
            "tensors": [_tensor_node(f"v{tid}", t["name"], f"{t['dtype']} {_shape(t['shape'])}",
                                     prod, cons)
                        for tid, (t, prod, cons) in tensors.items()],
            "summary": [["ops", d["op_count"]], ["edges", d["edge_count"]]]}, keys


def _tensor_node(tid: str, name: str, sub: str, producers: list[str],
                 consumers: list[str]) -> dict[str, Any]:
    return {"id": tid, "label": name, "sub": sub, "p": producers, "c": consumers,
            "search": _search(name)}


# ---- tile graph -----------------------------------------------------------------------------

def _region(r: dict[str, Any]) -> str:
    return f"{r['name']}[{','.join(r['offsets'])}]{_shape(r['shape'])}"


def tile_graph(d: dict[str, Any], tensor_keys: dict[int, str], linked: bool) -> Graph:
    """`linked`: the execute graph exists, so subgraph i is call op i."""
    raw = []
    for op in d["ops"]:
        where = op["output"] or (op["inputs"][0] if op["inputs"] else None)
        raw.append(f"{tensor_keys.get(op['src_op'], op['src_op'])}/{op['opcode']}/{op['kind']}"
                   f"/{_region(where) if where else ''}")
    keys = _ordinals(raw)
    members = defaultdict(list)
    for op, key in zip(d["ops"], keys):
        members[op["subgraph"]].append(key)
    sg_keys = {i: _sig(sorted(ks)) for i, ks in members.items()}
    nodes, tensors = [], {}
    for op, key in zip(d["ops"], keys):
        sg, out = op["subgraph"], op["output"]
        info = [["tile op", op["id"]], ["kind", op["kind"]], ["core", op["core"]],
                ["subgraph", sg], ["latency", op["latency"]], ["tensor op", op["src_op"]],
                ["scope", op["scope"]]]
        info += [[f"in {i}", _region(r) + (" (local)" if r.get("local") else "")]
                 for i, r in enumerate(op["inputs"])]
        if out:
            info.append(["out", f"{_region(out)} {_kib(out['bytes'])}"])
        node = {"id": f"t{op['id']}", "label": op["opcode"],
                "sub": f"sg {sg} · {_shape(out['shape']) if out else op['kind']}",
                "group": sg, "loc": op["loc"], "info": info, "key": key,
                "sig": _sig(op["latency"], sg_keys[sg]), "sg": sg,
                "search": _search(op["opcode"], op["id"], f"sg{sg}", op.get("label"),
                                  *(r["name"] for r in op["inputs"] + ([out] if out else [])))}
        if linked:
            node["calls"] = [sg]
        nodes.append(node)
        for r in op["inputs"]:
            tensors.setdefault(_region(r), (r, [], []))[2].append(node["id"])
        if out:
            tensors.setdefault(_region(out), (out, [], []))[1].append(node["id"])
    edges = [{"s": f"t{e['src']}", "d": f"t{e['dst']}", "k": e["kind"]} for e in d["edges"]]
    kinds = d.get("edge_kinds", {})
    return {"level": "tile", "nodes": nodes, "edges": edges,
            "tensors": [_tensor_node(f"r{i}", name, f"{r['dtype']} {_kib(r['bytes'])}", p, c)
                        for i, (name, (r, p, c)) in enumerate(tensors.items())],
            "summary": [["tile ops", d["op_count"]], ["edges", d["edge_count"]],
                        *([f"{k} edges", n] for k, n in kinds.items()),
                        ["subgraphs", d["subgraph_count"]]],
            "_members": {i: ks for i, ks in members.items()}}


# ---- execute graph --------------------------------------------------------------------------

# Classes of a dependency between two subgraphs, strongest first: any many-to-many tile edge
# makes the whole dependency go through GM.
_CLASS_OF_KIND = (("gm", "M:N"), ("fuse", "1:1"), ("order", "order"))


def subgraph_deps(tile: dict[str, Any]) -> dict[tuple[int, int], Counter[str]]:
    """(producer subgraph, consumer subgraph) → tile-edge kind counts, for edges that cross."""
    where = {op["id"]: op["subgraph"] for op in tile["ops"]}
    out: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
    for e in tile["edges"]:
        a, b = where[e["src"]], where[e["dst"]]
        if a != b:
            out[(a, b)][e["kind"]] += 1
    return out


def dep_class(kinds: Counter[str]) -> str:
    return next((cls for kind, cls in _CLASS_OF_KIND if kinds.get(kind)), "dep")


def execute_graph(d: dict[str, Any], tile_raw: dict[str, Any] | None,
                  tile: Graph | None) -> Graph:
    loc_of = {}
    if tile_raw is not None:
        loc_of = {op["id"]: op["loc"] for op in tile_raw["ops"]}
    deps = subgraph_deps(tile_raw) if tile_raw is not None else {}
    members = tile["_members"] if tile is not None else {}
    nodes = []
    for c in d["calls"]:
        locs = sorted({loc_of[t] for t in c["tile_ops"] if loc_of.get(t)}, key=_loc_order)
        merge = c.get("merge", {}).get("merge_info") or {}
        groups = [f"{k} {v.get('key', '')} group {v.get('group')}" for k, v in merge.items()]
        info = [["call", c["index"]], ["leaf", f"{c['leaf']} {c['leaf_name']}"],
                ["leaf hash", c["leaf_hash"]], ["core", c["core"]], ["tile ops", c["op_count"]],
                ["latency", c["latency"]], ["args", f"{c['arg_count']} "
                                                    f"({c['symbolic_arg_count']} symbolic)"],
                ["preds", ", ".join(map(str, c["preds"])) or "-"],
                ["succs", ", ".join(map(str, c["succs"])) or "-"]]
        info += [["merge", g] for g in groups]
        info += [["source", "\n".join(locs)]] if locs else []
        ks = members.get(c["index"], [str(t) for t in c["tile_ops"]])
        nodes.append({"id": f"c{c['index']}", "label": f"call {c['index']}",
                      "sub": f"leaf {c['leaf']} · {c['core']} · {c['op_count']} ops",
                      "group": c["leaf"], "loc": locs[0] if locs else None, "info": info,
                      "key": _sig(sorted(ks)), "sig": _sig(c["leaf_hash"], c["latency"]),
                      "calls": [c["index"]], "leaf": c["leaf"],
                      "search": _search(f"call{c['index']}", c["leaf_name"], c["core"],
                                        *groups, *locs),
                      "_members": ks})
    edges = []
    for c in d["calls"]:
        for p in c["preds"]:
            kinds = deps.get((p, c["index"]), Counter())
            edges.append({"s": f"c{p}", "d": f"c{c['index']}", "k": dep_class(kinds),
                          "n": ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))})
    return {"level": "execute", "nodes": nodes, "edges": edges, "tensors": None,
            "summary": [["call ops", d["call_count"]], ["leaves", d["leaf_count"]],
                        ["edges", d["edge_count"]], *_dep_summary(deps)]}


def _dep_summary(deps: dict[tuple[int, int], Counter[str]]) -> list[list[Any]]:
    """Subgraph dependencies per class, with the tile edges behind them."""
    per: dict[str, list[int]] = {}
    for kinds in deps.values():
        cls = dep_class(kinds)
        n = per.setdefault(cls, [0, 0])
        n[0] += 1
        n[1] += sum(kinds.values())
    return [[f"{cls} deps", f"{n} ({edges} tile edges)"] for cls, (n, edges) in sorted(per.items())]


def _loc_order(loc: str) -> tuple[str, int]:
    path, _, line = loc.rpartition(":")
    return (path, int(line)) if line.isdigit() else (loc, 0)


# ---- block graph ----------------------------------------------------------------------------

_COMPUTE_PIPES = ("M", "V", "FIX", "MTE3", "MTE1", "MTE2", "GM")


def main_pipe(pipes: list[str]) -> str:
    """The pipe an op is drawn under: its compute pipe if any, else its data move."""
    return next((p for p in _COMPUTE_PIPES if p in pipes), pipes[0] if pipes else "-")


def block_graph(d: dict[str, Any]) -> Graph:
    keys = _ordinals([op["opcode"] for op in d["ops"]])
    nodes, edges, tensors = [], [], {}
    for op, key in zip(d["ops"], keys):
        i, out = op["index"], op["output"]
        steps = [" ".join(str(x) for x in (
            s["pipe"], f"{s.get('from', '')}→{s.get('to', '')}" if "from" in s else s.get("to"),
            _kib(s.get("bytes")) if "bytes" in s else None,
            f"{s['buffer']} {_kib(s['buffer_bytes'])}" if "buffer" in s else None) if x)
            for s in op["steps"]]
        info = [["index", i], ["tile op", op["tile_op"]], ["kind", op["kind"]],
                ["latency", op["latency"]]]
        info += [[f"in {j}", f"{r['name']} {_shape(r['shape'])} {_kib(r['bytes'])} from "
                             + (r["from"] if r["producer"] is None else f"op {r['producer']}")]
                 for j, r in enumerate(op["inputs"])]
        if out:
            info.append(["out", f"{out['name']} {_shape(out['shape'])} {_kib(out['bytes'])}"
                                + (" → GM" if out["to_gm"] else "")])
        info += [[f"step {j}", s] for j, s in enumerate(steps)]
        nodes.append({"id": f"b{i}", "label": op["opcode"], "sub": "·".join(op["pipes"]),
                      "group": main_pipe(op["pipes"]), "loc": op["loc"], "info": info,
                      "key": key, "sig": _sig(op["steps"], op["latency"]),
                      "search": _search(op["opcode"], op["kind"], *op["pipes"],
                                        *(r["name"] for r in op["inputs"]),
                                        out["name"] if out else None)})
        preds = sorted({r["producer"] for r in op["inputs"] if r["producer"] is not None})
        edges += [{"s": f"b{p}", "d": f"b{i}", "k": "data"} for p in preds]
        for j, r in enumerate(op["inputs"]):
            tid = f"b{r['producer']}" if r["producer"] is not None else f"g{i}.{j}"
            tensors.setdefault(tid, (r, [], []))[2].append(f"b{i}")
        if out:
            tensors.setdefault(f"b{i}", (out, [], []))[1].append(f"b{i}")
    buffers = [[lvl, b["allocations"], b["total_bytes"], b["max_bytes"], b["capacity"]]
               for lvl, b in d["buffers"].items()]
    return {"level": "block", "nodes": nodes, "edges": edges,
            "tensors": [_tensor_node("v" + tid, r["name"],
                                     f"{_shape(r['shape'])} {_kib(r['bytes'])}", p, c)
                        for tid, (r, p, c) in tensors.items()],
            "summary": [["leaf", f"{d['leaf']} {d['function']}"], ["hash", d["hash_hex"]],
                        ["core", d["core"]], ["tile ops", d["op_count"]],
                        ["calls", len(d["calls"])],
                        *([f"pipe {p}", n] for p, n in d["pipes"].items())],
            "buffers": buffers, "calls": d["calls"]}


# ---- a run folder ---------------------------------------------------------------------------

def _files(directory: str, prefix: str) -> list[str]:
    return sorted(glob.glob(os.path.join(glob.escape(directory), f"{prefix}_*.json")))


def load_run(directory: str) -> dict[str, Any]:
    """All root functions of one run folder, in program order."""
    if not os.path.isdir(directory):
        raise ToolkitError(f"{directory}: not a directory")
    by_root: dict[str, dict[str, Any]] = defaultdict(dict)
    for path in _files(directory, TENSOR_PASS):
        d = _read(path)
        by_root[d["function"]]["tensor"] = d
    for path in _files(directory, TILE_PASS):
        d = _read(path)
        by_root[d["function"]]["tile"] = d
    for path in _files(directory, CODEGEN_PASS):
        d = _read(path)
        if d.get("graph_type") == "EXECUTE":
            by_root[d["function"]]["execute"] = d
        elif d.get("graph_type") == "BLOCK":
            by_root[d["root"]].setdefault("blocks", []).append(d)
    if not by_root:
        raise ToolkitError(f"{directory}: no compile dumps (Before_*.json, After_*.json); run "
                           "the kernel with debug_options={'compile_debug_mode': 1}")
    order = _root_order(directory)
    names = sorted(by_root, key=lambda n: (order.get(n, len(order)), n))
    return {"dir": os.path.abspath(directory), "roots": [_root(n, by_root[n]) for n in names]}


def _root_order(directory: str) -> dict[str, int]:
    path = os.path.join(directory, "program.json")
    if not os.path.exists(path):
        return {}
    return {n: i for i, n in enumerate(_read(path).get("root_functions", []))}


def _link_tensor_ops(tensor: Graph, tile_raw: dict[str, Any]) -> None:
    """A tensor op ran in the call ops of the subgraphs its tile ops landed in."""
    calls: dict[str, set[int]] = defaultdict(set)
    for op in tile_raw["ops"]:
        calls[f"o{op['src_op']}"].add(op["subgraph"])
    for node in tensor["nodes"]:
        node["calls"] = sorted(calls.get(node["id"], ()))


def _root(name: str, dumps: dict[str, Any]) -> dict[str, Any]:
    levels: dict[str, Any] = {}
    keys: dict[int, str] = {}
    if "tensor" in dumps:
        levels["tensor"], keys = tensor_graph(dumps["tensor"])
    tile_raw = dumps.get("tile")
    if tile_raw is not None:
        levels["tile"] = tile_graph(tile_raw, keys, "execute" in dumps)
        if "execute" in dumps and "tensor" in levels:
            _link_tensor_ops(levels["tensor"], tile_raw)
    leaves = []
    if "execute" in dumps:
        levels["execute"] = execute_graph(dumps["execute"], tile_raw, levels.get("tile"))
        leaves = [{"index": lf["index"], "name": lf["name"], "hash": lf["hash_hex"],
                   "core": lf["core"], "calls": lf["calls"]}
                  for lf in dumps["execute"]["leaves"]]
    blocks = {str(b["leaf"]): block_graph(b)
              for b in sorted(dumps.get("blocks", []), key=lambda b: b["leaf"])}
    return {"name": name, "levels": levels, "blocks": blocks, "leaves": leaves}
