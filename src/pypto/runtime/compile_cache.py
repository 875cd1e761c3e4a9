"""A kernel's compiled programs, by what a call must match to reuse one.

The driver looks a call up by its `CacheKey` (the static shapes and dtypes, non-tensor
arguments, options, machine and knob key of the call, then the global guards' values) and
keeps per compiled program one `CacheEntry`: the traced program, its compiled form, the
runtime's execution plan and the knob call sites its trace met (a cache hit counts them as met
again). The kernel's own calls fill the kernel's cache; what runs variants beside them (a
tuner's evaluations, `JitKernel.evaluate`) reads it and keeps its own compiles in a cache of
its own, which a `limit` keeps from piling up (the oldest entry goes first).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

from pypto.ir.program import Program
from pypto.passes import CompiledProgram
from pypto.runtime.plan import ExecutionPlan


class CacheKey(NamedTuple):
    call: tuple     # what the call fixes: static dims, dtypes, other arguments, options, knobs
    guards: Any     # the values of the globals the trace read (frontend.guards)


@dataclass(frozen=True, eq=False)
class CacheEntry:
    """One compiled program (compared by identity: a snapshot equals the cache when it holds
    the same entries)."""

    program: Program
    compiled: CompiledProgram
    plan: ExecutionPlan
    sites: dict     # the knob call sites the trace met (frontend.knobs), counted again on a hit


class CompileCache:
    """The entries of one kernel, in the order they were compiled."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit   # the most entries kept (None: all)
        self._entries: dict[CacheKey, CacheEntry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[CacheKey]:
        return iter(self._entries)

    def get(self, key: CacheKey) -> CacheEntry | None:
        return self._entries.get(key)

    def add(self, key: CacheKey, entry: CacheEntry) -> None:
        self._entries[key] = entry
        if self.limit is not None:
            for old in list(self._entries)[:max(0, len(self._entries) - self.limit)]:
                del self._entries[old]

    def snapshot(self) -> dict[CacheKey, CacheEntry]:
        """The entries as they are now (a copy)."""
        return dict(self._entries)
