"""The GM bounds check (`runtime_debug_mode=4`): every window a view reads or an assemble writes
that lies outside its tensor, collected over the whole call and reported once, after it.

Takes a call's blocks as the control walk reaches them (`BoundsLog.check(block, values,
read_element, after)`, called by `runtime.control_walk` around each root instance, which also
keeps `BoundsLog.tails`) → per op and tensor the offending windows (how many, the first with
the symbols that made it), raised by the driver after the run as one `PyptoBoundsError`
(`BoundsLog.error`, through `profiling.debug_checks`).

Every mode checks the views at an offset read from a tensor (`BoundsLog(indices_only=True)`:
an index past the end is an error, not an empty read); mode 4 checks every window.

Why: both executors clamp windows to their tensors. A view `x[r:r + 1]` whose row `r`, read
from an index tensor, is past the end evaluates to an empty window (`valid = min(1,
max(n - r, 0))`): the op silently reads nothing and its result row is never written. A view
with an explicit `valid_shape` reaching past the edge reads zeros. Modes 0-3 give such a
call's wrong answer without a word; assembles out of range are refused by the executors, at
the first (`ops.writes.write_region`). The rule, per dim, with offset `o`, valid extent `v`
and tensor extent `n`: a non-empty window is outside when `o < 0` or `o + v > n` (a tail tile,
`o < n < o + size` with `v = n - o`, is legal). An empty window touches nothing and is legal
as a tail idiom (a block of a fixed count past a dynamic end, an unrolled iteration's copies
past the loop's end), except for a view of non-zero size starting at `o >= n` where `o` is
read from a tensor's elements: an index that points past the end.

NOTE: the windows' expressions are compiled into one function per block (`symbolic.CodeGen`),
evaluated before the block runs, except those reading elements the block itself writes,
evaluated after it (the element may be produced inside it), as `runtime.extent_checks` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pypto.errors import PyptoBoundsError
from pypto.ir.operation import Operation
from pypto.ir.program import Block
from pypto.ir.tensor import TensorValue
from pypto.symbolic import CodeGen, Const, Expr, element_reads, free_symbols, tuple_code

_WRITES = ("ASSEMBLE", "ATOMIC_ADD")
SHOWN = 8   # offending accesses listed in the error (all are in deps.json)


@dataclass(frozen=True)
class _Window:
    """One window an op reads or writes of a tensor, as expressions."""

    op: Operation
    verb: str                     # "reads" / "writes"
    tensor: TensorValue
    offsets: tuple[Expr, ...]
    extents: tuple[Expr, ...]     # valid extents
    sizes: tuple[int, ...] | None  # a view's static size (None: a write)
    data: tuple[bool, ...] = ()   # per dim: the offset reads tensor elements (an index)


@dataclass
class Offense:
    """The out-of-range windows of one op on one tensor: how many, and the first."""

    op: Operation
    verb: str
    tensor: str
    offsets: tuple[int, ...]
    extents: tuple[int, ...]
    shape: tuple[int, ...]
    where: str                    # the symbols that made the first ("i=1")
    count: int = 1

    @property
    def line(self) -> str:
        return str(self.op.loc) if self.op.loc is not None else "?"

    def box(self) -> str:
        return "[" + ", ".join(f"{o}:{o + e}" for o, e in zip(self.offsets, self.extents)) + "]"

    def text(self) -> str:
        times = f"{self.count} times, first" if self.count > 1 else "once"
        at = f" with {self.where}" if self.where else ""
        return (f"{self.op.opcode.lower()} at {self.line} {self.verb} {self.tensor}{self.box()}"
                f" outside {self.tensor}'s shape {list(self.shape)} ({times}{at})")

    def to_json(self) -> dict:
        return {"op": self.op.opcode, "line": self.line, "access": self.verb,
                "tensor": self.tensor, "offsets": list(self.offsets),
                "extents": list(self.extents), "shape": list(self.shape), "count": self.count,
                "first_at": self.where}


def windows_of(block: Block) -> list[_Window]:
    """Every view and assemble window of `block`'s ops."""
    out = []
    for op in block.ops:
        offsets = op.attrs.get("offsets")
        if offsets is None or not op.inputs or not op.outputs:
            continue
        offsets = tuple(o if isinstance(o, Expr) else Const(int(o)) for o in offsets)
        if op.opcode == "VIEW":
            src, view = op.inputs[0], op.outputs[0]
            sizes = tuple(d.value if isinstance(d, Const) else 1 for d in view.shape)
            data = tuple(bool(element_reads(o)) for o in offsets)
            out.append(_Window(op, "reads", src, offsets, view.valid_shape, sizes, data))
        elif op.opcode in _WRITES:
            out.append(_Window(op, "writes", op.outputs[0], offsets,
                               op.inputs[0].valid_shape, None))
    return out


