"""Tile expansion: every tensor op of a block becomes tile ops on its recorded TileShape.

Takes a `Block` → `TileGraph` (ops only; `link` adds the dependencies). Keeps: the tile grid
covers the op's whole static shape; tails get symbolic valid extents; views are folded into the
regions their consumers read; an op with no tile rule (or a symbolic shape) becomes one "whole"
tile op that runs the tensor op on GM as it is.

Rules:
- elementwise ops (incl. cast, full, expand): a grid of prod(ceil(S_i/T_i)) tiles over the
  output; each input reads the same window (size 1 along broadcast dims);
- reductions: a grid over the input with the reduce axes whole when the tile covers them;
  otherwise one partial reduction per input tile into an FP32 partial tensor plus one combine
  per output tile (this is what makes split reduce axes cost more);
- matmul: one cube tile op per (mL1, nL1) output block (per batch index), reading the whole K,
  its L1/L0 steps recorded as a `cube.CubePlan`; with enable_split_k one cube tile op per kL1
  chunk into an FP32/INT32 partial tensor, then vector add chains into the output;
- transpose / permute: a grid over the *input* on the op's TileShape (the guide's "Transpose
  (64,128) -> Add (128,64)": a consumer aligned with it uses the permuted tile); each tile op
  writes the permuted window of the output;
- assemble / move: one copy-out per tile of the source (its producer's tiling when it has one).
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

from pypto.dtypes import DataType, bytes_of, is_float, is_low_precision
from pypto.ir.operation import Operation
from pypto.ir.program import Block
from pypto.ir.tensor import Storage, StorageKind, TensorValue
from pypto.machine.spec import MachineSpec
from pypto.ops import elementwise as _ew
from pypto.passes.cube import CubePlan
from pypto.passes.tile_graph import (AIC, AIV, Region, TileGraph, TileGrid, TileOp, _const,
                                     clamped_valid, window)
from pypto.symbolic import Const, Expr, Sym, binary

_ELEMENTWISE = (set(_ew._BINARY) | {c + "S" for c in _ew._BINARY} | set(_ew._UNARY)
                | {"ROUND", "LRELU", "WHERE", "CLIP", "CAST", "COPY", "FULL", "EXPAND"})
_SPLITTABLE_REDUCE = {"REDUCE_SUM": "REDUCE_SUM", "REDUCE_MAX": "REDUCE_MAX",
                      "REDUCE_MIN": "REDUCE_MIN", "REDUCE_PROD": "REDUCE_PROD",
                      "REDUCE_MEAN": "REDUCE_SUM"}
_WHOLE_AXIS_REDUCE = {"REDUCE_VAR", "ARGMAX", "ARGMIN"}

# Vector op classes for latency estimates (machine spec `vector.cycles_per_repeat`).
_OP_CLASS = {"EXP": "exp", "DIV": "div", "DIVS": "div", "RSQRT": "div", "SQRT": "div",
             "RECIPROCAL": "div", "REDUCE_SUM": "reduce_full_fp32_add",
             "REDUCE_MEAN": "reduce_full_fp32_add", "REDUCE_MAX": "reduce_full",
             "REDUCE_MIN": "reduce_full", "REDUCE_PROD": "reduce_full"}


_ZERO = Const(0)


def _static(dims: tuple[Expr, ...]) -> tuple[int, ...] | None:
    if all(isinstance(d, Const) for d in dims):
        return tuple(d.value for d in dims)
    return None


def _grid(shape: tuple[int, ...], tile: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...],
                                                                           tuple[int, ...]]]:
    """(offsets, tile shape) of every tile of `shape`, row-major; tiles are clipped to the
    tensor (a TileShape larger than the tensor allocates only what the tensor needs)."""
    ranges = [range(0, s, t) for s, t in zip(shape, tile)]
    sizes = tuple(min(t, s) for s, t in zip(shape, tile))
    for offs in itertools.product(*ranges):
        yield offs, sizes


class Expander:
    """Expands the ops of one block; `views` maps a view's value id to (parent, offsets)."""

    def __init__(self, block: Block, spec: MachineSpec, ids: Iterator[int],
                 shared: set[int] = frozenset()):
        self.block = block
        self.shared = shared  # values other blocks read: views among them are materialised
        self.spec = spec
        self.ids = ids
        self.graph = TileGraph(block.name)
        # alias value id -> (parent, offsets in the parent, parent dim of each alias dim (-1 for
        # an inserted size-1 dim)); views and size-1 squeezes/unsqueezes are aliases
        self.views: dict[int, tuple[TensorValue, tuple[Expr, ...], tuple[int, ...]]] = {}
        self.view_ops: dict[int, Operation] = {}     # view value id -> its VIEW op
        self.materialized: set[int] = set()
        self.grids: dict[tuple, TileGrid] = {}       # (shape, tile) -> its run-time grid

    # ---- helpers ----
    def resolve(self, value: TensorValue, offsets: tuple[Expr, ...], shape: tuple[int, ...],
                valid: tuple[Expr, ...]) -> Region:
        """The region actually read: aliases are folded into their parent's coordinates. When
        the parent's rank differs, `dims` says which parent dim each consumer dim is."""
        dims: tuple[int, ...] | None = None
        while value.id in self.views:
            parent, voff, dmap = self.views[value.id]
            p_off, p_shape, p_valid = list(voff), [1] * parent.rank, [Const(1)] * parent.rank
            cur = tuple(range(len(offsets))) if dims is None else dims
            new_dims = []
            for i, pd in enumerate(dmap):
                if pd < 0:
                    continue
                p_off[pd] = binary("add", voff[pd], offsets[i])
                p_shape[pd], p_valid[pd] = shape[i], valid[i]
            for c in cur:
                new_dims.append(dmap[c] if c >= 0 else -1)
            offsets, shape, valid = tuple(p_off), tuple(p_shape), tuple(p_valid)
            dims = tuple(new_dims)
            value = parent
        if dims is not None and dims == tuple(range(value.rank)):
            dims = None
        return Region(value, offsets, shape, valid, dims)

    def read(self, value: TensorValue, offsets: tuple[Expr, ...],
             shape: tuple[int, ...]) -> Region:
        return self.resolve(value, offsets, shape, clamped_valid(value, offsets, shape))

    def new_op(self, kind: str, opcode: str, core: str, inputs: list[Region],
               output: Region | None, src: Operation, attrs: dict | None = None,
               latency: float = 0.0) -> TileOp:
        op = TileOp(next(self.ids), kind, opcode, core, inputs, output, src, dict(attrs or {}),
                    latency, src.scope)
        return self.graph.add(op)

    def vector_latency(self, opcode: str, region: Region | None) -> float:
        if region is None:
            return 0.0
        cls = _OP_CLASS.get(opcode, "binary")
        if cls == "exp":
            cls = "exp_fp32" if region.value.dtype is DataType.DT_FP32 else "exp_fp16"
        return self.spec.vector_cycles(cls, region.nbytes)

    def whole(self, op: Operation) -> None:
        """One tile op that runs the tensor op as a whole on GM. Views it reads are
        materialised first (elsewhere they are folded into the reading tile ops)."""
        for v in op.inputs:
            if v.id in self.view_ops and v.id not in self.materialized:
                self.materialized.add(v.id)
                self.whole(self.view_ops[v.id])
        out = op.outputs[0] if op.outputs else None
        region = None
        if out is not None:
            static = _static(out.shape)
            region = Region(out, tuple(Const(0) for _ in out.shape), static or (), out.valid_shape)
        inputs = [Region(v, tuple(Const(0) for _ in v.shape), _static(v.shape) or (),
                         v.valid_shape) for v in op.inputs]
        core = AIC if op.opcode == "MATMUL" else AIV
        self.new_op("whole", op.opcode, core, inputs, region, op)

    # ---- per op ----
    def expand(self) -> TileGraph:
        for op in self.block.ops:
            self.expand_op(op)
        return self.graph

    def expand_op(self, op: Operation) -> None:
        code = op.opcode
        if code == "VIEW":
            if op.outputs[0].id in self.shared:
                if not self.copy_view(op):
                    self.whole(op)
                return
            self.views[op.outputs[0].id] = (op.inputs[0], tuple(op.attrs["offsets"]),
                                            tuple(range(op.inputs[0].rank)))
            self.view_ops[op.outputs[0].id] = op
            return
        if code == "RESHAPE" and self.squeeze_alias(op):
            return
        if code in _ELEMENTWISE and self.elementwise(op):
            return
        if (code in _SPLITTABLE_REDUCE or code in _WHOLE_AXIS_REDUCE) and self.reduce(op):
            return
        if code == "MATMUL" and self.matmul(op):
            return
        if code == "TRANSPOSE" and self.transpose(op):
            return
        if code == "ASSEMBLE" and self.assemble(op):
            return
        self.whole(op)

    def copy_view(self, op: Operation) -> bool:
        """A view another root function reads is materialised as a copy of exactly its region,
        tile by tile on its TileShape (or as one tile): the rest of the parent is not read, so a
        [1, 24, 128] slice of a [B, 24, 128] tensor moves 6 KB, not the whole tensor."""
        src, out = op.inputs[0], op.outputs[0]
        shape = _static(out.shape)
        if shape is None or src.id in self.shared:
            return False
        tile = op.tile.vec if op.tile.vec is not None and len(op.tile.vec) == len(shape) \
            else shape
        base = tuple(op.attrs["offsets"])
        latency = None
        for offs, size in _grid(shape, tile):
            o = tuple(_const(x) for x in offs)
            at = tuple(binary("add", b, x) for b, x in zip(base, o))
            region = window(out, o, size)
            if latency is None:
                latency = self.vector_latency("COPY", region)
            self.new_op("compute", "COPY", AIV, [self.read(src, at, size)], region, op,
                        latency=latency)
        return True

    def squeeze_alias(self, op: Operation) -> bool:
        """A reshape that only drops or inserts size-1 dims reads like a view (x[i] on a
        [B, M, N] tensor is a [1, M, N] view squeezed to [M, N])."""
        src, out = op.inputs[0], op.outputs[0]
        if op.attrs.get("inplace") or out.id in self.shared:
            return False
        a = [i for i, d in enumerate(src.shape) if d != Const(1)]
        b = [i for i, d in enumerate(out.shape) if d != Const(1)]
        if [src.shape[i] for i in a] != [out.shape[i] for i in b]:
            return False
        if [src.valid_shape[i] for i in a] != [out.valid_shape[i] for i in b]:
            return False
        dmap = [-1] * out.rank
        for i, j in zip(b, a):
            dmap[i] = j
        # remaining size-1 dims of the output map to unused size-1 dims of the input, in order
        spare = [i for i in range(src.rank) if i not in a]
        for i in range(out.rank):
            if dmap[i] < 0 and spare:
                dmap[i] = spare.pop(0)
        self.views[out.id] = (src, tuple(Const(0) for _ in src.shape), tuple(dmap))
        self.view_ops[out.id] = op
        return True

    def elementwise(self, op: Operation) -> bool:
        out = op.outputs[0]
        shape, tile = _static(out.shape), op.tile.vec
        if shape is None and tile is not None and len(tile) == out.rank:
            return self.grid_elementwise(op)
        if shape is None or tile is None or len(tile) != len(shape):
            return False
        # Per input: for each of its dims, the output dim it follows, or None when broadcast.
        follow = []
        for v in op.inputs:
            vshape = _static(v.shape)
            if vshape is None:
                return False
            k = len(shape) - v.rank
            dims = tuple(None if vshape[i] == 1 and shape[k + i] != 1 else k + i
                         for i in range(v.rank))
            # None: the input reads the output's own window (the common case)
            follow.append((v, None if dims == tuple(range(len(shape))) else dims))
        latency = None
        # rsqrt is two vector instructions on the NPU (sqrt, then a division); the square
        # root stays in FP32 so the result is rounded once, like the tensor-level op.
        root = self._synthetic(shape, DataType.DT_FP32, out.valid_shape, "rsqrt_sqrt") \
            if op.opcode == "RSQRT" else None
        for offs, size in _grid(shape, tile):
            o = tuple(_const(x) for x in offs)
            inputs = [self.read(v, o, size) if dims is None else
                      self.read(v, tuple(_ZERO if d is None else o[d] for d in dims),
                                tuple(1 if d is None else size[d] for d in dims))
                      for v, dims in follow]
            region = window(out, o, size)
            if latency is None:  # every tile of the grid has the same buffer size
                latency = self.vector_latency(op.opcode, region)
            if root is not None:
                mid = window(root, o, size)
                self.new_op("compute", "SQRT", AIV, inputs, mid, op, latency=latency)
                self.new_op("compute", "DIVS", AIV, [mid], region, op,
                            {"scalar": 1.0, "reverse": True, "dtype": out.dtype},
                            latency=latency)
                continue
            self.new_op("compute", op.opcode, AIV, inputs, region, op, latency=latency)
        return True

    def grid_elementwise(self, op: Operation) -> bool:
        """An elementwise op on a DYNAMIC-shaped tensor: one tile op on its TileShape that
        repeats over a run-time grid (`TileGrid`), each tile with its own offsets and valid
        extents, as a static grid would have. An input dim is broadcast where it is 1 and
        the output's is not; dims that cannot be told apart fall back to a whole op."""
        out, tile = op.outputs[0], op.tile.vec
        if op.opcode == "RSQRT":
            return False    # (two tile ops per tile; kept whole for now)
        follow = []
        for v in op.inputs:
            k = out.rank - v.rank
            if k < 0:
                return False
            dims = []
            for i, d in enumerate(v.shape):
                o = out.shape[k + i]
                if d == o:
                    dims.append(k + i)
                elif d == Const(1):
                    dims.append(None)
                else:
                    return False
            follow.append((v, None if dims == list(range(out.rank)) else tuple(dims)))
        size = tuple(min(t, d.value) if isinstance(d, Const) else t
                     for t, d in zip(tile, out.shape))
        grid = self.grid(out.shape, size)
        o = tuple(binary("mul", s, t) for s, t in zip(grid.syms, size))
        inputs = [self.read(v, o, size) if dims is None else
                  self.read(v, tuple(_ZERO if d is None else o[d] for d in dims),
                            tuple(1 if d is None else size[d] for d in dims))
                  for v, dims in follow]
        region = window(out, o, size)
        tile_op = self.new_op("compute", op.opcode, AIV, inputs, region, op,
                              latency=self.vector_latency(op.opcode, region))
        tile_op.grid = grid
        return True

    def grid(self, shape: tuple[Expr, ...], size: tuple[int, ...]) -> TileGrid:
        """The run-time grid of `size` tiles over `shape`: ops with equal shapes and tiles
        share it (and so may share a subgraph)."""
        key = (shape, size)
        found = self.grids.get(key)
        if found is None:
            n = len(self.grids)
            syms = tuple(Sym(f"{self.block.name}_tile{n}_{d}", f"tile{n}_{d}")
                         for d in range(len(shape)))
            counts = tuple(binary("floordiv", binary("add", dim, t - 1), t)
                           for dim, t in zip(shape, size))
            found = self.grids[key] = TileGrid(syms, counts)
        return found

    def transpose(self, op: Operation) -> bool:
        """One tile op per input tile; its output is the same window with the dims permuted
        (output dim i is input dim perm[i])."""
        src, out = op.inputs[0], op.outputs[0]
        shape, tile = _static(src.shape), op.tile.vec
        if shape is None and tile is not None and len(tile) == src.rank:
            return self.grid_transpose(op)
        if shape is None or tile is None or len(tile) != len(shape) or _static(out.shape) is None:
            return False
        perm = op.attrs["perm"]
        latency = None
        for offs, size in _grid(shape, tile):
            o = tuple(_const(x) for x in offs)
            region = window(out, tuple(o[p] for p in perm), tuple(size[p] for p in perm))
            if latency is None:
                latency = self.vector_latency(op.opcode, region)
            self.new_op("compute", op.opcode, AIV, [self.read(src, o, size)], region, op,
                        latency=latency)
        return True

    def grid_transpose(self, op: Operation) -> bool:
        """A transpose of a DYNAMIC-shaped tensor: one tile op over the run-time grid of the
        input's tiles, writing the permuted window of the output."""
        src, out, tile = op.inputs[0], op.outputs[0], op.tile.vec
        perm = op.attrs["perm"]
        size = tuple(min(t, d.value) if type(d) is Const else t for t, d in zip(tile, src.shape))
        grid = self.grid(src.shape, size)
        o = tuple(binary("mul", s, t) for s, t in zip(grid.syms, size))
        region = window(out, tuple(o[p] for p in perm), tuple(size[p] for p in perm))
        tile_op = self.new_op("compute", op.opcode, AIV, [self.read(src, o, size)], region, op,
                              latency=self.vector_latency(op.opcode, region))
        tile_op.grid = grid
        return True

    def _undo(self, op: Operation) -> bool:
        """Drop tile ops already made for `op` (it falls back to a whole op)."""
        made = [t for t in self.graph.ops if t.src is op]
        for t in made:
            self.graph.ops.remove(t)
            if t.output is not None:
                lst = self.graph.producers.get(t.output.value.id, [])
                if t in lst:
                    lst.remove(t)
        return False

    def reduce(self, op: Operation) -> bool:
        src, out = op.inputs[0], op.outputs[0]
        shape, tile = _static(src.shape), op.tile.vec
        if shape is None and tile is not None and len(tile) == src.rank:
            return self.grid_reduce(op)
        if shape is None or tile is None or len(tile) != len(shape) or _static(out.shape) is None:
            return False
        dims, keep = tuple(op.attrs["dims"]), op.attrs["keepdim"]
        split = [d for d in dims if tile[d] < shape[d]]
        if split and op.opcode in _WHOLE_AXIS_REDUCE:
            split = []
        eff = tuple(shape[i] if i in dims and not split else tile[i] for i in range(len(shape)))
        if not split:
            for offs, size in _grid(shape, eff):
                o = tuple(Const(x) for x in offs)
                region_in = self.read(src, o, size)
                oo, os_ = self._reduced(o, size, dims, keep)
                region = window(out, oo, os_)
                self.new_op("compute", op.opcode, AIV, [region_in], region, op,
                            latency=self.vector_latency(op.opcode, region_in))
            return True
        # Split reduce axis: partials into an FP32 tensor, then a combine per output tile.
        chunks = tuple(-(-shape[i] // tile[i]) if i in dims else shape[i]
                       for i in range(len(shape)))
        pvalid = tuple(binary("floordiv", binary("add", src.valid_shape[i], tile[i] - 1), tile[i])
                       if i in dims else src.valid_shape[i] for i in range(len(shape)))
        pdtype = DataType.DT_FP32 if is_float(src.dtype) and (
            is_low_precision(src.dtype) or src.dtype is DataType.DT_FP32) else src.dtype
        partial = self._synthetic(chunks, pdtype, pvalid, f"{src.name or 't'}_partial")
        base = _SPLITTABLE_REDUCE[op.opcode]
        for offs, size in _grid(shape, tile):
            o = tuple(Const(x) for x in offs)
            region_in = self.read(src, o, size)
            po = tuple(Const(offs[i] // tile[i]) if i in dims else o[i] for i in range(len(o)))
            ps = tuple(1 if i in dims else size[i] for i in range(len(size)))
            region = window(partial, po, ps)
            self.new_op("partial", base, AIV, [region_in], region, op,
                        {"dims": dims, "keepdim": True},
                        latency=self.vector_latency(base, region_in))
        comb_tile = tuple(chunks[i] if i in dims else tile[i] for i in range(len(shape)))
        count: Expr = Const(1)
        for d in dims:
            count = binary("mul", count, src.valid_shape[d])
        for offs, size in _grid(chunks, comb_tile):
            o = tuple(Const(x) for x in offs)
            region_in = window(partial, o, size)
            oo, os_ = self._reduced(o, size, dims, keep)
            region = window(out, oo, os_)
            attrs = {"dims": dims, "keepdim": keep}
            if op.opcode == "REDUCE_MEAN":
                attrs["mean_count"] = count
            self.new_op("combine", base, AIV, [region_in], region, op, attrs,
                        latency=self.vector_latency(base, region_in))
        return True

    def grid_reduce(self, op: Operation) -> bool:
        """A reduction over static axes of a DYNAMIC-shaped tensor whose tile holds the whole
        reduce axes: one tile op per run-time tile of the other dims (the grid an elementwise
        op on the same tensor and TileShape uses, so `x - amax(x)` fuses per tile). A split
        reduce axis stays a whole op."""
        src, out, tile = op.inputs[0], op.outputs[0], op.tile.vec
        dims, keep = tuple(op.attrs["dims"]), op.attrs["keepdim"]
        if any(type(src.shape[d]) is not Const for d in dims):
            return False
        if op.opcode not in _WHOLE_AXIS_REDUCE and any(tile[d] < src.shape[d].value
                                                       for d in dims):
            return False
        size = tuple(src.shape[i].value if i in dims else
                     min(tile[i], src.shape[i].value) if type(src.shape[i]) is Const
                     else tile[i] for i in range(src.rank))
        grid = self.grid(src.shape, size)
        o = tuple(_ZERO if i in dims else binary("mul", grid.syms[i], size[i])
                  for i in range(src.rank))
        region_in = self.read(src, o, size)
        oo, os_ = self._reduced(o, size, dims, keep)
        tile_op = self.new_op("compute", op.opcode, AIV, [region_in], window(out, oo, os_), op,
                              latency=self.vector_latency(op.opcode, region_in))
        tile_op.grid = grid
        return True

    @staticmethod
    def _reduced(o: tuple[Expr, ...], size: tuple[int, ...], dims: tuple[int, ...],
                 keep: bool) -> tuple[tuple[Expr, ...], tuple[int, ...]]:
        if keep:
            return (tuple(Const(0) if i in dims else o[i] for i in range(len(o))),
                    tuple(1 if i in dims else size[i] for i in range(len(size))))
        kept = [i for i in range(len(o)) if i not in dims]
        if not kept:
            return (Const(0),), (1,)
        return tuple(o[i] for i in kept), tuple(size[i] for i in kept)

    def _synthetic(self, shape: tuple[int, ...], dtype: DataType, valid: tuple[Expr, ...],
                   name: str) -> TensorValue:
        dims = tuple(Const(s) for s in shape)
        storage = Storage(next(self.ids), StorageKind.TEMP, name, dtype, dims)
        return TensorValue(next(self.ids), dims, dtype, valid, storage, name)

    def matmul(self, op: Operation) -> bool:
        """One cube tile op per (mL1, nL1) output block (per batch index) over the whole K,
        with its inner steps in `attrs["cube_plan"]` (passes/cube.py). With enable_split_k,
        one cube tile op per kL1 chunk of K instead, each writing an FP32/INT32 partial block,
        then a chain of vector adds per output tile: acc = p0 + p1, acc = acc + p2, ..."""
        a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
        sa, sb, so = _static(a.shape), _static(b.shape), _static(out.shape)
        cube = op.tile.cube
        if cube is not None and so is None:
            return self.grid_matmul(op)
        if cube is None or sa is None or sb is None or so is None:
            return False
        if any(_static(v.shape) is None for v in op.inputs[2:]):
            return False
        K = sa[-2] if op.attrs["a_trans"] else sa[-1]
        batch = so[:-2]
        # Split-K chunks: both operands' L1 chunks hold a whole chunk (kL0 divides it).
        chunk = min(cube.k[1], cube.k[2]) if cube.enable_split_k and len(op.inputs) == 2 else K
        spans = [(k0, min(chunk, K - k0)) for k0 in range(0, K, chunk)] or [(0, K)]
        partial = None
        if len(spans) > 1:
            valid = (Const(len(spans)),) + tuple(out.valid_shape)
            partial = self._synthetic((len(spans),) + so, out.dtype, valid,
                                      f"{out.name or 't'}_splitk_partial")
        for bidx in itertools.product(*(range(n) for n in batch)):
            for m0 in range(0, so[-2], cube.m[1]):
                for n0 in range(0, so[-1], cube.n[1]):
                    m, n = min(cube.m[1], so[-2] - m0), min(cube.n[1], so[-1] - n0)
                    o = tuple(Const(x) for x in bidx) + (Const(m0), Const(n0))
                    size = tuple(1 for _ in bidx) + (m, n)
                    for c, span in enumerate(spans):
                        region = (window(out, o, size) if partial is None else
                                  window(partial, (Const(c),) + o, (1,) + size))
                        self._cube_op(op, bidx, batch, (m0, m), (n0, n), span, region)
        if partial is not None:
            self._split_k_reduce(op, partial, len(spans))
        return True

    def grid_matmul(self, op: Operation) -> bool:
        """A matmul whose M is DYNAMIC (the rest static, whole K, no bias or split-K): per
        (batch index, nL1 block) one cube tile op over a run-time grid of mL1 row blocks."""
        a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
        cube = op.tile.cube
        if len(op.inputs) != 2 or cube.enable_split_k or out.rank < 2:
            return False
        if _static(b.shape) is None or any(type(d) is not Const
                                           for i, d in enumerate(out.shape) if i != out.rank - 2):
            return False
        m_dim = a.rank - 1 if op.attrs["a_trans"] else a.rank - 2
        if any(type(d) is not Const for i, d in enumerate(a.shape) if i != m_dim):
            return False
        so = tuple(d.value if type(d) is Const else None for d in out.shape)
        K = a.shape[a.rank - 2 if op.attrs["a_trans"] else a.rank - 1].value
        batch = so[:-2]
        grid = self.grid((out.shape[-2],), (cube.m[1],))
        m0 = binary("mul", grid.syms[0], cube.m[1])
        for bidx in itertools.product(*(range(n) for n in batch)):
            for n0 in range(0, so[-1], cube.n[1]):
                n = min(cube.n[1], so[-1] - n0)
                o = tuple(Const(x) for x in bidx) + (m0, Const(n0))
                size = tuple(1 for _ in bidx) + (cube.m[1], n)
                tile_op = self._cube_op(op, bidx, batch, (m0, cube.m[1]), (n0, n), (0, K),
                                        window(out, o, size))
                tile_op.grid = grid
        return True

    def _cube_op(self, op: Operation, bidx: tuple[int, ...], batch: tuple[int, ...],
                 ms: tuple[int, int], ns: tuple[int, int], ks: tuple[int, int],
                 region: Region) -> TileOp:
        """The cube tile op of output block (ms, ns) over the K range `ks` writing `region`."""
        a, b = op.inputs[0], op.inputs[1]
        cube = op.tile.cube
        inputs = [self._operand(a, bidx, batch, ms, ks, op.attrs["a_trans"], True),
                  self._operand(b, bidx, batch, ns, ks, op.attrs["b_trans"], False)]
        if region.value is not op.outputs[0]:
            # A split-K partial block has a leading chunk dim: the operands gain a size-1 dim
            # in front, so the product has the partial region's rank.
            inputs = [Region(r.value, r.offsets, r.shape, r.valid,
                             (-1,) + (r.dims if r.dims is not None
                                      else tuple(range(len(r.shape))))) for r in inputs]
        for extra in op.inputs[2:]:  # bias: the block's columns
            es = _static(extra.shape)
            eo = tuple(Const(0) for _ in es[:-1]) + (Const(ns[0]),)
            inputs.append(self.read(extra, eo, es[:-1] + (ns[1],)))
        (m, k, n) = ms[1], ks[1], ns[1]
        plan = CubePlan(m, n, k, min(cube.m[0], m), min(cube.n[0], n), cube.k[0], cube.k[1],
                        cube.k[2], bytes_of(a.dtype), bytes_of(b.dtype),
                        bytes_of(region.value.dtype))
        k0 = self.spec.cube["k0"].get(a.dtype.name[3:].lower(), 16)
        lat = self.spec.cube["issue_overhead"] + -(-m // 16) * -(-k // k0) * -(-n // 16)
        return self.new_op("compute", "MATMUL", AIC, inputs, region, op,
                           {"k_chunks": plan.k_chunks, "cube_plan": plan}, latency=lat)

    def _split_k_reduce(self, op: Operation, partial: TensorValue, chunks: int) -> None:
        """Sum the split-K partials into the output on the vector unit, one add chain per
        output tile: acc = p0 + p1, acc = acc + p2, ... (the last add writes the output).
        Tiled with the matmul's vec TileShape when its rank fits, else [128, 128]."""
        out = op.outputs[0]
        so = _static(out.shape)
        tile = op.tile.vec
        if tile is None or len(tile) not in (2, len(so)):
            tile = (128, 128)
        tile = (1,) * (len(so) - len(tile)) + tuple(tile)
        dims = tuple(range(1, len(so) + 1))  # the adds see a partial block without its chunk dim
        acc = None
        for j in range(1, chunks):
            target = out if j == chunks - 1 else self._synthetic(
                so, out.dtype, tuple(out.valid_shape), f"{out.name or 't'}_splitk_acc{j}")
            for offs, size in _grid(so, tile):
                o = tuple(Const(x) for x in offs)

                def part(c: int) -> Region:
                    w = window(partial, (Const(c),) + o, (1,) + size)
                    return Region(partial, w.offsets, w.shape, w.valid, dims)

                lhs = part(0) if acc is None else window(acc, o, size)
                region = window(target, o, size)
                self.new_op("compute", "ADD", AIV, [lhs, part(j)], region, op,
                            latency=self.vector_latency("ADD", region))
            acc = target

    def _operand(self, v: TensorValue, bidx: tuple[int, ...], batch: tuple[int, ...],
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
            return self.read(v, bo + (start, Const(k0)), bs + (size, kn))
        return self.read(v, bo + (Const(k0), start), bs + (kn, size))

    def assemble(self, op: Operation) -> bool:
        src, dst = op.inputs[0], op.outputs[0]
        shape = _static(src.shape)
        offsets = tuple(op.attrs["offsets"])
        prods = self.graph.producers.get(src.id)
        if shape is None:
            return self.grid_assemble(op, src, dst, offsets, prods)
        if prods and all(p.kind in ("compute", "combine") for p in prods):
            regions = [(p.output.offsets, p.output.shape) for p in prods]
        elif op.tile.vec is not None and len(op.tile.vec) == len(shape):
            regions = [(tuple(Const(x) for x in offs), size)
                       for offs, size in _grid(shape, op.tile.vec)]
        else:
            regions = [(tuple(Const(0) for _ in shape), shape)]
        core = prods[0].core if prods else AIV
        for o, size in regions:
            region_in = self.read(src, o, size)
            # the written extent is the source's valid extent, in the source's coordinates
            target = Region(dst, tuple(binary("add", a, b) for a, b in zip(offsets, o)), size,
                            clamped_valid(src, o, size))
            self.new_op("copy_out", "ASSEMBLE", core, [region_in], target, op,
                        {"tile_offsets": o})
        return True


    def grid_assemble(self, op: Operation, src: TensorValue, dst: TensorValue,
                      offsets: tuple[Expr, ...], prods: list[TileOp] | None) -> bool:
        """Assembling a value made on a run-time grid: one copy-out per tile, on that grid."""
        if not prods or len(prods) != 1 or prods[0].grid is None or prods[0].kind != "compute":
            return False
        made = prods[0].output
        target = Region(dst, tuple(binary("add", a, b) for a, b in zip(offsets, made.offsets)),
                        made.shape, made.valid)
        tile_op = self.new_op("copy_out", "ASSEMBLE", prods[0].core,
                              [self.read(src, made.offsets, made.shape)], target, op,
                              {"tile_offsets": made.offsets})
        tile_op.grid = prods[0].grid
        return True


def expand_block(block: Block, spec: MachineSpec, ids: Iterator[int],
                 shared: set[int] = frozenset()) -> tuple[TileGraph, Any]:
    """Tile ops of `block` (dependencies not yet linked) and the view map."""
    ex = Expander(block, spec, ids, shared)
    return ex.expand(), ex.views
