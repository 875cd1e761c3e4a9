"""The tile graph of one root function: tile ops over rectangular regions of tensor values.

Takes a root-function `Block` (tensor ops) → `TileGraph` (tile ops, each reading input regions
and writing one output region). Keeps: every tile op knows the tensor op it came from; regions
have a static buffer shape (the TileShape) and symbolic valid extents; tile ops are in program
order, so that order is a topological order of the dependencies.

Frozen values: `Region`, `TileOp` and `TileGraph` refuse assignment. Tile ops are made by the
tens of thousands, and a frozen dataclass's `__init__` (one `object.__setattr__` per field)
costs about five times a plain one's, so the passes build `TileOpDraft`s (the same slots, a
plain `__init__`, mutable) and `freeze` turns each into its `TileOp` in place by changing its
class, once `build_root` has set the last field (which inputs are read locally).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterator

from pypto.dtypes import bytes_of
from pypto.ir.operation import Operation
from pypto.ir.tensor import TensorValue
from pypto.passes.kinds import AIC, Core, EdgeKind, TileKind  # noqa: F401 (AIC: for the run side)
from pypto.symbolic import Const, Expr, Sym, binary

@dataclass(frozen=True, slots=True, eq=False)
class Region:
    """A window of `value`: `shape` is the static buffer size, `offsets` may be symbolic and
    `valid` is how much of the window holds real data (evaluated per root instance)."""

    value: TensorValue
    offsets: tuple[Expr, ...]
    shape: tuple[int, ...]
    valid: tuple[Expr, ...]
    # When read through a squeeze/unsqueeze alias: the parent dim behind each dim the consumer
    # sees (-1 for an inserted size-1 dim); None when the consumer sees the parent's dims.
    dims: tuple[int, ...] | None = None

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return int(n * bytes_of(self.value.dtype))


def static_dims(dims: tuple[Expr, ...]) -> tuple[int, ...] | None:
    """The dims as ints, or None when one is symbolic."""
    if all(isinstance(d, Const) for d in dims):
        return tuple(d.value for d in dims)
    return None


def tiles(shape: tuple[int, ...], tile: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...],
                                                                          tuple[int, ...]]]:
    """(offsets, tile shape) of every tile of `shape`, row-major; tiles are clipped to the
    tensor (a TileShape larger than the tensor allocates only what the tensor needs)."""
    ranges = [range(0, s, t) for s, t in zip(shape, tile)]
    sizes = tuple(min(t, s) for s, t in zip(shape, tile))
    for offs in itertools.product(*ranges):
        yield offs, sizes


def window(value: TensorValue, offsets: tuple[Expr, ...], shape: tuple[int, ...],
           consts: ConstTable) -> Region:
    """The region of `value` at `offsets` of static `shape`, with the valid extent clamped to
    the value's valid shape."""
    return Region(value, offsets, shape, clamped_valid(value, offsets, shape, consts))


def clamped_valid(value: TensorValue, offsets: tuple[Expr, ...], shape: tuple[int, ...],
                  consts: ConstTable) -> tuple[Expr, ...]:
    """min(size, max(0, valid - offset)) per dim, folded when everything is constant."""
    out = []
    for s, vs, o in zip(shape, value.valid_shape, offsets):
        if type(vs) is Const and type(o) is Const:
            v = vs.value - o.value
            out.append(consts[s if v >= s else (v if v > 0 else 0)])
        else:
            out.append(binary("min", s, binary("max", 0, binary("sub", vs, o))))
    return tuple(out)


class ConstTable(dict):
    """One compilation's interned constants, `table[x]` is `Const(x)`: tile offsets and
    extents repeat across every op of a block."""

    def __missing__(self, x: int) -> Const:
        c = self[x] = Const(x)
        return c


@dataclass(frozen=True, slots=True, eq=False)
class TileOp:
    """One tile op. `kind` says how it executes (a `TileKind`: compute, the partial/combine
    steps of a split reduction, a copy-out into a storage, or the tensor op run whole on GM).

    Frozen: the passes build `TileOpDraft`s and `freeze` them once a root function is built."""

    id: int
    kind: TileKind
    opcode: str
    core: Core
    inputs: list[Region]
    output: Region | None
    src: Operation
    attrs: dict[str, Any] = field(default_factory=dict)
    latency: float = 0.0
    scope: Any = -1
    # per input: read from the task's local buffer (True) or from GM (False); known once the
    # subgraphs are
    local_inputs: tuple[bool, ...] = ()
    # a tile op over a DYNAMIC-shaped tensor repeats over a run-time grid of tiles: its
    # offsets and valid extents are expressions of the grid's index symbols (None: one tile)
    grid: TileGrid | None = None

    def __repr__(self) -> str:
        out = f"%{self.output.value.id}" if self.output else "-"
        return f"TileOp#{self.id}({self.kind} {self.opcode} -> {out})"


