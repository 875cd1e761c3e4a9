"""The traced program: a control tree of `Loop`s, `If`s and `Block`s.

A `Block` is the body of one root function: a straight-line tensor graph. A `Loop` has one
`LoopVariant` per unroll factor; each variant's body is a decision tree of `If` nodes (one per
runtime branch, in the order the body met them) whose leaves are `Seq`s of Blocks and nested
Loops, one leaf per control path. The kernel itself is the implicit `default_loop_1`, a loop of
one iteration, so the top level has paths too.

The tracer builds these objects incrementally; nothing changes them after tracing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from pypto.errors import SourceLoc
from pypto.ir.operation import Operation
from pypto.ir.tensor import Storage, TensorValue
from pypto.symbolic import Expr, Sym


@dataclass(eq=False)
class Block:
    """One root function body: ops in program order."""

    name: str
    ops: list[Operation] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Block({self.name}, {len(self.ops)} ops)"


@dataclass(eq=False)
class Seq:
    items: list[Union[Block, "Loop"]] = field(default_factory=list)


@dataclass(eq=False)
class If:
    """A runtime branch; `cond` is evaluated when the enclosing loop iteration starts."""

    cond: Expr
    then: Union["If", Seq]
    else_: Union["If", Seq]
    loc: SourceLoc | None = None


Node = Union[If, Seq]


@dataclass(eq=False)
class Path:
    """One control path of a loop variant: the branch outcomes that select it and its body."""

    index: int
    conds: tuple[tuple[Expr, bool], ...]
    body: Seq


@dataclass(eq=False)
class LoopVariant:
    """The iterations of a loop run with one unroll factor: `range(start, stop, step)`, each
    iteration covering `factor` consecutive indices of the user's loop."""

    factor: int
    index: Sym
    start: Expr
    stop: Expr
    step: Expr
    paths: list[Path] = field(default_factory=list)
    body: Node | None = None


@dataclass(eq=False)
class Loop:
    """A device loop: one `LoopVariant` per unroll factor (see the module docstring)."""

    name: str
    idx_name: str
    start: Expr
    stop: Expr
    step: Expr
    unroll_list: tuple[int, ...] = (1,)
    submit_before_loop: bool = False
    parallel: bool = False
    variants: list[LoopVariant] = field(default_factory=list)
    loc: SourceLoc | None = None

    def ops_per_iteration(self) -> float:
        """The ops one iteration of the user's loop traces (nested loops' bodies included):
        every variant's ops over the iterations its copies cover."""
        ops = sum(len(b.ops) for b in _blocks_of_loop(self))
        return ops / max(1, sum(v.factor for v in self.variants))


@dataclass(frozen=True)
class Param:
    """A kernel tensor parameter."""

    index: int
    name: str
    value: TensorValue
    dynamic_dims: tuple[int, ...]


@dataclass(eq=False)
class Program:
    """A traced kernel: its parameters, its local scratch storages and its control tree."""

    name: str
    params: list[Param]
    root: Loop
    locals: list[Storage] = field(default_factory=list)
    cache_policies: dict[int, dict[int, bool]] = field(default_factory=dict)

    def blocks(self) -> Iterator[Block]:
        """Every root-function body, depth first in program order."""
        yield from _blocks_of_loop(self.root)

    def loops(self) -> Iterator[Loop]:
        yield from _loops_of(self.root)


def _blocks_of_node(node: Node | None) -> Iterator[Block]:
    if node is None:
        return
    if isinstance(node, If):
        yield from _blocks_of_node(node.then)
        yield from _blocks_of_node(node.else_)
        return
    for item in node.items:
        if isinstance(item, Block):
            yield item
        else:
            yield from _blocks_of_loop(item)


def _blocks_of_loop(loop: Loop) -> Iterator[Block]:
    for v in loop.variants:
        yield from _blocks_of_node(v.body)


def _loops_of(loop: Loop) -> Iterator[Loop]:
    yield loop
    for v in loop.variants:
        for p in v.paths:
            for item in p.body.items:
                if isinstance(item, Loop):
                    yield from _loops_of(item)
