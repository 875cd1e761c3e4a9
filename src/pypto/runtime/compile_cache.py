"""A kernel's compiled programs, by what a call must match to reuse one.

The driver looks a call up by its `CacheKey` (the static shapes and dtypes, non-tensor
arguments, options, machine and knob key of the call, then the global guards' values) and
keeps per compiled program one `CacheEntry`: the traced program, its compiled form, the
runtime's execution plan and the knob call sites its trace met (a cache hit counts them as met
again). What runs a variant beside the kernel's own calls (a tuner evaluation) adds entries and
drops them again through the public methods here: `snapshot`/`restore` around a search,
`added_since` and `drop` to keep a search's compiles from piling up.
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

    def __init__(self) -> None:
        self._entries: dict[CacheKey, CacheEntry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[CacheKey]:
        return iter(self._entries)

    def get(self, key: CacheKey) -> CacheEntry | None:
        return self._entries.get(key)

    def add(self, key: CacheKey, entry: CacheEntry) -> None:
        self._entries[key] = entry

    def drop(self, key: CacheKey) -> None:
        self._entries.pop(key, None)

    def snapshot(self) -> dict[CacheKey, CacheEntry]:
        """The entries as they are now (for `restore`)."""
        return dict(self._entries)

    def restore(self, snapshot: dict[CacheKey, CacheEntry]) -> None:
        """Back to a `snapshot`: entries added since are dropped."""
        self._entries = dict(snapshot)

    def added_since(self, snapshot: dict[CacheKey, CacheEntry]) -> list[CacheKey]:
        """The keys added since `snapshot`, oldest first."""
        return [k for k in self._entries if k not in snapshot]
