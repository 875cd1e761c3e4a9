"""The executors' cross-check accepts what floating point allows on any CPU and nothing more:
each element's bound follows its precision chain (runtime/error_bounds.py)."""
import numpy as np
import pytest
import torch

import pypto
from pypto.frontend.binding import as_numpy
from pypto.runtime import differential, error_bounds, error_interval, error_rules, rounding
from pypto.runtime.tile_executor import TileExecutor


def _bounds(kernel, *args):
    """Call `kernel` under the check; the bounds of each parameter (by name) of that call."""
    inputs = [as_numpy(a.clone(), "arg")[0] for a in args]
    kernel(*args)
    plan = kernel.last_executor.plan
    arrays = {p.value.storage.id: a for p, a in zip(plan.program.params, inputs)}
    bounds = error_bounds.bound_run(plan, {}, arrays)
    return {p.name: bounds.of(p.value.storage.id) for p in plan.program.params}


def test_the_issues_cancellation_passes_and_its_bound_follows_the_operands():
    """out = in2 + ((v9 - in2 - in2) - (v9 - in2)) is 0 in exact arithmetic; both executors
    are right to within the rounding of v9 (a K = 41 matmul of magnitude ~10), which the bound
    knows though the output's own maximum is ~1e-7."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 48], pypto.DT_FP32), w: pypto.Tensor([48, 32], pypto.DT_FP32),
          in2: pypto.Tensor([32, 32], pypto.DT_FP32), out0: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 32], [16, 16], [16, 32])
        pypto.set_vec_tile_shapes(16, 32)
        v9 = pypto.matmul(x[:, 0:41], w[0:41, :], pypto.DT_FP32)
        out0[:] = in2 + ((v9 - in2 - in2) - (v9 - in2))

    g = torch.Generator().manual_seed(7)
    x, w = torch.randn(32, 48, generator=g) * 2, torch.randn(48, 32, generator=g) * 2
    in2, out = torch.randn(32, 32, generator=g) * 3, torch.zeros(32, 32)
    bound = _bounds(k, x, w, in2, out)["out0"]
    assert np.abs(out.numpy()).max() < 1e-4          # cancellation: ~0
    mags = (x[:, :41].abs() @ w[:41].abs()).numpy()   # sum |x||w| per element
    # 2 gamma_41 sum|x||w| from the matmul at least, and not orders of magnitude more
    floor = 2 * 41 * 2.0 ** -24 * mags
    assert (bound >= floor).all()
    assert (bound <= 20 * floor + 1e-5).all()


def test_an_exactly_rounded_chain_must_match_bit_for_bit():
    """+ - * / on exact inputs round the same way in every execution: the bound is 0."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], pypto.DT_FP32), b: pypto.Tensor([16, 64], pypto.DT_FP32),
          y: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = (a * b - a) / (b + 2.0)

    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(16, 64, generator=g), torch.rand(16, 64, generator=g)
    assert not _bounds(k, a, b, torch.zeros(16, 64))["y"].any()


def test_a_bf16_cast_of_a_sum_allows_a_bf16_ulp_only_near_its_rounding_boundaries():
    """A sum's order error straddles a BF16 rounding boundary in few rows; those rows may differ
    by one BF16 ulp after the cast, every other row must match exactly."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([512, 256], pypto.DT_FP32), y: pypto.Tensor([512, 1], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(64, 64)
        y[:] = pypto.cast(pypto.sum(x, dim=-1, keepdim=True), pypto.DT_BF16)

    x = torch.rand(512, 256, generator=torch.Generator().manual_seed(5))
    y = torch.zeros(512, 1, dtype=torch.bfloat16)
    bound = _bounds(k, x, y)["y"].ravel()
    ulps = rounding.ulp(y.float().numpy().ravel(), pypto.DT_BF16)
    loose = bound > 0
    assert 0 < loose.sum() < 0.2 * loose.size
    assert np.all(bound[loose] <= 1.0001 * ulps[loose])


def test_library_functions_get_a_few_ulps_even_on_exact_inputs():
    """exp is not correctly rounded and its SIMD paths differ: 4 FP32 ulps, no more."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), y: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = pypto.exp(x)

    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(4))
    y = torch.zeros(8, 64)
    bound = _bounds(k, x, y)["y"]
    ulps = rounding.ulp(y.numpy(), pypto.DT_FP32)
    assert (bound > 0).all()
    assert (bound <= 6 * ulps).all()


