"""Shrinks a failing case while it keeps failing the same way (outcome kind and error type):
first to one kernel call, then delta debugging (ddmin) over the statements of each block,
outermost first, then smaller dynamic sizes, then smaller tile shapes.

Dropping a statement that defined a value replaces that value by the statement's first input
(`Line.primary`) in everything after it, so a chain `v2 = f(v1); v3 = g(v2)` can lose `f`
and become `v3 = g(v1)`. A candidate that no longer reproduces (a dangling name, a shape that
no longer fits) is simply rejected.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

from pypto.testing.fuzz.case import Block, Case, Line, rename

Predicate = Callable[[Case], bool]


class _Budget:
    def __init__(self, seconds: float, tries: int):
        self.deadline = time.monotonic() + seconds
        self.tries = tries

    def spend(self) -> bool:
        self.tries -= 1
        return self.tries >= 0 and time.monotonic() < self.deadline


def _drop(stmts: list, keep: set[int]) -> list:
    """`stmts` without the statements whose index is not in `keep`, renaming dropped
    definitions to their primary input."""
    out: list = []
    rest = list(stmts)
    for i, s in enumerate(stmts):
        s = rest[i]
        if i in keep:
            out.append(s)
        elif isinstance(s, Line) and s.defines and s.primary:
            rest[i + 1:] = rename(rest[i + 1:], s.defines, s.primary)
    return out


def ddmin(n: int, test: Callable[[set[int]], bool], budget: _Budget) -> set[int]:
    """The delta-debugging minimum of indices 0..n-1: a subset for which `test` still holds
    and from which no single chunk (finally no single index) can be removed."""
    items = list(range(n))
    if budget.spend() and test(set()):
        return set()
    parts = 2
    while len(items) >= 2 and budget.tries > 0:
        size = math.ceil(len(items) / parts)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        for chunk in chunks:
            rest = [i for i in items if i not in chunk]
            if budget.spend() and test(set(rest)):
                items, parts = rest, max(parts - 1, 2)
                break
        else:
            if parts >= len(items):
                break
            parts = min(len(items), parts * 2)
    if len(items) == 1 and budget.spend() and test(set()):
        items = []
    return set(items)


def _shrink_block(stmts: list, rebuild: Callable[[list], Case], holds: Predicate,
                  budget: _Budget) -> list:
    """ddmin over `stmts` (rebuild(new_stmts) gives the whole case), then recurse into the
    blocks that survive."""
    keep = ddmin(len(stmts), lambda k: holds(rebuild(_drop(stmts, k))), budget)
    stmts = _drop(stmts, keep)
    for i, s in enumerate(stmts):
        if not isinstance(s, Block):
            continue

        def with_body(body, i=i, s=s):
            return rebuild(stmts[:i] + [dataclasses.replace(s, body=body)] + stmts[i + 1:])
        s = dataclasses.replace(s, body=_shrink_block(s.body, with_body, holds, budget))
        stmts = stmts[:i] + [s] + stmts[i + 1:]
        if s.orelse:
            def with_else(orelse, i=i, s=s):
                return rebuild(stmts[:i] + [dataclasses.replace(s, orelse=orelse)]
                               + stmts[i + 1:])
            s = dataclasses.replace(s, orelse=_shrink_block(s.orelse, with_else, holds, budget))
            stmts = stmts[:i] + [s] + stmts[i + 1:]
    return stmts


def _tile_lines(stmts: list):
    for s in stmts:
        if isinstance(s, Line) and s.tile is not None:
            yield s
        elif isinstance(s, Block):
            yield from _tile_lines(s.body)
            yield from _tile_lines(s.orelse or [])


def _shrink_tiles(case: Case, holds: Predicate, budget: _Budget) -> Case:
    """Shrink each tile dim while the failure holds: to 1 (all but the last dim), else by
    halves (the last dim only to multiples of 16 elements: 32-byte aligned for every dtype)."""
    for line in list(_tile_lines(case.body)):
        for d in range(len(line.tile)):
            last = d == len(line.tile) - 1
            while budget.spend():
                old = line.tile[d]
                cands = [c for c in ([] if last else [1]) + [old // 2]
                         if 1 <= c < old and (not last or c % 16 == 0)]
                for cand in cands:
                    line.tile[d] = cand  # tile lists are private to this (copied) case
                    if holds(case):
                        break
                    line.tile[d] = old
                if line.tile[d] == old:
                    break
    return case


def _shrink_sizes(case: Case, holds: Predicate, budget: _Budget) -> Case:
    """Halve the dynamic sizes of the (single) call while the failure holds."""
    if len(case.calls) != 1:
        return case
    dyn = [(p.name, i) for p in case.params for i, d in enumerate(p.shape) if d in ("DYN", "N")]
    sizes = sorted({case.calls[0][n][i] for n, i in dyn}, reverse=True)
    for size in sizes:
        while size > 1 and budget.spend():
            new = size // 2
            call = {k: list(v) for k, v in case.calls[0].items()}
            for n, i in dyn:
                if call[n][i] == size:
                    call[n][i] = new
            cand = case.replace(calls=[call])
            if not holds(cand):
                break
            case, size = cand, new
    return case


def _copy(stmts: list) -> list:
    return [dataclasses.replace(s, tile=list(s.tile)) if isinstance(s, Line) and s.tile
            else dataclasses.replace(s, body=_copy(s.body),
                                     orelse=_copy(s.orelse) if s.orelse else s.orelse)
            if isinstance(s, Block) else s for s in stmts]


def minimize(case: Case, holds: Predicate, seconds: float = 120.0, tries: int = 400) -> Case:
    """The smallest variant of `case` found within the budget for which `holds` is true
    (`holds(case)` itself is assumed)."""
    budget = _Budget(seconds, tries)
    if len(case.calls) > 1:
        for call in case.calls:
            cand = case.replace(calls=[call])
            if budget.spend() and holds(cand):
                case = cand
                break
    body = _shrink_block(case.body, lambda stmts: case.replace(body=stmts), holds, budget)
    case = case.replace(body=_copy(body))
    case = _shrink_sizes(case, holds, budget)
    return _shrink_tiles(case, holds, budget)
