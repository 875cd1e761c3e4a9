"""Tuning 5 - start matmuls from the guide's recommended cube TileShapes, not tiny tiles.

Each cube subgraph computes one (mL1, nL1) output block over the whole K, so tiny tiles mean
many short AIC tasks (each pays a task head of several microseconds on the board) and A and B
panels reloaded from GM once per block (MTE2 traffic = M·K·N/nL1 + K·N·M/mL1). The guide's
three starting points use 32 KiB of L0A/L0B each (MTE1 double buffering) and big L1 loads:
[128,128],[64,256],[256,256]; [256,256],[64,256],[128,128]; [128,128],[128,512],[128,128].
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

M = K = N = 1024

SETTINGS = {
    "tiny [64,64]x3": ([64, 64], [64, 64], [64, 64]),
    "[128,128],[64,256],[256,256]": ([128, 128], [64, 256], [256, 256]),
    "[256,256],[64,256],[128,128]": ([256, 256], [64, 256], [128, 128]),
    "[128,128],[128,512],[128,128]": ([128, 128], [128, 512], [128, 128]),
}


def make(tiles):
    @pypto.frontend.jit
    def matmul(a: pypto.Tensor([M, K], pypto.DT_FP16), b: pypto.Tensor([K, N], pypto.DT_FP16),
               c: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes(*tiles)
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return matmul


def inputs():
    return torch.randn(M, K).half(), torch.randn(K, N).half(), torch.zeros(M, N)


def golden(a, b, c):
    return a.float() @ b.float()


def verdict(runs):
    tiny, *recommended = runs
    holds = all(r.kernel_us < tiny.kernel_us for r in recommended)
    best = min(recommended, key=lambda r: r.kernel_us)
    return holds, (f"kernel time: tiny tiles {tiny.kernel_us:.1f} us ({tiny.tasks} tasks); "
                   + ", ".join(f"{r.variant} {r.kernel_us:.1f} us" for r in recommended)
                   + f"; best {tiny.kernel_us / best.kernel_us:.1f}x")


CASE = Case(
    "05_cube_tiles", "Matmul: the recommended initial cube tiles vs tiny tiles", "kernel_us",
    [checked(name, make(tiles), inputs, golden, rtol=1e-3, atol=1e-2)
     for name, tiles in SETTINGS.items()],
    verdict=verdict, extra_metrics=("tasks", "l1_load_bytes"))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
