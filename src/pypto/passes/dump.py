"""Per-stage dumps of a compiled program, written with `debug_options={"compile_debug_mode": 1}`.

Takes a `CompiledProgram` and the kernel's `output/output_<ts>/` directory → program.json (via
`pypto.ir.dump`, its function table extended with the compiled functions) plus one JSON file
per graph level, named after the PyPTO pass whose dump shows the same level (the number is the
pass index of the 0.2.0 A2/A3 pipeline, compiler_runtime.md §1.1/§1.4); `<root>` is the root
function (block) name made file-name safe:

| file                                                   | level   | what                         |
|--------------------------------------------------------|---------|------------------------------|
| `Before_004_ExpandFunction_<root>.json`                | TENSOR  | the block's tensor ops       |
| `Before_027_SubgraphToFunction_<root>.json`            | TILE    | tile ops, edges, subgraphs   |
| `After_036_CodegenPreproc_<root>_ROOT.json`            | EXECUTE | the root's call ops          |
| `After_036_CodegenPreproc_<root>_LEAF_<k>_<hash>.json` | BLOCK   | one per distinct leaf        |

(PyPTO names leaf files `..._LEAF_program_id_<k>_<hash>`; here `<k>` is the leaf's index in
its root and `<hash>` its 16-hex-digit content hash, the one in program.json.)

- Tensor graph: every op with its inputs/outputs (shape, valid shape, dtype, storage), attributes
  as text, TileShapes, scope, semantic label, source `file:line` and expression-table entries;
  the data edges between ops of the block.
- Tile graph: every tile op (id, kind, opcode, core, input/output regions with offsets, buffer
  shape, valid extents and bytes, latency estimate, the subgraph it landed in), every edge with
  its kind (fuse / gm / order), the subgraphs and, once leaves exist, the escaping values.
- Execute graph: one entry per call op: index, leaf, core, predecessors and successors, and its
  symbolic arguments (the offsets and valid extents of its tile ops' regions); fields a merge
  step adds to a `CallOp` are written under `merge`.
- Block graph: the tile ops of one leaf in order (taken from its first call op), each with the
  pipes it uses and the buffers it allocates (UB on AIV; L1/L0A/L0B/L0C on AIC) in bytes, and
  per-buffer totals (allocations without reuse) against the machine's capacities. Cube sizes
  are per K step of the cube TileShape; a load shared by merged matmuls is copied to L1 once.

Which files exist depends on `host_options.compile_stage` (see `CompiledProgram.stage`):
TENSOR_GRAPH writes the tensor graphs only, TILE_GRAPH adds the tile graphs, later stages (and
ALL_COMPLETE) write all four. Output is deterministic: ops in program order, edges sorted, no
object ids or Python hashes.
"""
from __future__ import annotations

import dataclasses
import os
from collections import Counter
from typing import Any

from pypto._config import CompStage
from pypto.dtypes import bytes_of
from pypto.ir.dump import (CODEGEN_PASS, TENSOR_PASS, TILE_PASS, block_hash, digest,
                           dump_program, file_names, function_table, hash_fields, source_lines,
                           tensor_json, text, tile_json, write_json)
from pypto.ir.operation import Operation
from pypto.ir.program import Block
from pypto.passes.untiled import untiled_json
from pypto.passes import CompiledProgram
from pypto.passes.expr_table import entries as expr_table_entries
from pypto.passes.functions import CallOp, Leaf, RootFunction
from pypto.passes.tile_graph import AIC, Region, TileGraph, TileOp
from pypto.symbolic import Const

FORMAT_VERSION = 1


def _loc(op: Operation) -> str | None:
    return str(op.loc) if op.loc else None


def _plain(x: Any) -> Any:
    """JSON form of a field a merge pass adds to a CallOp (tile ops and calls by number)."""
    if isinstance(x, TileOp):
        return x.id
    if isinstance(x, Region):
        return {"value": x.value.id, "offsets": [repr(o) for o in x.offsets],
                "shape": list(x.shape)}
    if hasattr(x, "_asdict"):   # a NamedTuple
        return {k: _plain(v) for k, v in x._asdict().items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, CallOp):
        return x.index
    if isinstance(x, Leaf):
        return x.index
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (set, frozenset)):
        return sorted((_plain(v) for v in x), key=repr)
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in sorted(x.items(), key=lambda kv: repr(kv[0]))}
    return text(x)


