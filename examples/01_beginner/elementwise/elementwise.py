#!/usr/bin/env python3
"""Elementwise operations: binary and unary math, Python scalars, broadcasting, comparisons.

What this shows:
- the operator forms (`a + b`, `a * 2.0`, `1.0 - a`, `3.0 / a`, `-a`) and the function forms
  (`pypto.add`, `pypto.maximum`, ...) build the same ops;
- a Python scalar takes the tensor's dtype (an int scalar with a float tensor is fine);
- broadcasting is numpy-style with ranks aligned from the right: `[32, 64] * [64]`,
  `[32, 64] + [32, 1]`, `[32, 64] - [1, 64]`;
- comparisons give BOOL tensors and `pypto.where` selects with them;
- BF16 tensors are computed in FP32 and rounded once, like torch on the CPU.

Run:  python elementwise.py [--run_mode sim|npu] [--list] [elementwise::test_binary_ops]
"""
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

ROWS, COLS = 32, 64


# ---- binary ops between tensors --------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def binary_kernel(a: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  b: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  add_out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  sub_out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  mul_out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  div_out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  max_out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  min_out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    add_out[:] = a + b
    sub_out[:] = pypto.sub(a, b)
    mul_out[:] = a * b
    div_out[:] = pypto.div(a, b)
    max_out[:] = pypto.maximum(a, b)
    min_out[:] = pypto.minimum(a, b)


@pypto.options(pass_options={"enable_slice": True})
def test_binary_ops(device: str = DEVICE) -> None:
    a = torch.randn(ROWS, COLS, device=device)
    b = torch.rand(ROWS, COLS, device=device) + 0.5  # keep the divisor away from 0
    outs = [torch.zeros(ROWS, COLS, device=device) for _ in range(6)]
    binary_kernel(a, b, *outs)
    goldens = [a + b, a - b, a * b, a / b, torch.maximum(a, b), torch.minimum(a, b)]
    for out, golden in zip(outs, goldens):
        assert_allclose(out.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)


# ---- Python scalars --------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def scalar_kernel(x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  affine: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  rsub: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  rdiv: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  clipped: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  square: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                  scale: float):
    pypto.set_vec_tile_shapes(32, 32)
    affine[:] = x * scale + 1        # `scale` is a trace-time constant; `1` is an int scalar
    rsub[:] = 1.0 - x                # reflected forms work too
    rdiv[:] = 3.0 / (pypto.abs(x) + 1.0)
    clipped[:] = pypto.maximum(pypto.minimum(x, 0.5), -0.5)
    square[:] = x ** 2


@pypto.options(pass_options={"enable_slice": True})
def test_scalar_ops(device: str = DEVICE) -> None:
    x = torch.randn(ROWS, COLS, device=device)
    outs = [torch.zeros(ROWS, COLS, device=device) for _ in range(5)]
    scalar_kernel(x, *outs, 2.5)
    goldens = [x * 2.5 + 1, 1.0 - x, 3.0 / (x.abs() + 1.0), x.clamp(-0.5, 0.5), x ** 2]
    for out, golden in zip(outs, goldens):
        assert_allclose(out.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)


# ---- unary math ------------------------------------------------------------------------------

UNARY = {  # name -> (pypto op, torch golden)
    "exp": (pypto.exp, torch.exp),
    "log": (lambda t: pypto.log(pypto.abs(t) + 0.1), lambda t: torch.log(t.abs() + 0.1)),
    "sqrt": (lambda t: pypto.sqrt(pypto.abs(t)), lambda t: torch.sqrt(t.abs())),
    "rsqrt": (lambda t: pypto.rsqrt(pypto.abs(t) + 0.5), lambda t: torch.rsqrt(t.abs() + 0.5)),
    "reciprocal": (lambda t: pypto.reciprocal(t + 4.0), lambda t: torch.reciprocal(t + 4.0)),
    "neg": (lambda t: -t, torch.neg),
    "sin": (pypto.sin, torch.sin),
    "cos": (pypto.cos, torch.cos),
    "tanh": (pypto.tanh, torch.tanh),
    "floor": (lambda t: pypto.floor(t * 4.0), lambda t: torch.floor(t * 4.0)),
    "ceil": (lambda t: pypto.ceil(t * 4.0), lambda t: torch.ceil(t * 4.0)),
}


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def unary_kernel(x: pypto.Tensor([4, ROWS, COLS], pypto.DT_FP32),
                 out: pypto.Tensor([len(UNARY), 4, ROWS, COLS], pypto.DT_FP32)):
    # The Python loop is unrolled while tracing: one op chain per entry of UNARY.
    for k, (op, _) in enumerate(UNARY.values()):
        pypto.set_vec_tile_shapes(2, 16, 64)             # the ops are 3-D
        y = op(x)
        pypto.set_vec_tile_shapes(1, 2, 16, 64)          # the write below is 4-D
        out[k:k + 1, ...] = pypto.unsqueeze(y, 0)


