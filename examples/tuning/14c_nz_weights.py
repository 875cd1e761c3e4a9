"""Tuning 14c - weights stored in the cube's NZ format (`TileOpFormat.TILEOP_NZ`).

The cube unit reads its L1 operands in the fractal NZ layout (16x16 blocks, blocked and
transposed). A weight stored ND must be converted while it is copied from GM to L1: each row
of a tile is a separate short burst, reordered on the way in. A weight already stored NZ (done
once, offline) is copied as whole contiguous fractal blocks. On hardware this shortens the
GM->L1 copy of every cube task that loads the weight.

The effect is largest where the weight's rows are short: a decode-size matmul (m = 16) whose
cube tiles take 64 weight columns (128-byte rows) is bound by its weight loads, and each ND row
fills a 128-byte GM piece and pays its reordering (hw_costs.md §1.2: 128-byte ND2NZ rows reach
59 % of the bandwidth, 512-byte rows 78 %; PyPTO measured 16-25 % for 128-byte weight rows).
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

M, K, N = 16, 2048, 1024


def make(fmt):
    @pypto.frontend.jit
    def matmul(a: pypto.Tensor([M, K], pypto.DT_FP16),
               b: pypto.Tensor([K, N], pypto.DT_FP16, format=fmt),
               c: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [256, 256], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return matmul


def inputs():
    return torch.rand(M, K).half(), torch.rand(K, N).half(), torch.zeros(M, N)


def golden(a, b, c):
    return a.float() @ b.float()


CASE = Case(
    "14c_nz_weights", "NZ weights: no ND->NZ conversion on the GM->L1 copy", "kernel_us",
    [checked("weight ND", make(pypto.TileOpFormat.TILEOP_ND), inputs, golden),
     checked("weight NZ", make(pypto.TileOpFormat.TILEOP_NZ), inputs, golden)],
    guide="NZ weight format (listed among the other tuning methods; no figure published)",
    extra_metrics=("l1_load_bytes",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
