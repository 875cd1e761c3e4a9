#!/usr/bin/env python3
"""Data movement and layout: views, assemble, slicing, reshape, transpose, concat, unsqueeze.

What this shows:
- `pypto.view(x, shape, offsets, valid_shape=...)`: a window with a static shape at (possibly
  symbolic) offsets. `valid_shape` says how much of the window holds real data; for a tail
  block it is `[(n - i).min(T), ...]`. Without it, the window is clamped to the parent.
- writes: `out[:] = v` (replace the whole tensor), `pypto.assemble(v, offsets, out)`,
  `out.assemble(v, offsets)`, and slice assignment `out[b:, ...] = v`, which assembles `v` at
  the slice starts (the stop is ignored: `out[b:b+1, ...] = v` is the same write);
- slicing rules: `x[a:b]` needs `b - a` to be an int (`x[i:i+1]` with a loop index is fine);
  an int index drops its dim; writing through an int index inserts a size-1 dim;
- `pypto.reshape` (one -1 allowed), and `inplace=True`, which aliases the buffer so that a
  write through the result lands in the original tensor and which accepts symbolic dims;
- `pypto.transpose(x, d0, d1)`, `pypto.concat([...], dim)`, `pypto.unsqueeze(x, dim)`.

Run:  python transform.py [--run_mode sim|npu] [--list] [transform::test_view]
"""
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics


def check(out: torch.Tensor, golden: torch.Tensor) -> None:
    assert out.shape == golden.shape, (out.shape, golden.shape)
    assert_allclose(out.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)


# ---- view ------------------------------------------------------------------------------------

ROWS, T = 56, 16  # 56 rows in blocks of 16: three full blocks and a tail of 8


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def view_kernel(x: pypto.Tensor([ROWS, 64], pypto.DT_FP32),
                corner: pypto.Tensor([16, 32], pypto.DT_FP32),
                doubled: pypto.Tensor([ROWS, 64], pypto.DT_FP32),
                shifted: pypto.Tensor([ROWS, 64], pypto.DT_FP32)):
    corner[:] = pypto.view(x, [16, 32], [8, 16])         # x[8:24, 16:48]
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(0, ROWS, T, name="ROW_BLOCKS", idx_name="i"):
        # explicit valid shape for the tail block (8 valid rows when i == 48)
        blk = pypto.view(x, [T, 64], [i, 0], valid_shape=[(ROWS - i).min(T), 64])
        doubled[i:, :] = blk * 2.0                       # writes the valid rows only
        # the default valid shape clamps the window to the parent the same way
        shifted[i:, :] = pypto.view(x, [T, 64], [i, 0]) + 1.0


@pypto.options(pass_options={"enable_slice": True})
def test_view(device: str = DEVICE) -> None:
    x = torch.randn(ROWS, 64, device=device)
    corner = torch.zeros(16, 32, device=device)
    doubled = torch.zeros(ROWS, 64, device=device)
    shifted = torch.zeros(ROWS, 64, device=device)
    view_kernel(x, corner, doubled, shifted)
    check(corner, x[8:24, 16:48])
    check(doubled, x * 2.0)
    check(shifted, x + 1.0)


