"""Symbolic expression nodes: what an expression is, how it prints, what each op means.

Its own module because every other part of `symbolic` (simplification, the polynomial normal
form, evaluation, code generation) and the compiler and runtime handle these nodes, while only
the user-facing layer (`core`) builds them from Python values. Nodes are small frozen
dataclasses with ordinary equality and hashing; they never simplify themselves: the smart
constructors of `core` do.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator


class Expr:
    """Base of expression nodes. Subclasses are frozen dataclasses."""

    __slots__ = ()

    def is_const(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class Const(Expr):
    value: int

    def is_const(self) -> bool:
        return True

    def __repr__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Sym(Expr):
    """A runtime value: a loop index, a dynamic dim. `label` is how PyPTO prints it."""

    name: str
    label: str = field(default="", compare=False)

    def __repr__(self) -> str:
        return self.label or self.name


# NOTE: a compound node keeps its hash and its text once computed (`_hash`, `_text`): both
# recurse through the whole tree, and compiling asks for them over and over (dict keys of
# generated code, the order of a polynomial's terms). Neither takes part in equality, and a
# pickled node is rebuilt from its fields (`__reduce__`): a hash is only valid in the process
# that computed it.

def _remember_hash(node: Expr, fields: tuple) -> int:
    h = hash(fields)
    object.__setattr__(node, "_hash", h)
    return h


@dataclass(frozen=True, slots=True)
class Bin(Expr):
    op: str
    a: Expr
    b: Expr
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        h = self._hash
        return h if h is not None else _remember_hash(self, (self.op, self.a, self.b))

    def __reduce__(self) -> tuple:
        return Bin, (self.op, self.a, self.b)

    def __repr__(self) -> str:
        text = self._text
        if text is None:
            if self.op in ("min", "max"):
                text = f"{self.op}({self.a!r}, {self.b!r})"
            else:
                text = f"({self.a!r}{_BIN_TEXT[self.op]}{self.b!r})"
            object.__setattr__(self, "_text", text)
        return text


@dataclass(frozen=True, slots=True)
class Un(Expr):
    op: str
    a: Expr
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        h = self._hash
        return h if h is not None else _remember_hash(self, (self.op, self.a))

    def __reduce__(self) -> tuple:
        return Un, (self.op, self.a)

    def __repr__(self) -> str:
        return f"{_UN_TEXT[self.op]}({self.a!r})"


@dataclass(frozen=True, slots=True)
class Select(Expr):
    """`a if cond else b`, evaluated at run time."""

    cond: Expr
    a: Expr
    b: Expr
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        h = self._hash
        return h if h is not None else _remember_hash(self, (self.cond, self.a, self.b))

    def __reduce__(self) -> tuple:
        return Select, (self.cond, self.a, self.b)

    def __repr__(self) -> str:
        return f"({self.cond!r} ? {self.a!r} : {self.b!r})"


@dataclass(frozen=True, slots=True)
class ElementRead(Expr):
    """The value of one element of an integer tensor, read at run time (`t[i, j]`)."""

    tensor_id: int
    indices: tuple[Expr, ...]
    tensor: Any = field(compare=False, hash=False, repr=False)
    # Value ids restart with every trace, so two kernels' reads `idx[0, i]` and `cnt[0, i]`
    # would compare equal and share `compiled`'s cached lambda, which holds the first one's
    # tensor (issue 13, F3). The tensor object's identity keeps them apart; the read itself
    # keeps the tensor alive, so the identity is not reused while the read exists.
    tensor_identity: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tensor_identity", id(self.tensor))

    def __repr__(self) -> str:
        name = getattr(self.tensor, "name", f"t{self.tensor_id}")
        return f"{name}[{', '.join(map(repr, self.indices))}]"


_BIN_TEXT = {"add": "+", "sub": "-", "mul": "*", "floordiv": "/", "mod": "%", "eq": "==",
             "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "&&", "or": "||"}
_UN_TEXT = {"neg": "-", "not": "!", "invert": "~"}

_PY_BIN: dict[str, Callable[[int, int], int]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "floordiv": lambda x, y: x // y,
    "mod": lambda x, y: x % y,
    "min": min,
    "max": max,
    "eq": lambda x, y: int(x == y),
    "ne": lambda x, y: int(x != y),
    "lt": lambda x, y: int(x < y),
    "le": lambda x, y: int(x <= y),
    "gt": lambda x, y: int(x > y),
    "ge": lambda x, y: int(x >= y),
    "and": lambda x, y: int(bool(x) and bool(y)),
    "or": lambda x, y: int(bool(x) or bool(y)),
}
_PY_UN: dict[str, Callable[[int], int]] = {
    "neg": lambda x: -x,
    "not": lambda x: int(not x),
    "invert": lambda x: ~x,
}


def canonical_key(e: Expr) -> str:
    """The canonical order of expressions (terms of a polynomial, arguments of min / max): by
    their text."""
    return repr(e)


# Traversal

def nodes(e: Expr) -> Iterator[Expr]:
    """Every node of `e`, depth first (the node itself first)."""
    yield e
    if isinstance(e, Bin):
        yield from nodes(e.a)
        yield from nodes(e.b)
    elif isinstance(e, Un):
        yield from nodes(e.a)
    elif isinstance(e, Select):
        for x in (e.cond, e.a, e.b):
            yield from nodes(x)
    elif isinstance(e, ElementRead):
        for i in e.indices:
            yield from nodes(i)


def free_symbols(e: Expr) -> set[str]:
    return {n.name for n in nodes(e) if isinstance(n, Sym)}


def reads_elements(e: Expr) -> bool:
    return any(isinstance(n, ElementRead) for n in nodes(e))


def element_reads(e: Expr) -> list[ElementRead]:
    """The tensor-element reads inside `e` (their values are only known at run time)."""
    return [n for n in nodes(e) if isinstance(n, ElementRead)]
