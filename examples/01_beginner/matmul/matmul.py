#!/usr/bin/env python3
"""Matrix multiplication: 2-D, batched 3-D with broadcast, transposed operands, mixed dtypes.

What this shows:
- `pypto.matmul(a, b, out_dtype)` and the `a @ b` operator form;
- a cube TileShape must be set first: `set_cube_tile_shapes([mL0, mL1], [kL0, kL1],
  [nL0, nL1])`, L0 first, every size 32-byte aligned in the input dtype;
- batched matmul: both operands have the same rank, and a batch dim of size 1 broadcasts
  (`[4, 32, 64] @ [1, 64, 48]`, the usual way to apply one weight to every batch);
- `a_trans=True` reads A stored as [K, M], `b_trans=True` reads B stored as [N, K];
- accumulation is FP32: FP16 inputs with an FP32 output, and BF16 in / BF16 out (rounded once).

Run:  python matmul.py [--run_mode sim|npu] [--list] [matmul::test_matmul_2d]
"""
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

M, K, N = 64, 128, 96


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def matmul_2d_kernel(a: pypto.Tensor([M, K], pypto.DT_FP32),
                     b: pypto.Tensor([K, N], pypto.DT_FP32),
                     c: pypto.Tensor([M, N], pypto.DT_FP32),
                     c_op: pypto.Tensor([M, N], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [32, 96])
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    c_op[:] = a @ b  # output dtype follows b for FP32/FP16/BF16


@pypto.options(pass_options={"enable_slice": True})
def test_matmul_2d(device: str = DEVICE) -> None:
    a = torch.randn(M, K, device=device)
    b = torch.randn(K, N, device=device)
    c = torch.zeros(M, N, device=device)
    c_op = torch.zeros(M, N, device=device)
    matmul_2d_kernel(a, b, c, c_op)
    assert_allclose(c.numpy(), (a @ b).numpy(), rtol=1e-3, atol=1e-3)
    assert_allclose(c_op.numpy(), (a @ b).numpy(), rtol=1e-3, atol=1e-3)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def batch_matmul_kernel(x: pypto.Tensor([4, 32, 64], pypto.DT_FP32),
                        w: pypto.Tensor([1, 64, 48], pypto.DT_FP32),
                        y: pypto.Tensor([4, 48, 32], pypto.DT_FP32),
                        xw: pypto.Tensor([4, 32, 48], pypto.DT_FP32),
                        xy: pypto.Tensor([4, 32, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [16, 48])
    xw[:] = pypto.matmul(x, w, pypto.DT_FP32)           # [4,32,64] @ [1,64,48]: w broadcasts
    xy[:] = pypto.matmul(xw, y, pypto.DT_FP32)          # [4,32,48] @ [4,48,32]: per batch


@pypto.options(pass_options={"enable_slice": True})
def test_batch_matmul(device: str = DEVICE) -> None:
    x = torch.randn(4, 32, 64, device=device)
    w = torch.randn(1, 64, 48, device=device)
    y = torch.randn(4, 48, 32, device=device)
    xw = torch.zeros(4, 32, 48, device=device)
    xy = torch.zeros(4, 32, 32, device=device)
    batch_matmul_kernel(x, w, y, xw, xy)
    golden_xw = torch.matmul(x, w)
    assert_allclose(xw.numpy(), golden_xw.numpy(), rtol=1e-3, atol=1e-3)
    assert_allclose(xy.numpy(), torch.matmul(golden_xw, y).numpy(), rtol=1e-3, atol=1e-3)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def trans_kernel(a_t: pypto.Tensor([K, M], pypto.DT_FP32),
                 b_t: pypto.Tensor([N, K], pypto.DT_FP32),
                 a: pypto.Tensor([M, K], pypto.DT_FP32),
                 b: pypto.Tensor([K, N], pypto.DT_FP32),
                 c_at: pypto.Tensor([M, N], pypto.DT_FP32),
                 c_bt: pypto.Tensor([M, N], pypto.DT_FP32),
                 c_both: pypto.Tensor([M, N], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [32, 96])
    c_at[:] = pypto.matmul(a_t, b, pypto.DT_FP32, a_trans=True)     # a_t^T @ b
    c_bt[:] = pypto.matmul(a, b_t, pypto.DT_FP32, b_trans=True)     # a @ b_t^T
    c_both[:] = pypto.matmul(a_t, b_t, out_dtype=pypto.DT_FP32, a_trans=True, b_trans=True)


@pypto.options(pass_options={"enable_slice": True})
def test_transposed(device: str = DEVICE) -> None:
    a = torch.randn(M, K, device=device)
    b = torch.randn(K, N, device=device)
    a_t = a.t().contiguous()   # stored [K, M]
    b_t = b.t().contiguous()   # stored [N, K]
    outs = [torch.zeros(M, N, device=device) for _ in range(3)]
    trans_kernel(a_t, b_t, a, b, *outs)
    for out in outs:
        assert_allclose(out.numpy(), (a @ b).numpy(), rtol=1e-3, atol=1e-3)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def fp16_kernel(a: pypto.Tensor([M, K], pypto.DT_FP16),
                b: pypto.Tensor([K, N], pypto.DT_FP16),
                c: pypto.Tensor([M, N], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [32, 96])  # x 2 B: still 32-byte aligned
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


@pypto.options(pass_options={"enable_slice": True})
def test_fp16_in_fp32_out(device: str = DEVICE) -> None:
    a = torch.randn(M, K, device=device).half()
    b = torch.randn(K, N, device=device).half()
    c = torch.zeros(M, N, device=device)
    fp16_kernel(a, b, c)
    golden = a.float() @ b.float()  # exact products, FP32 accumulation
    assert_allclose(c.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def bf16_kernel(a: pypto.Tensor([2, M, K], pypto.DT_BF16),
                b: pypto.Tensor([2, K, N], pypto.DT_BF16),
                c: pypto.Tensor([2, M, N], pypto.DT_BF16)):
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [32, 96])
    c[:] = pypto.matmul(a, b, pypto.DT_BF16)


@pypto.options(pass_options={"enable_slice": True})
def test_bf16(device: str = DEVICE) -> None:
    a = torch.randn(2, M, K, device=device).to(torch.bfloat16)
    b = torch.randn(2, K, N, device=device).to(torch.bfloat16)
    c = torch.zeros(2, M, N, dtype=torch.bfloat16, device=device)
    bf16_kernel(a, b, c)
    golden = torch.matmul(a.float(), b.float()).to(torch.bfloat16)  # one rounding at the end
    torch.testing.assert_close(c, golden, atol=1e-2, rtol=1e-2)


EXAMPLES = {
    "matmul::test_matmul_2d": test_matmul_2d,
    "matmul::test_batch_matmul": test_batch_matmul,
    "matmul::test_transposed": test_transposed,
    "matmul::test_fp16_in_fp32_out": test_fp16_in_fp32_out,
    "matmul::test_bf16": test_bf16,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
