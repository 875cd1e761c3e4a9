"""A valid extent (or view offset) that evaluates negative when the kernel runs is an error
naming the op, the dim, the value and the user's line, in both executors (issue 13: it once
wrote nothing, silently). Zero stays legal: an empty task."""
import pytest
import torch

import pypto

E = pypto.errors
F32 = pypto.DT_FP32
DYN = pypto.DYNAMIC


def _tail_kernel(valid):
    """Two 16-row blocks of x; block i's view has valid rows `valid(n, i)`."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        n = x.shape[0]
        for i in pypto.loop(0, 2, 1, idx_name="i"):
            v = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[valid(n, i), 64])
            out[i * 16:, :] = v * 2.0
    return k


def test_a_negative_valid_shape_raises_naming_view_dim_value_and_line(executor):
    k = _tail_kernel(lambda n, i: n - 20 - i * 16)     # block 1 of 32 rows: -4
    x, out = torch.randn(32, 64), torch.zeros(32, 64)
    with pytest.raises(E.PyptoRuntimeError,
                       match=r"view: valid_shape\[0\] evaluates to -4 at run time .*i=1.*"
                             r"an extent may be 0 but not negative "
                             r"\[at .*test_extent_checks\.py:\d+\]"):
        k(x, out)


def test_a_zero_valid_shape_is_an_empty_task(executor):
    k = _tail_kernel(lambda n, i: (n - 16 - i * 16).max(0))   # block 1 of 32 rows: 16, 0
    x, out = torch.randn(32, 64), torch.full((32, 64), 7.0)
    k(x, out)
    expect = torch.full((32, 64), 7.0)
    expect[:16] = x[:16] * 2.0
    torch.testing.assert_close(out, expect)


def test_the_same_kernel_with_a_legal_size_runs_after_the_error(executor):
    """The check is per call: a size whose extents are all >= 0 runs (no recompile needed)."""
    k = _tail_kernel(lambda n, i: n - 16 - i * 16)
    with pytest.raises(E.PyptoRuntimeError, match=r"evaluates to -2"):
        k(torch.randn(30, 64), torch.zeros(30, 64))
    x, out = torch.randn(32, 64), torch.zeros(32, 64)
    k(x, out)
    torch.testing.assert_close(out[:16], x[:16] * 2.0)
    torch.testing.assert_close(out[16:], torch.zeros(16, 64))


def test_a_negative_view_offset_raises(executor):
    """x[i - 8 : i + 8] at i = 0 would read from the wrong end of x."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), out: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for i in pypto.loop(0, 32, 16, idx_name="i"):
            out[i:, :] = pypto.view(x, [16, 64], [i - 8, 0]) + 1.0
    with pytest.raises(E.PyptoRuntimeError, match=r"view: offset of dim 0 evaluates to -8 at "
                                                  r"run time .*i=0"):
        k(torch.randn(32, 64), torch.zeros(32, 64))


def test_a_negative_reshape_valid_shape_raises(executor):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        n = x.shape[0]
        v = pypto.view(x, [16, 64], [0, 0], valid_shape=[n.min(16), 64])
        r = pypto.reshape(v, [16, 64], valid_shape=[n - 24, 64])
        out[:] = r * 1.0
    with pytest.raises(E.PyptoRuntimeError, match=r"reshape: valid_shape\[0\] of its output "
                                                  r"evaluates to -8"):
        k(torch.randn(16, 64), torch.zeros(16, 64))


def test_an_element_read_extent_is_checked_too(executor):
    """A valid extent read from a tensor element (glm's kv_act_seqs[b]) is checked as well."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 64], F32), lens: pypto.Tensor([4], pypto.DT_INT32),
          out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        v = pypto.view(x, [16, 64], [0, 0], valid_shape=[lens[1], 64])
        out[:] = v * 3.0
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    k(x, torch.tensor([0, 5, 0, 0], dtype=torch.int32), out)
    torch.testing.assert_close(out[:5], x[:5] * 3.0)
    with pytest.raises(E.PyptoRuntimeError, match=r"view: valid_shape\[0\] evaluates to -3"):
        k(x, torch.tensor([0, -3, 0, 0], dtype=torch.int32), out)
