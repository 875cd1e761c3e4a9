"""Runs shared by the graph tests: each kernel writes its compile dumps and swimlane into
`output/output_<ts>/` under the current directory and the runner returns that folder."""
import glob
import json
import os

import torch

import pypto

DEBUG = {"runtime_debug_mode": 1, "compile_debug_mode": 1}


def run_softmax() -> str:
    """The softmax example's kernel (dynamic batch, tile (1,4,1,64)) on a batch of 4."""
    @pypto.frontend.jit(debug_options=DEBUG)
    def softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
                       y: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 1, 64)
        for i in pypto.loop(x.shape[0], name="LOOP_B", idx_name="i"):
            row = x[i:i + 1, ...]
            e = pypto.exp(pypto.sub(row, pypto.amax(row, dim=-1, keepdim=True)))
            y[i:, ...] = pypto.div(e, pypto.sum(e, dim=-1, keepdim=True))

    softmax_kernel(torch.rand(4, 32, 1, 256), torch.zeros(4, 32, 1, 256))
    return _latest()


def run_matmul_exp() -> str:
    """A cube op feeding vector ops: AIC and AIV leaves in one root."""
    @pypto.frontend.jit(debug_options=DEBUG)
    def mm_exp(a: pypto.Tensor([256, 256], pypto.DT_FP16),
               b: pypto.Tensor([256, 256], pypto.DT_FP16),
               y: pypto.Tensor([256, 256], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        c = pypto.matmul(a, b, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(64, 256)
        y[:] = pypto.exp(c) + 1.0

    mm_exp(torch.rand(256, 256, dtype=torch.float16), torch.rand(256, 256, dtype=torch.float16),
           torch.zeros(256, 256))
    return _latest()


def run_exp_add(add_tile: tuple[int, int]) -> str:
    """compiler_runtime.md §6.3 S17: exp with tile (32,512), then +1 with `add_tile`."""
    @pypto.frontend.jit(debug_options=DEBUG)
    def exp_add(x: pypto.Tensor([128, 1024], pypto.DT_FP32),
                y: pypto.Tensor([128, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        e = pypto.exp(x)
        pypto.set_vec_tile_shapes(*add_tile)
        y[:] = e + 1.0

    exp_add(torch.rand(128, 1024), torch.zeros(128, 1024))
    return _latest()


def _latest() -> str:
    return max(glob.glob(os.path.join("output", "output_*")), key=os.path.getmtime)


def write_chains(directory: str, chains: int, length: int) -> None:
    """A synthetic tile-graph dump of `chains` independent chains of `length` ops (one subgraph
    per chain, tensor `x<chain>`): a graph as large as needed without compiling one."""
    ops, edges = [], []
    for c in range(chains):
        for k in range(length):
            i = c * length + k
            region = {"value": i, "name": f"x{c}", "dtype": "DT_FP32", "storage": i,
                      "offsets": [str(k), "0"], "shape": [1, 64], "valid": ["1", "64"],
                      "dims": None, "bytes": 256}
            ops.append({"id": i, "kind": "compute", "opcode": "ADD" if k % 2 else "MUL",
                        "core": "AIV", "src_op": c, "loc": f"big.py:{k + 1}", "scope": -1,
                        "label": "", "latency": 10, "subgraph": c, "inputs": [region],
                        "output": region, "attrs": {}})
            if k:
                edges.append({"src": i - 1, "dst": i, "kind": "fuse"})
    dump = {"format_version": 1, "stage": "TILE_GRAPH", "graph_type": "TILE",
            "function": "BIG_root", "op_count": len(ops), "edge_count": len(edges),
            "edge_kinds": {"fuse": len(edges)}, "subgraph_count": chains, "ops": ops,
            "edges": edges, "subgraphs": [], "gm_storages": []}
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "Before_027_SubgraphToFunction_BIG_root.json"), "w") as f:
        json.dump(dump, f)
