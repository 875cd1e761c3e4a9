#!/usr/bin/env python3
"""Basic operations: add, erfc, matmul and sum, each checked against torch.

What this shows:
- one small kernel per operation, each with its own tile configuration;
- vector ops (`+`, `pypto.erfc`, `pypto.sum`) need `set_vec_tile_shapes` of the op's rank;
- `pypto.matmul` needs `set_cube_tile_shapes([mL0, mL1], [kL0, kL1], [nL0, nL1])` first;
- results are checked in SIM mode too: OpenPTO computes real numbers in both run modes.

Like hello_world, the kernels share one `runtime_options` dict that `device_init()` fills in
after the command line has been parsed.

Run:  python basic_ops.py [--run_mode sim|npu] [--list] [basic_ops::test_add]
"""
import sys

import torch

import pypto
from pypto.toolkit.example_cli import run_examples

runtime_opts = {}


def device_init(run_mode: str) -> str:
    """Select the run mode for the kernels below and return the torch device to use."""
    runtime_opts["run_mode"] = pypto.RunMode.NPU if run_mode == "npu" else pypto.RunMode.SIM
    return "cpu"  # OpenPTO runs on the host in both modes


# ---- add -------------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options=runtime_opts)
def add_kernel(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
               out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.add(a, b)


@pypto.options(pass_options={"enable_slice": True})
def test_add(device: str = "cpu") -> None:
    a = torch.randn(16, 256, device=device)
    b = torch.randn(16, 256, device=device)
    out = torch.empty(16, 256, device=device)
    add_kernel(a, b, out)
    torch.testing.assert_close(out, a + b, atol=1e-3, rtol=1e-3)


# ---- erfc ------------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options=runtime_opts)
def erfc_kernel(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 32, 64)  # rank 3, like the tensors
    out[:] = pypto.erfc(x)


@pypto.options(pass_options={"enable_slice": True})
def test_erfc(device: str = "cpu") -> None:
    x = torch.randn(4, 32, 64, device=device) * 2
    out = torch.empty_like(x)
    erfc_kernel(x, out)
    torch.testing.assert_close(out, torch.erfc(x), atol=1e-3, rtol=1e-3)


# ---- matmul ----------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options=runtime_opts)
def matmul_kernel(a: pypto.Tensor([64, 128], pypto.DT_FP32),
                  b: pypto.Tensor([128, 96], pypto.DT_FP32),
                  c: pypto.Tensor([64, 96], pypto.DT_FP32)):
    # L0 first, L1 second; every size is 32-byte aligned for FP32 inputs.
    pypto.set_cube_tile_shapes([32, 32], [64, 128], [32, 96])
    c[:] = pypto.matmul(a, b, pypto.DT_FP32)


@pypto.options(pass_options={"enable_slice": True})
def test_matmul(device: str = "cpu") -> None:
    a = torch.randn(64, 128, device=device)
    b = torch.randn(128, 96, device=device)
    c = torch.zeros(64, 96, device=device)
    matmul_kernel(a, b, c)
    torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3)


# ---- sum -------------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options=runtime_opts)
def sum_kernel(x: pypto.Tensor([], pypto.DT_FP32), row_sum: pypto.Tensor([], pypto.DT_FP32),
               col_sum: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    row_sum[:] = pypto.sum(x, dim=-1, keepdim=True)  # [32, 128] -> [32, 1]
    col_sum[:] = pypto.sum(x, dim=0)                 # [32, 128] -> [128]


@pypto.options(pass_options={"enable_slice": True})
def test_sum(device: str = "cpu") -> None:
    x = torch.rand(32, 128, device=device)
    row_sum = torch.zeros(32, 1, device=device)
    col_sum = torch.zeros(128, device=device)
    sum_kernel(x, row_sum, col_sum)
    torch.testing.assert_close(row_sum, x.sum(dim=-1, keepdim=True), atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(col_sum, x.sum(dim=0), atol=1e-3, rtol=1e-3)


EXAMPLES = {
    "basic_ops::test_add": test_add,
    "basic_ops::test_erfc": test_erfc,
    "basic_ops::test_matmul": test_matmul,
    "basic_ops::test_sum": test_sum,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv, setup=device_init)


if __name__ == "__main__":
    sys.exit(main())
