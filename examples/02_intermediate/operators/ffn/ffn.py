#!/usr/bin/env python3
"""Feed-forward network: matmul -> activation (GELU or SiLU) -> matmul, over a dynamic token dim.

What this shows:
- the token dim is `pypto.DYNAMIC`; the kernel walks it in blocks of T rows (16 or 32) with
  `pypto.view(x, [T, H], [i, 0], valid_shape=[(n - i).min(T), H])`, so the last block only
  computes its valid rows and different token counts reuse the compiled kernel;
- cube tiles for the two matmuls and vector tiles for the activation in between; the
  activation is picked by a non-tensor (trace-time) argument;
- `pypto.set_matrix_size([m, k, n])` before the second matmul (a hint for the backend; optional
  here because both operands are plain ND tensors);
- `pypto.loop_unroll(n, unroll_list=[...])`: the loop is split into tiers; each iteration of
  the tier with factor p handles p consecutive tokens, and p is a Python int that can size
  views and tiles;
- a BF16 variant: BF16 matmuls with FP32 outputs, activation in FP32, BF16 between and after.

Run:  python ffn.py [--run_mode sim|npu] [--list] [ffn::test_ffn_gelu]
"""
import math
import sys

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

HIDDEN, FFN_DIM = 128, 256


def gelu_activation_core(x: pypto.Tensor) -> pypto.Tensor:
    """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (pypto.tanh(inner) + 1.0)


def silu_activation_core(x: pypto.Tensor) -> pypto.Tensor:
    """SiLU (swish): x * sigmoid(x)."""
    return x * pypto.sigmoid(x)


ACTIVATIONS = {"gelu": gelu_activation_core, "silu": silu_activation_core}
TORCH_ACTIVATIONS = {"gelu": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
                     "silu": torch.nn.functional.silu}


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def ffn_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
               w1: pypto.Tensor([HIDDEN, FFN_DIM], pypto.DT_FP32),
               w2: pypto.Tensor([FFN_DIM, HIDDEN], pypto.DT_FP32),
               out: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
               activation: str, block: int):
    n = x.shape[0]
    act = ACTIVATIONS[activation]
    for i in pypto.loop(0, n, block, name="LOOP_TOKENS", idx_name="i"):
        xb = pypto.view(x, [block, HIDDEN], [i, 0], valid_shape=[(n - i).min(block), HIDDEN])
        pypto.set_cube_tile_shapes([block, block], [64, 128], [128, 256])
        h = pypto.matmul(xb, w1, pypto.DT_FP32)                 # [T, F]
        pypto.set_vec_tile_shapes(block, 128)
        a = act(h)
        pypto.set_matrix_size([block, FFN_DIM, HIDDEN])
        pypto.set_cube_tile_shapes([block, block], [128, 256], [64, 128])
        out[i:, :] = pypto.matmul(a, w2, pypto.DT_FP32)         # [T, H]


def torch_ffn(x, w1, w2, activation):
    return TORCH_ACTIVATIONS[activation](x @ w1) @ w2


def _run_ffn(activation: str, block: int, device: str) -> None:
    w1 = torch.randn(HIDDEN, FFN_DIM, device=device) / math.sqrt(HIDDEN)
    w2 = torch.randn(FFN_DIM, HIDDEN, device=device) / math.sqrt(FFN_DIM)
    before = ffn_kernel.compile_count
    for tokens in (45, 32, 7):                  # partial last blocks and an exact multiple
        x = torch.randn(tokens, HIDDEN, device=device)
        out = torch.zeros(tokens, HIDDEN, device=device)
        ffn_kernel(x, w1, w2, out, activation, block)
        golden = torch_ffn(x, w1, w2, activation)
        assert_allclose(out.numpy(), golden.numpy(), rtol=3e-3, atol=3e-3)
    assert ffn_kernel.compile_count == before + 1   # token counts are dynamic: one compile


@pypto.options(pass_options={"enable_slice": True})
def test_ffn_gelu(device: str = DEVICE) -> None:
    _run_ffn("gelu", 16, device)


@pypto.options(pass_options={"enable_slice": True})
def test_ffn_silu(device: str = DEVICE) -> None:
    _run_ffn("silu", 32, device)


# ---- loop_unroll -----------------------------------------------------------------------------

SEEN_FACTORS = []


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def ffn_unroll_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                      w1: pypto.Tensor([HIDDEN, FFN_DIM], pypto.DT_FP32),
                      w2: pypto.Tensor([FFN_DIM, HIDDEN], pypto.DT_FP32),
                      out: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    n = x.shape[0]
    pypto.set_cube_tile_shapes([16, 16], [64, 128], [64, 128])
    for i, p in pypto.loop_unroll(n, unroll_list=[16, 4], name="FFN_TOKENS", idx_name="i"):
        SEEN_FACTORS.append(p)                  # traced once per tier
        xb = pypto.view(x, [p, HIDDEN], [i, 0])  # p is a Python int: a static view shape
        h = pypto.matmul(xb, w1, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(p, 128)
        a = gelu_activation_core(h)
        out[i:, :] = pypto.matmul(a, w2, pypto.DT_FP32)


@pypto.options(pass_options={"enable_slice": True})
def test_ffn_loop_unroll(device: str = DEVICE) -> None:
    w1 = torch.randn(HIDDEN, FFN_DIM, device=device) / math.sqrt(HIDDEN)
    w2 = torch.randn(FFN_DIM, HIDDEN, device=device) / math.sqrt(FFN_DIM)
    for tokens in (39, 16, 2):                  # 39 = 2 x 16 + 1 x 4 + 3 x 1
        x = torch.randn(tokens, HIDDEN, device=device)
        out = torch.zeros(tokens, HIDDEN, device=device)
        ffn_unroll_kernel(x, w1, w2, out)
        assert_allclose(out.numpy(), torch_ffn(x, w1, w2, "gelu").numpy(),
                        rtol=3e-3, atol=3e-3)
    assert SEEN_FACTORS == [16, 4, 1], SEEN_FACTORS   # 1 is always added as the last tier
    assert ffn_unroll_kernel.compile_count == 1


# ---- BF16 ------------------------------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def ffn_bf16_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_BF16),
                    w1: pypto.Tensor([HIDDEN, FFN_DIM], pypto.DT_BF16),
                    w2: pypto.Tensor([FFN_DIM, HIDDEN], pypto.DT_BF16),
                    out: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_BF16)):
    n = x.shape[0]
    t = 16
    for i in pypto.loop(0, n, t, name="LOOP_TOKENS", idx_name="i"):
        xb = pypto.view(x, [t, HIDDEN], [i, 0], valid_shape=[(n - i).min(t), HIDDEN])
        pypto.set_cube_tile_shapes([16, 16], [64, 128], [128, 256])
        h = pypto.matmul(xb, w1, pypto.DT_FP32)                 # BF16 x BF16 -> FP32
        pypto.set_vec_tile_shapes(t, 128)
        a = pypto.cast(silu_activation_core(h), pypto.DT_BF16)
        pypto.set_cube_tile_shapes([16, 16], [128, 256], [64, 128])
        o = pypto.matmul(a, w2, pypto.DT_FP32)
        out[i:, :] = pypto.cast(o, pypto.DT_BF16)


@pypto.options(pass_options={"enable_slice": True})
def test_ffn_bf16(device: str = DEVICE) -> None:
    x = torch.randn(37, HIDDEN, device=device).to(torch.bfloat16)
    w1 = (torch.randn(HIDDEN, FFN_DIM, device=device) / math.sqrt(HIDDEN)).to(torch.bfloat16)
    w2 = (torch.randn(FFN_DIM, HIDDEN, device=device) / math.sqrt(FFN_DIM)).to(torch.bfloat16)
    out = torch.zeros(37, HIDDEN, dtype=torch.bfloat16, device=device)
    ffn_bf16_kernel(x, w1, w2, out)
    a = torch.nn.functional.silu(x.float() @ w1.float()).to(torch.bfloat16)
    golden = (a.float() @ w2.float()).to(torch.bfloat16)
    torch.testing.assert_close(out, golden, atol=2e-2, rtol=2e-2)


EXAMPLES = {
    "ffn::test_ffn_gelu": test_ffn_gelu,
    "ffn::test_ffn_silu": test_ffn_silu,
    "ffn::test_ffn_loop_unroll": test_ffn_loop_unroll,
    "ffn::test_ffn_bf16": test_ffn_bf16,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
