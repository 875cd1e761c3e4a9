"""The polynomial normal form of symbolic sums and products.

Its own module because it is the one algebraic fact simplification rests on: +, - and * over
atoms (symbols and every node that is not +, - or *) form a polynomial, and two expressions
with the same polynomial are equal. `core` builds sums and products through it (so
`(i + 1) * 16 - i * 16` folds to 16, which slicing `x[i*T:(i+1)*T]` needs), and the compiler
compares offsets with `const_diff`.
"""
from __future__ import annotations

from pypto.symbolic.expr_nodes import Bin, Const, Expr, Un, canonical_key

_Mono = tuple  # sorted tuple of atom Exprs (with repetition for powers)


def polynomial(e: Expr) -> dict[_Mono, int]:
    """`e` as {monomial: nonzero coefficient}, over atoms (symbols and the nodes that are not
    +, -, * or negation): the normal form simplification and offset comparisons work on."""
    if isinstance(e, Const):
        return {(): e.value} if e.value else {}
    if isinstance(e, Bin) and e.op in ("add", "sub", "mul"):
        pa, pb = polynomial(e.a), polynomial(e.b)
        if e.op == "mul":
            out: dict[_Mono, int] = {}
            for ma, ca in pa.items():
                for mb, cb in pb.items():
                    m = tuple(sorted(ma + mb, key=canonical_key))
                    out[m] = out.get(m, 0) + ca * cb
            return {m: c for m, c in out.items() if c}
        sign = 1 if e.op == "add" else -1
        out = dict(pa)
        for m, c in pb.items():
            out[m] = out.get(m, 0) + sign * c
        return {m: c for m, c in out.items() if c}
    if isinstance(e, Un) and e.op == "neg":
        return {m: -c for m, c in polynomial(e.a).items()}
    return {(e,): 1}


def from_polynomial(p: dict[_Mono, int]) -> Expr:
    """The expression of a polynomial, terms in canonical order: the one form every
    simplified sum and product takes."""
    terms: list[Expr] = []
    const = p.get((), 0)
    for mono in sorted((m for m in p if m), key=lambda m: [canonical_key(a) for a in m]):
        coeff = p[mono]
        term: Expr = mono[0]
        for atom in mono[1:]:
            term = Bin("mul", term, atom)
        if coeff != 1:
            term = Bin("mul", Const(coeff), term)
        terms.append(term)
    if not terms:
        return Const(const)
    out = terms[0]
    for t in terms[1:]:
        out = Bin("add", out, t)
    if const:
        out = Bin("add", out, Const(const))
    return out


def const_diff(a: Expr, b: Expr) -> int | None:
    """a - b when it is a constant, else None."""
    d = polynomial(Bin("sub", a, b))
    if not d:
        return 0
    if list(d) == [()]:
        return d[()]
    return None
