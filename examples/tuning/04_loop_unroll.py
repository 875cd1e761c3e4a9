"""Tuning 4 - `pypto.loop_unroll(unroll_list=[64, 16, 4])` against a single fixed step.

A dynamic number of 16-row blocks nb (here 1 to 4096, i.e. up to 65536 rows) processed by a
loop with one fixed step is a trade-off with no good setting:
- step 1 block (`pypto.loop(nb)`): nb root instances, each built by the AICPU control thread
  and scheduled on its own (the loop count is the cost);
- a single unroll factor (`pypto.loop(nb, unroll_list=[64])`): 64 body copies per instance,
  and for any nb that is not a multiple of 64 the copies past the end get a zero valid shape:
  empty tasks that still pay a dispatch and a task head (for nb = 5, 59 of 64).
`loop_unroll` runs a 64-block body while 64 blocks are left, then 16, 4 and 1, so every size
gets few instances and no empty tasks. Each tier picks its own TileShape (`if k <= 4`), as
the guide shows. The numbers are sums over the sizes.
"""
import torch

import pypto
from pypto.tune.cases import Case, checked, main

ROWS, HIDDEN = 16, 128
BLOCKS = (1, 5, 37, 300, 4096)


def body(x, y, b, blocks):
    n = x.shape[0]
    rows = ROWS * blocks
    block = pypto.view(x, [rows, HIDDEN], [b * ROWS, 0],
                       valid_shape=[(n - b * ROWS).max(0).min(rows), HIDDEN])
    y[b * ROWS:, :] = block * pypto.sigmoid(block * 1.702)


def fixed_step(unroll: int | None):
    @pypto.frontend.jit
    def gelu_rows(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                  y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(ROWS, HIDDEN)
        nb = (x.shape[0] + ROWS - 1) // ROWS
        loop = pypto.loop(nb, name="LOOP_BLOCKS", unroll_list=[unroll]) if unroll else \
            pypto.loop(nb, name="LOOP_BLOCKS")
        for b in loop:
            body(x, y, b, 1)
    return gelu_rows


@pypto.frontend.jit
def unrolled(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
             y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    nb = (x.shape[0] + ROWS - 1) // ROWS
    for b, k in pypto.loop_unroll(0, nb, 1, name="LOOP_BLOCKS", unroll_list=[64, 16, 4]):
        if k <= 4:
            pypto.set_vec_tile_shapes(ROWS * k, HIDDEN)   # small tiers: one tile per body
        else:
            pypto.set_vec_tile_shapes(ROWS * 8, HIDDEN)   # 16 and 64 blocks: 128-row tiles
        body(x, y, b, k)


def sizes():
    def make(blocks):
        def inputs():
            x = torch.randn(blocks * ROWS - 3, HIDDEN)   # ragged: the last block is partial
            return x, torch.zeros_like(x)
        return inputs
    return [make(nb) for nb in BLOCKS]


def golden(x, y):
    return x * torch.sigmoid(x * 1.702)


def verdict(runs):
    step1, single, unroll = runs
    holds = unroll.e2e_us < step1.e2e_us and unroll.e2e_us < single.e2e_us
    return holds, (f"end-to-end summed over nb={list(BLOCKS)} blocks: step 1 "
                   f"{step1.e2e_us:.1f} us ({step1.instances} instances), unroll_list [64] "
                   f"{single.e2e_us:.1f} us ({single.tasks} tasks), loop_unroll [64,16,4] "
                   f"{unroll.e2e_us:.1f} us ({unroll.instances} instances, {unroll.tasks} tasks)")


CASE = Case(
    "04_loop_unroll", "loop_unroll [64,16,4] vs a single fixed step over many sizes", "e2e_us",
    [checked("step 1 (loop count)", fixed_step(None), sizes(), golden),
     checked("unroll_list [64] (empty tasks)", fixed_step(64), sizes(), golden),
     checked("loop_unroll [64,16,4]", unrolled, sizes(), golden)],
    verdict=verdict, extra_metrics=("tasks", "instances"))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
