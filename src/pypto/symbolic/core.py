"""Symbolic integer expressions as the user builds them: simplifying constructors and the
user's wrapper.

Two layers:
- `Expr` nodes (`expr_nodes`) are small frozen dataclasses with ordinary equality and hashing.
  The compiler and runtime only ever handle `Expr`.
- `SymbolicScalar` is the user-facing wrapper (PyPTO's class of that name). Its operators build
  expressions and its comparisons return `SymbolicScalar`s, so it must never be used as a dict
  key; that is why the two layers are separate.

Constructors and wrapper share this module because each needs the other: the constructors
(`binary`, `unary`, `select`) accept a `SymbolicScalar` wherever they accept an int, and the
wrapper's operators are those constructors. Every expression they return is simplified: sums
and products in the polynomial normal form (`polynomial`), constants folded, min / max
clamps collapsed.
"""
from __future__ import annotations

import contextvars
from typing import Any, Callable

from pypto.errors import ConcreteValueError, PyptoRuntimeError, PyptoTypeError
from pypto.symbolic.expr_nodes import (_BIN_TEXT, _PY_BIN, _PY_UN, Bin, Const, Expr, Select,
                                       Sym, Un, canonical_key)
from pypto.symbolic.polynomial import const_diff, from_polynomial, polynomial


# --------------------------------------------------------------------------------------------
# Smart constructors (always return simplified expressions)

def const(v: int) -> Const:
    return Const(int(v))


