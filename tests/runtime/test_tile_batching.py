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


def _costs(kernel):
    return [(t.core, t.mte2_bytes, t.mte3_bytes, t.vector_cycles, t.cube_cycles, t.empty,
             t.reads, t.writes, t.preds) for t in kernel.last_executor.stitcher.tasks]


@pytest.mark.parametrize("make", [_softmax, _layer_norm, _half_sigmoid])
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
