"""One code generator (symbolic.CodeGen) evaluates every window: its values equal the
interpreted `evaluate`, it skips a branch not taken, and where it cannot evaluate (an unbound
symbol, a division by zero, an element read without a reader) the error is `evaluate`'s."""
import itertools

import pytest
import torch

import pypto
from pypto.errors import PyptoRuntimeError
from pypto.runtime.window_code import op_windows, regions_of
from pypto.symbolic import (CodeGen, ElementRead, EvalEnv, Sym, SymbolicScalar, evaluate,
                            expr_function, free_symbols, raise_evaluation_error, tuple_code)

S = SymbolicScalar
n, i = S("n"), S("i")
GRID = [-7, -1, 0, 1, 2, 5, 16]


class _Tensor:
    name = "lens"


LENS = ElementRead(3, (Sym("i"),), _Tensor())


def _reader(read, index):
    return 10 * index[0] + 1


CASES = [
    (n + i) * 3 - n // 4,
    (n % 5).min(i).max(-2),
    S.ternary(n > 0, 100 // n, 7),             # the branch not taken divides by zero
    S.ternary(n == 0, 5, (i * 16) // n),
    (n != 0) & (100 // n > i),                 # the code skips the right side at n = 0
    ~n + -(i - 3),
    S(LENS) * 2 + i,
]


def test_generated_values_equal_evaluate_where_evaluate_succeeds():
    gen = CodeGen()
    fn = gen.function(tuple_code([gen.expr(e.expr) for e in CASES]))
    for nv, iv in itertools.product(GRID, GRID):
        env = EvalEnv({"n": nv, "i": iv}, _reader)
        got = fn(env.values, env.read_element)
        singles = [expr_function(e.expr)(env.values, env.read_element) for e in CASES]
        assert list(got) == singles
        for e, value in zip(CASES, got):
            try:
                assert evaluate(e.expr, env) == value
            except PyptoRuntimeError:   # evaluate is eager in `and`/`or`, the code is not
                assert e is CASES[4] and nv == 0 and value == 0


@pytest.mark.parametrize("expr, env, error, message", [
    ((n + i).expr, {"n": 1}, KeyError, r"symbol i has no value at run time"),
    ((i // (n - 3)).expr, {"n": 3, "i": 4}, ZeroDivisionError,
     r"division by zero evaluating \(i/\(n\+-3\)\)"),
    (S(LENS).expr, {"i": 0}, TypeError, r"tensor element lens\[i\] cannot be read here"),
])
def test_failures_raise_the_interpreted_error(expr, env, error, message):
    fn = expr_function(expr)
    with pytest.raises(error) as caught:
        fn(env)
    with pytest.raises(PyptoRuntimeError, match=message):
        raise_evaluation_error([expr], EvalEnv(env), caught.value)
    with pytest.raises(PyptoRuntimeError, match=message):
        evaluate(expr, EvalEnv(env))


def _tail_kernel():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        rows = x.shape[0]
        for b in pypto.loop(0, 2, 1, idx_name="b"):
            v = pypto.view(x, [16, 64], [b * 16, 0],
                           valid_shape=[(64 // (rows - 24)).min(16 - b * 4), 64])
            out[b * 16:, :] = v * 2.0
    return k


def test_tile_windows_equal_interpreted_windows():
    k = _tail_kernel()
    x, out = torch.randn(32, 64), torch.zeros(32, 64)
    k(x, out)
    ops = [op for root in k.last_compiled.roots.values() for op in root.graph.ops]
    names = {s for op in ops for r in regions_of(op) for e in (*r.offsets, *r.valid)
             for s in free_symbols(e)}
    assert "ARG_x_dim0" in names and len(names) == 2
    for rows, b in itertools.product((30, 32, 40), (0, 1)):
        env = EvalEnv({name: rows if name == "ARG_x_dim0" else b for name in names})
        for op in ops:
            expect = tuple((tuple(evaluate(o, env) for o in r.offsets),
                            tuple(max(0, min(evaluate(v, env), s))
                                  for v, s in zip(r.valid, r.shape)))
                           for r in regions_of(op))
            assert op_windows(op)(env.values) == expect
        for name, root in k.last_compiled.roots.items():
            _, _, windows = k.last_executor.plan.root(name).evaluate(env.values)
            assert windows == tuple(tuple(op_windows(op)(env.values) for op in call.ops)
                                    for call in root.calls)
    # 24 rows divide by zero: no root windows, the tile ops evaluate their own
    assert all(k.last_executor.plan.root(name).evaluate({**env.values, "ARG_x_dim0": 24})
               is None for name in k.last_compiled.roots)


def test_a_window_dividing_by_zero_raises_the_same_error_in_both_executors(executor):
    """24 rows: the valid extent divides by zero in the generated root windows; the tile op
    that needs it raises `evaluate`'s error, as the reference executor does."""
    k = _tail_kernel()
    with pytest.raises(PyptoRuntimeError, match=r"^division by zero evaluating "
                                                r"\(64/\(RUNTIME_GetInputShapeDim"):
        k(torch.randn(24, 64), torch.zeros(24, 64))
    x, out = torch.randn(40, 64), torch.zeros(40, 64)
    k(x, out)
    torch.testing.assert_close(out[:4], x[:4] * 2.0)
    torch.testing.assert_close(out[4:16], torch.zeros(12, 64))
