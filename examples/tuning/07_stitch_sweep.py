"""Tuning 7 - `stitch_function_max_num`: how many root instances one device task stitches.

An attention-like kernel loops over 256 (batch x head) items; each iteration is one root
instance (Q·Kᵀ, softmax, ·V). The AICPU control thread packs up to `stitch_function_max_num`
instances into one device task and the cores run a device task's tasks out of order. With 1
every iteration waits for the previous one to drain (the cores idle between device tasks): a
long kernel time. Larger windows overlap the iterations, so kernel time falls, but the first
task cannot start before its whole window is built, so end-to-end time has an interior
minimum: the guide's glm-attention numbers are 1230/1590 -> 180/803 -> 150/977 us (kernel/E2E)
for 1 -> 128 -> 512.
"""
import math

import torch

import pypto
from pypto.tune.cases import Case, checked, main

ITEMS, SQ, SKV, D = 256, 64, 128, 64
SCALE = 1.0 / math.sqrt(D)
STITCH = (1, 16, 128, 512)


def make(stitch: int):
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch})
    def attention(q: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
                  k: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
                  v: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
                  o: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [128, 128])
        pypto.set_vec_tile_shapes(64, SKV)
        for b in pypto.loop(q.shape[0] // SQ, name="LOOP_ITEMS"):
            qb = pypto.view(q, [SQ, D], [b * SQ, 0])
            kb = pypto.view(k, [SKV, D], [b * SKV, 0])
            vb = pypto.view(v, [SKV, D], [b * SKV, 0])
            s = pypto.matmul(qb, kb, pypto.DT_FP32, b_trans=True) * SCALE
            e = pypto.exp(s - pypto.amax(s, -1, keepdim=True))
            p = e / pypto.sum(e, -1, keepdim=True)
            o[b * SQ:, :] = pypto.matmul(pypto.cast(p, pypto.DT_FP16), vb, pypto.DT_FP32)
    return attention


def inputs():
    q = torch.randn(ITEMS * SQ, D).half()
    k = torch.randn(ITEMS * SKV, D).half()
    v = torch.randn(ITEMS * SKV, D).half()
    return q, k, v, torch.zeros(ITEMS * SQ, D)


def golden(q, k, v, o):
    qf = q.float().reshape(ITEMS, SQ, D)
    kf = k.float().reshape(ITEMS, SKV, D)
    vf = v.float().reshape(ITEMS, SKV, D)
    p = torch.softmax(qf @ kf.transpose(1, 2) * SCALE, -1)
    return (p.half().float() @ vf).reshape(ITEMS * SQ, D)


def verdict(runs):
    kernel = [r.kernel_us for r in runs]
    e2e = [r.e2e_us for r in runs]
    falls = all(a > b for a, b in zip(kernel, kernel[1:]))
    best = e2e.index(min(e2e))
    interior = 0 < best < len(e2e) - 1
    text = "kernel/E2E us: " + ", ".join(
        f"stitch {s}: {k:.0f}/{e:.0f}" for s, k, e in zip(STITCH, kernel, e2e))
    text += ("; kernel time falls" if falls else "; kernel time does NOT fall monotonically")
    text += (f", E2E lowest at stitch {STITCH[best]}" if interior
             else ", E2E has NO interior minimum")
    return falls and interior, text


CASE = Case(
    "07_stitch_sweep", "stitch_function_max_num 1 / 16 / 128 / 512 on an attention-like loop",
    "kernel_us",
    [checked(f"stitch {s}", make(s), inputs, golden, rtol=2e-3, atol=2e-3) for s in STITCH],
    verdict=verdict, guide="1230/1590 -> 180/803 -> 150/977 us (kernel/E2E, stitch 1/128/512)",
    extra_metrics=("e2e_us", "aicpu_us"))

if __name__ == "__main__":
    raise SystemExit(main(CASE))
