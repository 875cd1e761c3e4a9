"""Dumps of a traced program: `program.json` (control tree, blocks, ops with source lines) and
one Graphviz DOT file per root-function block. Written with `compile_debug_mode=1`.

The JSON mirrors PyPTO's function hierarchy (DYNAMIC_LOOP → DYNAMIC_LOOP_PATH → root function)
so the toolkit can show how a kernel was cut; every symbolic value is written as text.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any

from pypto.ir.operation import Operation
from pypto.ir.program import Block, If, Loop, Program, Seq
from pypto.ir.tensor import TensorValue
from pypto.symbolic import Expr

FORMAT_VERSION = 1


def _text(x: Any) -> Any:
    """A JSON-safe form of an attribute value."""
    if isinstance(x, Expr):
        return repr(x)
    if isinstance(x, (list, tuple)):
        return [_text(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _text(v) for k, v in x.items()}
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    if hasattr(x, "name") and hasattr(x, "value"):  # enums
        return x.name
    return repr(x)


def _tensor(v: TensorValue) -> dict[str, Any]:
    return {"id": v.id, "name": v.name or v.storage.name, "dtype": v.dtype.name,
            "shape": [repr(d) for d in v.shape], "valid_shape": [repr(d) for d in v.valid_shape],
            "storage": v.storage.id, "storage_kind": v.storage.kind.value,
            "format": v.format.name}


def _op(op: Operation) -> dict[str, Any]:
    tile = {"vec": list(op.tile.vec) if op.tile.vec else None,
            "cube": None if op.tile.cube is None else {
                "m": list(op.tile.cube.m), "k": list(op.tile.cube.k), "n": list(op.tile.cube.n),
                "enable_split_k": op.tile.cube.enable_split_k}}
    return {"id": op.id, "opcode": op.opcode, "inputs": [v.id for v in op.inputs],
            "outputs": [v.id for v in op.outputs],
            "attrs": {k: _text(a) for k, a in op.attrs.items()}, "tile": tile,
            "scope": _text(op.scope), "label": op.label,
            "loc": str(op.loc) if op.loc else None}


def block_json(block: Block) -> dict[str, Any]:
    tensors: dict[int, TensorValue] = {}
    for op in block.ops:
        for v in op.inputs + op.outputs:
            tensors.setdefault(v.id, v)
    return {"type": "ROOT_FUNCTION", "name": block.name, "ops": [_op(op) for op in block.ops],
            "tensors": [_tensor(tensors[i]) for i in sorted(tensors)]}


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


def program_json(program: Program) -> dict[str, Any]:
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


def dump_program(program: Program, directory: str) -> list[str]:
    """Write program.json and dot/<block>.dot under `directory`; return the paths written."""
    os.makedirs(os.path.join(directory, "dot"), exist_ok=True)
    paths = [os.path.join(directory, "program.json")]
    with open(paths[0], "w", encoding="utf-8") as f:
        json.dump(program_json(program), f, indent=1)
    used: dict[str, int] = {}
    for block in program.blocks():
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", block.name)
        # The same nested loop traced under several outer paths repeats block names.
        used[safe] = used.get(safe, 0) + 1
        if used[safe] > 1:
            safe = f"{safe}__{used[safe] - 1}"
        path = os.path.join(directory, "dot", f"{safe}.dot")
        with open(path, "w", encoding="utf-8") as f:
            f.write(block_dot(block))
        paths.append(path)
    return paths