def as_expr(v: Any) -> Expr:
    """Turn an int, bool, Expr or SymbolicScalar into an Expr."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, SymbolicScalar):
        return v.expr
    if isinstance(v, bool):
        return Const(int(v))
    if isinstance(v, int) or (hasattr(v, "__index__") and not isinstance(v, float)):
        return Const(int(v.__index__() if not isinstance(v, int) else v))
    raise PyptoTypeError(f"expected an int or SymbolicScalar, got {type(v).__name__} {v!r}")


def binary(op: str, a: Any, b: Any) -> Expr:
    a, b = as_expr(a), as_expr(b)
    if isinstance(a, Const) and isinstance(b, Const):
        if op in ("floordiv", "mod") and b.value == 0:
            raise PyptoRuntimeError(f"symbolic {op} by zero: {a!r} {_BIN_TEXT[op]} 0")
        return Const(_PY_BIN[op](a.value, b.value))
    if op in ("add", "sub", "mul"):
        return from_polynomial(polynomial(Bin(op, a, b)))
    if op in ("floordiv", "mod") and isinstance(b, Const):
        if b.value == 0:
            raise PyptoRuntimeError(f"symbolic {op} by zero: {a!r}")
        if b.value == 1:
            return a if op == "floordiv" else Const(0)
        p = polynomial(a)
        rest = p.get((), 0)
        if all(c % b.value == 0 for m, c in p.items() if m):
            # (b*X + r) // b == X + r // b and (b*X + r) % b == r % b for integer X.
            if op == "mod":
                return Const(rest % b.value)
            q = {m: c // b.value for m, c in p.items() if m}
            q[()] = rest // b.value
            return from_polynomial({m: c for m, c in q.items() if c})
    if op in ("min", "max"):
        if a == b:
            return a
        d = const_diff(a, b)
        if d is not None:
            pick_a = (d <= 0) if op == "min" else (d >= 0)
            return a if pick_a else b
        folded = _fold_nested(op, a, b)
        if folded is not None:
            return folded
        # Canonical argument order, so min(a, b) == min(b, a).
        if canonical_key(b) < canonical_key(a):
            a, b = b, a
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        d = const_diff(a, b)
        if d is not None:
            return Const(_PY_BIN[op](d, 0))
    if op in ("and", "or"):
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Const):
                # `and`/`or` give 0 or 1, so the other side survives only as a truth value.
                if op == "and":
                    return _truth(y) if x.value else Const(0)
                return Const(1) if x.value else _truth(y)
    return Bin(op, a, b)


_BOOL_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "and", "or")


def _truth(e: Expr) -> Expr:
    """`e` as 0/1: itself when it already is a condition, else `e != 0`."""
    if (isinstance(e, Bin) and e.op in _BOOL_OPS) or (isinstance(e, Un) and e.op == "not"):
        return e
    return binary("ne", e, 0)


def _fold_nested(op: str, a: Expr, b: Expr) -> Expr | None:
    """min(min(x, y), y) -> min(x, y); min(min(x, 8), 16) -> min(x, 8) (and the same for max):
    the clamps that repeated views build around a valid extent."""
    for outer, other in ((a, b), (b, a)):
        if not (isinstance(outer, Bin) and outer.op == op):
            continue
        if other in (outer.a, outer.b):
            return outer
        for inner, rest in ((outer.a, outer.b), (outer.b, outer.a)):
            d = const_diff(inner, other)
            if d is not None:
                keep_inner = (d <= 0) if op == "min" else (d >= 0)
                return outer if keep_inner else binary(op, rest, other)
    return None


def unary(op: str, a: Any) -> Expr:
    a = as_expr(a)
    if isinstance(a, Const):
        return Const(_PY_UN[op](a.value))
    if op == "neg":
        return from_polynomial(polynomial(Un("neg", a)))
    return Un(op, a)


def select(cond: Any, a: Any, b: Any) -> Expr:
    c, a, b = as_expr(cond), as_expr(a), as_expr(b)
    if isinstance(c, Const):
        return a if c.value else b
    if a == b:
        return a
    return Select(c, a, b)


# --------------------------------------------------------------------------------------------
# The user-facing scalar

# Set by the tracer while a kernel is traced: decides which way a runtime branch goes on the
# control path being traced (and records the decision). None outside tracing.
BRANCH_DECIDER: contextvars.ContextVar[Callable[[Expr], bool] | None] = contextvars.ContextVar(
    "pypto_branch_decider", default=None)


def _wrap(e: Expr) -> "SymbolicScalar":
    s = SymbolicScalar.__new__(SymbolicScalar)
    s.expr = e
    return s


class SymbolicScalar:
    """An integer known at run time: a dynamic dim, a loop index, a tensor element, or an
    expression over those. Arithmetic and comparisons build new SymbolicScalars; `/` is integer
    division as in PyPTO. Using one as a Python `bool` inside a kernel makes the tracer record a
    runtime branch (every outcome is traced); `int()` works only when the value is known.

    >>> n = SymbolicScalar("n")
    >>> ((n + 1) * 16 - n * 16).concrete()
    16
    """

    __slots__ = ("expr",)
    __hash__ = None  # comparisons return SymbolicScalars, so hashing would be a trap

    def __init__(self, value: Any = 0, concrete_value: int | None = None):
        if isinstance(value, SymbolicScalar):
            self.expr = value.expr
        elif isinstance(value, Expr):
            self.expr = value
        elif isinstance(value, str):
            self.expr = Const(int(concrete_value)) if concrete_value is not None else Sym(value)
        elif isinstance(value, (bool, int)) or (hasattr(value, "__index__")
                                                and not isinstance(value, float)):
            self.expr = Const(int(value.__index__()))
        else:
            raise PyptoTypeError(f"SymbolicScalar takes an int, a name or a SymbolicScalar, "
                                 f"got {type(value).__name__}")

    # --- inspection ---
    def is_concrete(self) -> bool:
        return isinstance(self.expr, Const)

    def is_immediate(self) -> bool:
        return isinstance(self.expr, Const)

    def is_symbol(self) -> bool:
        return isinstance(self.expr, Sym)

    def is_expression(self) -> bool:
        return not isinstance(self.expr, (Const, Sym))

    def concrete(self) -> int:
        if isinstance(self.expr, Const):
            return self.expr.value
        raise ConcreteValueError(f"Not concrete value: {self.expr!r} is only known at run time")

    def simplify(self) -> "SymbolicScalar":
        return self

    def as_variable(self) -> "SymbolicScalar":
        return self

    def __int__(self) -> int:
        return self.concrete()

    def __index__(self) -> int:
        if isinstance(self.expr, Const):
            return self.expr.value
        raise ConcreteValueError(
            f"symbolic value {self.expr!r} used where Python needs an int (range(), a list "
            f"index, ...); it is only known at run time: use pypto.loop for runtime loops")

    def __bool__(self) -> bool:
        if isinstance(self.expr, Const):
            return bool(self.expr.value)
        decide = BRANCH_DECIDER.get()
        if decide is None:
            raise ConcreteValueError(f"Not concrete value: the condition {self.expr!r} is "
                                     f"only known at run time")
        return decide(self.expr)

    def __float__(self) -> float:
        return float(self.concrete())

    def __repr__(self) -> str:
        return repr(self.expr)

    __str__ = __repr__

    # --- arithmetic ---
    def _bin(self, op: str, other: Any, reflected: bool = False) -> "SymbolicScalar":
        if isinstance(other, float):
            raise PyptoTypeError(f"SymbolicScalar arithmetic needs ints, got float {other}")
        try:
            o = as_expr(other)
        except PyptoTypeError:
            return NotImplemented
        return _wrap(binary(op, o, self.expr) if reflected else binary(op, self.expr, o))

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __floordiv__(self, o): return self._bin("floordiv", o)
    def __rfloordiv__(self, o): return self._bin("floordiv", o, True)
    __truediv__ = __floordiv__
    __rtruediv__ = __rfloordiv__
    def __mod__(self, o): return self._bin("mod", o)
    def __rmod__(self, o): return self._bin("mod", o, True)
    def __and__(self, o): return self._bin("and", o)
    def __rand__(self, o): return self._bin("and", o, True)
    def __or__(self, o): return self._bin("or", o)
    def __ror__(self, o): return self._bin("or", o, True)
    def __eq__(self, o): return self._bin("eq", o)
    def __ne__(self, o): return self._bin("ne", o)
    def __lt__(self, o): return self._bin("lt", o)
    def __le__(self, o): return self._bin("le", o)
    def __gt__(self, o): return self._bin("gt", o)
    def __ge__(self, o): return self._bin("ge", o)

    def __neg__(self): return _wrap(unary("neg", self.expr))
    def __pos__(self): return self
    def __invert__(self): return _wrap(unary("invert", self.expr))

    def min(self, other: Any) -> "SymbolicScalar":
        return _wrap(binary("min", self.expr, other))

    def max(self, other: Any) -> "SymbolicScalar":
        return _wrap(binary("max", self.expr, other))

    @staticmethod
    def tenary(cond: Any, a: Any, b: Any) -> "SymbolicScalar":
        return _wrap(select(cond, a, b))

    ternary = tenary


SymInt = int | SymbolicScalar


def wrap(e: Expr) -> SymbolicScalar | int:
    """An Expr as the user sees it: a plain int when constant, else a SymbolicScalar."""
    return e.value if isinstance(e, Const) else _wrap(e)


def sym_min(a: Any, b: Any) -> SymbolicScalar | int:
    """`pypto.min(a, b)`: the smaller value, folded when both are known."""
    return wrap(binary("min", a, b))


def sym_max(a: Any, b: Any) -> SymbolicScalar | int:
    return wrap(binary("max", a, b))


def ceildiv(a: Any, b: Any) -> SymbolicScalar | int:
    """`pypto.ceildiv(a, b)`: ceil(a / b) for ints and SymbolicScalars."""
    return wrap(binary("floordiv", binary("add", a, binary("sub", b, 1)), b))


def symbolic_scalar(value: Any, concrete_value: int | None = None) -> SymbolicScalar:
    """`pypto.symbolic_scalar(v)`: lift a Python value into a SymbolicScalar.

    A Python bool or int lifted this way stays concrete; `if pypto.symbolic_scalar(flag):` is
    still decided at trace time here because the value is known (the branch not taken has no
    observable effect)."""
    if isinstance(value, bool):
        value = int(value)
    return SymbolicScalar(value, concrete_value)
