#!/usr/bin/env python3
"""Hello world: add two tensors with a PyPTO kernel.

What this shows:
- `@pypto.frontend.jit` turns a Python function into a kernel. Decoration compiles nothing; the
  first call traces the body and compiles it, later calls with the same shapes reuse it.
- Kernels return nothing: results are written into output tensors (`out[:] = ...`).
- Vector ops need a vector TileShape of the same rank as their tensors.
- `runtime_options` is kept by reference: this file decorates the kernel with an empty dict and
  fills in `run_mode` later, in `device_init()`, once the command line has been parsed.

Run:  python hello_world.py [--run_mode sim|npu] [--list] [hello_world::test_add]
OpenPTO has no NPU: both run modes execute the kernel on the CPU with exact numerics, so the
result is checked in either mode.
"""
import sys

import torch

import pypto
from pypto.toolkit.example_cli import run_examples

# Shared by every kernel in this file; device_init() sets "run_mode" after decoration.
runtime_opts = {}


def device_init(run_mode: str) -> str:
    """Select the run mode for the kernels below and return the torch device to use."""
    runtime_opts["run_mode"] = pypto.RunMode.NPU if run_mode == "npu" else pypto.RunMode.SIM
    return "cpu"  # OpenPTO runs on the host in both modes


@pypto.frontend.jit(runtime_options=runtime_opts)
def add_kernel(a: pypto.Tensor[...], b: pypto.Tensor[...], out: pypto.Tensor[...]):
    # `Tensor[...]`: shape taken from the caller's tensor, dtype FP32.
    pypto.set_vec_tile_shapes(16, 64)  # one tile size per dim; 64 x 4 B is 32-byte aligned
    out[:] = a + b


@pypto.options(pass_options={"enable_slice": True})
def test_add(device: str = "cpu") -> None:
    a = torch.randn(32, 128, device=device)
    b = torch.randn(32, 128, device=device)
    out = torch.zeros(32, 128, device=device)
    add_kernel(a, b, out)
    torch.testing.assert_close(out, a + b, atol=1e-3, rtol=1e-3)


EXAMPLES = {"hello_world::test_add": test_add}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv, setup=device_init)


if __name__ == "__main__":
    sys.exit(main())
