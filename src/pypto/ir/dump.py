"""Dumps of a traced program: `program.json` (control tree, blocks, ops with source lines, and
a flat function table) and one Graphviz DOT file per root-function block. Written with
`compile_debug_mode=1`; the per-stage graph dumps of the compiled program are
`pypto.passes.dump`, which also adds the compiled functions (leaves, counts) to the table.

The JSON mirrors PyPTO's function hierarchy (DYNAMIC_LOOP → DYNAMIC_LOOP_PATH → root function)
so the toolkit can show how a kernel was cut; every symbolic value is written as text.

`functions` in program.json lists every function in pre-order: PROGRAM_ENTRY, the kernel
(DYNAMIC, `TENSOR_<kernel>`), each loop variant (DYNAMIC_LOOP, `TENSOR_<loop>_Unroll<k>`), each
of its control paths (DYNAMIC_LOOP_PATH, `..._PATH<p>`) and each root function (`root`, the
block name), with its parent, `index` (its position in the table), the user source lines it
covers, and a 64-bit content hash; a root also has `magic`, its index in `Program.blocks()`
(the number in HEAD-style merge keys `func{magic}_{group}`, see passes/merge.py). The hash is
the first 16 hex digits of a SHA-1 over the function's content with names, source lines and
value ids left out (a block's values are numbered by position), so equal content hashes equal
and the hash is the same in every run.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, Iterable

from pypto.ir.operation import Operation, TileConfig
from pypto.errors import SourceLoc
from pypto.ir.program import Block, If, Loop, Program, Seq
from pypto.ir.tensor import TensorValue
from pypto.symbolic import Expr

FORMAT_VERSION = 1
# The per-stage dumps of the compiled program (written by `pypto.passes.dump`, read by the
# toolkit's graph page) are named after the PyPTO pass whose dump shows the same level.
TENSOR_PASS = "Before_004_ExpandFunction"
TILE_PASS = "Before_027_SubgraphToFunction"
CODEGEN_PASS = "After_036_CodegenPreproc"


def text(x: Any) -> Any:
    """A JSON-safe form of an attribute value."""
    if isinstance(x, Expr):
        return repr(x)
    if isinstance(x, (list, tuple)):
        return [text(v) for v in x]
    if isinstance(x, dict):
        return {str(k): text(v) for k, v in x.items()}
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    if hasattr(x, "name") and hasattr(x, "value"):  # enums
        return x.name
    return repr(x)


def tensor_json(v: TensorValue) -> dict[str, Any]:
    return {"id": v.id, "name": v.name or v.storage.name, "dtype": v.dtype.name,
            "shape": [repr(d) for d in v.shape], "valid_shape": [repr(d) for d in v.valid_shape],
            "storage": v.storage.id, "storage_kind": v.storage.kind.value,
            "format": v.format.name}


def tile_json(tile: TileConfig) -> dict[str, Any]:
    """The vector and cube TileShapes an op was recorded under."""
    return {"vec": list(tile.vec) if tile.vec else None,
            "cube": None if tile.cube is None else {
                "m": list(tile.cube.m), "k": list(tile.cube.k), "n": list(tile.cube.n),
                "enable_split_k": tile.cube.enable_split_k}}


def op_json(op: Operation) -> dict[str, Any]:
    return {"id": op.id, "opcode": op.opcode, "inputs": [v.id for v in op.inputs],
            "outputs": [v.id for v in op.outputs],
            "attrs": {k: text(a) for k, a in op.attrs.items()}, "tile": tile_json(op.tile),
            "scope": text(op.scope), "label": op.label,
            "loc": str(op.loc) if op.loc else None}


def block_json(block: Block) -> dict[str, Any]:
    tensors: dict[int, TensorValue] = {}
    for op in block.ops:
        for v in op.inputs + op.outputs:
            tensors.setdefault(v.id, v)
    return {"type": "ROOT_FUNCTION", "name": block.name, "ops": [op_json(op) for op in block.ops],
            "tensors": [tensor_json(tensors[i]) for i in sorted(tensors)]}


def _node_json(node: If | Seq | None) -> Any:
    if node is None:
        return None
    if isinstance(node, If):
        return {"type": "IF", "cond": repr(node.cond),
                "loc": str(node.loc) if node.loc else None,
                "then": _node_json(node.then), "else": _node_json(node.else_)}
    return {"type": "SEQ", "items": [block_json(i) if isinstance(i, Block) else loop_json(i)
                                     for i in node.items]}


def loop_json(loop: Loop) -> dict[str, Any]:
    variants = []
    for v in loop.variants:
        variants.append({
            "name": f"TENSOR_{loop.name}_Unroll{v.factor}", "factor": v.factor,
            "index": v.index.name, "start": repr(v.start), "stop": repr(v.stop),
            "step": repr(v.step),
            "paths": [{"type": "DYNAMIC_LOOP_PATH",
                       "name": f"TENSOR_{loop.name}_Unroll{v.factor}_PATH{p.index}",
                       "conds": [{"cond": repr(c), "value": val} for c, val in p.conds]}
                      for p in v.paths],
            "body": _node_json(v.body)})
    return {"type": "DYNAMIC_LOOP", "name": loop.name, "idx_name": loop.idx_name,
            "start": repr(loop.start), "stop": repr(loop.stop), "step": repr(loop.step),
            "unroll_list": list(loop.unroll_list), "submit_before_loop": loop.submit_before_loop,
            "parallel": loop.parallel, "loc": str(loop.loc) if loop.loc else None,
            "variants": variants}


# ---- the function table ----------------------------------------------------------------------

def digest(content: Any) -> int:
    """A 64-bit hash of `content` (nested tuples/lists of str/int/bool/None): the first 16 hex
    digits of SHA-1 over its repr. Stable across runs and processes, unlike `hash()`."""
    return int(hashlib.sha1(repr(content).encode("utf-8")).hexdigest()[:16], 16)


def hash_fields(h: int) -> dict[str, Any]:
    return {"hash": h, "hash_hex": f"{h:016x}"}


def source_lines(locs: Iterable[SourceLoc | None]) -> list[str]:
    """Distinct `file:line`s, sorted by file then line number."""
    seen = {(loc.file, loc.line) for loc in locs if loc is not None}
    return [f"{f}:{line}" for f, line in sorted(seen)]


def block_content(block: Block) -> list[Any]:
    """What a root function computes, without names, ids or source lines: each op's opcode,
    attributes, TileShapes, scope and label, its outputs' dtypes and shapes, and its inputs as
    (op position, output position) or, for values from outside, their storage and shape."""
    local: dict[int, tuple[str, int, int]] = {}

    def ref(v: TensorValue) -> Any:
        if v.id in local:
            return local[v.id]
        return ("in", v.storage.kind.value, v.dtype.name, [repr(d) for d in v.shape],
                [repr(d) for d in v.valid_shape])

    parts = []
    for i, op in enumerate(block.ops):
        parts.append((op.opcode, [ref(v) for v in op.inputs],
                      [(v.dtype.name, [repr(d) for d in v.shape],
                        [repr(d) for d in v.valid_shape]) for v in op.outputs],
                      sorted((k, repr(text(a))) for k, a in op.attrs.items()),
                      repr(tile_json(op.tile)), repr(text(op.scope)), op.label))
        for j, v in enumerate(op.outputs):
            local[v.id] = ("op", i, j)
    return parts


def block_hash(block: Block) -> int:
    """The hash the function table gives the root function `block`."""
    return digest(("root", block_content(block)))


def _function(kind: str, name: str, parent: str | None, content: Any,
              locs: Iterable[SourceLoc | None], **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": kind, "parent": parent, **hash_fields(digest((kind, content))),
            "source_lines": source_lines(locs), **extra}


def _loop_functions(loop: Loop, parent: str, out: list[dict[str, Any]], magic: dict[str, int]
                    ) -> tuple[list[int], list[SourceLoc | None]]:
    """Append the DYNAMIC_LOOP / DYNAMIC_LOOP_PATH / root entries under `loop` (pre-order);
    return the variants' hashes and every source location below."""
    hashes, all_locs = [], [loop.loc]
    bounds = (repr(loop.start), repr(loop.stop), repr(loop.step))
    for v in loop.variants:
        v_name = f"TENSOR_{loop.name}_Unroll{v.factor}"
        v_at = len(out)
        out.append({})
        path_hashes, v_locs = [], [loop.loc]
        for p in v.paths:
            p_name = f"{v_name}_PATH{p.index}"
            p_at = len(out)
            out.append({})
            child_hashes, p_locs = [], []
            for item in p.body.items:
                if isinstance(item, Block):
                    locs = [op.loc for op in item.ops]
                    out.append(_function("root", item.name, p_name, block_content(item), locs,
                                         magic=magic[item.name], op_count=len(item.ops)))
                    child_hashes.append(out[-1]["hash"])
                    p_locs += locs
                else:
                    sub_hashes, sub_locs = _loop_functions(item, p_name, out, magic)
                    child_hashes += sub_hashes
                    p_locs += sub_locs
            conds = [(repr(c), val) for c, val in p.conds]
            out[p_at] = _function("DYNAMIC_LOOP_PATH", p_name, v_name, (conds, child_hashes),
                                  p_locs, path=p.index,
                                  conds=[{"cond": c, "value": val} for c, val in conds])
            path_hashes.append(out[p_at]["hash"])
            v_locs += p_locs
        out[v_at] = _function("DYNAMIC_LOOP", v_name, parent,
                              (bounds, v.factor, path_hashes), v_locs, loop=loop.name,
                              unroll=v.factor)
        hashes.append(out[v_at]["hash"])
        all_locs += v_locs
    return hashes, all_locs


