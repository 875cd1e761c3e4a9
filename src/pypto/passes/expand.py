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
- matmul: cube tile ops per output block (`expand_matmul`);
- transpose / permute: a grid over the *input* on the op's TileShape (the guide's "Transpose
  (64,128) -> Add (128,64)": a consumer aligned with it uses the permuted tile); each tile op
  writes the permuted window of the output;
- assemble / move: one copy-out per tile of the source (its producer's tiling when it has one).
"""
from __future__ import annotations

from typing import Any, Iterator

from pypto.dtypes import DataType, is_float, is_low_precision
from pypto.ir.operation import Operation
from pypto.ir.program import Block
from pypto.ir.tensor import Storage, StorageKind, TensorValue
from pypto.machine.spec import MachineSpec
from pypto.ops import elementwise as _ew
from pypto.passes.expand_matmul import expand_matmul
from pypto.passes.kinds import (AIC, AIV, COMBINE, COMPUTE, COPY_OUT, PARTIAL, WHOLE, Core,
                                TileKind)
from pypto.passes.tile_graph import (ConstTable, Region, TileGraph, TileGrid, TileOp, TileOpDraft,
                                     clamped_valid, static_dims, tiles, window)
from pypto.symbolic import Const, Expr, Sym, binary

_ELEMENTWISE = (set(_ew.POINTWISE)
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


def vec_tiling(src: TensorValue, out: TensorValue, tile: tuple[int, ...] | None) -> str | None:
    """How a vector op reading `src` and writing `out` is tiled by its TileShape `tile`:
    "static" (known shapes), "grid" (a DYNAMIC-shaped `src`: one tile op over the run-time grid
    of its tiles) or None (no tile rule applies: the op runs whole)."""
    if tile is None or len(tile) != src.rank:
        return None
    if static_dims(src.shape) is None:
        return "grid"
    return "static" if static_dims(out.shape) is not None else None


class Expander:
    """Expands the ops of one block; `views` maps a view's value id to (parent, offsets)."""

    def __init__(self, block: Block, spec: MachineSpec, ids: Iterator[int],
                 shared: set[int] = frozenset()):
        self.block = block
        self.shared = shared  # values other blocks read: views among them are materialised
        self.spec = spec
        self.ids = ids
        self.ops: list[TileOp] = []
        # value id -> tile ops writing regions of that value (in program order)
        self.producers: dict[int, list[TileOp]] = {}
        self.consts = ConstTable()
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
        return self.resolve(value, offsets, shape, clamped_valid(value, offsets, shape,
                                                                 self.consts))

    def window(self, value: TensorValue, offsets: tuple[Expr, ...],
               shape: tuple[int, ...]) -> Region:
        return window(value, offsets, shape, self.consts)

    def new_op(self, kind: TileKind, opcode: str, core: Core, inputs: list[Region],
               output: Region | None, src: Operation, attrs: dict | None = None,
               latency: float = 0.0, grid: TileGrid | None = None) -> TileOp:
        op = TileOpDraft(next(self.ids), kind, opcode, core, inputs, output, src,
                         dict(attrs or {}), latency, src.scope, (), grid)
        self.ops.append(op)
        if output is not None and kind is not COPY_OUT:
            self.producers.setdefault(output.value.id, []).append(op)
        return op

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
            static = static_dims(out.shape)
            region = Region(out, tuple(Const(0) for _ in out.shape), static or (), out.valid_shape)
        inputs = [Region(v, tuple(Const(0) for _ in v.shape), static_dims(v.shape) or (),
                         v.valid_shape) for v in op.inputs]
        core = AIC if op.opcode == "MATMUL" else AIV
        self.new_op(WHOLE, op.opcode, core, inputs, region, op)

    # ---- per op ----
    def expand(self) -> TileGraph:
        for op in self.block.ops:
            self.expand_op(op)
        return TileGraph(self.block.name, self.ops)

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
        if code == "MATMUL" and expand_matmul(self, op):
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
        shape = static_dims(out.shape)
        if shape is None or src.id in self.shared:
            return False
        tile = op.tile.vec if op.tile.vec is not None and len(op.tile.vec) == len(shape) \
            else shape
        base = tuple(op.attrs["offsets"])
        latency = None
        for offs, size in tiles(shape, tile):
            o = tuple(self.consts[x] for x in offs)
            at = tuple(binary("add", b, x) for b, x in zip(base, o))
            region = self.window(out, o, size)
            if latency is None:
                latency = self.vector_latency("COPY", region)
            self.new_op(COMPUTE, "COPY", AIV, [self.read(src, at, size)], region, op,
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
        shape, tile = static_dims(out.shape), op.tile.vec
        how = vec_tiling(out, out, tile)
        if how != "static":
            return how == "grid" and self.grid_elementwise(op)
        # Per input: for each of its dims, the output dim it follows, or None when broadcast.
        follow = []
        for v in op.inputs:
            vshape = static_dims(v.shape)
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
        root = self.synthetic(shape, DataType.DT_FP32, out.valid_shape, "rsqrt_sqrt") \
            if op.opcode == "RSQRT" else None
        for offs, size in tiles(shape, tile):
            o = tuple(self.consts[x] for x in offs)
            inputs = [self.read(v, o, size) if dims is None else
                      self.read(v, tuple(_ZERO if d is None else o[d] for d in dims),
                                tuple(1 if d is None else size[d] for d in dims))
                      for v, dims in follow]
            region = self.window(out, o, size)
            if latency is None:  # every tile of the grid has the same buffer size
                latency = self.vector_latency(op.opcode, region)
            if root is not None:
                mid = self.window(root, o, size)
                self.new_op(COMPUTE, "SQRT", AIV, inputs, mid, op, latency=latency)
                self.new_op(COMPUTE, "DIVS", AIV, [mid], region, op,
                            {"scalar": 1.0, "reverse": True, "dtype": out.dtype},
                            latency=latency)
                continue
            self.new_op(COMPUTE, op.opcode, AIV, inputs, region, op, latency=latency)
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
        region = self.window(out, o, size)
        self.new_op(COMPUTE, op.opcode, AIV, inputs, region, op,
                    latency=self.vector_latency(op.opcode, region), grid=grid)
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
        shape, tile = static_dims(src.shape), op.tile.vec
        how = vec_tiling(src, out, tile)
        if how != "static":
            return how == "grid" and self.grid_transpose(op)
        perm = op.attrs["perm"]
        latency = None
        for offs, size in tiles(shape, tile):
            o = tuple(self.consts[x] for x in offs)
            region = self.window(out, tuple(o[p] for p in perm), tuple(size[p] for p in perm))
            if latency is None:
                latency = self.vector_latency(op.opcode, region)
            self.new_op(COMPUTE, op.opcode, AIV, [self.read(src, o, size)], region, op,
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
        region = self.window(out, tuple(o[p] for p in perm), tuple(size[p] for p in perm))
        self.new_op(COMPUTE, op.opcode, AIV, [self.read(src, o, size)], region, op,
                    latency=self.vector_latency(op.opcode, region), grid=grid)
        return True

    def reduce(self, op: Operation) -> bool:
        src, out = op.inputs[0], op.outputs[0]
        shape, tile = static_dims(src.shape), op.tile.vec
        how = vec_tiling(src, out, tile)
        if how != "static":
            return how == "grid" and self.grid_reduce(op)
        dims, keep = tuple(op.attrs["dims"]), op.attrs["keepdim"]
        split = [d for d in dims if tile[d] < shape[d]]
        if split and op.opcode in _WHOLE_AXIS_REDUCE:
            split = []
        eff = tuple(shape[i] if i in dims and not split else tile[i] for i in range(len(shape)))
        if not split:
            for offs, size in tiles(shape, eff):
                o = tuple(Const(x) for x in offs)
                region_in = self.read(src, o, size)
                oo, os_ = self._reduced(o, size, dims, keep)
                region = self.window(out, oo, os_)
                self.new_op(COMPUTE, op.opcode, AIV, [region_in], region, op,
                            latency=self.vector_latency(op.opcode, region_in))
            return True
        # Split reduce axis: partials into an FP32 tensor, then a combine per output tile.
        chunks = tuple(-(-shape[i] // tile[i]) if i in dims else shape[i]
                       for i in range(len(shape)))
        pvalid = tuple(binary("floordiv", binary("add", src.valid_shape[i], tile[i] - 1), tile[i])
                       if i in dims else src.valid_shape[i] for i in range(len(shape)))
        pdtype = DataType.DT_FP32 if is_float(src.dtype) and (
            is_low_precision(src.dtype) or src.dtype is DataType.DT_FP32) else src.dtype
        partial = self.synthetic(chunks, pdtype, pvalid, f"{src.name or 't'}_partial")
        base = _SPLITTABLE_REDUCE[op.opcode]
        for offs, size in tiles(shape, tile):
            o = tuple(Const(x) for x in offs)
            region_in = self.read(src, o, size)
            po = tuple(Const(offs[i] // tile[i]) if i in dims else o[i] for i in range(len(o)))
            ps = tuple(1 if i in dims else size[i] for i in range(len(size)))
            region = self.window(partial, po, ps)
            self.new_op(PARTIAL, base, AIV, [region_in], region, op,
                        {"dims": dims, "keepdim": True},
                        latency=self.vector_latency(base, region_in))
        comb_tile = tuple(chunks[i] if i in dims else tile[i] for i in range(len(shape)))
        count: Expr = Const(1)
        for d in dims:
            count = binary("mul", count, src.valid_shape[d])
        for offs, size in tiles(chunks, comb_tile):
            o = tuple(Const(x) for x in offs)
            region_in = self.window(partial, o, size)
            oo, os_ = self._reduced(o, size, dims, keep)
            region = self.window(out, oo, os_)
            attrs = {"dims": dims, "keepdim": keep}
            if op.opcode == "REDUCE_MEAN":
                attrs["mean_count"] = count
            self.new_op(COMBINE, base, AIV, [region_in], region, op, attrs,
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
        self.new_op(COMPUTE, op.opcode, AIV, [region_in], self.window(out, oo, os_), op,
                    latency=self.vector_latency(op.opcode, region_in), grid=grid)
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

    def synthetic(self, shape: tuple[int, ...], dtype: DataType, valid: tuple[Expr, ...],
                   name: str) -> TensorValue:
        dims = tuple(Const(s) for s in shape)
        storage = Storage(next(self.ids), StorageKind.TEMP, name, dtype, dims)
        return TensorValue(next(self.ids), dims, dtype, valid, storage, name)

    def assemble(self, op: Operation) -> bool:
        src, dst = op.inputs[0], op.outputs[0]
        shape = static_dims(src.shape)
        offsets = tuple(op.attrs["offsets"])
        prods = self.producers.get(src.id)
        if shape is None:
            return self.grid_assemble(op, src, dst, offsets, prods)
        if prods and all(p.kind is COMPUTE or p.kind is COMBINE for p in prods):
            regions = [(p.output.offsets, p.output.shape) for p in prods]
        elif op.tile.vec is not None and len(op.tile.vec) == len(shape):
            regions = [(tuple(Const(x) for x in offs), size)
                       for offs, size in tiles(shape, op.tile.vec)]
        else:
            regions = [(tuple(Const(0) for _ in shape), shape)]
        core = prods[0].core if prods else AIV
        for o, size in regions:
            region_in = self.read(src, o, size)
            # the written extent is the source's valid extent, in the source's coordinates
            target = Region(dst, tuple(binary("add", a, b) for a, b in zip(offsets, o)), size,
                            clamped_valid(src, o, size, self.consts))
            self.new_op(COPY_OUT, "ASSEMBLE", core, [region_in], target, op,
                        {"tile_offsets": o})
        return True


    def grid_assemble(self, op: Operation, src: TensorValue, dst: TensorValue,
                      offsets: tuple[Expr, ...], prods: list[TileOp] | None) -> bool:
        """Assembling a value made on a run-time grid: one copy-out per tile, on that grid."""
        if not prods or len(prods) != 1 or prods[0].grid is None or prods[0].kind is not COMPUTE:
            return False
        made = prods[0].output
        target = Region(dst, tuple(binary("add", a, b) for a, b in zip(offsets, made.offsets)),
                        made.shape, made.valid)
        self.new_op(COPY_OUT, "ASSEMBLE", prods[0].core,
                    [self.read(src, made.offsets, made.shape)], target, op,
                    {"tile_offsets": made.offsets}, grid=prods[0].grid)
        return True


def expand_block(block: Block, spec: MachineSpec, ids: Iterator[int],
                 shared: set[int] = frozenset()) -> tuple[TileGraph, Any]:
    """Tile ops of `block` (dependencies not yet linked) and the view map."""
    ex = Expander(block, spec, ids, shared)
    return ex.expand(), ex.views
