"""The tile graph of one root function: tile ops over rectangular regions of tensor values.

Takes a root-function `Block` (tensor ops) → `TileGraph` (tile ops, each reading input regions
and writing one output region). Keeps: every tile op knows the tensor op it came from; regions
have a static buffer shape (the TileShape) and symbolic valid extents; tile ops are in program
order, so that order is a topological order of the dependencies.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.dtypes import bytes_of
from pypto.ir.operation import Operation
from pypto.ir.tensor import TensorValue
from pypto.symbolic import Const, Expr, Sym, binary

AIV, AIC = "AIV", "AIC"
# Edge kinds: data that may stay on chip, data that goes through GM, pure storage ordering.
FUSE, GM, ORDER = "fuse", "gm", "order"


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


def window(value: TensorValue, offsets: tuple[Expr, ...], shape: tuple[int, ...]) -> Region:
    """The region of `value` at `offsets` of static `shape`, with the valid extent clamped to
    the value's valid shape."""
    return Region(value, offsets, shape, clamped_valid(value, offsets, shape))


def clamped_valid(value: TensorValue, offsets: tuple[Expr, ...],
                  shape: tuple[int, ...]) -> tuple[Expr, ...]:
    """min(size, max(0, valid - offset)) per dim, folded when everything is constant."""
    out = []
    for s, vs, o in zip(shape, value.valid_shape, offsets):
        if type(vs) is Const and type(o) is Const:
            v = vs.value - o.value
            out.append(_const(s if v >= s else (v if v > 0 else 0)))
        else:
            out.append(binary("min", s, binary("max", 0, binary("sub", vs, o))))
    return tuple(out)


_CONSTS: dict[int, Const] = {}


def _const(x: int) -> Const:
    """Interned constants: tile offsets and extents repeat across every op of a block."""
    c = _CONSTS.get(x)
    if c is None:
        c = _CONSTS[x] = Const(x)
    return c


@dataclass(eq=False)
class TileOp:
    """One tile op. `kind` says how it executes:
    - "compute": the tensor op's semantics on the input regions' valid data;
    - "partial"/"combine": the two steps of a reduction whose reduce axis is split;
    - "copy_out": a write of its input region into a storage (assemble / move);
    - "whole": the tensor op run as a whole on GM (ops with no tile rule)."""

    id: int
    kind: str
    opcode: str
    core: str
    inputs: list[Region]
    output: Region | None
    src: Operation
    attrs: dict[str, Any] = field(default_factory=dict)
    latency: float = 0.0
    scope: Any = -1
    # per input: read from the task's local buffer (True) or from GM (False); set once the
    # subgraphs are known
    local_inputs: list[bool] = field(default_factory=list)
    # a tile op over a DYNAMIC-shaped tensor repeats over a run-time grid of tiles: its
    # offsets and valid extents are expressions of the grid's index symbols (None: one tile)
    grid: "TileGrid | None" = None
    # executor caches: the compiled window plan and the attributes when they are constant
    plan: Any = field(default=None, repr=False, compare=False)
    static_attrs: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    sig_part: str | None = field(default=None, repr=False, compare=False)  # isomorphism key

    def __repr__(self) -> str:
        out = f"%{self.output.value.id}" if self.output else "-"
        return f"TileOp#{self.id}({self.kind} {self.opcode} -> {out})"


@dataclass(frozen=True)
class TileGrid:
    """The run-time tiles of an op on a DYNAMIC-shaped tensor: index symbol i_d runs over
    range(counts[d]) (counts = ceil(dim / tile), evaluated per instance), and the tile op's
    windows are written in terms of the symbols. Equal grids have equal symbols, so tile ops
    of one grid may share a subgraph (one task per tile runs them all)."""

    syms: tuple[Sym, ...]
    counts: tuple[Expr, ...]


@dataclass(eq=False)
class TileGraph:
    """Tile ops of one block plus the dependency edges between them."""

    block_name: str
    ops: list[TileOp] = field(default_factory=list)
    # (producer id, consumer id) -> FUSE (one-to-one or tree-shaped data flow that may stay in
    # on-chip buffers), GM (many-to-many data flow), or ORDER (storage read/write ordering).
    edges: dict[tuple[int, int], str] = field(default_factory=dict)
    # value id -> tile ops writing regions of that value (in program order)
    producers: dict[int, list[TileOp]] = field(default_factory=dict)
    # values that must be written to GM after they are produced
    escaping: set[int] = field(default_factory=set)
    # storages that live in GM for the whole block (see deps.gm_resident_storages)
    gm_storages: set[int] = field(default_factory=set)

    def add(self, op: TileOp) -> TileOp:
        self.ops.append(op)
        if op.output is not None and op.kind != "copy_out":
            self.producers.setdefault(op.output.value.id, []).append(op)
        return op

    def preds(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {op.id: [] for op in self.ops}
        for (p, c) in self.edges:
            out[c].append(p)
        return out


def overlaps(a_off: tuple[Expr, ...], a_shape: tuple[int, ...], b_off: tuple[Expr, ...],
             b_shape: tuple[int, ...]) -> bool:
    """Whether two windows may overlap. Symbolic offsets whose difference is not a constant
    are assumed to overlap (a safe answer for dependencies)."""
    from pypto.symbolic import _const_diff
    for ao, asz, bo, bsz in zip(a_off, a_shape, b_off, b_shape):
        if isinstance(ao, Const) and isinstance(bo, Const):
            d = ao.value - bo.value
        else:
            d = _const_diff(ao, bo)
        if d is None:
            continue
        if d >= bsz or -d >= asz:
            return False
    return True


NO_SYMBOLS: frozenset = frozenset()
_SPLIT: dict[Expr, tuple[frozenset, int]] = {}


def split_offset(e: Expr) -> tuple[frozenset, int]:
    """`e` as (symbolic part, constant part). Two offsets have a constant difference (all that
    `overlaps` can compare) exactly when their symbolic parts are equal, and then it is the
    difference of their constant parts: the key by which `deps` groups regions."""
    if type(e) is Const:
        return NO_SYMBOLS, e.value
    found = _SPLIT.get(e)
    if found is None:
        from pypto.symbolic import _poly
        poly = _poly(e)
        c = poly.pop((), 0)
        if len(_SPLIT) > 1 << 16:
            _SPLIT.clear()   # bounded across many compiles; any one block needs few entries
        found = _SPLIT[e] = (frozenset(poly.items()), c)
    return found


def same_window(a: Region, b_off: tuple[Expr, ...], b_shape: tuple[int, ...]) -> bool:
    return a.shape == tuple(b_shape) and all(x == y for x, y in zip(a.offsets, b_off))


def const(v: int) -> Const:
    return Const(v)