def function_table(program: Program) -> list[dict[str, Any]]:
    """Every function of the traced program, parents first (see the module docstring)."""
    out: list[dict[str, Any]] = [{}, {}]
    kernel = f"TENSOR_{program.name}"
    params = [(p.value.dtype.name, [repr(d) for d in p.value.shape]) for p in program.params]
    magic = {b.name: i for i, b in enumerate(program.blocks())}
    hashes, locs = _loop_functions(program.root, kernel, out, magic)
    out[1] = _function("DYNAMIC", kernel, "PROGRAM_ENTRY", (params, hashes), locs)
    out[0] = _function("PROGRAM_ENTRY", "PROGRAM_ENTRY", None, (out[1]["hash"],), locs,
                       kernel=program.name)
    return out


def program_json(program: Program,
                 functions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The whole traced program; `functions` replaces the tensor-level function table (the
    compiled-stage dump passes one with leaves and counts added)."""
    table = function_table(program) if functions is None else functions
    return {
        "format_version": FORMAT_VERSION,
        "kernel": program.name,
        "type": "PROGRAM_ENTRY",
        "params": [{"index": p.index, "name": p.name, "dtype": p.value.dtype.name,
                    "shape": [repr(d) for d in p.value.shape],
                    "dynamic_dims": list(p.dynamic_dims)} for p in program.params],
        "locals": [{"id": s.id, "name": s.name, "dtype": s.dtype.name,
                    "shape": [repr(d) for d in s.shape]} for s in program.locals],
        "root_functions": [b.name for b in program.blocks()],
        "root": loop_json(program.root),
        "functions": [{**f, "index": i} for i, f in enumerate(table)],
    }


def _dot_id(s: str) -> str:
    return '"' + s.replace('"', r'\"') + '"'


def block_dot(block: Block) -> str:
    """A DOT graph of one block: tensors as ellipses, ops as boxes labelled with source lines."""
    lines = [f"digraph {_dot_id(block.name)} {{", "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10];']
    seen: set[int] = set()

    def tensor_node(v: TensorValue) -> str:
        name = f"t{v.id}"
        if v.id not in seen:
            seen.add(v.id)
            dims = ",".join(repr(d) for d in v.shape)
            label = f"{v.name or v.storage.name}\\n[{dims}] {v.dtype.name[3:]}"
            lines.append(f"  {name} [shape=ellipse, label={_dot_id(label)}];")
        return name

    for op in block.ops:
        where = f"\\n{op.loc.short()}" if op.loc else ""
        lines.append(f"  op{op.id} [shape=box, style=filled, fillcolor=lightblue, "
                     f"label={_dot_id(op.opcode + where)}];")
        for v in op.inputs:
            lines.append(f"  {tensor_node(v)} -> op{op.id};")
        for v in op.outputs:
            lines.append(f"  op{op.id} -> {tensor_node(v)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def file_names(program: Program) -> list[tuple[Block, str]]:
    """Each block with a file-name-safe, unique form of its name (used by every dump)."""
    used: dict[str, int] = {}
    out = []
    for block in program.blocks():
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", block.name)
        # Guard against repeated block names (the tracer makes them unique today).
        used[safe] = used.get(safe, 0) + 1
        if used[safe] > 1:
            safe = f"{safe}__{used[safe] - 1}"
        out.append((block, safe))
    return out


def write_json(path: str, data: Any) -> str:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    return path


def dump_program(program: Program, directory: str,
                 functions: list[dict[str, Any]] | None = None) -> list[str]:
    """Write program.json and dot/<block>.dot under `directory`; return the paths written.
    `functions`: the function table to write (default: the tensor-level one)."""
    os.makedirs(os.path.join(directory, "dot"), exist_ok=True)
    paths = [write_json(os.path.join(directory, "program.json"),
                        program_json(program, functions))]
    for block, safe in file_names(program):
        path = os.path.join(directory, "dot", f"{safe}.dot")
        with open(path, "w", encoding="utf-8") as f:
            f.write(block_dot(block))
        paths.append(path)
    return paths
