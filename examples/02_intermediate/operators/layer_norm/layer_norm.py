#!/usr/bin/env python3
"""Layer normalisation over the hidden dim, with gamma and beta, in FP32 and BF16.

What this shows:
- a plain Python helper (`layernorm_core`) built from reductions and broadcasts:
  mean = sum(x) / H, var = sum((x - mean)^2) / H, y = (x - mean) / sqrt(var + eps) * gamma + beta;
- gamma and beta are [H] vectors broadcast against [T, H] blocks (ranks aligned from the right);
- a dynamic token dim processed in blocks of T rows with `pypto.view(..., valid_shape=...)`,
  so the last, partial block only computes and writes its valid rows;
- a configuration dataclass passed as a non-tensor argument (a trace-time constant);
- BF16: cast to FP32, normalise, cast back once.

Run:  python layer_norm.py [--run_mode sim|npu] [--list] [layer_norm::test_layer_norm]
"""
import sys
from dataclasses import dataclass

import torch

import pypto
import pypto.testing
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

HIDDEN = 256


@dataclass(frozen=True)
class LayerNormConfig:
    block_rows: int = 16
    eps: float = 1e-5


def layernorm_core(x: pypto.Tensor, gamma: pypto.Tensor, beta: pypto.Tensor,
                   eps: float) -> pypto.Tensor:
    """Normalise each row of x ([T, H], FP32) and apply the affine transform."""
    hidden = x.shape[-1]
    mean = pypto.sum(x, dim=-1, keepdim=True) * (1.0 / hidden)        # [T, 1]
    centered = x - mean
    var = pypto.sum(centered * centered, dim=-1, keepdim=True) * (1.0 / hidden)
    normed = centered / pypto.sqrt(var + eps)
    return normed * gamma + beta                                       # [T, H] * [H] + [H]


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def layer_norm_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                      gamma: pypto.Tensor([HIDDEN], pypto.DT_FP32),
                      beta: pypto.Tensor([HIDDEN], pypto.DT_FP32),
                      y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                      cfg: LayerNormConfig):
    t = cfg.block_rows
    n = x.shape[0]
    pypto.set_vec_tile_shapes(t, HIDDEN)
    for i in pypto.loop(0, n, t, name="LOOP_TOKENS", idx_name="i"):
        block = pypto.view(x, [t, HIDDEN], [i, 0], valid_shape=[(n - i).min(t), HIDDEN])
        y[i:, :] = layernorm_core(block, gamma, beta, cfg.eps)


def torch_layer_norm(x, gamma, beta, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps)


@pypto.options(pass_options={"enable_slice": True})
def test_layer_norm(device: str = DEVICE) -> None:
    cfg = LayerNormConfig()
    gamma = torch.randn(HIDDEN, device=device)
    beta = torch.randn(HIDDEN, device=device)
    for tokens in (40, 16, 3):              # with and without a partial last block
        x = torch.randn(tokens, HIDDEN, device=device) * 2 + 0.5
        y = torch.zeros(tokens, HIDDEN, device=device)
        # the golden's tolerance: the kernel's own error bound, per element (see the README)
        with pypto.testing.forward_bounds(layer_norm_kernel, x, gamma, beta, y, cfg) as bounds:
            layer_norm_kernel(x, gamma, beta, y, cfg)
        golden = torch_layer_norm(x.double(), gamma.double(), beta.double(), cfg.eps)
        pypto.testing.assert_close(y, golden, bounds["y"], "y")
    assert layer_norm_kernel.compile_count == 1


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def layer_norm_bf16_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_BF16),
                           gamma: pypto.Tensor([HIDDEN], pypto.DT_BF16),
                           beta: pypto.Tensor([HIDDEN], pypto.DT_BF16),
                           y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_BF16),
                           cfg: LayerNormConfig):
    t = cfg.block_rows
    n = x.shape[0]
    pypto.set_vec_tile_shapes(HIDDEN)              # the [H] parameters are 1-D
    gamma32 = pypto.cast(gamma, pypto.DT_FP32)
    beta32 = pypto.cast(beta, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(t, HIDDEN)           # the row blocks are 2-D
    for i in pypto.loop(0, n, t, name="LOOP_TOKENS", idx_name="i"):
        block = pypto.view(x, [t, HIDDEN], [i, 0], valid_shape=[(n - i).min(t), HIDDEN])
        out = layernorm_core(pypto.cast(block, pypto.DT_FP32), gamma32, beta32, cfg.eps)
        y[i:, :] = pypto.cast(out, pypto.DT_BF16)


@pypto.options(pass_options={"enable_slice": True})
def test_layer_norm_bf16(device: str = DEVICE) -> None:
    cfg = LayerNormConfig(block_rows=32)
    x = (torch.randn(45, HIDDEN, device=device) * 2 + 0.5).to(torch.bfloat16)
    gamma = torch.randn(HIDDEN, device=device).to(torch.bfloat16)
    beta = torch.randn(HIDDEN, device=device).to(torch.bfloat16)
    y = torch.zeros(45, HIDDEN, dtype=torch.bfloat16, device=device)
    with pypto.testing.forward_bounds(layer_norm_bf16_kernel, x, gamma, beta, y, cfg) as bounds:
        layer_norm_bf16_kernel(x, gamma, beta, y, cfg)
    golden = torch_layer_norm(x.double(), gamma.double(), beta.double(), cfg.eps)
    pypto.testing.assert_close(y, golden, bounds["y"], "y")


EXAMPLES = {
    "layer_norm::test_layer_norm": test_layer_norm,
    "layer_norm::test_layer_norm_bf16": test_layer_norm_bf16,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