class TileOpDraft(TileOp):
    """A tile op the passes are still building: mutable, with a plain `__init__` (a frozen
    dataclass's sets each field through `object.__setattr__`, several times slower, and a big
    block makes tens of thousands of tile ops). `freeze` turns it into its `TileOp` in place."""

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__

    def __init__(self, id: int, kind: TileKind, opcode: str, core: Core,
                 inputs: list[Region], output: Region | None, src: Operation,
                 attrs: dict[str, Any], latency: float = 0.0, scope: Any = -1,
                 local_inputs: tuple[bool, ...] = (), grid: TileGrid | None = None) -> None:
        self.id, self.kind, self.opcode, self.core = id, kind, opcode, core
        self.inputs, self.output, self.src, self.attrs = inputs, output, src, attrs
        self.latency, self.scope, self.local_inputs, self.grid = latency, scope, local_inputs, grid


def freeze(ops: list[TileOp]) -> None:
    """Make finished drafts frozen `TileOp`s (the same objects: the class changes, the slots
    stay)."""
    for op in ops:
        if type(op) is TileOpDraft:
            op.__class__ = TileOp


@dataclass(frozen=True)
class TileGrid:
    """The run-time tiles of an op on a DYNAMIC-shaped tensor: index symbol i_d runs over
    range(counts[d]) (counts = ceil(dim / tile), evaluated per instance), and the tile op's
    windows are written in terms of the symbols. Equal grids have equal symbols, so tile ops
    of one grid may share a subgraph (one task per tile runs them all)."""

    syms: tuple[Sym, ...]
    counts: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class TileGraph:
    """Tile ops of one block plus the dependency edges between them. Each pass that adds to
    it (`deps.link`: edges; `functions.build_root`: escaping values) returns a new graph."""

    block_name: str
    ops: list[TileOp]
    # (producer id, consumer id) -> FUSE (one-to-one or tree-shaped data flow that may stay in
    # on-chip buffers), GM (many-to-many data flow), or ORDER (storage read/write ordering).
    edges: dict[tuple[int, int], EdgeKind] = field(default_factory=dict)
    # values that must be written to GM after they are produced
    escaping: frozenset[int] = frozenset()
    # storages that live in GM for the whole block (see deps.gm_resident_storages)
    gm_storages: frozenset[int] = frozenset()

    def preds(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {op.id: [] for op in self.ops}
        for (p, c) in self.edges:
            out[c].append(p)
        return out


def overlaps(a_off: tuple[Expr, ...], a_shape: tuple[int, ...], b_off: tuple[Expr, ...],
             b_shape: tuple[int, ...]) -> bool:
    """Whether two windows may overlap. Symbolic offsets whose difference is not a constant
    are assumed to overlap (a safe answer for dependencies)."""
    from pypto.symbolic import const_diff
    for ao, asz, bo, bsz in zip(a_off, a_shape, b_off, b_shape):
        if isinstance(ao, Const) and isinstance(bo, Const):
            d = ao.value - bo.value
        else:
            d = const_diff(ao, bo)
        if d is None:
            continue
        if d >= bsz or -d >= asz:
            return False
    return True


NO_SYMBOLS: frozenset = frozenset()


def split_offset(e: Expr, known: dict[Expr, tuple[frozenset, int]]) -> tuple[frozenset, int]:
    """`e` as (symbolic part, constant part). Two offsets have a constant difference (all that
    `overlaps` can compare) exactly when their symbolic parts are equal, and then it is the
    difference of their constant parts: the key by which `deps` groups regions. `known`: the
    splits already made by this pass (the same offsets recur on every tile of a row)."""
    if type(e) is Const:
        return NO_SYMBOLS, e.value
    found = known.get(e)
    if found is None:
        from pypto.symbolic import polynomial
        poly = polynomial(e)
        c = poly.pop((), 0)
        found = known[e] = (frozenset(poly.items()), c)
    return found
