"""Tuning 1 - a static axis as a Python `for` instead of `pypto.loop`.

A batch axis whose size is known at trace time, written as `pypto.loop(B)`, makes B root
function instances that the AICPU control thread builds and the schedulers dispatch one after
another. A Python `for` unrolls it while tracing: one bigger root function holds all B slices,
so there is one instance to build and the cores see the whole batch at once.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

B, S, H = 8, 64, 512


def make(use_loop: bool):
    @pypto.frontend.jit
    def batch_exp(x: pypto.Tensor([B, S, H], pypto.DT_FP32),
                  y: pypto.Tensor([B, S, H], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 512)
        for i in (pypto.loop(B) if use_loop else range(B)):
            y[i:i + 1] = pypto.exp(x[i:i + 1]) + 1.0
    return batch_exp


def inputs():
    x = torch.rand(B, S, H)
    return x, torch.zeros_like(x)


def golden(x, y):
    return torch.exp(x) + 1.0


CASE = Case(
    "01_static_axis_for", "Static axis: Python for instead of pypto.loop", "e2e_us",
    [checked("pypto.loop(8)", make(True), inputs, golden),
     checked("python for (unrolled)", make(False), inputs, golden)],
    extra_metrics=("instances", "aicpu_us"))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
