"""Isomorphic, independent tasks run their tile numerics as one batch (TileExecutor.batch);
the outputs are bit-identical to running task by task and every task's cost is unchanged."""
import pytest
import torch

import pypto
from pypto.runtime.tile_executor import TileExecutor


def _softmax():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)    # split reduce axis: partials + combine
        e = pypto.exp(x - pypto.amax(x, dim=-1, keepdim=True))
        y[:] = e / pypto.sum(e, dim=-1, keepdim=True)
    return k, (torch.randn(37, 96),)      # a ragged last row tile


def _layer_norm():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), w: pypto.Tensor([], pypto.DT_FP32),
          y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        mu = pypto.mean(x, -1, keepdim=True)
        d = x - mu
        y[:] = d * pypto.rsqrt(pypto.mean(d * d, -1, keepdim=True) + 1e-5) * w + 0.5
    return k, (torch.randn(64, 64), torch.randn(1, 64))


def _half_sigmoid():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP16), y: pypto.Tensor([], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(16, 16)
        y[:] = pypto.sigmoid(x) * x
    return k, (torch.randn(48, 40).half(),)


def _cast_rows():
    """A cast inside the batched subgraph (BF16 rounding is per element like a pointwise op)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        h = pypto.cast(pypto.exp(x) * 3.0, pypto.DT_BF16)
        y[:] = pypto.cast(h, pypto.DT_FP32) + x
    return k, (torch.randn(40, 64),)


def _ragged_loop():
    """Root instances of a loop whose last block is ragged: batches of two shapes."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, idx_name="i"):
            rows = (n - i).min(16)
            v = pypto.view(x, [16, 64], [i, 0], valid_shape=[rows, 64])
            y[i:, :] = pypto.exp(v - pypto.amax(v, dim=-1, keepdim=True)) * 0.5
    return k, (torch.randn(37, 64),)


def _costs(kernel):
    return [(t.core, t.mte2_bytes, t.mte3_bytes, t.vector_cycles, t.cube_cycles, t.empty,
             t.reads, t.writes, t.preds) for t in kernel.last_executor.stitcher.tasks]


@pytest.mark.parametrize("make", [_softmax, _layer_norm, _half_sigmoid, _cast_rows,
                                  _ragged_loop])
def test_batched_numerics_equal_task_by_task(make, monkeypatch):
    kernel, args = make()
    batched = torch.zeros_like(args[0])
    kernel(*args, batched)
    assert kernel.last_executor.calls_batched > 0
    costs = _costs(kernel)
    monkeypatch.setattr(TileExecutor, "batch", False)
    single = torch.zeros_like(args[0])
    kernel(*args, single)
    assert kernel.last_executor.calls_batched == 0
    assert torch.equal(batched, single)
    assert _costs(kernel) == costs


def test_warm_calls_compute_in_the_spare_buffers_of_the_last_run():
    """Whole-value results of a run are kept (bounded) and reused by the next call."""
    from pypto.runtime import tile_numerics
    kernel, args = _layer_norm()
    first = torch.zeros_like(args[0])
    kernel(*args, first)
    spares = kernel.last_executor.plan.spares
    kept = spares.nbytes
    assert 0 < kept <= tile_numerics._SPARE_BYTES
    second = torch.zeros_like(args[0])
    kernel(*args, second)
    assert torch.equal(first, second)
    x, w = args
    mu = x.mean(-1, keepdim=True)
    expect = (x - mu) * torch.rsqrt(((x - mu) ** 2).mean(-1, keepdim=True) + 1e-5) * w + 0.5
    torch.testing.assert_close(first, expect)
