"""Transpose is tiled like a vector op: a grid over its input on the op's TileShape, each tile
writing the permuted window of the output. A consumer whose TileShape is the permuted tile
(the guide's "Transpose (64,128) -> Add (128,64)") fuses one-to-one; any other tile makes the
dependency many-to-many through GM."""
import pytest
import torch

import pypto


def _kernel(producer, consumer, shape=(256, 512)):
    m, n = shape

    @pypto.frontend.jit
    def k(x: pypto.Tensor([m, n], pypto.DT_FP32), b: pypto.Tensor([n, m], pypto.DT_FP32),
          y: pypto.Tensor([n, m], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*producer)
        t = pypto.transpose(x, 0, 1)
        pypto.set_vec_tile_shapes(*consumer)
        y[:] = t + b
    return k


def _run(k, shape=(256, 512)):
    x, b = torch.rand(*shape), torch.rand(shape[1], shape[0])
    y = torch.zeros_like(b)
    k(x, b, y)
    torch.testing.assert_close(y, x.T + b)
    counts = k.last_compiled
    return next(iter(counts.subgraph_counts.values())), next(iter(counts.leaf_counts.values()))


def test_aligned_consumer_fuses_one_to_one():
    """(64,128) input tiles give (128,64) output tiles: an Add on (128,64) joins each one."""
    assert _run(_kernel((64, 128), (128, 64))) == (16, 1)


def test_mismatched_consumer_goes_through_gm():
    """The same tile on both sides is mismatched after the transpose: 16 + 16 subgraphs."""
    assert _run(_kernel((64, 128), (64, 128))) == (32, 2)


@pytest.mark.parametrize("shape", [(100, 200), (64, 96)])
def test_tails_are_exact(shape):
    """Tiles that do not divide the shape: the tail tiles transpose their valid part."""
    _run(_kernel((64, 128), (128, 64), shape), shape)


def test_permute_3d_tiles():
    """A 3-D permute on tiles matches torch.permute."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 48, 64], pypto.DT_FP32),
          y: pypto.Tensor([64, 4, 48], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 16, 32)
        y[:] = pypto.permute(x, [2, 0, 1]) * 2.0
    x = torch.rand(4, 48, 64)
    y = torch.zeros(64, 4, 48)
    k(x, y)
    torch.testing.assert_close(y, x.permute(2, 0, 1) * 2.0)
