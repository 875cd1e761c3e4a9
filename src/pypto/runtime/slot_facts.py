"""Slot facts: what stitching needs to know about the storages of a compiled program — which
temps only one root touches (that root's per-instance workspace), which roots create the value
of a temp that crosses root boundaries (a fresh copy per creating instance), and which storages
are temps or `pypto.tensor` scratch.

Its own module: the facts are a static scan of the program's tile ops, made once per execution
plan (`ExecutionPlan.slot_facts`), while the stitcher and the links (`runtime.instance_links`)
only read them per run.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from pypto.ops.core import REGISTRY


@dataclass(frozen=True)
class SlotFacts:
    """What the stitcher needs to know about the storages of a compiled program."""

    # root name -> the temps only that root touches (its per-instance workspace)
    private: dict[str, frozenset[int]] = field(default_factory=dict)
    # temp storage id -> the roots whose instances create the value (a fresh copy each)
    creators: dict[int, frozenset[str]] = field(default_factory=dict)
    temps: frozenset[int] = frozenset()     # every op-result storage
    scratch: frozenset[int] = frozenset()   # every pypto.tensor storage


def slot_facts(roots: Iterable[Any]) -> SlotFacts:
    """The slot facts of the root functions of one compiled program.
    NOTE: the scan over every region of every tile op cost more than the rest of a small
    kernel's stitching: the execution plan computes it once (`ExecutionPlan.slot_facts`)."""
    roots = list(roots)
    touched: dict[int, set[str]] = defaultdict(set)
    creators: dict[int, set[str]] = defaultdict(set)
    scratch: set[int] = set()
    for root in roots:
        temps, made, local = _storages(root)
        for sid in temps:
            touched[sid].add(root.name)
        for sid in made:
            creators[sid].add(root.name)
        scratch |= local
    private: dict[str, set[int]] = defaultdict(set)
    for sid, names in touched.items():
        if len(names) == 1:
            private[next(iter(names))].add(sid)
    return SlotFacts({name: frozenset(ids) for name, ids in private.items()},
                     {sid: frozenset(names) for sid, names in creators.items()},
                     frozenset(touched), frozenset(scratch))


def _storages(root: Any) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    """(temps the tile ops of `root` read or write, temps whose value `root` creates,
    pypto.tensor scratch it touches)."""
    temps, made, local = set(), set(), set()
    for op in root.graph.ops:
        for r in op.inputs + ([op.output] if op.output is not None else []):
            kind = r.value.storage.kind.value
            if kind == "temp":
                temps.add(r.value.storage.id)
            elif kind == "local":
                local.add(r.value.storage.id)
        if op.output is not None and _creates(op):
            made.add(op.output.value.storage.id)
    return frozenset(temps), frozenset(made), frozenset(local)


def _creates(op: Any) -> bool:
    """Whether tile op `op` writes part of a fresh value its tensor op creates (not an assemble
    into, or an alias of, an existing one)."""
    value, src = op.output.value, op.src
    return (value.storage.kind.value == "temp" and not REGISTRY[src.opcode].writes
            and any(v is value for v in src.outputs)
            and all(v.storage is not value.storage for v in src.inputs))