def leaf_hash(leaf: Leaf) -> int:
    """The leaf's 64-bit content hash: its isomorphism signature (a SHA-1 prefix)."""
    sig = leaf.signature
    try:
        return int(sig, 16) if len(sig) == 16 else digest(sig)
    except ValueError:
        return digest(sig)


# ---- tensor graph ---------------------------------------------------------------------------

def tensor_graph_json(block: Block) -> dict[str, Any]:
    producer: dict[int, int] = {}
    ops, edges = [], []
    for op in block.ops:
        for v in op.inputs:
            if v.id in producer:
                edges.append({"src": producer[v.id], "dst": op.id, "value": v.id})
        table = expr_table_entries(op)
        ops.append({"id": op.id, "opcode": op.opcode,
                    "inputs": [tensor_json(v) for v in op.inputs],
                    "outputs": [tensor_json(v) for v in op.outputs],
                    "attrs": {k: text(a) for k, a in op.attrs.items()},
                    "tile": tile_json(op.tile), "scope": text(op.scope), "label": op.label,
                    "loc": _loc(op), "expr_table_entries": table[0] if table else None})
        for v in op.outputs:
            producer[v.id] = op.id
    return {"format_version": FORMAT_VERSION, "stage": "TENSOR_GRAPH", "graph_type": "TENSOR",
            "pass": TENSOR_PASS, "function": block.name, **hash_fields(block_hash(block)),
            "op_count": len(ops), "edge_count": len(edges), "ops": ops, "edges": edges}


# ---- tile graph -----------------------------------------------------------------------------

def region_json(r: Region) -> dict[str, Any]:
    v = r.value
    return {"value": v.id, "name": v.name or v.storage.name, "dtype": v.dtype.name,
            "storage": v.storage.id, "offsets": [repr(o) for o in r.offsets],
            "shape": list(r.shape), "valid": [repr(e) for e in r.valid],
            "dims": list(r.dims) if r.dims is not None else None,
            "bytes": r.nbytes if r.shape or v.rank == 0 else None}


def _tile_op_json(op: TileOp, subgraph: int) -> dict[str, Any]:
    inputs = []
    for i, r in enumerate(op.inputs):
        entry = region_json(r)
        if len(op.local_inputs) == len(op.inputs):
            entry["local"] = op.local_inputs[i]
        inputs.append(entry)
    return {"id": op.id, "kind": op.kind, "opcode": op.opcode, "core": op.core,
            "src_op": op.src.id, "loc": _loc(op.src), "scope": text(op.scope),
            "label": op.src.label, "latency": op.latency, "subgraph": subgraph,
            "inputs": inputs, "output": region_json(op.output) if op.output else None,
            "attrs": {k: text(a) for k, a in op.attrs.items()}}


def tile_graph_json(block: Block, graph: TileGraph, subgraphs: list[list[TileOp]],
                    linked: bool) -> dict[str, Any]:
    """`linked`: leaves were built (escaping values and local-input flags are known)."""
    where = {op.id: i for i, sg in enumerate(subgraphs) for op in sg}
    edges = [{"src": p, "dst": c, "kind": k} for (p, c), k in sorted(graph.edges.items())]
    out = {"format_version": FORMAT_VERSION, "stage": "TILE_GRAPH", "graph_type": "TILE",
           "pass": TILE_PASS, "function": block.name, **hash_fields(block_hash(block)),
           "op_count": len(graph.ops), "edge_count": len(edges),
           "edge_kinds": dict(sorted(Counter(e["kind"] for e in edges).items())),
           "subgraph_count": len(subgraphs),
           "ops": [_tile_op_json(op, where[op.id]) for op in graph.ops], "edges": edges,
           "subgraphs": [{"index": i, "core": sg[0].core, "op_count": len(sg),
                          "latency": sum(op.latency for op in sg), "ops": [op.id for op in sg]}
                         for i, sg in enumerate(subgraphs)],
           "gm_storages": sorted(graph.gm_storages),
           "untiled_ops": untiled_json(graph)}
    if linked:
        out["escaping"] = sorted(graph.escaping)
    return out


# ---- execute graph --------------------------------------------------------------------------

_CALL_FIELDS = {"index", "ops", "leaf", "preds"}


