#!/usr/bin/env python3
"""Conditions: runtime branches on symbolic scalars, loop edges, and trace-time branches.

What this shows:
- `if` on a symbolic condition (`i < 2`, `i % 2 == 0`, ...) inside a `pypto.loop` is a
  runtime branch: every side is compiled and the iteration picks one; `elif`/`else` and
  nesting work as in Python;
- `pypto.is_loop_begin(i)` / `pypto.is_loop_end(i)` are true on the first / last iteration,
  which is how loop-carried state is initialised and flushed (here a running sum kept in a
  `pypto.tensor` scratch buffer);
- a plain Python helper called from the kernel spells a runtime branch `if pypto.cond(...)`;
- `if` on a Python value (a non-tensor kernel argument) is decided while tracing: only the
  taken side is compiled, and another value compiles another kernel.

Run:  python condition.py [--run_mode sim|npu] [--list] [condition::test_if_elif_else]
"""
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics


# ---- if / elif / else on the loop index ------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def branch_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                  y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(x.shape[0], name="LOOP_ROWS", idx_name="i"):
        row = x[i:i + 1, :]
        if i < 2:
            y[i:, :] = row * 2.0
        elif i < 5:
            y[i:, :] = row + 10.0
        else:
            if i % 2 == 0:                   # nested runtime branch
                y[i:, :] = pypto.abs(row)
            else:
                y[i:, :] = -pypto.abs(row)


def golden_branch(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    for i in range(x.shape[0]):
        if i < 2:
            y[i] = x[i] * 2.0
        elif i < 5:
            y[i] = x[i] + 10.0
        else:
            y[i] = x[i].abs() if i % 2 == 0 else -x[i].abs()
    return y


@pypto.options(pass_options={"enable_slice": True})
def test_if_elif_else(device: str = DEVICE) -> None:
    for rows in (9, 3):
        x = torch.randn(rows, 64, device=device)
        y = torch.zeros(rows, 64, device=device)
        branch_kernel(x, y)
        assert_allclose(y.numpy(), golden_branch(x).numpy(), rtol=1e-3, atol=1e-3)


# ---- is_loop_begin / is_loop_end -------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def running_sum_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                       prefix: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                       total: pypto.Tensor([1, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    acc = pypto.tensor([1, 64], pypto.DT_FP32, "acc")   # scratch, not initialised
    for i in pypto.loop(x.shape[0], name="LOOP_ACC", idx_name="i"):
        row = x[i:i + 1, :]
        if pypto.is_loop_begin(i):
            acc[:] = row                     # first iteration: initialise the carried state
        else:
            acc[:] = acc + row
        prefix[i:, :] = acc
        if pypto.is_loop_end(i):
            total[:] = acc                   # last iteration: flush it


@pypto.options(pass_options={"enable_slice": True})
def test_loop_begin_end(device: str = DEVICE) -> None:
    for rows in (6, 1):
        x = torch.randn(rows, 64, device=device)
        prefix = torch.zeros(rows, 64, device=device)
        total = torch.zeros(1, 64, device=device)
        running_sum_kernel(x, prefix, total)
        assert_allclose(prefix.numpy(), x.cumsum(dim=0).numpy(), rtol=1e-3, atol=1e-3)
        assert_allclose(total.numpy(), x.sum(dim=0, keepdim=True).numpy(), rtol=1e-3, atol=1e-3)


# ---- pypto.cond in a plain helper ------------------------------------------------------------

def scale_by_parity(row: pypto.Tensor, i: pypto.SymbolicScalar) -> pypto.Tensor:
    """A plain helper (not a kernel): a runtime branch here is written with pypto.cond."""
    if pypto.cond(i % 2 == 0):
        return row * 2.0
    else:
        return row * 0.5


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def cond_helper_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32),
                       y: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(8, name="LOOP_ROWS", idx_name="i"):
        y[i:, :] = scale_by_parity(x[i:i + 1, :], i)


@pypto.options(pass_options={"enable_slice": True})
def test_cond_in_helper(device: str = DEVICE) -> None:
    x = torch.randn(8, 64, device=device)
    y = torch.zeros(8, 64, device=device)
    cond_helper_kernel(x, y)
    golden = x.clone()
    golden[0::2] *= 2.0
    golden[1::2] *= 0.5
    assert_allclose(y.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)


# ---- a trace-time branch ---------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def maybe_bias_kernel(x: pypto.Tensor([16, 64], pypto.DT_FP32),
                      bias: pypto.Tensor([64], pypto.DT_FP32),
                      y: pypto.Tensor([16, 64], pypto.DT_FP32),
                      use_bias: bool):
    pypto.set_vec_tile_shapes(16, 64)
    if use_bias:                             # a Python bool: only the taken side is compiled
        y[:] = x * 3.0 + bias
    else:
        y[:] = x * 3.0


@pypto.options(pass_options={"enable_slice": True})
def test_trace_time_branch(device: str = DEVICE) -> None:
    x = torch.randn(16, 64, device=device)
    bias = torch.randn(64, device=device)
    for use_bias in (True, False, True):
        y = torch.zeros(16, 64, device=device)
        maybe_bias_kernel(x, bias, y, use_bias)
        golden = x * 3.0 + bias if use_bias else x * 3.0
        assert_allclose(y.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)
    assert maybe_bias_kernel.compile_count == 2   # one kernel per value of use_bias


EXAMPLES = {
    "condition::test_if_elif_else": test_if_elif_else,
    "condition::test_loop_begin_end": test_loop_begin_end,
    "condition::test_cond_in_helper": test_cond_in_helper,
    "condition::test_trace_time_branch": test_trace_time_branch,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
