"""Tuning 11 - `device_sched_mode=1`: run a consumer right after its producer (L2 affinity).

`exp` on TileShape (4,512) feeds `sqrt(a + 1)` on (8,256): the tiles do not match, so the
intermediate `a` goes through GM and every consumer task waits for its two producer tasks. With
the default FIFO scheduling (mode 0) the ready queue runs all producers first; once they have
written more than L2 holds, the early parts of `a` are evicted and every consumer reads from
HBM. Mode 1 sends a freshly ready task straight to an idle core and otherwise takes the newest
ready task first, so a consumer runs while its input is still in L2.

The intermediate must outgrow L2 for this to show. To keep the run short the script simulates
an A2/A3 whose L2 is 8 MiB instead of 192 MiB (a machine file inheriting the a2a3 preset) with
an 8 MiB intermediate. The kernel time barely moves here: 1024 tasks of about 1 us are bound by
task heads and dispatch, not by GM bandwidth; the ratio the guide names is the L2 hit ratio.
"""
import os
import tempfile

import torch

import pypto
from pypto.tune.cases import Case, checked, main

S, H = 2048, 1024
_MACHINE_DIR = tempfile.TemporaryDirectory(prefix="openpto_tuning11_")   # removed at exit
MACHINE = os.path.join(_MACHINE_DIR.name, "small_l2.toml")
with open(MACHINE, "w") as f:
    f.write('base = "a2a3"\nname = "a2a3_l2_8mib"\n[memory]\nl2_capacity = 8388608\n')


def make(mode: int):
    @pypto.frontend.jit(runtime_options={"machine": MACHINE, "device_sched_mode": mode})
    def chain(x: pypto.Tensor([S, H], pypto.DT_FP32), y: pypto.Tensor([S, H], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 512)
        a = pypto.exp(x)
        pypto.set_vec_tile_shapes(8, 256)      # mismatched on purpose: `a` goes through GM
        y[:] = pypto.sqrt(a + 1.0)
    return chain


def inputs():
    x = torch.rand(S, H)
    return x, torch.zeros_like(x)


def golden(x, y):
    return torch.sqrt(torch.exp(x) + 1.0)


CASE = Case(
    "11_device_sched_mode", "device_sched_mode=1: L2-affinity scheduling of a producer chain",
    "l2_hit_pct",
    [checked("device_sched_mode=0 (FIFO)", make(0), inputs, golden),
     checked("device_sched_mode=1 (L2)", make(1), inputs, golden)],
    guide="mode 1 when the consumer's L2 hit rate matters (no figure published)",
    extra_metrics=("kernel_us",))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