class _Compiled:
    """The windows of one block evaluated by one generated function."""

    def __init__(self, windows: list[_Window]):
        self.windows = windows
        gen = CodeGen()
        exprs = [e for w in windows for e in (*w.offsets, *w.extents, *w.tensor.shape)]
        self.fn = gen.function(tuple_code([gen.expr(e) for e in exprs]), "bounds")

    def run(self, values: dict, read_element, log: BoundsLog) -> None:
        try:
            got = self.fn(values, read_element)
        except (KeyError, ZeroDivisionError, TypeError, IndexError):
            return   # the op's own evaluation reports it
        k = 0
        for w in self.windows:
            r = len(w.offsets)
            offs, ext, shape = got[k:k + r], got[k + r:k + 2 * r], got[k + 2 * r:k + 3 * r]
            k += 3 * r
            if _outside(offs, ext, shape, w, log.in_tail()):
                log.add(w, offs, ext, shape, values)


def _outside(offs: tuple, ext: tuple, shape: tuple, w: _Window, tail: bool) -> bool:
    """Whether a window lies outside its tensor. An empty window touches nothing: it is
    reported only for a view that starts past the end at an offset read from a tensor (an
    index out of range), not in an unrolled iteration's copies past the loop's end
    (`BoundsLog.tails`)."""
    if min(ext, default=1) <= 0:
        return not tail and any(d and s > 0 and o >= n for o, n, s, d in
                                zip(offs, shape, w.sizes or (), w.data))
    return any(o < 0 or o + v > n for o, v, n in zip(offs, ext, shape))


def _split(block: Block, indices_only: bool) -> tuple[list[_Window], list[_Window]]:
    """(windows evaluated before the block, those after: they read elements it writes);
    `indices_only`: the views at an offset read from a tensor alone."""
    written = {v.storage.id for op in block.ops for v in op.outputs}
    before, after = [], []
    for w in windows_of(block):
        if indices_only and not any(w.data):
            continue
        reads = [r for e in (*w.offsets, *w.extents, *w.tensor.shape) for r in element_reads(e)]
        late = any(getattr(getattr(r.tensor, "storage", None), "id", None) in written
                   for r in reads)
        (after if late else before).append(w)
    return before, after


@dataclass
class BoundsLog:
    """The out-of-range windows of one call, per (op, tensor, access). `indices_only`: only
    the views at an offset read from a tensor (an index), what every mode checks; mode 4
    checks every window."""

    indices_only: bool = False
    offenses: dict[tuple, Offense] = field(default_factory=dict)
    # per enclosing unrolled loop iteration: whether its last copies are past the loop's end
    # (pushed and popped by the control walk)
    tails: list[bool] = field(default_factory=list)
    _blocks: dict[int, tuple] = field(default_factory=dict)

    def in_tail(self) -> bool:
        return any(self.tails)

    def check(self, block: Block, values: dict, read_element, after: bool) -> None:
        """Evaluate `block`'s windows of one phase (`after`: those evaluated after it ran)."""
        found = self._blocks.get(id(block))
        if found is None:
            before, late = _split(block, self.indices_only)
            found = self._blocks[id(block)] = (block, _Compiled(before) if before else None,
                                               _Compiled(late) if late else None)
        compiled = found[2 if after else 1]
        if compiled is not None:
            compiled.run(values, read_element, self)

    def add(self, w: _Window, offs: tuple, ext: tuple, shape: tuple, values: dict) -> None:
        key = (w.op.id, id(w.op), w.verb, w.tensor.storage.id)
        known = self.offenses.get(key)
        if known is not None:
            known.count += 1
            return
        names = sorted({n for e in w.offsets for n in free_symbols(e)})
        where = ", ".join(f"{n.split('#')[0]}={values[n]}" for n in names if n in values)
        name = w.tensor.name or w.tensor.storage.name or f"%{w.tensor.id}"
        # an empty window shows the size asked for: a view's static size
        shown = tuple(v if v > 0 or w.sizes is None else w.sizes[d] for d, v in enumerate(ext))
        self.offenses[key] = Offense(w.op, w.verb, name, tuple(offs),
                                     tuple(max(v, 0) for v in shown), tuple(shape), where)

    def __bool__(self) -> bool:
        return bool(self.offenses)

    def to_json(self) -> dict:
        items = list(self.offenses.values())
        return {"ok": not items, "offending_ops": len(items),
                "accesses": sum(o.count for o in items),
                "out_of_bounds": [o.to_json() for o in items]}

    def error(self, kernel: str) -> PyptoBoundsError:
        items = list(self.offenses.values())
        total = sum(o.count for o in items)
        what = ("view(s) at an index read from a tensor, past its end" if self.indices_only
                else "GM access(es) outside their tensor")
        checked = ("every mode checks indices; runtime_debug_mode=4 checks every window"
                   if self.indices_only else "runtime_debug_mode=4")
        lines = [f"kernel '{kernel}': {total} {what}, by {len(items)} op(s) ({checked}):"]
        lines += [f"  {o.text()}" for o in items[:SHOWN]]
        if len(items) > SHOWN:
            lines.append(f"  ... and {len(items) - SHOWN} more op(s) (deps.json lists all)")
        first = items[0].op.loc if items else None
        return PyptoBoundsError("\n".join(lines), first, locate=False)
