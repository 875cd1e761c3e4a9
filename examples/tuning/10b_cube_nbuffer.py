"""Tuning 10b - `cube_nbuffer_setting`: merge isomorphic cube tasks that share nothing.

A batch matmul (128,64,64)·(128,64,64) is 128 independent 64x64 problems: no two cube tasks
load the same data, so L1 reuse has nothing to merge. Each task is short, its load, cube and
fixpipe drain in sequence, and 128 tasks on 24 AIC cores take more than five waves. `cube_nbuffer_setting={-1: N}` (default `{-1: 1}`, off) merges runs of N consecutive
isomorphic cube subgraphs into one task: the loads of one member overlap the compute of the
previous one and N-1 heads out of N disappear. At N = 8 the 16 tasks fit one wave.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

B, M, K, N = 128, 64, 64, 64
FACTORS = (1, 2, 4, 8)


def make(factor: int):
    @pypto.frontend.jit(pass_options={"cube_nbuffer_setting": {-1: factor}})
    def bmm(a: pypto.Tensor([B, M, K], pypto.DT_FP16), b: pypto.Tensor([B, K, N], pypto.DT_FP16),
            c: pypto.Tensor([B, M, N], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return bmm


def inputs():
    return torch.rand(B, M, K).half(), torch.rand(B, K, N).half(), torch.zeros(B, M, N)


def golden(a, b, c):
    return torch.bmm(a.float(), b.float())


CASE = Case(
    "10b_cube_nbuffer", "cube_nbuffer_setting: merge independent isomorphic cube tasks",
    "kernel_us",
    [checked(f"cube_nbuffer {{-1: {n}}}", make(n), inputs, golden) for n in FACTORS],
    guide="CubeNBuffer hides one member's loads behind another's compute, with fewer tasks",
    extra_metrics=("tasks",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