def _args(call: CallOp) -> tuple[list[dict[str, Any]], int, int]:
    """Per tile op the offsets / valid extents of its regions; (args, entries, symbolic)."""
    args, n, sym = [], 0, 0

    def reg(r: Region) -> dict[str, Any]:
        nonlocal n, sym
        exprs = list(r.offsets) + list(r.valid)
        n += len(exprs)
        sym += sum(1 for e in exprs if not isinstance(e, Const))
        return {"value": r.value.id, "offsets": [repr(o) for o in r.offsets],
                "valid": [repr(e) for e in r.valid]}

    for i, op in enumerate(call.ops):
        args.append({"op": i, "tile_op": op.id, "inputs": [reg(r) for r in op.inputs],
                     "output": reg(op.output) if op.output else None})
    return args, n, sym


def _extra_fields(obj: Any, known: set[str]) -> dict[str, Any]:
    if not dataclasses.is_dataclass(obj):
        return {}
    return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)
            if f.name not in known}


def execute_graph_json(block: Block, root: RootFunction) -> dict[str, Any]:
    succs: dict[int, list[int]] = {c.index: [] for c in root.calls}
    for c in root.calls:
        for p in c.preds:
            succs[p].append(c.index)
    calls = []
    for c in root.calls:
        args, n, sym = _args(c)
        entry = {"index": c.index, "leaf": c.leaf.index, "leaf_name": c.leaf.name,
                 "leaf_hash": f"{leaf_hash(c.leaf):016x}", "core": c.core,
                 "preds": list(c.preds), "succs": sorted(succs[c.index]),
                 "op_count": len(c.ops), "latency": sum(op.latency for op in c.ops),
                 "tile_ops": [op.id for op in c.ops], "arg_count": n, "symbolic_arg_count": sym,
                 "args": args}
        merge = _extra_fields(c, _CALL_FIELDS)
        if merge:
            entry["merge"] = merge
        calls.append(entry)
    uses = _calls_by_leaf(root)
    return {"format_version": FORMAT_VERSION, "stage": "EXECUTE_GRAPH", "graph_type": "EXECUTE",
            "pass": CODEGEN_PASS, "function": root.name, **hash_fields(block_hash(block)),
            "call_count": len(calls), "leaf_count": len(root.leaves),
            "edge_count": sum(len(c.preds) for c in root.calls),
            "calls": calls,
            "leaves": [{"index": lf.index, "name": lf.name, "core": lf.core,
                        **hash_fields(leaf_hash(lf)), "op_count": lf.op_count,
                        "calls": uses.get(lf.index, [])} for lf in root.leaves]}


def _calls_by_leaf(root: RootFunction) -> dict[int, list[int]]:
    uses: dict[int, list[int]] = {}
    for c in root.calls:
        uses.setdefault(c.leaf.index, []).append(c.index)
    return uses


# ---- block graph ----------------------------------------------------------------------------

