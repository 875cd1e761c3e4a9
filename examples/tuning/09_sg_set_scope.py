"""Tuning 9 - `sg_set_scope`: force a vector chain into one subgraph per tile.

Automatic depth merging grows a subgraph along one-to-one edges until its latency estimate
reaches `pg_upper_bound` (10000 cycles), then starts a new one. A long element-wise chain is
therefore cut where the bound happens to fall: here each tile's 24 vector ops become a 5.8 us
subgraph and a 2.2 us one, two leaf functions, two dependent waves of tasks, and the
intermediate tile makes a round trip through GM between them. Tagging the chain (and its
output write, so the copy-out stays with it) with `set_pass_options(sg_set_scope=1)` forces
every op of one tile into one subgraph, closed to further merging: one balanced task per
tile, one leaf, no GM round trip.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

S, H, STEPS = 256, 1024, 12


def make(scope: int):
    @pypto.frontend.jit
    def chain(x: pypto.Tensor([S, H], pypto.DT_FP32), y: pypto.Tensor([S, H], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 1024)
        pypto.set_pass_options(sg_set_scope=scope)
        t = x
        for _ in range(STEPS):
            t = t * 0.5 + 0.25
        y[:] = t
        pypto.set_pass_options(sg_set_scope=-1)
    return chain


def inputs():
    x = torch.rand(S, H)
    return x, torch.zeros_like(x)


def golden(x, y):
    for _ in range(STEPS):
        x = x * 0.5 + 0.25
    return x


CASE = Case(
    "09_sg_set_scope", "sg_set_scope: one subgraph per tile for a long vector chain",
    "kernel_us",
    [checked("auto depth merge", make(-1), inputs, golden),
     checked("sg_set_scope=1", make(1), inputs, golden)],
    guide="S17: a scope forces the merge (4 subgraphs; 11.84 -> 8.08 us)",
    extra_metrics=("tasks",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
