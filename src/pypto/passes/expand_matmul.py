"""Tile expansion of a matmul: cube tile ops per output block, split-K partials and their sums.

Takes one MATMUL tensor op and a `TileBuilder` (the narrow interface below; the block's
`expand.Expander` is one, which owns ids, regions and the run-time grids) → its tile ops.
Rules:
- one cube tile op per (mL1, nL1) output block (per batch index), reading the whole K, its
  L1/L0 steps recorded as a `cube.CubePlan` in `attrs["cube_plan"]`;
- with enable_split_k, one cube tile op per kL1 chunk of K into an FP32/INT32 partial tensor,
  then vector add chains into the output;
- an M that is DYNAMIC (the rest static, whole K, no bias): one cube tile op per nL1 block
  over a run-time grid of mL1 row blocks.
Anything else stays one "whole" tile op (the function answers False).
"""
from __future__ import annotations

import itertools
from typing import Any, Protocol

from pypto.dtypes import DataType, bytes_of
from pypto.ir.operation import Operation
from pypto.ir.tensor import TensorValue
from pypto.passes.cube import CubePlan
from pypto.passes.kinds import AIC, AIV, COMPUTE, Core, TileKind
from pypto.passes.tile_graph import Region, TileGrid, TileOp, static_dims, tiles
from pypto.symbolic import Const, Expr, binary


class TileBuilder(Protocol):
    """What expanding a matmul needs from the expansion of its block (`passes/expand.py`'s
    `Expander` is one): regions of tensors, new tile ops and tensors, and the machine."""

    spec: Any   # the machine spec (cube latencies)

    def read(self, value: TensorValue, offsets: tuple[Expr, ...],
             shape: tuple[int, ...]) -> Region: ...

    def window(self, value: TensorValue, offsets: tuple[Expr, ...],
               shape: tuple[int, ...]) -> Region: ...

    def new_op(self, kind: TileKind, opcode: str, core: Core, inputs: list[Region],
               output: Region | None, src: Operation, attrs: dict | None = None,
               latency: float = 0.0, grid: TileGrid | None = None) -> TileOp: ...

    def vector_latency(self, opcode: str, region: Region | None) -> float: ...

    def grid(self, shape: tuple[Expr, ...], size: tuple[int, ...]) -> TileGrid: ...

    def synthetic(self, shape: tuple[int, ...], dtype: DataType, valid: tuple[Expr, ...],
                  name: str) -> TensorValue: ...


def expand_matmul(ex: TileBuilder, op: Operation) -> bool:
    """One cube tile op per (mL1, nL1) output block (per batch index) over the whole K,
    with its inner steps in `attrs["cube_plan"]` (passes/cube.py). With enable_split_k,
    one cube tile op per kL1 chunk of K instead, each writing an FP32/INT32 partial block,
    then a chain of vector adds per output tile: acc = p0 + p1, acc = acc + p2, ..."""
    a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
    sa, sb, so = static_dims(a.shape), static_dims(b.shape), static_dims(out.shape)
    cube = op.tile.cube
    if cube is not None and so is None:
        return _grid_matmul(ex, op)
    if cube is None or sa is None or sb is None or so is None:
        return False
    if any(static_dims(v.shape) is None for v in op.inputs[2:]):
        return False
    K = sa[-2] if op.attrs["a_trans"] else sa[-1]
    batch = so[:-2]
    spans = split_k_spans(op, K)
    partial = None
    if len(spans) > 1:
        valid = (Const(len(spans)),) + tuple(out.valid_shape)
        partial = ex.synthetic((len(spans),) + so, out.dtype, valid,
                               f"{out.name or 't'}_splitk_partial")
    for bidx in itertools.product(*(range(n) for n in batch)):
        for m0 in range(0, so[-2], cube.m[1]):
            for n0 in range(0, so[-1], cube.n[1]):
                m, n = min(cube.m[1], so[-2] - m0), min(cube.n[1], so[-1] - n0)
                o = tuple(Const(x) for x in bidx) + (Const(m0), Const(n0))
                size = tuple(1 for _ in bidx) + (m, n)
                for c, span in enumerate(spans):
                    region = (ex.window(out, o, size) if partial is None else
                              ex.window(partial, (Const(c),) + o, (1,) + size))
                    _cube_op(ex, op, bidx, batch, (m0, m), (n0, n), span, region)
    if partial is not None:
        _split_k_reduce(ex, op, partial, len(spans))
    return True


def split_k_spans(op: Operation, K: int) -> list[tuple[int, int]]:
    """The (start, size) chunks of K that split-K cuts a matmul into: one without split-K.
    Both operands' L1 chunks hold a whole chunk (kL0 divides it)."""
    cube = op.tile.cube
    split = cube is not None and cube.enable_split_k and len(op.inputs) == 2
    chunk = min(cube.k[1], cube.k[2]) if split else K
    return [(k0, min(chunk, K - k0)) for k0 in range(0, K, max(chunk, 1))] or [(0, K)]


def split_k_chunks(op: Operation, K: int) -> int:
    """How many partial sums a matmul over K is split into (their rounding is in the output's
    dtype: see expand_matmul)."""
    return len(split_k_spans(op, K))


