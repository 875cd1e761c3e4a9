#!/usr/bin/env python3
"""Dynamic shapes: DYNAMIC dims, named dynamic dims, and tail blocks with valid shapes.

What this shows:
- a dim annotated `pypto.DYNAMIC` is a symbolic scalar inside the kernel (`x.shape[0]`); the
  kernel is compiled once and reused for every size of that dim (`kernel.compile_count`);
- `pypto.STATIC` (and plain ints) are part of the compiled kernel: a new static size compiles
  a new kernel;
- a named dynamic dim, `N = pypto.frontend.dynamic("N")`, ties several parameters to one
  runtime size; tensors that disagree on N are rejected when the kernel is called;
- a dynamic dim processed in fixed-size blocks: `pypto.view(x, [16, H], [off, 0],
  valid_shape=[(n - off).min(16), H])` marks how many rows of the last block are real;
  `pypto.ceildiv(n, 16)` counts the blocks.

Run:  python dynamic.py [--run_mode sim|npu] [--list] [dynamic::test_dynamic_dims]
"""
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

SEEN = {}  # what the kernel bodies saw while they were traced


# ---- DYNAMIC dims ----------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def affine_kernel(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
                  y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    SEEN["affine dims symbolic"] = [isinstance(d, pypto.SymbolicScalar) for d in x.shape]
    pypto.set_vec_tile_shapes(16, 64)      # a tile may be larger than the tensor
    y[:] = x * 2.0 + 1.0


@pypto.options(pass_options={"enable_slice": True})
def test_dynamic_dims(device: str = DEVICE) -> None:
    for rows, cols in ((3, 64), (17, 128), (40, 32), (1, 8)):
        x = torch.randn(rows, cols, device=device)
        y = torch.zeros(rows, cols, device=device)
        affine_kernel(x, y)
        assert_allclose(y.numpy(), (x * 2.0 + 1.0).numpy(), rtol=1e-3, atol=1e-3)
    assert SEEN["affine dims symbolic"] == [True, True]
    assert affine_kernel.compile_count == 1            # four sizes, one compiled kernel


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def static_cols_kernel(x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
                       y: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32)):
    SEEN["static cols"] = x.shape[1]                    # a plain int, taken from the input
    pypto.set_vec_tile_shapes(8, 32)
    y[:] = pypto.exp(x)


@pypto.options(pass_options={"enable_slice": True})
def test_static_marker(device: str = DEVICE) -> None:
    for rows, cols in ((5, 64), (9, 64), (5, 32)):
        x = torch.randn(rows, cols, device=device)
        y = torch.zeros(rows, cols, device=device)
        static_cols_kernel(x, y)
        assert SEEN["static cols"] == cols
        assert_allclose(y.numpy(), torch.exp(x).numpy(), rtol=1e-3, atol=1e-3)
    assert static_cols_kernel.compile_count == 2        # one per distinct static size


# ---- named dynamic dims ----------------------------------------------------------------------

N = pypto.frontend.dynamic("N")


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def named_kernel(a: pypto.Tensor([N, 64], pypto.DT_FP32),
                 b: pypto.Tensor([N, 64], pypto.DT_FP32),
                 out: pypto.Tensor([N, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = a * b - a                 # a, b and out share the runtime size N


@pypto.options(pass_options={"enable_slice": True})
def test_named_dynamic(device: str = DEVICE) -> None:
    for rows in (12, 30):
        a = torch.randn(rows, 64, device=device)
        b = torch.randn(rows, 64, device=device)
        out = torch.zeros(rows, 64, device=device)
        named_kernel(a, b, out)
        assert_allclose(out.numpy(), (a * b - a).numpy(), rtol=1e-3, atol=1e-3)
    assert named_kernel.compile_count == 1
    try:                               # b disagrees with a about N
        named_kernel(torch.randn(4, 64), torch.randn(5, 64), torch.zeros(4, 64))
    except ValueError as e:
        print(f"  rejected as expected: {e}")
    else:
        raise AssertionError("mismatched named dynamic dims were accepted")


# ---- tail blocks with valid shapes -----------------------------------------------------------

BLOCK, HIDDEN = 16, 128


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def block_stats_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                       row_sum: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
                       scaled: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(BLOCK, HIDDEN)
    for b in pypto.loop(pypto.ceildiv(n, BLOCK), name="LOOP_BLOCKS", idx_name="b"):
        off = b * BLOCK
        blk = pypto.view(x, [BLOCK, HIDDEN], [off, 0],
                         valid_shape=[(n - off).min(BLOCK), HIDDEN])
        s = pypto.sum(blk, dim=-1, keepdim=True)       # only the valid rows are reduced
        row_sum[off:, :] = s                           # and only they are written
        scaled[off:, :] = blk / (pypto.abs(s) + 1.0)


@pypto.options(pass_options={"enable_slice": True})
def test_valid_shape_tail(device: str = DEVICE) -> None:
    for rows in (5, 16, 37, 64, 1):
        x = torch.randn(rows, HIDDEN, device=device)
        row_sum = torch.zeros(rows, 1, device=device)
        scaled = torch.zeros(rows, HIDDEN, device=device)
        block_stats_kernel(x, row_sum, scaled)
        golden_sum = x.sum(dim=-1, keepdim=True)
        assert_allclose(row_sum.numpy(), golden_sum.numpy(), rtol=1e-3, atol=1e-3)
        assert_allclose(scaled.numpy(), (x / (golden_sum.abs() + 1.0)).numpy(),
                        rtol=1e-3, atol=1e-3)
    assert block_stats_kernel.compile_count == 1


EXAMPLES = {
    "dynamic::test_dynamic_dims": test_dynamic_dims,
    "dynamic::test_static_marker": test_static_marker,
    "dynamic::test_named_dynamic": test_named_dynamic,
    "dynamic::test_valid_shape_tail": test_valid_shape_tail,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
