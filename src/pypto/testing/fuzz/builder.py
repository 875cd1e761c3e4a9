"""Kernel construction for the generator: parameters, values with their bounds, ops rendered
for the kernel and the golden at once, tile shapes, stores and nested blocks.

Also the shared pickers of the families: dtypes, shapes, tiles, inputs, and the sizes of the
calls of a kernel with a dynamic row count.

Every value (`Val`) carries its static shape, dtype, a bound on its range (so the generator only
applies an op where it is defined and cannot overflow) and how many rounded ops (`depth`) and
accumulated terms (`acc`) stand behind it, so that ops with steps (floor, round) are applied
only to exact values. (The golden's tolerance is the kernel's own forward error bound,
computed by the case script from the compiled program: fuzz/golden.py.)
"""
from __future__ import annotations

import contextlib
import math
import random
from dataclasses import dataclass

from pypto.testing.fuzz.case import Block, Case, Line, Param
from pypto.testing.fuzz.golden import PYPTO_DTYPE

ITEMSIZE = {"fp32": 4, "fp16": 2, "bf16": 2, "int32": 4}
MAX_TILES = 48  # tiles per op: bounds a kernel's run time (the tile executor pays per tile)


@dataclass
class Val:
    name: str
    shape: tuple
    dt: str
    lo: float = -2.0
    hi: float = 2.0
    depth: int = 0
    acc: int = 0
    scale: float = 2.0  # the largest magnitude on the way to this value (error scale)

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))


def dt_attr(dt: str) -> str:
    return f"pypto.{PYPTO_DTYPE[dt]}"


class Builder:
    """Collects the statements of one kernel; `case()` packs them into a `Case`."""

    def __init__(self, rng: random.Random, seed: int, index: int, family: str):
        self.rng = rng
        self.seed, self.index, self.family = seed, index, family
        self.params: list[Param] = []
        self.root: list = []
        self.stack = [self.root]
        self.count = 0
        self.tile_rank: int | None = None
        # what each output holds, for a family that reads it back: (depth, acc, scale)
        self.checks: dict[str, tuple[int, float, float]] = {}
        self.calls: list[dict] | None = None
        self.expect: str | None = None
        self.notes: list[str] = []
        self.runtime: dict = {}
        self.second: tuple | None = None

    # ---- parameters and statements ----------------------------------------------------
    def param(self, shape, dt: str, role: str = "in", low=-2.0, high=2.0, name=None) -> Val:
        name = name or (f"x{len(self.params)}" if role == "in" else
                        f"out{sum(p.role == 'out' for p in self.params)}")
        self.params.append(Param(name, dt, role, list(shape), low, high))
        return Val(name, tuple(shape), dt, low, high)

    def emit(self, pypto: str, golden: str = "", defines=None, primary=None) -> None:
        self.stack[-1].append(Line(pypto, golden, defines, primary))

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def op(self, pypto_expr: str, golden_expr: str, like: Val, *, shape=None, dt=None,
           lo=None, hi=None, depth=None, acc=None, primary: Val | None = None,
           scale: float | None = None) -> Val:
        """`vN = pypto_expr` in the kernel, `vN = R(golden_expr, dt)` in the golden."""
        dt = dt or like.dt
        v = Val(self.fresh(), tuple(shape if shape is not None else like.shape), dt,
                like.lo if lo is None else lo, like.hi if hi is None else hi,
                like.depth + 1 if depth is None else depth, like.acc if acc is None else acc)
        v.scale = max(like.scale if scale is None else scale, v.mag)
        src = primary or like
        self.emit(f"{v.name} = {pypto_expr}", f"{v.name} = R({golden_expr}, '{dt}')",
                  v.name, src.name if src.shape == v.shape and src.dt == v.dt else None)
        return v

    def tile(self, dims) -> None:
        self.stack[-1].append(Line("", "", tile=[int(d) for d in dims]))
        self.tile_rank = len(dims)

    def vec_tile(self, shape, dt: str, force=False) -> None:
        """Set a vector tile for `shape` if the current one has another rank (or `force`)."""
        if force or self.tile_rank != len(shape):
            self.tile(pick_tile(self.rng, shape, dt))

    def store(self, out: Val, v: Val, offsets=None, style=None) -> None:
        """Write `v` into output `out` at `offsets` (None: the whole output, `out[:] = v`)."""
        depth, acc, scale = self.checks.get(out.name, (0, 0, 1.0))
        self.checks[out.name] = (max(depth, v.depth), max(acc, v.acc), max(scale, v.scale))
        if offsets is None:
            self.emit(f"{out.name}[:] = {v.name}",
                      f"ASM({out.name}, {v.name}, [0] * {len(out.shape)})")
            return
        offs = ", ".join(map(str, offsets))
        style = style or self.rng.choice(["slice", "slice", "stop", "assemble"])
        if style == "stop":  # out[a:a + h, c:c + w] = v: the stops spelled out
            idx = ", ".join(f"{o}:{o} + {n}" if isinstance(o, str) else f"{o}:{o + n}"
                            for o, n in zip(offsets, v.shape))
            self.emit(f"{out.name}[{idx}] = {v.name}", f"ASM({out.name}, {v.name}, [{offs}])")
        elif style == "slice":
            idx = ", ".join(":" if o == 0 and i else f"{o}:" for i, o in enumerate(offsets))
            self.emit(f"{out.name}[{idx}] = {v.name}", f"ASM({out.name}, {v.name}, [{offs}])")
        else:
            self.emit(f"pypto.assemble({v.name}, [{offs}], {out.name})",
                      f"ASM({out.name}, {v.name}, [{offs}])")

    @contextlib.contextmanager
    def block(self, pypto_header: str, golden_header: str):
        blk = Block(pypto_header, golden_header, [])
        self.stack[-1].append(blk)
        self.stack.append(blk.body)
        try:
            yield blk
        finally:
            self.stack.pop()

    @contextlib.contextmanager
    def orelse(self, blk: Block):
        blk.orelse = []
        self.stack.append(blk.orelse)
        try:
            yield blk
        finally:
            self.stack.pop()

    def case(self) -> Case:
        static = {p.name: [d for d in p.shape] for p in self.params}
        calls = self.calls or [static]
        return Case(self.seed, self.index, self.family, self.params, self.root, calls,
                    self.expect, "; ".join(self.notes), dict(self.runtime), self.second)

    @contextlib.contextmanager
    def second_kernel(self, names: list[str]):
        """Statements emitted inside go to a second kernel over the parameters `names`."""
        body: list = []
        self.second = (list(names), body)
        self.stack.append(body)
        try:
            yield
        finally:
            self.stack.pop()