def _grid_matmul(ex: TileBuilder, op: Operation) -> bool:
    """A matmul whose M is DYNAMIC (the rest static, whole K, no bias or split-K): per
    (batch index, nL1 block) one cube tile op over a run-time grid of mL1 row blocks."""
    a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
    cube = op.tile.cube
    if len(op.inputs) != 2 or cube.enable_split_k or out.rank < 2:
        return False
    if static_dims(b.shape) is None or any(type(d) is not Const for i, d in enumerate(out.shape)
                                           if i != out.rank - 2):
        return False
    m_dim = a.rank - 1 if op.attrs["a_trans"] else a.rank - 2
    if any(type(d) is not Const for i, d in enumerate(a.shape) if i != m_dim):
        return False
    so = tuple(d.value if type(d) is Const else None for d in out.shape)
    K = a.shape[a.rank - 2 if op.attrs["a_trans"] else a.rank - 1].value
    batch = so[:-2]
    grid = ex.grid((out.shape[-2],), (cube.m[1],))
    m0 = binary("mul", grid.syms[0], cube.m[1])
    for bidx in itertools.product(*(range(n) for n in batch)):
        for n0 in range(0, so[-1], cube.n[1]):
            n = min(cube.n[1], so[-1] - n0)
            o = tuple(Const(x) for x in bidx) + (m0, Const(n0))
            size = tuple(1 for _ in bidx) + (cube.m[1], n)
            _cube_op(ex, op, bidx, batch, (m0, cube.m[1]), (n0, n), (0, K),
                     ex.window(out, o, size), grid)
    return True


def _cube_op(ex: TileBuilder, op: Operation, bidx: tuple[int, ...], batch: tuple[int, ...],
             ms: tuple[int, int], ns: tuple[int, int], ks: tuple[int, int],
             region: Region, grid: TileGrid | None = None) -> TileOp:
    """The cube tile op of output block (ms, ns) over the K range `ks` writing `region`."""
    a, b = op.inputs[0], op.inputs[1]
    cube = op.tile.cube
    inputs = [_operand(ex, a, bidx, batch, ms, ks, op.attrs["a_trans"], True),
              _operand(ex, b, bidx, batch, ns, ks, op.attrs["b_trans"], False)]
    if region.value is not op.outputs[0]:
        # A split-K partial block has a leading chunk dim: the operands gain a size-1 dim
        # in front, so the product has the partial region's rank.
        inputs = [Region(r.value, r.offsets, r.shape, r.valid,
                         (-1,) + (r.dims if r.dims is not None
                                  else tuple(range(len(r.shape))))) for r in inputs]
    for extra in op.inputs[2:]:  # bias: the block's columns
        es = static_dims(extra.shape)
        eo = tuple(Const(0) for _ in es[:-1]) + (Const(ns[0]),)
        inputs.append(ex.read(extra, eo, es[:-1] + (ns[1],)))
    (m, k, n) = ms[1], ks[1], ns[1]
    plan = CubePlan(m, n, k, min(cube.m[0], m), min(cube.n[0], n), cube.k[0], cube.k[1],
                    cube.k[2], bytes_of(a.dtype), bytes_of(b.dtype),
                    bytes_of(region.value.dtype))
    k0 = ex.spec.cube["k0"].get(a.dtype.name[3:].lower(), 16)
    lat = ex.spec.cube["issue_overhead"] + -(-m // 16) * -(-k // k0) * -(-n // 16)
    return ex.new_op(COMPUTE, "MATMUL", AIC, inputs, region, op,
                     {"k_chunks": plan.k_chunks, "cube_plan": plan}, latency=lat, grid=grid)


def _split_k_reduce(ex: TileBuilder, op: Operation, partial: TensorValue, chunks: int) -> None:
    """Sum the split-K partials into the output on the vector unit, one add chain per
    output tile: acc = p0 + p1, acc = acc + p2, ... (the last add writes the output).
    Tiled with the matmul's vec TileShape when its rank fits, else [128, 128]."""
    out = op.outputs[0]
    so = static_dims(out.shape)
    tile = op.tile.vec
    if tile is None or len(tile) not in (2, len(so)):
        tile = (128, 128)
    tile = (1,) * (len(so) - len(tile)) + tuple(tile)
    dims = tuple(range(1, len(so) + 1))  # the adds see a partial block without its chunk dim
    acc = None
    for j in range(1, chunks):
        target = out if j == chunks - 1 else ex.synthetic(
            so, out.dtype, tuple(out.valid_shape), f"{out.name or 't'}_splitk_acc{j}")
        for offs, size in tiles(so, tile):
            o = tuple(Const(x) for x in offs)

            def part(c: int) -> Region:
                w = ex.window(partial, (Const(c),) + o, (1,) + size)
                return Region(partial, w.offsets, w.shape, w.valid, dims)

            lhs = part(0) if acc is None else ex.window(acc, o, size)
            region = ex.window(target, o, size)
            ex.new_op(COMPUTE, "ADD", AIV, [lhs, part(j)], region, op,
                      latency=ex.vector_latency("ADD", region))
        acc = target


def _operand(ex: TileBuilder, v: TensorValue, bidx: tuple[int, ...], batch: tuple[int, ...],
             span: tuple[int, int], ks: tuple[int, int], trans: bool, is_a: bool) -> Region:
    """The rows (A) / columns (B) of one output block, over the K range `ks`."""
    k = len(batch) - (v.rank - 2)
    bo = tuple(Const(0 if v.shape[i] == Const(1) else bidx[k + i]) for i in range(v.rank - 2))
    bs = tuple(1 for _ in bo)
    start, size = span
    start = Const(start) if type(start) is int else start   # (a run-time row block)
    k0, kn = ks
    # A is [M, K] ([K, M] when transposed); B is [K, N] ([N, K] when transposed).
    outer_first = is_a != trans
    if outer_first:
        return ex.read(v, bo + (start, Const(k0)), bs + (size, kn))
    return ex.read(v, bo + (Const(k0), start), bs + (kn, size))