# ---- assemble --------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def assemble_kernel(a: pypto.Tensor([16, 64], pypto.DT_FP32),
                    b: pypto.Tensor([16, 64], pypto.DT_FP32),
                    out: pypto.Tensor([32, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    pypto.assemble(a * 2.0, [0, 0], out)        # top-left quarter
    pypto.assemble(a - b, [0, 64], out)         # top-right
    out.assemble(b + 1.0, [16, 0])              # method form: bottom-left
    pypto.assemble(b, [16, 64], out)            # bottom-right


@pypto.options(pass_options={"enable_slice": True})
def test_assemble(device: str = DEVICE) -> None:
    a = torch.randn(16, 64, device=device)
    b = torch.randn(16, 64, device=device)
    out = torch.zeros(32, 128, device=device)
    assemble_kernel(a, b, out)
    golden = torch.cat([torch.cat([a * 2.0, a - b], dim=1), torch.cat([b + 1.0, b], dim=1)])
    check(out, golden)


# ---- slicing ---------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def slicing_kernel(x: pypto.Tensor([8, 16, 64], pypto.DT_FP32),
                   window: pypto.Tensor([4, 8, 32], pypto.DT_FP32),
                   plane: pypto.Tensor([16, 64], pypto.DT_FP32),
                   rows: pypto.Tensor([8, 64], pypto.DT_FP32),
                   scaled: pypto.Tensor([8, 16, 64], pypto.DT_FP32)):
    window[:] = x[2:6, 8:, :32]          # slice sizes 4, 8 and 32: a [4, 8, 32] view
    plane[:] = x[3]                      # an int index drops its dim: [16, 64]
    rows[0:2, 0:] = x[0, 0:2, :]         # assembled at the slice starts (0, 0)
    rows[5, :] = x[1, 2, :]              # rank-1 value: the int index becomes a size-1 dim
    pypto.set_vec_tile_shapes(1, 16, 64)
    for b in pypto.loop(8, name="BATCH", idx_name="b"):
        v = x[b:b + 1, ...] * 3.0        # `b + 1 - b` simplifies to the int 1
        scaled[b:, ...] = v              # same as scaled[b:b + 1, ...] = v


@pypto.options(pass_options={"enable_slice": True})
def test_slicing(device: str = DEVICE) -> None:
    x = torch.randn(8, 16, 64, device=device)
    window = torch.zeros(4, 8, 32, device=device)
    plane = torch.zeros(16, 64, device=device)
    rows = torch.zeros(8, 64, device=device)
    scaled = torch.zeros(8, 16, 64, device=device)
    slicing_kernel(x, window, plane, rows, scaled)
    check(window, x[2:6, 8:, :32])
    check(plane, x[3])
    golden_rows = torch.zeros(8, 64)
    golden_rows[0:2] = x[0, 0:2]
    golden_rows[5] = x[1, 2]
    check(rows, golden_rows)            # rows 2-4 and 6-7 were never written
    check(scaled, x * 3.0)


# ---- reshape ---------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def reshape_kernel(x: pypto.Tensor([4, 8, 64], pypto.DT_FP32),
                   x_dyn: pypto.Tensor([pypto.DYNAMIC, 8, 64], pypto.DT_FP32),
                   flat: pypto.Tensor([32, 64], pypto.DT_FP32),
                   folded: pypto.Tensor([8, 4, 64], pypto.DT_FP32),
                   out3: pypto.Tensor([4, 8, 64], pypto.DT_FP32),
                   out_dyn: pypto.Tensor([pypto.DYNAMIC, 8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    x2 = pypto.reshape(x, [32, 64])
    flat[:] = x2 + 1.0
    folded[:] = pypto.reshape(x2, [-1, 4, 64])           # -1 is inferred: 8
    # inplace=True aliases out3's buffer: writing the 2-D alias fills the 3-D output
    out3_2d = pypto.reshape(out3, [32, 64], inplace=True)
    pypto.assemble(x2 * 2.0, [0, 0], out3_2d)
    # inplace=True also takes symbolic dims (n is the runtime size of x_dyn's first dim)
    n = x_dyn.shape[0]
    xd = pypto.reshape(x_dyn, [n * 8, 64], inplace=True)
    od = pypto.reshape(out_dyn, [n * 8, 64], inplace=True)
    od[:] = pypto.exp(xd)


@pypto.options(pass_options={"enable_slice": True})
def test_reshape(device: str = DEVICE) -> None:
    x = torch.randn(4, 8, 64, device=device)
    x_dyn = torch.randn(3, 8, 64, device=device)
    flat = torch.zeros(32, 64, device=device)
    folded = torch.zeros(8, 4, 64, device=device)
    out3 = torch.zeros(4, 8, 64, device=device)
    out_dyn = torch.zeros(3, 8, 64, device=device)
    reshape_kernel(x, x_dyn, flat, folded, out3, out_dyn)
    check(flat, x.reshape(32, 64) + 1.0)
    check(folded, x.reshape(8, 4, 64))
    check(out3, x * 2.0)
    check(out_dyn, torch.exp(x_dyn))


# ---- transpose -------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def transpose_kernel(x: pypto.Tensor([32, 64], pypto.DT_FP32),
                     y: pypto.Tensor([4, 16, 32], pypto.DT_FP32),
                     xt: pypto.Tensor([64, 32], pypto.DT_FP32),
                     y12: pypto.Tensor([4, 32, 16], pypto.DT_FP32),
                     y02: pypto.Tensor([32, 16, 4], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 32)
    xt[:] = pypto.transpose(x, 0, 1)
    pypto.set_vec_tile_shapes(4, 16, 32)
    y12[:] = pypto.transpose(y, 1, 2)
    y02[:] = y.transpose(0, 2)                   # method form


@pypto.options(pass_options={"enable_slice": True})
def test_transpose(device: str = DEVICE) -> None:
    x = torch.randn(32, 64, device=device)
    y = torch.randn(4, 16, 32, device=device)
    xt = torch.zeros(64, 32, device=device)
    y12 = torch.zeros(4, 32, 16, device=device)
    y02 = torch.zeros(32, 16, 4, device=device)
    transpose_kernel(x, y, xt, y12, y02)
    check(xt, x.t())
    check(y12, y.transpose(1, 2))
    check(y02, y.transpose(0, 2))


# ---- concat and unsqueeze --------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def concat_kernel(a: pypto.Tensor([16, 32], pypto.DT_FP32),
                  b: pypto.Tensor([16, 32], pypto.DT_FP32),
                  c: pypto.Tensor([8, 32], pypto.DT_FP32),
                  stacked: pypto.Tensor([40, 32], pypto.DT_FP32),
                  side: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    stacked[:] = pypto.concat([a, b, c], dim=0)
    side[:] = pypto.concat([a, -b], dim=-1)


@pypto.options(pass_options={"enable_slice": True})
def test_concat(device: str = DEVICE) -> None:
    a = torch.randn(16, 32, device=device)
    b = torch.randn(16, 32, device=device)
    c = torch.randn(8, 32, device=device)
    stacked = torch.zeros(40, 32, device=device)
    side = torch.zeros(16, 64, device=device)
    concat_kernel(a, b, c, stacked, side)
    check(stacked, torch.cat([a, b, c], dim=0))
    check(side, torch.cat([a, -b], dim=-1))


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def unsqueeze_kernel(x: pypto.Tensor([32, 64], pypto.DT_FP32),
                     y: pypto.Tensor([32, 8, 64], pypto.DT_FP32),
                     x3: pypto.Tensor([32, 1, 64], pypto.DT_FP32),
                     out: pypto.Tensor([32, 8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 8, 64)
    xu = pypto.unsqueeze(x, 1)           # [32, 64] -> [32, 1, 64]
    x3[:] = xu
    out[:] = y * xu                      # broadcast along the new dim


@pypto.options(pass_options={"enable_slice": True})
def test_unsqueeze(device: str = DEVICE) -> None:
    x = torch.randn(32, 64, device=device)
    y = torch.randn(32, 8, 64, device=device)
    x3 = torch.zeros(32, 1, 64, device=device)
    out = torch.zeros(32, 8, 64, device=device)
    unsqueeze_kernel(x, y, x3, out)
    check(x3, x.unsqueeze(1))
    check(out, y * x.unsqueeze(1))


EXAMPLES = {
    "transform::test_view": test_view,
    "transform::test_assemble": test_assemble,
    "transform::test_slicing": test_slicing,
    "transform::test_reshape": test_reshape,
    "transform::test_transpose": test_transpose,
    "transform::test_concat": test_concat,
    "transform::test_unsqueeze": test_unsqueeze,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
