"""Builtin min/max with a SymbolicScalar argument inside a kernel mean pypto.min/pypto.max
(as PyPTO's parser maps them), so they add no runtime branches."""
import torch

import pypto


def test_builtin_min_max_do_not_branch():
    """min(n - i, 16) in a view's valid_shape is one symbolic expression: one trace, exact."""
    traces = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="L"):
            traces.append(i)
            rows = min(n - i, 16)
            v = pypto.view(x, [16, 64], [i, 0], valid_shape=[rows, max(64, 32)])
            y[i:, :] = v * 2.0

    x, y = torch.rand(37, 64), torch.zeros(37, 64)
    k(x, y)
    assert len(traces) == 1
    assert len(k.last_program.root.variants[0].paths) == 1
    torch.testing.assert_close(y, 2 * x)


def test_builtin_min_max_on_plain_values_unchanged():
    """Plain Python values still use the builtins (any number of arguments, key=...)."""
    seen = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        seen.append((min(3, 1, 2), max([4, 7], key=lambda v: -v)))
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x + 1.0

    x, y = torch.rand(8, 64), torch.zeros(8, 64)
    k(x, y)
    assert seen == [(1, 4)]
    torch.testing.assert_close(y, x + 1)


@pypto.frontend.function
def _clamp_rows(n, i):
    return min(n - i, 8)


def test_frontend_function_helpers_map_min_too():
    """@pypto.frontend.function helpers are inlined in PyPTO, so the same mapping applies."""
    traces = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        n = x.shape[0]
        for i in pypto.loop(0, n, 8, name="L"):
            traces.append(i)
            v = pypto.view(x, [8, 32], [i, 0], valid_shape=[_clamp_rows(n, i), 32])
            y[i:, :] = v - 1.0

    x, y = torch.rand(13, 32), torch.zeros(13, 32)
    k(x, y)
    assert len(traces) == 1
    torch.testing.assert_close(y, x - 1)
