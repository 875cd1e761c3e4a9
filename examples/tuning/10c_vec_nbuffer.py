"""Tuning 10c - `vec_nbuffer_setting`: merge many small isomorphic vector tasks.

`exp(a + b) * b` on (64,4096) with TileShape (8,512) is 64 isomorphic subgraphs of well under
10 us each: the task heads and the dispatch of 64 tasks are a large part of the kernel.
`vec_nbuffer_setting={-2: 1, -1: N}` (manual multi-in/out: these subgraphs read inputs and
write outputs, so they share no neighbour and the plain modes leave them alone) merges runs of
N of them into one task. Merging a few cuts the overhead; merging too many serialises the work
on too few cores, so the curve is U-shaped. The guide's sweep (S6: 13.6 us unmerged, then
8.1 / 10.0 / 16.8 / 112.9 us for N = 2 / 4 / 8 / 64) is best at N = 2, and so is ours.
"""
import torch

import pypto
from pypto.tune.cases import Case, Measured, checked, main

S, H = 64, 4096
FACTORS = (1, 2, 4, 8, 64)


def make(factor: int):
    setting = {} if factor == 1 else {-2: 1, -1: factor}

    @pypto.frontend.jit(pass_options={"vec_nbuffer_setting": setting})
    def fused(a: pypto.Tensor([S, H], pypto.DT_FP32), b: pypto.Tensor([S, H], pypto.DT_FP32),
              y: pypto.Tensor([S, H], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 512)
        y[:] = pypto.exp(a + b) * b
    return fused


def inputs():
    return torch.rand(S, H), torch.rand(S, H), torch.zeros(S, H)


def golden(a, b, y):
    return torch.exp(a + b) * b


def verdict(runs: list[Measured]) -> tuple[bool, str]:
    """U-shaped: the fastest N is a merged one, and merging everything is slower than it."""
    times = [r.kernel_us for r in runs]
    best = min(range(len(runs)), key=times.__getitem__)
    holds = 0 < best < len(runs) - 1
    curve = " / ".join(f"{t:.1f}" for t in times)
    return holds, (f"kernel time for N = {'/'.join(map(str, FACTORS))}: {curve} us; "
                   f"fastest at N = {FACTORS[best]} ({times[0] / times[best]:.2f}x better than "
                   f"unmerged)")


CASE = Case(
    "10c_vec_nbuffer", "vec_nbuffer_setting sweep: merge small isomorphic vector tasks",
    "kernel_us",
    [checked("vec_nbuffer {}" if n == 1 else f"vec_nbuffer {{-2: 1, -1: {n}}}", make(n),
             inputs, golden) for n in FACTORS],
    guide="S6: 13.6 -> 8.1/10.0/16.8/112.9 us for N=2/4/8/64, best at N=2",
    verdict=verdict, extra_metrics=("tasks",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
