"""`pypto.symbolic`: building, simplifying and evaluating SymbolicScalar expressions.

Simplification must never change a value: every folded form is also checked by evaluating the
unsimplified meaning with Python ints over a grid of symbol values."""
import itertools

import pypto
import pytest

from pypto.symbolic import (Bin, Const, ElementRead, EvalEnv, Sym, SymbolicScalar, evaluate,
                            free_symbols, reads_elements)

S = SymbolicScalar
GRID = [-17, -5, -1, 0, 1, 2, 3, 7, 16, 37]


def value(s, **env) -> int:
    e = s.expr if isinstance(s, SymbolicScalar) else Const(s)
    return evaluate(e, EvalEnv(env))


def agrees(sym, ref, names=("n", "i")) -> None:
    """`sym` evaluates like the Python function `ref` for every grid point."""
    for vals in itertools.product(GRID, repeat=len(names)):
        env = dict(zip(names, vals))
        assert value(sym, **env) == ref(*vals), (sym, env)


n, i = S("n"), S("i")


def test_polynomial_normal_form_folds_slice_lengths():
    """Sums and products are kept in a normal form, so (i+1)*16 - i*16 is the int 16 and
    x[i*T:(i+1)*T] has a static length."""
    d = (i + 1) * 16 - i * 16
    assert d.is_concrete() and d.concrete() == 16
    assert ((n - i) + (i - n)).concrete() == 0
    assert ((i + n) * (i - n) + n * n).expr == (i * i).expr
    assert (2 * n * 3).expr == (n * 6).expr
    assert (3 + n - 3).expr == n.expr
    agrees((i + 2) * (n - 3) - i * n, lambda n_, i_: (i_ + 2) * (n_ - 3) - i_ * n_)


