"""Tuning 14b - `reshape(..., inplace=True)`: relabel the shape instead of copying the data.

A (256,1024) intermediate read as (512,512) by the next op. `pypto.reshape` without `inplace`
makes a new tensor: one task reads the whole intermediate from GM and writes it again in the
new shape before the consumers may start. `inplace=True` makes the result an alias of the
input's storage (row-major order is unchanged, so the bytes already are the reshaped tensor):
the reshape's task moves nothing and the consumers read the producer's output directly, one
whole-tensor GM round trip less on the critical path.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

R, C = 256, 1024


def make(inplace: bool):
    @pypto.frontend.jit
    def relayout(x: pypto.Tensor([R, C], pypto.DT_FP32),
                 y: pypto.Tensor([2 * R, C // 2], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 1024)
        t = x * 2.0
        r = pypto.reshape(t, [2 * R, C // 2], inplace=inplace)
        pypto.set_vec_tile_shapes(64, 512)
        y[:] = r + 1.0
    return relayout


def inputs():
    return torch.rand(R, C), torch.zeros(2 * R, C // 2)


def golden(x, y):
    return (x * 2.0 + 1.0).reshape(2 * R, C // 2)


CASE = Case(
    "14b_reshape_inplace", "reshape inplace=True: an alias instead of a copy", "kernel_us",
    [checked("reshape (copy)", make(False), inputs, golden),
     checked("reshape inplace=True", make(True), inputs, golden)],
    guide="reshape(..., inplace=True) avoids a copy (no figure published)",
    extra_metrics=("gm_bytes",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