def pick_tile(rng: random.Random, shape, dt: str) -> list[int]:
    """A vector tile for `shape`: per dim the full extent, a divisor, a size that does not
    divide it, or one larger than it; the last dim a multiple of 32 bytes (PyPTO's rule, in
    elements of `dt`); at most MAX_TILES tiles and 16 KiB per tile."""
    align = 32 // ITEMSIZE[dt]
    while True:
        dims = []
        for i, d in enumerate(shape):
            d = int(d)
            if i == len(shape) - 1:
                up = -(-d // align) * align
                options = [up, up + align, align * rng.randint(1, max(1, up // align))]
            else:
                divisors = [x for x in range(1, d + 1) if d % x == 0]
                options = [d, rng.choice(divisors), d + rng.randint(1, 8)]
                if d > 2:
                    options.append(rng.choice([x for x in range(2, d) if d % x] or [d]))
            dims.append(rng.choice(options))
        tiles = math.prod(math.ceil(int(d) / t) for d, t in zip(shape, dims))
        if tiles <= MAX_TILES and math.prod(dims) * ITEMSIZE[dt] <= 16384:
            return dims


DIMS = [1, 2, 3, 4, 5, 7, 8, 11, 16, 24, 32, 33, 64]
DTYPE_WEIGHTS = [("fp32", 5), ("fp16", 2), ("bf16", 2), ("int32", 2)]


def pick_dtype(rng: random.Random, ints=True) -> str:
    pool = [(d, w) for d, w in DTYPE_WEIGHTS if ints or d != "int32"]
    return rng.choices([d for d, _ in pool], [w for _, w in pool])[0]


def pick_shape(rng: random.Random, rank=None, max_elems=2048) -> tuple:
    rank = rank or rng.choice([1, 2, 2, 2, 3, 3, 4])
    while True:
        shape = tuple(rng.choice(DIMS) for _ in range(rank))
        if math.prod(shape) <= max_elems:
            return shape


def make_input(b: Builder, shape, dt, divisor=False) -> Val:
    """An input parameter: floats in [-2, 2]; ints in [-20, 20], or mostly [1, 9] for a
    divisor (sometimes [-3, 3]: a zero divisor must raise a named error)."""
    if dt == "int32":
        low, high = ((1, 9) if b.rng.random() < 0.8 else (-3, 3)) if divisor else (-20, 20)
        return b.param(shape, dt, low=low, high=high)
    return b.param(shape, dt)


# ---- families --------------------------------------------------------------------------------


def dynamic_rows(b: Builder, block: int) -> list[int]:
    """Row counts for several calls of one dynamic kernel: multiples of the block, tails, and
    fewer rows than one block."""
    rng = b.rng
    sizes = {block * rng.randint(1, 3), block * rng.randint(1, 2) + rng.randint(1, block),
             rng.randint(1, block)}
    return sorted(sizes)


def dynamic_calls(b: Builder, rows: list[int]) -> None:
    b.calls = [{p.name: [r if d in ("DYN", "N") else d for d in p.shape] for p in b.params}
               for r in rows]
