"""Tuning 6b - RMSNorm (56,1024): keep the reduce axis whole in one tile.

Splitting the reduced (last) axis into 256-wide tiles turns every row sum into four partial
sums and a combine, plus the broadcast back; a tile spanning all 1024 columns reduces in one
pass. The guide: don't split the reduce axis.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

ROWS, HIDDEN, EPS = 56, 1024, 1e-6


def make(tile):
    @pypto.frontend.jit
    def rmsnorm(x: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32),
                y: pypto.Tensor([ROWS, HIDDEN], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = x * pypto.rsqrt(pypto.mean(x * x, -1, keepdim=True) + EPS)
    return rmsnorm


def inputs():
    x = torch.randn(ROWS, HIDDEN)
    return x, torch.zeros_like(x)


def golden(x, y):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS)


CASE = Case(
    "06b_rmsnorm_reduce_axis", "RMSNorm (56,1024): reduce axis whole vs split", "kernel_us",
    [checked("tile (8,256): axis split", make((8, 256)), inputs, golden),
     checked("tile (8,1024): axis whole", make((8, 1024)), inputs, golden)],
    extra_metrics=("tasks",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