def _ca(x: int, a: int) -> int:
    return -(-x // a) * a


_WHOLE = {"pipe": "GM", "note": "tensor op run whole on GM (no tile rule)"}


def _vector_steps(op: TileOp, local: list[bool], to_gm: bool) -> list[dict[str, Any]]:
    """Pipes of a vector tile op: MTE2 loads of GM inputs into UB, V into a UB output, MTE3
    back to GM when another task (or the kernel's caller) reads the result."""
    if op.kind == "whole":
        return [dict(_WHOLE)]
    steps = []
    for i, r in enumerate(op.inputs):
        if not local[i]:
            steps.append({"pipe": "MTE2", "from": "GM", "to": "UB", "input": i,
                          "bytes": r.nbytes, "buffer": "UB", "buffer_bytes": r.nbytes})
    if op.kind == "copy_out":
        r = op.inputs[0]
        steps.append({"pipe": "MTE3", "from": "UB", "to": "GM", "bytes": r.nbytes})
        return steps
    out = op.output.nbytes if op.output is not None else 0
    steps.append({"pipe": "V", "to": "UB", "buffer": "UB", "buffer_bytes": out})
    if to_gm:
        steps.append({"pipe": "MTE3", "from": "UB", "to": "GM", "bytes": out})
    return steps


def _load_key(r: Region) -> tuple:
    return (r.value.id, tuple(repr(o) for o in r.offsets), tuple(r.shape))


def _cube_steps(op: TileOp, to_gm: bool, shared: set[tuple], loaded: set[tuple]
                ) -> list[dict[str, Any]]:
    """Pipes of a cube tile op; a GM load listed in the call's `shared_loads` (L1 reuse merge)
    is copied into L1 by the first op that reads it and reused by the others."""
    if op.kind == "copy_out":
        return [{"pipe": "FIX", "from": "L0C", "to": "GM", "bytes": op.inputs[0].nbytes}]
    if op.kind == "whole" or op.src.tile.cube is None or len(op.inputs) < 2:
        return [dict(_WHOLE)]
    cube = op.src.tile.cube
    a, b = op.inputs[0], op.inputs[1]
    sa, sb = bytes_of(a.value.dtype), bytes_of(b.value.dtype)
    align = 32 if sa == 1 else 16
    m, n = op.output.shape[-2], op.output.shape[-1]
    K = _k_extent(op)
    (m0, _), (k0, k1, k1b), (n0, _) = cube.m, cube.k, cube.n
    steps = []
    for i, r, l0, l1_bytes, l0_bytes in (
            (0, a, "L0A", _ca(m, align) * _ca(min(K, k1), align) * sa,
             _ca(min(m, m0), align) * _ca(min(K, k0), align) * sa),
            (1, b, "L0B", _ca(n, align) * _ca(min(K, k1b), align) * sb,
             _ca(min(n, n0), align) * _ca(min(K, k0), align) * sb)):
        key = _load_key(r)
        if key in shared and key in loaded:
            steps.append({"pipe": "MTE1", "from": "L1", "to": l0, "input": i, "buffer": l0,
                          "buffer_bytes": int(l0_bytes), "reuses_l1": True})
            continue
        loaded.add(key)
        steps += [{"pipe": "MTE2", "from": "GM", "to": "L1", "input": i, "bytes": r.nbytes,
                   "buffer": "L1", "buffer_bytes": int(l1_bytes)},
                  {"pipe": "MTE1", "from": "L1", "to": l0, "input": i, "buffer": l0,
                   "buffer_bytes": int(l0_bytes)}]
    for i, r in enumerate(op.inputs[2:], start=2):
        steps.append({"pipe": "MTE2", "from": "GM", "to": "L1", "input": i, "bytes": r.nbytes,
                      "buffer": "L1", "buffer_bytes": r.nbytes})
    steps.append({"pipe": "M", "to": "L0C", "buffer": "L0C",
                  "buffer_bytes": int(_ca(min(m, m0), align) * _ca(min(n, n0), align) * 4),
                  "k_steps": -(-K // max(1, k0))})
    if to_gm:
        steps.append({"pipe": "FIX", "from": "L0C", "to": "GM", "bytes": op.output.nbytes})
    return steps


def _k_extent(op: TileOp) -> int:
    """The reduction length of a matmul tile op (A is [.., M, K], or [.., K, M] transposed)."""
    a = op.inputs[0]
    return a.shape[-2] if op.src.attrs.get("a_trans") else a.shape[-1]


def _producer_in(op: TileOp, r: Region, preds: list[int], local: dict[int, int],
                 by_id: dict[int, TileOp]) -> int | None:
    for p in preds:
        q = by_id[p]
        if p in local and q.output is not None and q.kind != "copy_out" \
                and q.output.value.id == r.value.id:
            return local[p]
    return None


def block_graph_json(root: RootFunction, leaf: Leaf, spec: Any) -> dict[str, Any]:
    uses = _calls_by_leaf(root).get(leaf.index, [])
    call = root.calls[uses[0]]
    graph = root.graph
    preds = graph.preds()
    by_id = {op.id: op for op in graph.ops}
    local = {op.id: i for i, op in enumerate(call.ops)}
    ops, allocs = [], []
    shared = {_load_key(r) for r in getattr(call, "shared_loads", ())}
    loaded: set[tuple] = set()
    for i, op in enumerate(call.ops):
        flags = op.local_inputs if len(op.local_inputs) == len(op.inputs) \
            else [False] * len(op.inputs)
        to_gm = op.output is not None and (op.output.value.id in graph.escaping
                                           or op.output.value.storage.id in graph.gm_storages)
        steps = (_cube_steps(op, to_gm, shared, loaded) if op.core == AIC
                 else _vector_steps(op, flags, to_gm))
        allocs += [(s["buffer"], s["buffer_bytes"]) for s in steps if "buffer" in s]
        inputs = []
        for j, r in enumerate(op.inputs):
            inputs.append({"name": r.value.name or r.value.storage.name,
                           "dtype": r.value.dtype.name, "shape": list(r.shape),
                           "bytes": r.nbytes if r.shape else None,
                           "from": "local" if flags[j] else "GM",
                           "producer": _producer_in(op, r, preds[op.id], local, by_id)})
        ops.append({"index": i, "tile_op": op.id, "kind": op.kind, "opcode": op.opcode,
                    "latency": op.latency, "src_op": op.src.id, "loc": _loc(op.src),
                    "inputs": inputs,
                    "output": None if op.output is None else {
                        "name": op.output.value.name or op.output.value.storage.name,
                        "dtype": op.output.value.dtype.name, "shape": list(op.output.shape),
                        "bytes": op.output.nbytes if op.output.shape else None,
                        "to_gm": to_gm or op.kind == "copy_out"},
                    "pipes": sorted({s["pipe"] for s in steps}), "steps": steps})
    buffers = {}
    for level in sorted({b for b, _ in allocs}):
        sizes = [n for b, n in allocs if b == level]
        buffers[level] = {"allocations": len(sizes), "total_bytes": sum(sizes),
                          "max_bytes": max(sizes), "capacity": spec.buffer(level)}
    pipes = Counter(s["pipe"] for op in ops for s in op["steps"])
    return {"format_version": FORMAT_VERSION, "stage": "BLOCK_GRAPH", "graph_type": "BLOCK",
            "pass": CODEGEN_PASS, "function": leaf.name, "root": root.name,
            "leaf": leaf.index, **hash_fields(leaf_hash(leaf)), "core": leaf.core,
            "op_count": len(ops), "call_count": len(uses), "calls": uses,
            "buffers": buffers, "pipes": dict(sorted(pipes.items())), "ops": ops}


# ---- program.json and the files -------------------------------------------------------------

def compiled_function_table(compiled: CompiledProgram) -> list[dict[str, Any]]:
    """The tensor-level function table plus, per root, its subgraph and leaf counts and one
    `leaf` entry per leaf right after it."""
    out = []
    for f in function_table(compiled.program):
        out.append(f)
        if f["kind"] != "root":
            continue
        root = compiled.roots.get(f["name"])
        if root is None:
            part = compiled.partitions.get(f["name"])
            if part is not None:
                f["subgraph_count"] = len(part[1])
            continue
        f["subgraph_count"] = root.subgraph_count
        f["leaf_count"] = len(root.leaves)
        f["leaves"] = [lf.name for lf in root.leaves]
        uses = _calls_by_leaf(root)
        for lf in root.leaves:
            calls = uses.get(lf.index, [])
            locs = [op.src.loc for c in calls for op in root.calls[c].ops]
            out.append({"name": lf.name, "kind": "leaf", "parent": root.name,
                        **hash_fields(leaf_hash(lf)), "source_lines": source_lines(locs),
                        "core": lf.core, "op_count": lf.op_count, "call_count": len(calls),
                        "calls": calls})
    return out


def dump_compiled(compiled: CompiledProgram, directory: str) -> list[str]:
    """Write program.json, the DOT files and every stage's graphs that exist; return paths."""
    program = compiled.program
    paths = dump_program(program, directory, compiled_function_table(compiled))
    complete = compiled.stage == CompStage.ALL_COMPLETE or compiled.stage > CompStage.TILE_GRAPH

    def write(name: str, data: dict[str, Any]) -> None:
        paths.append(write_json(os.path.join(directory, name), data))

    for block, safe in file_names(program):
        write(f"{TENSOR_PASS}_{safe}.json", tensor_graph_json(block))
        root = compiled.roots.get(block.name) if complete else None
        if root is not None:
            write(f"{TILE_PASS}_{safe}.json",
                  tile_graph_json(block, root.graph, [c.ops for c in root.calls], True))
            write(f"{CODEGEN_PASS}_{safe}_ROOT.json", execute_graph_json(block, root))
            used = _calls_by_leaf(root)
            for leaf in (lf for lf in root.leaves if lf.index in used):
                write(f"{CODEGEN_PASS}_{safe}_LEAF_{leaf.index}_{leaf_hash(leaf):016x}.json",
                      block_graph_json(root, leaf, compiled.spec))
        elif block.name in compiled.partitions:
            graph, subgraphs = compiled.partitions[block.name]
            write(f"{TILE_PASS}_{safe}.json", tile_graph_json(block, graph, subgraphs, False))
    return paths