def test_evaluation_of_every_operator():
    """Arithmetic follows Python ints (floor division and modulo); `/` is integer division;
    comparisons give 0/1."""
    agrees(n + i, lambda a, b: a + b)
    agrees(n - 2 * i, lambda a, b: a - 2 * b)
    agrees(n * i, lambda a, b: a * b)
    agrees(n // 4, lambda a, b: a // 4)
    agrees(n / 4, lambda a, b: a // 4)
    agrees(n % 5, lambda a, b: a % 5)
    agrees(-n, lambda a, b: -a)
    agrees(~n, lambda a, b: ~a)
    agrees(10 - n, lambda a, b: 10 - a)
    agrees(100 // (n * n + 1), lambda a, b: 100 // (a * a + 1))
    for op, ref in [("__lt__", int.__lt__), ("__le__", int.__le__), ("__gt__", int.__gt__),
                    ("__ge__", int.__ge__), ("__eq__", int.__eq__), ("__ne__", int.__ne__)]:
        agrees(getattr(n, op)(i), lambda a, b, r=ref: int(r(a, b)))


def test_floordiv_and_mod_by_constants_fold():
    """(c*X + r) // c folds to X + r//c and (c*X + r) % c to r % c; other quotients stay."""
    assert ((n * 4 + 8) // 4).expr == (n + 2).expr
    assert ((n * 4 + 6) // 4).expr == (n + 1).expr
    assert ((n * 4 + 6) % 4).concrete() == 2
    assert ((n * 4 + 6) % 2).concrete() == 0
    assert (n // 1).expr == n.expr and (n % 1).concrete() == 0
    assert S(pypto.ceildiv(i * 16, 16)).expr == i.expr
    assert isinstance((n // 2).expr, Bin)
    for c in (4, -4, 3):
        agrees((n * 4 * c + 6) // c, lambda a, b, c=c: (a * 4 * c + 6) // c)
        agrees((n * 4 * c - 7) % c, lambda a, b, c=c: (a * 4 * c - 7) % c)
    with pytest.raises(pypto.PyptoError, match="by zero"):
        S(4) // 0


def test_min_max_fold():
    """min/max fold when the difference is constant, are argument-order independent, and
    absorb repeated clamps; module-level pypto.min/max and ceildiv accept ints."""
    assert n.min(n + 1).expr == n.expr and n.max(n - 3).expr == n.expr
    assert (n + 2).min(n + 5).expr == (n + 2).expr
    assert n.min(i).expr == i.min(n).expr
    assert S(3).min(8).concrete() == 3 and S(3).max(8).concrete() == 8
    clamp = (n - i).min(16)
    assert clamp.min(16).expr == clamp.expr
    assert clamp.min(32).expr == clamp.expr
    assert clamp.min(8).expr == (n - i).min(8).expr
    assert (n - i).max(0).max(0).expr == (n - i).max(0).expr
    assert pypto.min(3, 5) == 3 and pypto.max(3, 5) == 5
    assert repr(pypto.min(3, n)) == "min(3, n)"
    assert pypto.ceildiv(37, 16) == 3
    agrees(clamp.min(8), lambda a, b: min(a - b, 16, 8))
    agrees(clamp.min(32), lambda a, b: min(a - b, 16, 32))
    agrees(n.max(i).max(5).max(2), lambda a, b: max(a, b, 5, 2))
    agrees(pypto.ceildiv(n, 16), lambda a, b: -(-a // 16))


def test_comparisons_fold_when_the_difference_is_constant():
    """i < i + 1 is known at trace time; n < i is not."""
    assert (i < i + 1).concrete() == 1 and (i >= i).concrete() == 1
    assert (i == i).concrete() == 1 and (i != i + 1).concrete() == 1
    assert (i > i).concrete() == 0
    assert not (n < i).is_concrete()


def test_logical_and_or_give_truth_values():
    """& and | are logical (0/1), also after folding a constant side: n & 1 is n != 0."""
    agrees(n & 1, lambda a, b: int(bool(a)))
    agrees(n | 0, lambda a, b: int(bool(a)))
    agrees(S(1) & n, lambda a, b: int(bool(a)))
    agrees((n > 2) & 1, lambda a, b: int(a > 2))
    agrees((n > 2) & (i < 3), lambda a, b: int(a > 2 and b < 3))
    agrees((n > 2) | (i < 3), lambda a, b: int(a > 2 or b < 3))
    assert (n & 0).concrete() == 0 and (n | 5).concrete() == 1
    assert ((n > 2) & 1).expr == (n > 2).expr


def test_ternary_selects_at_run_time():
    """tenary(cond, a, b) folds a constant condition and otherwise picks at evaluation."""
    assert S.tenary(S(1), n, 2).expr == n.expr
    agrees(S.tenary(n > 3, i, 7), lambda a, b: b if a > 3 else 7)


def test_constructors_and_inspection():
    """SymbolicScalar(int | name | (name, value) | SymbolicScalar | numpy int) and the is_*
    predicates."""
    import numpy as np
    assert S(5).is_concrete() and S(5).is_immediate() and S(5).concrete() == 5
    assert S("k").is_symbol() and not S("k").is_concrete()
    assert S("k", 7).concrete() == 7
    assert S(S(4)).concrete() == 4
    assert S(np.int64(3)).concrete() == 3
    assert (n + np.int32(2)).expr == (n + 2).expr
    assert (n + 1).is_expression() and not n.is_expression()
    assert int(S(9)) == 9 and bool(S(0)) is False
    assert repr(n * 2 + 1) == "((2*n)+1)"
    with pytest.raises(pypto.PyptoError):
        S(1.5)
    with pytest.raises(pypto.PyptoError):
        n + 1.5


def test_bool_and_int_outside_tracing_raise_not_concrete():
    """Outside a kernel trace a symbolic value has no truth value or int value."""
    with pytest.raises(ValueError, match="Not concrete value"):
        bool(n > 3)
    with pytest.raises(ValueError, match="Not concrete value"):
        int(n)
    with pytest.raises(ValueError, match="Not concrete value"):
        n.concrete()
    with pytest.raises(pypto.PyptoError, match="pypto.loop"):
        range(n)
    with pytest.raises(TypeError):
        hash(n)


def test_evaluation_errors_and_element_reads():
    """An unbound symbol or a zero divisor fails at evaluation; element reads go through the
    environment's reader and are tracked as such."""
    with pytest.raises(pypto.PyptoError, match="no value"):
        evaluate((n + 1).expr, EvalEnv({}))
    with pytest.raises(pypto.PyptoError, match="division by zero"):
        evaluate((i // n).expr, EvalEnv({"n": 0, "i": 4}))
    read = ElementRead(1, (Sym("b"),), None)
    e = Bin("add", read, Const(1))
    env = EvalEnv({"b": 2}, lambda r, idx: 10 * idx[0])
    assert evaluate(e, env) == 21
    assert reads_elements(e) and not reads_elements((n + 1).expr)
    assert free_symbols(e) == {"b"} and free_symbols((n * i).expr) == {"n", "i"}
    with pytest.raises(pypto.PyptoError, match="cannot be read"):
        evaluate(e, EvalEnv({"b": 2}))
