#!/usr/bin/env python3
"""Activation functions: GELU (erf and tanh forms), SiLU, SwiGLU, sigmoid and ReLU.

What this shows:
- activations written as plain Python helpers over pypto ops, next to the built-in ones
  (`pypto.sigmoid`, `pypto.relu`), each checked against `torch.nn.functional`;
- scalars on either side of an operator (`1.702 * x`, `1.0 + pypto.exp(-x)`);
- SwiGLU: the gate and the up projection are two halves of one [T, 2F] tensor, taken with
  int-sized slices (`x[:, :F]`, `x[:, F:]`);
- `pypto.sigmoid` on BF16 computes in FP32 and rounds once.

Run:  python activation.py [--run_mode sim|npu] [--list] [activation::test_gelu]
"""
import math
import sys

import torch
import torch.nn.functional as F

import pypto
import pypto.testing
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

T, D = 32, 128


def gelu_erf(x: pypto.Tensor) -> pypto.Tensor:
    """Exact GELU: 0.5 x (1 + erf(x / sqrt(2)))."""
    return x * 0.5 * (pypto.erf(x * (1.0 / math.sqrt(2.0))) + 1.0)


def gelu_tanh(x: pypto.Tensor) -> pypto.Tensor:
    """Tanh-approximated GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    inner = (x + pypto.mul(pypto.mul(x, x), x) * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (pypto.tanh(inner) + 1.0)


def gelu_sigmoid(x: pypto.Tensor) -> pypto.Tensor:
    """The cheap sigmoid approximation x * sigmoid(1.702 x) (not torch's GELU; see below)."""
    return x * pypto.sigmoid(1.702 * x)


def sigmoid_manual(x: pypto.Tensor) -> pypto.Tensor:
    return 1.0 / (1.0 + pypto.exp(-x))


def silu(x: pypto.Tensor) -> pypto.Tensor:
    return x * pypto.sigmoid(x)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def gelu_kernel(x: pypto.Tensor([T, D], pypto.DT_FP32),
                y_erf: pypto.Tensor([T, D], pypto.DT_FP32),
                y_tanh: pypto.Tensor([T, D], pypto.DT_FP32),
                y_sig: pypto.Tensor([T, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 128)
    y_erf[:] = gelu_erf(x)
    y_tanh[:] = gelu_tanh(x)
    y_sig[:] = gelu_sigmoid(x)


@pypto.options(pass_options={"enable_slice": True})
def test_gelu(device: str = DEVICE) -> None:
    x = torch.randn(T, D, device=device) * 3
    outs = [torch.zeros(T, D, device=device) for _ in range(3)]
    # the goldens' tolerance: the kernel's own error bound, per element (see the README)
    with pypto.testing.forward_bounds(gelu_kernel, x, *outs) as bounds:
        gelu_kernel(x, *outs)
    x64 = x.double()
    goldens = {"y_erf": F.gelu(x64), "y_tanh": F.gelu(x64, approximate="tanh"),
               "y_sig": x64 * torch.sigmoid(1.702 * x64)}
    for out, (name, golden) in zip(outs, goldens.items()):
        pypto.testing.assert_close(out, golden, bounds[name], name)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def sigmoid_relu_kernel(x: pypto.Tensor([T, D], pypto.DT_FP32),
                        sig: pypto.Tensor([T, D], pypto.DT_FP32),
                        sig_manual: pypto.Tensor([T, D], pypto.DT_FP32),
                        relu: pypto.Tensor([T, D], pypto.DT_FP32),
                        relu_max: pypto.Tensor([T, D], pypto.DT_FP32),
                        silu_out: pypto.Tensor([T, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 64)
    sig[:] = pypto.sigmoid(x)
    sig_manual[:] = sigmoid_manual(x)
    relu[:] = pypto.relu(x)
    relu_max[:] = pypto.maximum(x, 0.0)
    silu_out[:] = silu(x)


@pypto.options(pass_options={"enable_slice": True})
def test_sigmoid_relu_silu(device: str = DEVICE) -> None:
    x = torch.randn(T, D, device=device) * 4
    outs = [torch.zeros(T, D, device=device) for _ in range(5)]
    with pypto.testing.forward_bounds(sigmoid_relu_kernel, x, *outs) as bounds:
        sigmoid_relu_kernel(x, *outs)
    x64 = x.double()
    goldens = {"sig": torch.sigmoid(x64), "sig_manual": torch.sigmoid(x64), "relu": F.relu(x64),
               "relu_max": F.relu(x64), "silu_out": F.silu(x64)}
    for out, (name, golden) in zip(outs, goldens.items()):
        pypto.testing.assert_close(out, golden, bounds[name], name)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def swiglu_kernel(gate_up: pypto.Tensor([pypto.DYNAMIC, 2 * D], pypto.DT_FP32),
                  y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 128)
    n = gate_up.shape[0]
    for i in pypto.loop(0, n, 8, name="LOOP_TOKENS", idx_name="i"):
        block = pypto.view(gate_up, [8, 2 * D], [i, 0], valid_shape=[(n - i).min(8), 2 * D])
        gate = block[:, :D]                  # first half:  [8, D]
        up = block[:, D:]                    # second half: [8, D]
        y[i:, :] = silu(gate) * up


@pypto.options(pass_options={"enable_slice": True})
def test_swiglu(device: str = DEVICE) -> None:
    gate_up = torch.randn(21, 2 * D, device=device)
    y = torch.zeros(21, D, device=device)
    with pypto.testing.forward_bounds(swiglu_kernel, gate_up, y) as bounds:
        swiglu_kernel(gate_up, y)
    gate, up = gate_up.double().chunk(2, dim=-1)
    pypto.testing.assert_close(y, F.silu(gate) * up, bounds["y"], "y")


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def bf16_kernel(x: pypto.Tensor([T, D], pypto.DT_BF16),
                sig: pypto.Tensor([T, D], pypto.DT_BF16),
                gelu: pypto.Tensor([T, D], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(16, 128)
    sig[:] = pypto.sigmoid(x)                                   # FP32 inside
    gelu[:] = pypto.cast(gelu_erf(pypto.cast(x, pypto.DT_FP32)), pypto.DT_BF16)


@pypto.options(pass_options={"enable_slice": True})
def test_bf16(device: str = DEVICE) -> None:
    x = (torch.randn(T, D, device=device) * 3).to(torch.bfloat16)
    sig = torch.zeros(T, D, dtype=torch.bfloat16, device=device)
    gelu = torch.zeros(T, D, dtype=torch.bfloat16, device=device)
    with pypto.testing.forward_bounds(bf16_kernel, x, sig, gelu) as bounds:
        bf16_kernel(x, sig, gelu)
    pypto.testing.assert_close(sig, torch.sigmoid(x.double()), bounds["sig"], "sig")
    pypto.testing.assert_close(gelu, F.gelu(x.double()), bounds["gelu"], "gelu")


EXAMPLES = {
    "activation::test_gelu": test_gelu,
    "activation::test_sigmoid_relu_silu": test_sigmoid_relu_silu,
    "activation::test_swiglu": test_swiglu,
    "activation::test_bf16": test_bf16,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
