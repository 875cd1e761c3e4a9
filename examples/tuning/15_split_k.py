"""Tuning 15 - `enable_split_k` for a matmul with a long K and a small output.

(128,8192)·(8192,256) on cube tiles [128,128],[64,256],[256,256] has a single (128,256)
output block: without split-K it is one cube task that walks all 8192 of K on one AIC core
while the other 23 idle. `set_cube_tile_shapes(..., enable_split_k=True)` makes one cube task
per K chunk (kL1 = 256: 32 tasks spread over the 24 AIC cores), each writing an FP32 partial
block, followed by vector adds that sum the partials into the output. The output must be FP32
(or INT32) for the partial sums. Guide: S16, 88.5 -> 53.8 us.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

M, K, N = 128, 8192, 256


def make(split_k: bool):
    @pypto.frontend.jit
    def matmul(a: pypto.Tensor([M, K], pypto.DT_FP16), b: pypto.Tensor([K, N], pypto.DT_FP16),
               c: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(128, 128)          # the adds that sum the K partials
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256], enable_split_k=split_k)
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return matmul


def inputs():
    return torch.rand(M, K).half(), torch.rand(K, N).half(), torch.zeros(M, N)


def golden(a, b, c):
    return a.float() @ b.float()


CASE = Case(
    "15_split_k", "enable_split_k: spread a long K over the cube cores", "kernel_us",
    [checked("one task over K", make(False), inputs, golden, rtol=1e-4, atol=1e-3),
     checked("enable_split_k=True", make(True), inputs, golden, rtol=1e-4, atol=1e-3)],
    guide="S16: 1 task (88.5 us) -> 32 cube + 4 vector-add tasks (53.8 us)",
    extra_metrics=("tasks",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
