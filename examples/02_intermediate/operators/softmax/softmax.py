#!/usr/bin/env python3
"""Softmax over the last dim, with a dynamic batch dim: the canonical PyPTO operator example.

What this shows:
- a kernel whose first dim is `pypto.DYNAMIC`: inside the kernel `x.shape[0]` is a symbolic
  scalar, and `pypto.loop(x.shape[0], name="LOOP_B", idx_name="i")` iterates over it at run
  time. Each call with a different batch size reuses the one compiled kernel;
- `x[i:i + 1, ...]` takes one batch row (the slice size `i + 1 - i` simplifies to the int 1),
  and `y[i:, ...] = row` writes it back at offset i;
- the softmax itself is a plain Python helper (`softmax_core`) that composes pypto ops; it is
  not a kernel, it just runs while the kernel is traced;
- the vector TileShape (1, 4, 1, 64) has the rank of the [B, 32, 1, 256] tensors;
- a BF16 variant that casts to FP32, computes, and casts back; and `pypto.softmax`, the
  built-in operator, which does the same internally.

Run:  python softmax.py [--run_mode sim|npu] [--list] [softmax::test_softmax]
"""
import sys

import torch

import pypto
import pypto.testing
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

SHAPE = (32, 32, 1, 256)  # [B, N, 1, D]; B is dynamic in the kernels below


def softmax_core(x: pypto.Tensor) -> pypto.Tensor:
    """Numerically stable softmax over the last dim, as a composition of pypto ops."""
    row_max = pypto.amax(x, dim=-1, keepdim=True)
    exp = pypto.exp(pypto.sub(x, row_max))
    row_sum = pypto.sum(exp, dim=-1, keepdim=True)
    return pypto.div(exp, row_sum)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32),
                   y: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 4, 1, 64)
    for i in pypto.loop(x.shape[0], name="LOOP_B", idx_name="i"):
        row = x[i:i + 1, ...]               # [1, 32, 1, 256]
        y[i:, ...] = softmax_core(row)


@pypto.options(pass_options={"enable_slice": True})
def test_softmax(device: str = DEVICE) -> None:
    for batch in (SHAPE[0], 7, 1):          # different batch sizes, one compiled kernel
        x = torch.rand(batch, *SHAPE[1:], device=device)
        y = torch.zeros(batch, *SHAPE[1:], device=device)
        # the golden's tolerance: the kernel's own error bound, per element (see the README)
        with pypto.testing.forward_bounds(softmax_kernel, x, y) as bounds:
            softmax_kernel(x, y)
        pypto.testing.assert_close(y, torch.softmax(x.double(), dim=-1), bounds["y"], "y")
    assert softmax_kernel.compile_count == 1


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def softmax_bf16_kernel(x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
                        y: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(1, 4, 1, 64)  # 64 x 2 B: 32-byte aligned for BF16 as well
    for i in pypto.loop(x.shape[0], name="LOOP_B", idx_name="i"):
        row = pypto.cast(x[i:i + 1, ...], pypto.DT_FP32)
        y[i:, ...] = pypto.cast(softmax_core(row), pypto.DT_BF16)


@pypto.options(pass_options={"enable_slice": True})
def test_softmax_bf16(device: str = DEVICE) -> None:
    x = torch.randn(*SHAPE, device=device).to(torch.bfloat16)
    y = torch.zeros(*SHAPE, dtype=torch.bfloat16, device=device)
    with pypto.testing.forward_bounds(softmax_bf16_kernel, x, y) as bounds:
        softmax_bf16_kernel(x, y)
    golden = torch.softmax(x.double(), dim=-1)
    pypto.testing.assert_close(y, golden, bounds["y"], "y")   # the BF16 rounding included


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def builtin_softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_BF16),
                           y: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(8, 256)
    n = x.shape[0]
    for i in pypto.loop(0, n, 8, name="LOOP_ROWS", idx_name="i"):
        rows = pypto.view(x, [8, 256], [i, 0], valid_shape=[(n - i).min(8), 256])
        y[i:, :] = pypto.softmax(rows, dim=-1)   # FP32 inside, BF16 out


@pypto.options(pass_options={"enable_slice": True})
def test_builtin_softmax(device: str = DEVICE) -> None:
    x = (torch.randn(29, 256, device=device) * 3).to(torch.bfloat16)  # 3 full blocks + tail
    y = torch.zeros(29, 256, dtype=torch.bfloat16, device=device)
    with pypto.testing.forward_bounds(builtin_softmax_kernel, x, y) as bounds:
        builtin_softmax_kernel(x, y)
    golden = torch.softmax(x.double(), dim=-1)
    pypto.testing.assert_close(y, golden, bounds["y"], "y")


EXAMPLES = {
    "softmax::test_softmax": test_softmax,
    "softmax::test_softmax_bf16": test_softmax_bf16,
    "softmax::test_builtin_softmax": test_builtin_softmax,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
