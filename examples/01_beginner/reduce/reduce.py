#!/usr/bin/env python3
"""Reductions: sum, amax, amin and mean over one dim, with and without keepdim.

What this shows:
- `pypto.sum / amax / amin / mean(x, dim=..., keepdim=...)` on a 3-D tensor, any dim (negative
  dims count from the end);
- `keepdim=False` drops the reduced dim, `keepdim=True` keeps it with size 1, which is what
  you want when the result is broadcast back against the input (`x - amax(x, -1, True)`);
- the vector TileShape has the rank of the tensor being reduced;
- BF16 inputs are accumulated in FP32 and rounded once.

Run:  python reduce.py [--run_mode sim|npu] [--list] [reduce::test_reduce_dims]
"""
import sys

import torch

import pypto
import pypto.testing
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

B, S, H = 8, 16, 64


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def reduce_kernel(x: pypto.Tensor([B, S, H], pypto.DT_FP32),
                  sum_last: pypto.Tensor([B, S], pypto.DT_FP32),
                  max_mid: pypto.Tensor([B, 1, H], pypto.DT_FP32),
                  min_first: pypto.Tensor([S, H], pypto.DT_FP32),
                  mean_last: pypto.Tensor([B, S, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 16, 64)  # rank 3: the rank of x
    sum_last[:] = pypto.sum(x, dim=-1)                 # [8, 16, 64] -> [8, 16]
    max_mid[:] = pypto.amax(x, dim=1, keepdim=True)    # [8, 16, 64] -> [8, 1, 64]
    min_first[:] = pypto.amin(x, dim=0)                # [8, 16, 64] -> [16, 64]
    mean_last[:] = pypto.mean(x, dim=2, keepdim=True)  # [8, 16, 64] -> [8, 16, 1]


@pypto.options(pass_options={"enable_slice": True})
def test_reduce_dims(device: str = DEVICE) -> None:
    x = torch.randn(B, S, H, device=device)
    sum_last = torch.zeros(B, S, device=device)
    max_mid = torch.zeros(B, 1, H, device=device)
    min_first = torch.zeros(S, H, device=device)
    mean_last = torch.zeros(B, S, 1, device=device)
    outs = (sum_last, max_mid, min_first, mean_last)
    # the goldens' tolerance: the kernel's own error bound, per element (see the README)
    with pypto.testing.forward_bounds(reduce_kernel, x, *outs) as bounds:
        reduce_kernel(x, *outs)
    x64 = x.double()
    goldens = {"sum_last": x64.sum(dim=-1), "max_mid": x64.amax(dim=1, keepdim=True),
               "min_first": x64.amin(dim=0), "mean_last": x64.mean(dim=2, keepdim=True)}
    for out, (name, golden) in zip(outs, goldens.items()):
        pypto.testing.assert_close(out, golden, bounds[name], name)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def normalize_kernel(x: pypto.Tensor([S, H], pypto.DT_FP32),
                     centered: pypto.Tensor([S, H], pypto.DT_FP32),
                     var: pypto.Tensor([S, 1], pypto.DT_FP32),
                     span: pypto.Tensor([S], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    # keepdim=True results broadcast back against x: [16, 64] - [16, 1]
    mu = pypto.sum(x, dim=-1, keepdim=True) * (1.0 / H)
    diff = x - mu
    centered[:] = diff
    var[:] = pypto.mean(diff * diff, dim=-1, keepdim=True)
    hi, lo = pypto.amax(x, dim=-1), pypto.amin(x, dim=-1)  # [16, 64] -> [16]
    pypto.set_vec_tile_shapes(16)  # the subtraction below works on rank-1 tensors
    span[:] = hi - lo


@pypto.options(pass_options={"enable_slice": True})
def test_keepdim_broadcast(device: str = DEVICE) -> None:
    x = torch.randn(S, H, device=device)
    centered = torch.zeros(S, H, device=device)
    var = torch.zeros(S, 1, device=device)
    span = torch.zeros(S, device=device)
    with pypto.testing.forward_bounds(normalize_kernel, x, centered, var, span) as bounds:
        normalize_kernel(x, centered, var, span)
    x64 = x.double()
    pypto.testing.assert_close(centered, x64 - x64.mean(dim=-1, keepdim=True),
                               bounds["centered"], "centered")
    pypto.testing.assert_close(var, x64.var(dim=-1, keepdim=True, unbiased=False),
                               bounds["var"], "var")
    pypto.testing.assert_close(span, x64.amax(dim=-1) - x64.amin(dim=-1), bounds["span"],
                               "span")


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def bf16_sum_kernel(x: pypto.Tensor([S, 256], pypto.DT_BF16),
                    out: pypto.Tensor([S, 1], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(16, 256)
    out[:] = pypto.sum(x, dim=-1, keepdim=True)


@pypto.options(pass_options={"enable_slice": True})
def test_bf16_sum(device: str = DEVICE) -> None:
    x = torch.rand(S, 256, device=device).to(torch.bfloat16)
    out = torch.zeros(S, 1, dtype=torch.bfloat16, device=device)
    with pypto.testing.forward_bounds(bf16_sum_kernel, x, out) as bounds:
        bf16_sum_kernel(x, out)
    golden = x.double().sum(dim=-1, keepdim=True)   # exact; the kernel's BF16 rounding is bounded
    pypto.testing.assert_close(out, golden, bounds["out"], "out")


EXAMPLES = {
    "reduce::test_reduce_dims": test_reduce_dims,
    "reduce::test_keepdim_broadcast": test_keepdim_broadcast,
    "reduce::test_bf16_sum": test_bf16_sum,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