@pypto.options(pass_options={"enable_slice": True})
def test_unary_ops(device: str = DEVICE) -> None:
    x = torch.randn(4, ROWS, COLS, device=device)
    out = torch.zeros(len(UNARY), 4, ROWS, COLS, device=device)
    unary_kernel(x, out)
    for k, (name, (_, golden)) in enumerate(UNARY.items()):
        assert_allclose(out[k].numpy(), golden(x).numpy(), rtol=1e-3, atol=1e-3, err_msg=name)


# ---- broadcasting ----------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def broadcast_kernel(x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                     row: pypto.Tensor([COLS], pypto.DT_FP32),
                     col: pypto.Tensor([ROWS, 1], pypto.DT_FP32),
                     top: pypto.Tensor([1, COLS], pypto.DT_FP32),
                     out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    scaled = x * row           # [32, 64] * [64]     (ranks aligned from the right)
    shifted = scaled + col     # [32, 64] + [32, 1]
    out[:] = shifted - top     # [32, 64] - [1, 64]


@pypto.options(pass_options={"enable_slice": True})
def test_broadcast(device: str = DEVICE) -> None:
    x = torch.randn(ROWS, COLS, device=device)
    row = torch.randn(COLS, device=device)
    col = torch.randn(ROWS, 1, device=device)
    top = torch.randn(1, COLS, device=device)
    out = torch.zeros(ROWS, COLS, device=device)
    broadcast_kernel(x, row, col, top, out)
    assert_allclose(out.numpy(), (x * row + col - top).numpy(), rtol=1e-3, atol=1e-3)


# ---- comparisons and where -------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def compare_kernel(a: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                   b: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
                   greater: pypto.Tensor([ROWS, COLS], pypto.DT_BOOL),
                   picked: pypto.Tensor([ROWS, COLS], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    mask = a > b                            # BOOL tensor
    greater[:] = mask
    picked[:] = pypto.where(mask, a - b, b * 0.5)


@pypto.options(pass_options={"enable_slice": True})
def test_compare_where(device: str = DEVICE) -> None:
    a = torch.randn(ROWS, COLS, device=device)
    b = torch.randn(ROWS, COLS, device=device)
    greater = torch.zeros(ROWS, COLS, dtype=torch.bool, device=device)
    picked = torch.zeros(ROWS, COLS, device=device)
    compare_kernel(a, b, greater, picked)
    assert torch.equal(greater, a > b)
    assert_allclose(picked.numpy(), torch.where(a > b, a - b, b * 0.5).numpy(),
                    rtol=1e-3, atol=1e-3)


# ---- BF16 ------------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def bf16_kernel(a: pypto.Tensor([ROWS, COLS], pypto.DT_BF16),
                b: pypto.Tensor([ROWS, COLS], pypto.DT_BF16),
                out: pypto.Tensor([ROWS, COLS], pypto.DT_BF16),
                out_fp32: pypto.Tensor([ROWS, COLS], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)       # 64 x 2 B: a multiple of 32 B
    y = a * b + a
    out[:] = y
    out_fp32[:] = pypto.cast(pypto.exp(y), pypto.DT_FP32)


@pypto.options(pass_options={"enable_slice": True})
def test_bf16(device: str = DEVICE) -> None:
    a = torch.randn(ROWS, COLS, device=device).to(torch.bfloat16)
    b = torch.randn(ROWS, COLS, device=device).to(torch.bfloat16)
    out = torch.zeros(ROWS, COLS, dtype=torch.bfloat16, device=device)
    out_fp32 = torch.zeros(ROWS, COLS, device=device)
    bf16_kernel(a, b, out, out_fp32)
    y = a * b + a
    torch.testing.assert_close(out, y, atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(out_fp32, torch.exp(y).float(), atol=1e-2, rtol=1e-2)


EXAMPLES = {
    "elementwise::test_binary_ops": test_binary_ops,
    "elementwise::test_scalar_ops": test_scalar_ops,
    "elementwise::test_unary_ops": test_unary_ops,
    "elementwise::test_broadcast": test_broadcast,
    "elementwise::test_compare_where": test_compare_where,
    "elementwise::test_bf16": test_bf16,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
