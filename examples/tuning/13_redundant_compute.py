"""Tuning 13 - redundant compute to cut a one-to-many dependency.

Every batch multiplies by the same FP16 weight cast to FP32. Casting it once and sharing the
result makes one producer with sixteen consumers: automatic merging glues the cast to as many
consumers as the latency bound allows (one long task), the other batches read the cast weight
from GM and cannot start before that task ends. Casting the weight again in every batch costs
sixteen small casts instead of one, but each batch becomes an independent one-to-one chain
(cast, multiply, add, write) that fuses into its own subgraphs: all batches run at once in one
wave, with no GM round trip for the cast weight.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

B, S, H = 16, 64, 512


def make(redundant: bool):
    @pypto.frontend.jit
    def scale(x: pypto.Tensor([B, S, H], pypto.DT_FP32), w: pypto.Tensor([S, H], pypto.DT_FP16),
              y: pypto.Tensor([B, S, H], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        shared = None if redundant else pypto.cast(w, pypto.DT_FP32)
        for i in range(B):
            wf = pypto.cast(w, pypto.DT_FP32) if redundant else shared
            y[i] = x[i] * wf + 1.0
    return scale


def inputs():
    x = torch.rand(B, S, H)
    return x, torch.rand(S, H).half(), torch.zeros_like(x)


def golden(x, w, y):
    return x * w.float() + 1.0


CASE = Case(
    "13_redundant_compute", "Redundant compute: cast the shared weight in every batch",
    "kernel_us",
    [checked("one shared cast", make(False), inputs, golden),
     checked("cast per batch", make(True), inputs, golden)],
    guide="redundant compute to cut dependencies (no figure published)",
    extra_metrics=("tasks",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
