#!/usr/bin/env python3
"""Tiling configuration: vector and cube TileShapes, their getters, and why results ignore them.

What this shows:
- `set_vec_tile_shapes(*sizes)` sets one tile size per dim for the vector ops recorded after
  it; the rank must equal the rank of those ops' tensors, so a kernel re-sets it before ops of
  another rank. The last tile dim x dtype size should be a multiple of 32 bytes.
- `set_cube_tile_shapes([mL0, mL1], [kL0, kL1], [nL0, nL1])` configures the following matmuls.
  `get_cube_tile_shapes()` returns k padded to three entries (k[2] = k[1]) and the split-K flag.
- Tile shapes are scoped state: a loop body inherits the tile set before it, and
  `pypto.options(vec_tile_shapes=...)` can provide one from outside the kernel.
- Tile shapes change how the work is cut into tiles (and so the performance), never the
  numbers: the same kernel compiled with very different tiles gives the same result.

Run:  python tiling_config.py [--run_mode sim|npu] [--list] [tiling_config::test_tile_getters]
"""
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

# What the kernels saw while they were traced (the body runs as Python once per compile).
SEEN = {}


# ---- setting and reading tile shapes ---------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def getters_kernel(x: pypto.Tensor([32, 128], pypto.DT_FP32),
                   w: pypto.Tensor([128, 64], pypto.DT_FP32),
                   y: pypto.Tensor([4, 8, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 32], [64, 128], [32, 64])
    SEEN["cube"] = pypto.get_cube_tile_shapes()
    h = pypto.matmul(x, w, pypto.DT_FP32)               # [32, 64]

    pypto.set_vec_tile_shapes(16, 64)                   # 2-D ops next
    SEEN["vec_2d"] = pypto.get_vec_tile_shapes()
    h = pypto.maximum(h, 0.0)

    pypto.set_vec_tile_shapes(2, 8, 64)                 # the reshaped tensor is 3-D
    SEEN["vec_3d"] = pypto.get_vec_tile_shapes()
    y[:] = pypto.reshape(h, [4, 8, 64]) * 0.5
    for _ in pypto.loop(1, name="INNER"):
        SEEN["vec_in_loop"] = pypto.get_vec_tile_shapes()  # inherited from the enclosing scope


@pypto.options(pass_options={"enable_slice": True})
def test_tile_getters(device: str = DEVICE) -> None:
    x = torch.randn(32, 128, device=device)
    w = torch.randn(128, 64, device=device)
    y = torch.zeros(4, 8, 64, device=device)
    getters_kernel(x, w, y)
    assert SEEN["cube"] == ([16, 32], [64, 128, 128], [32, 64], False), SEEN["cube"]
    assert SEEN["vec_2d"] == [16, 64], SEEN["vec_2d"]
    assert SEEN["vec_3d"] == [2, 8, 64], SEEN["vec_3d"]
    assert SEEN["vec_in_loop"] == [2, 8, 64], SEEN["vec_in_loop"]
    golden = (torch.relu(x @ w) * 0.5).reshape(4, 8, 64)
    assert_allclose(y.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)


# ---- tile shapes do not change results -------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def tiled_softmax_kernel(x: pypto.Tensor([64, 256], pypto.DT_FP32),
                         w: pypto.Tensor([256, 128], pypto.DT_FP32),
                         out: pypto.Tensor([64, 128], pypto.DT_FP32),
                         vec_tile: tuple, cube_tile: tuple):
    # The tile configurations are non-tensor arguments: trace-time constants, so every
    # distinct configuration is a separate compilation.
    pypto.set_cube_tile_shapes(*cube_tile)
    h = pypto.matmul(x, w, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(*vec_tile)
    e = pypto.exp(h - pypto.amax(h, dim=-1, keepdim=True))
    out[:] = e / pypto.sum(e, dim=-1, keepdim=True)


CONFIGS = [  # (vec tile, cube tile)
    ((64, 128), ([64, 64], [128, 256], [128, 128])),  # FP32: kL0 x nL0 x 4 B = 64 KiB L0B
    ((8, 32), ([16, 16], [32, 64], [16, 32])),
    ((1, 8), ([16, 32], [64, 256], [32, 128])),
    ((32, 64), ([32, 32], [64, 128], [64, 64], True)),   # split-K along K, FP32 output
]


@pypto.options(pass_options={"enable_slice": True})
def test_tiles_do_not_change_results(device: str = DEVICE) -> None:
    x = torch.randn(64, 256, device=device) * 0.1
    w = torch.randn(256, 128, device=device)
    golden = torch.softmax(x @ w, dim=-1)
    results = []
    for vec_tile, cube_tile in CONFIGS:
        out = torch.zeros(64, 128, device=device)
        tiled_softmax_kernel(x, w, out, vec_tile, cube_tile)
        assert_allclose(out.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)
        results.append(out)
    for other in results[1:]:  # the tilings agree with each other far below the tolerance
        assert_allclose(other.numpy(), results[0].numpy(), rtol=1e-5, atol=1e-6)
    assert tiled_softmax_kernel.compile_count == len(CONFIGS)


# ---- a tile shape from an enclosing pypto.options scope --------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def scoped_kernel(x: pypto.Tensor([16, 128], pypto.DT_FP32),
                  y: pypto.Tensor([16, 128], pypto.DT_FP32)):
    SEEN["scoped"] = pypto.get_vec_tile_shapes()  # no set_vec_tile_shapes in this kernel
    y[:] = pypto.sqrt(x) + 1.0


@pypto.options(pass_options={"enable_slice": True})
def test_options_scope(device: str = DEVICE) -> None:
    x = torch.rand(16, 128, device=device)
    y = torch.zeros(16, 128, device=device)
    with pypto.options(vec_tile_shapes=[8, 128]):
        scoped_kernel(x, y)
    assert SEEN["scoped"] == [8, 128], SEEN["scoped"]
    assert_allclose(y.numpy(), (torch.sqrt(x) + 1.0).numpy(), rtol=1e-3, atol=1e-3)


EXAMPLES = {
    "tiling_config::test_tile_getters": test_tile_getters,
    "tiling_config::test_tiles_do_not_change_results": test_tiles_do_not_change_results,
    "tiling_config::test_options_scope": test_options_scope,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
