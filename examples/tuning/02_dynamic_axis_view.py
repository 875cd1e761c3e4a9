"""Tuning 2 - a dynamic axis: `pypto.loop` over views of 128 rows with a `valid_shape` tail.

When the token count is only known at run time, the loop body should still be big: each
iteration takes a view of ROWS rows and says with `valid_shape` how many are real, so the last,
partial block computes only its valid rows. A too-small view (8 rows) gives the same numbers
but 16x the root instances: the AICPU builds, stitches and schedules each one, and every
instance's tasks are too small to fill the cores.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

TOKENS, HIDDEN = 1000, 512


def make(rows: int):
    @pypto.frontend.jit
    def scale_shift(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                    y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(min(rows, 32), HIDDEN)
        for i in pypto.loop(0, n, rows, name="LOOP_TOKENS", idx_name="i"):
            block = pypto.view(x, [rows, HIDDEN], [i, 0], valid_shape=[(n - i).min(rows), HIDDEN])
            y[i:, :] = pypto.sigmoid(block) * 2.0 + 1.0
    return scale_shift


def inputs():
    x = torch.randn(TOKENS, HIDDEN)
    return x, torch.zeros_like(x)


def golden(x, y):
    return torch.sigmoid(x) * 2.0 + 1.0


CASE = Case(
    "02_dynamic_axis_view", "Dynamic axis: pypto.loop over 128-row views with valid_shape",
    "e2e_us",
    [checked("view of 8 rows", make(8), inputs, golden),
     checked("view of 128 rows", make(128), inputs, golden)],
    extra_metrics=("instances", "aicpu_us"))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
