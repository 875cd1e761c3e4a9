#!/usr/bin/env python3
"""Loops: `pypto.loop` forms, nesting, dynamic bounds, and what "tracing" means for Python code.

What this shows:
- `pypto.loop(stop)`, `pypto.loop(start, stop)` and `pypto.loop(start, stop, step)`, with
  `name=` and `idx_name=`; the index is a symbolic scalar, so it can offset views and writes
  but is not a Python int;
- nested loops, with a dynamic outer bound (`x.shape[0]` of a `pypto.DYNAMIC` dim);
- a Python `for k in range(3)` inside a kernel is unrolled while tracing (three copies);
- print/count semantics: the body of a `pypto.loop` is run as Python once per control path
  when the kernel is compiled, never once per iteration, and not at all on later calls that
  reuse the compiled kernel. A body with one runtime `if/else` has two paths, so a `print()`
  in it prints twice, however many iterations the loop has at run time.

Run:  python loop.py [--run_mode sim|npu] [--list] [loop::test_loop_forms]
"""
import collections
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics


# ---- the three call forms --------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def loop_forms_kernel(x: pypto.Tensor([16, 64], pypto.DT_FP32),
                      y_stop: pypto.Tensor([16, 64], pypto.DT_FP32),
                      y_start_stop: pypto.Tensor([16, 64], pypto.DT_FP32),
                      y_step: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(16, name="LOOP_STOP", idx_name="i"):            # i = 0, 1, ..., 15
        y_stop[i:, :] = x[i:i + 1, :] * 2.0
    for i in pypto.loop(4, 12, name="LOOP_START_STOP", idx_name="i"):   # i = 4, ..., 11
        y_start_stop[i:, :] = x[i:i + 1, :] + 1.0
    for i in pypto.loop(2, 14, 3, name="LOOP_STEP", idx_name="i"):      # i = 2, 5, 8, 11
        y_step[i:, :] = -x[i:i + 1, :]


@pypto.options(pass_options={"enable_slice": True})
def test_loop_forms(device: str = DEVICE) -> None:
    x = torch.randn(16, 64, device=device)
    outs = [torch.zeros(16, 64, device=device) for _ in range(3)]
    loop_forms_kernel(x, *outs)
    golden_stop = x * 2.0
    golden_start_stop = torch.zeros(16, 64)
    golden_start_stop[4:12] = x[4:12] + 1.0        # rows outside the range stay untouched
    golden_step = torch.zeros(16, 64)
    golden_step[2:14:3] = -x[2:14:3]
    for out, golden in zip(outs, (golden_stop, golden_start_stop, golden_step)):
        assert_allclose(out.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)


# ---- nested loops with a dynamic bound -------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def nested_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64, 128], pypto.DT_FP32),
                  y: pypto.Tensor([pypto.DYNAMIC, 64, 128], pypto.DT_FP32),
                  row_max: pypto.Tensor([pypto.DYNAMIC, 64, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 16, 128)
    for b in pypto.loop(x.shape[0], name="LOOP_B", idx_name="b"):
        for s in pypto.loop(0, 64, 16, name="LOOP_S", idx_name="s"):
            blk = x[b:b + 1, s:s + 16, :]                # [1, 16, 128]
            y[b:, s:, :] = blk * blk
            row_max[b:, s:, :] = pypto.amax(blk, dim=-1, keepdim=True)


@pypto.options(pass_options={"enable_slice": True})
def test_nested_loops(device: str = DEVICE) -> None:
    for batch in (3, 5):
        x = torch.randn(batch, 64, 128, device=device)
        y = torch.zeros(batch, 64, 128, device=device)
        row_max = torch.zeros(batch, 64, 1, device=device)
        nested_kernel(x, y, row_max)
        assert_allclose(y.numpy(), (x * x).numpy(), rtol=1e-3, atol=1e-3)
        assert_allclose(row_max.numpy(), x.amax(-1, keepdim=True).numpy(), rtol=1e-3, atol=1e-3)
    assert nested_kernel.compile_count == 1


# ---- how often Python code in a loop body runs -----------------------------------------------

TRACE_COUNT = collections.Counter()


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def print_count_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                       y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    TRACE_COUNT["kernel body"] += 1
    for i in pypto.loop(x.shape[0], name="LOOP_PRINT", idx_name="i"):
        TRACE_COUNT["loop body"] += 1
        print(f"  tracing LOOP_PRINT body, path #{TRACE_COUNT['loop body']} (i = {i!r})")
        row = x[i:i + 1, :]
        if i % 2 == 0:                       # a runtime branch: both sides are traced
            TRACE_COUNT["even branch"] += 1
            out = row * 2.0
        else:
            TRACE_COUNT["odd branch"] += 1
            out = row - 1.0
        for _ in range(3):                   # Python loop: unrolled into 3 copies per trace
            TRACE_COUNT["unrolled"] += 1
            out = out * 0.5
        y[i:, :] = out


@pypto.options(pass_options={"enable_slice": True})
def test_print_count(device: str = DEVICE) -> None:
    TRACE_COUNT.clear()
    x = torch.randn(10, 64, device=device)
    y = torch.zeros(10, 64, device=device)
    print_count_kernel(x, y)                 # compiles: prints twice, not 10 times
    expected = {"kernel body": 1, "loop body": 2, "even branch": 1, "odd branch": 1,
                "unrolled": 6}
    assert dict(TRACE_COUNT) == expected, dict(TRACE_COUNT)
    golden = torch.where(torch.arange(10).unsqueeze(1) % 2 == 0, x * 2.0, x - 1.0) * 0.125
    assert_allclose(y.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)

    x = torch.randn(37, 64, device=device)   # another size: the compiled kernel is reused,
    y = torch.zeros(37, 64, device=device)   # so no Python code in the body runs at all
    print_count_kernel(x, y)
    assert dict(TRACE_COUNT) == expected, dict(TRACE_COUNT)
    golden = torch.where(torch.arange(37).unsqueeze(1) % 2 == 0, x * 2.0, x - 1.0) * 0.125
    assert_allclose(y.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)
    assert print_count_kernel.compile_count == 1


EXAMPLES = {
    "loop::test_loop_forms": test_loop_forms,
    "loop::test_nested_loops": test_nested_loops,
    "loop::test_print_count": test_print_count,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
