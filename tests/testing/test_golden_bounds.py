"""Golden comparisons with tolerances from the kernel's precision chain (pypto.testing.bounds):
the kernel within its forward error bound of exact arithmetic, a torch golden in higher
precision within as much, and nothing looser."""
import numpy as np
import pytest
import torch

import pypto
import pypto.testing


def _softmax_bf16():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 256], pypto.DT_FP32), y: pypto.Tensor([32, 256], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(8, 64)
        e = pypto.exp(x - pypto.amax(x, dim=-1, keepdim=True))
        y[:] = pypto.cast(e / pypto.sum(e, dim=-1, keepdim=True), pypto.DT_BF16)
    return k


def test_an_fp64_golden_is_within_twice_the_forward_bound_and_the_bound_is_tight():
    """The golden never rounds to BF16; the bound knows the kernel's cast and little more: the
    kernel is within it of the (near exact) FP64 golden, and it is at most about a BF16 ulp."""
    x = torch.randn(32, 256, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    y = torch.zeros(32, 256, dtype=torch.bfloat16)
    k = _softmax_bf16()
    with pypto.testing.forward_bounds(k, x.float(), y) as bounds:
        k(x.float(), y)
    bound = bounds["y"]
    golden = torch.softmax(x, dim=-1)
    pypto.testing.assert_close(y, golden, bound, "y")
    gap = np.abs(y.double().numpy() - golden.numpy())
    assert (gap <= bound * (1 + 1e-9)).all()         # the kernel within its bound of exact
    ulp = np.spacing(np.abs(golden.numpy()).astype(np.float32)) * 2.0 ** 16   # a BF16 ulp
    assert (bound <= 1.1 * ulp).all()                # and the bound not much beyond a cast


def test_a_wrong_element_is_named_with_its_bound():
    x = torch.randn(32, 256, generator=torch.Generator().manual_seed(1))
    y = torch.zeros(32, 256, dtype=torch.bfloat16)
    k = _softmax_bf16()
    with pypto.testing.forward_bounds(k, x, y) as bounds:
        k(x, y)
    bound = bounds["y"]
    golden = torch.softmax(x.double(), dim=-1)
    golden[5, 7] *= 1.05
    with pytest.raises(AssertionError, match=r"1 of 8192 elements .* worst at \[5, 7\]"):
        pypto.testing.assert_close(y, golden, bound, "y")