def _attention(tile_n: int, cube_k: int):
    @pypto.frontend.jit
    def k(q: pypto.Tensor([64, 64], pypto.DT_FP32), kv: pypto.Tensor([256, 64], pypto.DT_FP32),
          out: pypto.Tensor([64, 64], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 64], [cube_k, cube_k], [64, 64])
        s = pypto.matmul(q, kv, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(16, tile_n)
        e = pypto.exp(s - pypto.amax(s, dim=-1, keepdim=True))
        p = pypto.cast(e / pypto.sum(e, dim=-1, keepdim=True), pypto.DT_BF16)
        pypto.set_cube_tile_shapes([32, 64], [64, 64], [64, 64])
        out[:] = pypto.matmul(p, pypto.cast(kv, pypto.DT_BF16), pypto.DT_FP32)
    return k


@pytest.mark.parametrize("tile_n, cube_k", [(64, 16), (128, 32), (256, 64)])
def test_other_accumulation_orders_stay_within_the_bounds(tile_n, cube_k):
    """Soundness: the attention of the issue (softmax in FP32, probabilities cast to BF16 before
    p @ v) computed with other tilings (other sum and matmul orders) lands within the bounds
    of the reference run, element by element."""
    g = torch.Generator().manual_seed(3)
    q, kv = torch.randn(64, 64, generator=g), torch.randn(256, 64, generator=g)
    base = torch.zeros(64, 64)
    bound = _bounds(_attention(64, 64), q, kv, base)["out"]
    other = torch.zeros(64, 64)
    _attention(tile_n, cube_k)(q, kv, other)
    assert differential.within(other.numpy(), base.numpy(), bound).all()
    assert (bound < 0.05 * np.abs(base.numpy()).max()).all()   # and it still means something


def test_an_element_just_outside_its_bound_is_reported(monkeypatch):
    """The check names the element, both values and the bound it had."""
    real_run = TileExecutor.run

    def run_then_nudge(self):
        real_run(self)
        y = next(a for sid, a in self.arrays.items() if a.shape == (8, 64))
        y[3, 5] = np.nextafter(np.nextafter(y[3, 5], np.inf), np.inf) + 1e-3

    monkeypatch.setattr(TileExecutor, "run", run_then_nudge)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), y: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = pypto.exp(x)

    with pytest.raises(pypto.PyptoError, match=r"at \[3, 5\] .*allowed ±.*1 of 512 elements"):
        k(torch.randn(8, 64), torch.zeros(8, 64))


def test_an_argmax_is_exact_unless_the_errors_can_reorder_its_row():
    x = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 2.0 + 1e-7]])
    e = np.array([[0.0, 0.0, 0.0], [0.0, 1e-6, 1e-6]])
    loose = error_rules.rows_ambiguous(x, e, 1).ravel()
    assert loose.tolist() == [False, True]
    exact_ties = error_rules.rows_ambiguous(np.array([[2.0, 2.0]]), np.zeros((1, 2)), 1)
    assert not exact_ties.any()                      # a tie of exact values: stable, same order


def test_settle_rounds_both_ends_of_the_interval():
    """A value whose interval holds a BF16 rounding boundary may round either way (through
    FP32, as the executors round: 1e-9 past the tie is the tie itself in FP32)."""
    one = np.array([1.0])
    half_ulp = 2.0 ** -8
    e = error_interval.settle(one, one + half_ulp - 1e-6, one + half_ulp + 1e-6, pypto.DT_BF16)
    assert e.tolist() == [2.0 ** -7]
    e = error_interval.settle(one, one - 1e-9, one + 1e-9, pypto.DT_BF16)
    assert e.tolist() == [0.0]
    assert error_interval.settle(one, np.array([np.nan]), one, pypto.DT_FP32).tolist() == [np.inf]


def test_every_op_that_makes_a_value_has_a_rule():
    """A new op without an error-bound rule would fail the cross-check of every kernel that
    uses it: the table must cover the registry (writes have their own generic rules)."""
    from pypto.ops.core import REGISTRY
    missing = sorted(code for code, d in REGISTRY.items()
                     if not d.writes and code not in ("PRINT", "SAVE")
                     and code not in error_rules.RULES)
    assert missing == []


def test_an_op_without_a_rule_is_a_named_error_at_its_line(monkeypatch):
    """Should an op ever miss its rule, the check says which op and where, not a traceback
    from inside the bounds."""
    monkeypatch.delitem(error_rules.RULES, "EXP")

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), y: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = pypto.exp(x)

    x = torch.randn(8, 64)
    with pytest.raises(pypto.PyptoError, match=r"op EXP has no error-bound rule.*test_error_bounds"):
        _bounds(k, x, torch.zeros(8, 64))
