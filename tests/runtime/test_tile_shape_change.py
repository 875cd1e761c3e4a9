"""A value produced under one vector TileShape and read under another: the consumer's tiles
read sub-windows (or unions) of the producer's tiles, fused in one task or through GM. The
tile executor batches isomorphic tasks and merges sibling tile ops (runtime/tile_executor.py);
an op expanding to a chain of tile ops (rsqrt = SQRT then DIVS) once merged a DIVS over rows
its SQRT had not written yet and returned inf (issue 13). Every case is compared with torch,
batched and task by task."""
import pytest
import torch

import pypto
from pypto.runtime.tile_executor import TileExecutor

F32 = pypto.DT_FP32

# name -> (kernel op on the produced value s and the raw input a, torch golden)
_OPS = {
    "rsqrt": (lambda s, a: pypto.rsqrt(s), lambda a: torch.rsqrt(a)),
    "sqrt": (lambda s, a: pypto.sqrt(s), lambda a: torch.sqrt(a)),
    "exp": (lambda s, a: pypto.exp(s), lambda a: torch.exp(a)),
    "reciprocal": (lambda s, a: pypto.reciprocal(s), lambda a: torch.reciprocal(a)),
    "sigmoid": (lambda s, a: pypto.sigmoid(s), lambda a: torch.sigmoid(a)),
    "div": (lambda s, a: s / (a + 1.0), lambda a: a / (a + 1.0)),
    "div_scalar": (lambda s, a: 3.0 / s, lambda a: 3.0 / a),
    "rsqrt_of_sum": (lambda s, a: pypto.rsqrt(s + a), lambda a: torch.rsqrt(a + a)),
    "cast_fp16": (lambda s, a: pypto.cast(pypto.cast(s, pypto.DT_FP16), F32),
                  lambda a: a.half().float()),
    "cast_bf16": (lambda s, a: pypto.cast(pypto.cast(s, pypto.DT_BF16), F32),
                  lambda a: a.bfloat16().float()),
}

# (shape, producer tile, consumer tile)
_TILES = [
    ((16, 64), (8, 16), (1, 16)),      # taller -> shorter (the issue's case)
    ((16, 64), (1, 16), (8, 16)),      # shorter -> taller
    ((16, 64), (8, 64), (8, 16)),      # wider -> narrower
    ((16, 64), (4, 16), (16, 64)),     # many tiles -> one
    ((19, 45), (5, 32), (3, 16)),      # neither divides the shape
    ((19, 45), (3, 16), (8, 48)),
    ((4, 16, 64), (2, 8, 16), (1, 1, 16)),   # 3-D
    ((3, 10, 40), (1, 3, 40), (3, 4, 16)),   # 3-D, non-dividing
]


def _kernel(shape, produce, consume, op):
    @pypto.frontend.jit
    def k(a: pypto.Tensor(list(shape), F32), out: pypto.Tensor(list(shape), F32)):
        pypto.set_vec_tile_shapes(*produce)
        s = a * 1.0
        pypto.set_vec_tile_shapes(*consume)
        out[:] = op(s, a)
    return k


@pytest.mark.parametrize("shape,produce,consume", _TILES)
@pytest.mark.parametrize("name", sorted(_OPS))
@pytest.mark.parametrize("batch", [True, False])
def test_consumer_under_another_tile_shape_matches_torch(name, shape, produce, consume,
                                                         batch, monkeypatch):
    monkeypatch.setattr(TileExecutor, "batch", batch)
    op, golden = _OPS[name]
    k = _kernel(shape, produce, consume, op)
    a = torch.rand(*shape) + 0.5
    out = torch.full(shape, float("nan"))
    k(a, out)
    torch.testing.assert_close(out, golden(a), rtol=2e-6, atol=1e-6)


def test_issue_13_rsqrt_repro_is_exact_in_the_default_executor(monkeypatch):
    monkeypatch.delenv("OPENPTO_CHECK_EXECUTORS", raising=False)   # the tile executor alone
    k = _kernel((16, 64), (8, 16), (1, 16), _OPS["rsqrt"][0])
    a = torch.rand(16, 64) + 0.5
    out = torch.zeros(16, 64)
    k(a, out)
    assert k.last_executor.calls_batched > 0     # the merge path really ran
    torch.testing.assert_close(out, torch.rsqrt(a), rtol=2e-6, atol=0)


def test_three_tile_shapes_in_a_chain():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([24, 48], F32), out: pypto.Tensor([24, 48], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        s = a * 2.0
        pypto.set_vec_tile_shapes(1, 48)
        r = pypto.rsqrt(s)
        pypto.set_vec_tile_shapes(24, 8)
        out[:] = pypto.sqrt(r) + r
    a = torch.rand(24, 48) + 0.5
    out = torch.zeros(24, 48)
    k(a, out)
    r = torch.rsqrt(a * 2.0)
    torch.testing.assert_close(out, torch.sqrt(r) + r, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("shape,produce,consume", _TILES[:2] + _TILES[4:5] + _TILES[6:7])
@pytest.mark.parametrize("name", ["rsqrt", "div", "cast_bf16"])
def test_a_producer_that_is_also_an_output_is_read_back_right(name, shape, produce, consume):
    """The produced value escapes to GM too (a second output), so consumer tiles may read it
    from GM rather than from their own task."""
    op, golden = _OPS[name]

    @pypto.frontend.jit
    def k(a: pypto.Tensor(list(shape), F32), mid: pypto.Tensor(list(shape), F32),
          out: pypto.Tensor(list(shape), F32)):
        pypto.set_vec_tile_shapes(*produce)
        s = a * 1.0
        mid[:] = s
        pypto.set_vec_tile_shapes(*consume)
        out[:] = op(s, a)
    a = torch.rand(*shape) + 0.5
    mid, out = torch.zeros(shape), torch.zeros(shape)
    k(a, mid, out)
    torch.testing.assert_close(mid, a, rtol=0, atol=0)
    torch.testing.assert_close(out, golden(a), rtol=2e-6, atol=1e-6)
