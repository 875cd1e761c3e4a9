"""Tuning 3 - merge two loops over the same range that read the same input.

Two consecutive `pypto.loop`s over the same blocks, each reading `x`, double the root
instances and read every block of `x` from GM twice. One loop whose body does both
computations halves the instances, and the two results' tasks share the loaded block.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

TOKENS, HIDDEN, ROWS = 512, 1024, 64


def make(merged: bool):
    @pypto.frontend.jit
    def two_outputs(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                    y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                    z: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(16, HIDDEN)
        if merged:
            for i in pypto.loop(0, n, ROWS, name="LOOP_BOTH"):
                block = pypto.view(x, [ROWS, HIDDEN], [i, 0], valid_shape=[(n - i).min(ROWS), HIDDEN])
                y[i:, :] = pypto.exp(block)
                z[i:, :] = block * block
        else:
            for i in pypto.loop(0, n, ROWS, name="LOOP_EXP"):
                block = pypto.view(x, [ROWS, HIDDEN], [i, 0], valid_shape=[(n - i).min(ROWS), HIDDEN])
                y[i:, :] = pypto.exp(block)
            for i in pypto.loop(0, n, ROWS, name="LOOP_SQUARE"):
                block = pypto.view(x, [ROWS, HIDDEN], [i, 0], valid_shape=[(n - i).min(ROWS), HIDDEN])
                z[i:, :] = block * block
    return two_outputs


def inputs():
    x = torch.randn(TOKENS, HIDDEN)
    return x, torch.zeros_like(x), torch.zeros_like(x)


def golden(x, y, z):
    return torch.exp(x), x * x


CASE = Case(
    "03_merge_loops", "Merge two loops over the same range that share an input", "e2e_us",
    [checked("two loops", make(False), inputs, golden, outputs=(1, 2)),
     checked("one merged loop", make(True), inputs, golden, outputs=(1, 2))],
    extra_metrics=("instances", "gm_bytes"))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
