"""Tuning 14c - weights stored in the cube's NZ format (`TileOpFormat.TILEOP_NZ`).

The cube unit reads its L1 operands in the fractal NZ layout (16x16 blocks, blocked and
transposed). A weight stored ND must be converted while it is copied from GM to L1: each row
of a tile is a separate short burst, reordered on the way in. A weight already stored NZ (done
once, offline) is copied as whole contiguous fractal blocks. On hardware this shortens the
GM->L1 copy of every cube task that loads the weight.

Our model does not show it: NZ is a tag only (the data stays logically ND), and the GM->L1
copy is charged bytes / bandwidth plus a fixed latency per transfer, whatever the layout, so
both variants simulate to the same time (see `Case.disagreement`).
"""
import torch

import pypto
from pypto.toolkit.tuning import Case, checked, main

M, K, N = 256, 512, 512


def make(fmt):
    @pypto.frontend.jit
    def matmul(a: pypto.Tensor([M, K], pypto.DT_FP16),
               b: pypto.Tensor([K, N], pypto.DT_FP16, format=fmt),
               c: pypto.Tensor([M, N], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
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
    disagreement="the simulator charges a GM->L1 copy by bytes and bandwidth only: it has no "
                 "transfer-shape term (burst length, ND->NZ reordering; hw_model section 7), "
                 "so the weight's format cannot change the time",
    extra_metrics=("l1_load_bytes",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
