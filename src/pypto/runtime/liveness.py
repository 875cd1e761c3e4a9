"""Where temporaries die, and a pool that hands their buffers to later results.

Takes a program → which ops (or expressions) use each storage; and a block's items (ops, or
chains of them) → per item index, the storages whose last reader is that item. Keeps: only a TEMP storage created and read within one block is released
(one read by another block, written by a write op elsewhere, or read as a tensor element in an
expression lives for the whole run), and released arrays are never referenced by a live value:
the executor stores no result that aliases another storage's array.

Why: a fresh large array pays a page fault per 4 KiB page on first write; here a fresh 1 MiB
result cost 0.43 ms against 0.03 ms for a reused one, and a loop body (one attention head per
iteration) makes the same temporaries again and again.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from pypto.ir.operation import Operation
from pypto.ir.program import If, Loop, Program, Seq
from pypto.ir.tensor import StorageKind
from pypto.ops.core import REGISTRY
from pypto.symbolic import Const, Expr, Sym, element_reads


# The "user" standing for expressions (offsets, valid shapes, loop bounds...) that read tensor
# elements: it is in no block, so such a storage is neither chunk-internal nor ever released.
EXPRESSION_READER = -1


def storage_users(program: Program) -> dict[int, set[int]]:
    """Storage id -> ids of the ops that read it or write into it (not the op creating it),
    plus EXPRESSION_READER where an expression reads its elements."""
    users: dict[int, set[int]] = {}
    exprs: list[Expr] = []
    for block in program.blocks():
        for op in block.ops:
            for v in op.inputs:
                users.setdefault(v.storage.id, set()).add(op.id)
            if REGISTRY[op.opcode].writes:
                for v in op.outputs:
                    users.setdefault(v.storage.id, set()).add(op.id)
            for v in op.inputs + op.outputs:
                exprs += v.shape + v.valid_shape
            exprs += _exprs(op.attrs.values())
    for loop in program.loops():
        for variant in loop.variants:
            exprs += [variant.start, variant.stop, variant.step]
            exprs += _conditions(variant.body)
    for x in compound(exprs):
        for e in element_reads(x):
            users.setdefault(e.tensor.storage.id, set()).add(EXPRESSION_READER)
    return users


def compound(exprs: Iterable[Expr]) -> list[Expr]:
    """The distinct expressions that are more than a constant or a symbol (only those can
    read tensor elements; most shape dims are constants)."""
    seen: dict[int, Expr] = {}
    for e in exprs:
        if not isinstance(e, (Const, Sym)):
            seen.setdefault(id(e), e)
    return list(seen.values())


def _exprs(values: Iterable) -> list[Expr]:
    out: list[Expr] = []
    for a in values:
        if isinstance(a, Expr):
            out.append(a)
        elif isinstance(a, (tuple, list)):
            out += _exprs(a)
    return out


def _conditions(node: If | Seq | None) -> list[Expr]:
    if isinstance(node, If):
        return [node.cond] + _conditions(node.then) + _conditions(node.else_)
    return []


def dying_after(item_ops: list[list[Operation]],
                users: dict[int, set[int]]) -> dict[int, list[int]]:
    """Item index -> storages to release once that item ran. `item_ops[i]` are the ops item i
    runs; `users` is `storage_users` of the program."""
    position = {op.id: i for i, ops in enumerate(item_ops) for op in ops}
    dying: dict[int, list[int]] = {}
    for i, ops in enumerate(item_ops):
        for op in ops:
            if REGISTRY[op.opcode].writes:
                continue
            for v in op.outputs:
                s = v.storage
                if s.kind is not StorageKind.TEMP:
                    continue
                readers = users.get(s.id, set())
                if all(r in position for r in readers):
                    last = max((position[r] for r in readers), default=i)
                    dying.setdefault(max(last, i), []).append(s.id)
    return dying


class BufferPool:
    """Released arrays by (shape, dtype), handed out again instead of fresh memory."""

    def __init__(self) -> None:
        self._free: dict[tuple, list[np.ndarray]] = {}
        self.reused = 0   # buffers handed out again

    def give(self, arr: np.ndarray) -> None:
        if arr.flags.owndata and arr.flags.c_contiguous and arr.flags.writeable:
            self._free.setdefault((arr.shape, arr.dtype), []).append(arr)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        free = self._free.get((tuple(shape), np.dtype(dtype)))
        if not free:
            return np.empty(shape, dtype)
        self.reused += 1
        return free.pop()

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        free = self._free.get((tuple(shape), np.dtype(dtype)))
        if not free:
            return np.zeros(shape, dtype)
        self.reused += 1
        arr = free.pop()
        arr.fill(0)
        return arr


class SpareBuffers:
    """Whole-value result buffers kept from one run of a compiled program to the next, by
    (shape, dtype): a warm call computes its large results in them instead of page-faulting
    fresh memory (a third of a 1024x4096 softmax's run). The execution plan holds one; the
    tile executor takes, gives and trims through these methods only."""

    def __init__(self) -> None:
        self._free: dict[tuple, list[np.ndarray]] = {}

    def take(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
        free = self._free.get((shape, dtype))
        return free.pop() if free else None

    def give(self, arr: np.ndarray) -> None:
        self._free.setdefault((arr.shape, arr.dtype), []).append(arr)

    @property
    def nbytes(self) -> int:
        """The bytes kept."""
        return sum(a.nbytes for arrays in self._free.values() for a in arrays)

    def trim(self, budget: int) -> None:
        """Keep at most `budget` bytes, the buffers given first first."""
        for arrays in self._free.values():
            kept = []
            for a in arrays:
                if a.nbytes <= budget:
                    kept.append(a)
                    budget -= a.nbytes
            arrays[:] = kept
