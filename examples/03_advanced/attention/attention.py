#!/usr/bin/env python3
"""Multi-head attention: a straightforward version and an online-softmax (flash) version.

What this shows:
- Q/K/V projections as batched matmuls of x [B, S, H] with weights [1, H, N]: the weight's
  batch dim of 1 broadcasts over the (dynamic) batch;
- nested `pypto.loop`s over batch and heads; each head is an int-sized slice of the projected
  tensors (`q[b:b + 1, :, h * D:(h + 1) * D]`, whose sizes simplify to 1 and D);
- scores = Q K^T with `b_trans=True` (K is read as stored, [S, D]), scaled, softmax, then @ V;
  each head's output is assembled into a per-batch `pypto.tensor` scratch buffer, which the
  output projection then reads;
- a BF16 variant: BF16 matmuls, FP32 softmax, casts at the boundaries;
- online softmax (flash-attention style): the KV sequence is walked in blocks by an inner
  loop whose running max, running sum and output accumulator are `pypto.tensor` scratch
  buffers carried across iterations. `pypto.is_loop_begin(j)` initialises them,
  later iterations rescale and update them in place with `t[:] = ...`, and
  `pypto.is_loop_end(j)` writes the normalised result. The KV length is dynamic, and a
  partial last block is handled by the views' valid shapes.

Run:  python attention.py [--run_mode sim|npu] [--list] [attention::test_attention]
"""
import math
import sys
from dataclasses import dataclass

import torch
from numpy.testing import assert_allclose

import pypto
from pypto.toolkit.example_cli import peek_run_mode, run_examples


global_run_mode = peek_run_mode()
DEVICE = "cpu"  # OpenPTO has no NPU: both run modes execute on the host with exact numerics

SEQ, HIDDEN = 64, 128


@dataclass(frozen=True)
class AttentionConfig:
    heads: int = 4
    head_dim: int = 32
    kv_block: int = 32

    @property
    def proj_dim(self) -> int:
        return self.heads * self.head_dim


CFG = AttentionConfig()
PROJ = CFG.proj_dim


def softmax_core(x: pypto.Tensor) -> pypto.Tensor:
    """Softmax over the last dim (FP32)."""
    e = pypto.exp(x - pypto.amax(x, dim=-1, keepdim=True))
    return e / pypto.sum(e, dim=-1, keepdim=True)


def torch_attention(x, wq, wk, wv, wo, cfg: AttentionConfig):
    """Reference MHA in FP32: [B, S, H] -> [B, S, H]."""
    b, s, _ = x.shape

    def heads(t):  # [B, S, N] -> [B, heads, S, D]
        return t.reshape(b, s, cfg.heads, cfg.head_dim).transpose(1, 2)

    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(cfg.head_dim), dim=-1)
    attn = (p @ v).transpose(1, 2).reshape(b, s, cfg.proj_dim)
    return attn @ wo


# ---- multi-head attention, FP32 --------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def attention_kernel(x: pypto.Tensor([pypto.DYNAMIC, SEQ, HIDDEN], pypto.DT_FP32),
                     wq: pypto.Tensor([1, HIDDEN, PROJ], pypto.DT_FP32),
                     wk: pypto.Tensor([1, HIDDEN, PROJ], pypto.DT_FP32),
                     wv: pypto.Tensor([1, HIDDEN, PROJ], pypto.DT_FP32),
                     wo: pypto.Tensor([1, PROJ, HIDDEN], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, SEQ, HIDDEN], pypto.DT_FP32),
                     cfg: AttentionConfig):
    batch = x.shape[0]
    d = cfg.head_dim
    scale = 1.0 / math.sqrt(d)
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [64, 128])
    q = pypto.matmul(x, wq, pypto.DT_FP32)            # [B, S, N]: wq broadcasts over B
    k = pypto.matmul(x, wk, pypto.DT_FP32)
    v = pypto.matmul(x, wv, pypto.DT_FP32)
    attn = pypto.tensor([1, SEQ, cfg.proj_dim], pypto.DT_FP32, "attn")  # one batch's heads
    pypto.set_vec_tile_shapes(1, 32, 64)
    for b in pypto.loop(batch, name="LOOP_B", idx_name="b"):
        for h in pypto.loop(cfg.heads, name="LOOP_H", idx_name="h"):
            qh = q[b:b + 1, :, h * d:(h + 1) * d]        # [1, S, D]
            kh = k[b:b + 1, :, h * d:(h + 1) * d]
            vh = v[b:b + 1, :, h * d:(h + 1) * d]
            pypto.set_cube_tile_shapes([32, 64], [32, 32], [32, 64])
            scores = pypto.matmul(qh, kh, pypto.DT_FP32, b_trans=True) * scale  # [1, S, S]
            probs = softmax_core(scores)
            pypto.set_cube_tile_shapes([32, 64], [32, 64], [32, 32])
            attn[0:, :, h * d:] = pypto.matmul(probs, vh, pypto.DT_FP32)         # [1, S, D]
        pypto.set_cube_tile_shapes([32, 64], [64, 128], [64, 128])
        out[b:, :, :] = pypto.matmul(attn, wo, pypto.DT_FP32)                   # [1, S, H]


def _weights(device: str, dtype=torch.float32):
    def w(rows, cols):
        return (torch.randn(1, rows, cols, device=device) / math.sqrt(rows)).to(dtype)
    return w(HIDDEN, PROJ), w(HIDDEN, PROJ), w(HIDDEN, PROJ), w(PROJ, HIDDEN)


@pypto.options(pass_options={"enable_slice": True})
def test_attention(device: str = DEVICE) -> None:
    wq, wk, wv, wo = _weights(device)
    for batch in (2, 3):
        x = torch.randn(batch, SEQ, HIDDEN, device=device)
        out = torch.zeros(batch, SEQ, HIDDEN, device=device)
        attention_kernel(x, wq, wk, wv, wo, out, CFG)
        golden = torch_attention(x, wq, wk, wv, wo, CFG)
        assert_allclose(out.numpy(), golden.numpy(), rtol=1e-3, atol=1e-3)
    assert attention_kernel.compile_count == 1


# ---- multi-head attention, BF16 --------------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def attention_bf16_kernel(x: pypto.Tensor([pypto.DYNAMIC, SEQ, HIDDEN], pypto.DT_BF16),
                          wq: pypto.Tensor([1, HIDDEN, PROJ], pypto.DT_BF16),
                          wk: pypto.Tensor([1, HIDDEN, PROJ], pypto.DT_BF16),
                          wv: pypto.Tensor([1, HIDDEN, PROJ], pypto.DT_BF16),
                          wo: pypto.Tensor([1, PROJ, HIDDEN], pypto.DT_BF16),
                          out: pypto.Tensor([pypto.DYNAMIC, SEQ, HIDDEN], pypto.DT_BF16),
                          cfg: AttentionConfig):
    batch = x.shape[0]
    d = cfg.head_dim
    scale = 1.0 / math.sqrt(d)
    pypto.set_cube_tile_shapes([32, 64], [64, 128], [64, 128])
    q = pypto.matmul(x, wq, pypto.DT_BF16)            # FP32 accumulation, one BF16 rounding
    k = pypto.matmul(x, wk, pypto.DT_BF16)
    v = pypto.matmul(x, wv, pypto.DT_BF16)
    attn = pypto.tensor([1, SEQ, cfg.proj_dim], pypto.DT_BF16, "attn")
    pypto.set_vec_tile_shapes(1, 32, 64)
    for b in pypto.loop(batch, name="LOOP_B", idx_name="b"):
        for h in pypto.loop(cfg.heads, name="LOOP_H", idx_name="h"):
            qh = q[b:b + 1, :, h * d:(h + 1) * d]
            kh = k[b:b + 1, :, h * d:(h + 1) * d]
            vh = v[b:b + 1, :, h * d:(h + 1) * d]
            pypto.set_cube_tile_shapes([32, 64], [32, 32], [32, 64])
            scores = pypto.matmul(qh, kh, pypto.DT_FP32, b_trans=True) * scale
            probs = pypto.cast(softmax_core(scores), pypto.DT_BF16)
            pypto.set_cube_tile_shapes([32, 64], [32, 64], [32, 32])
            attn[0:, :, h * d:] = pypto.matmul(probs, vh, pypto.DT_BF16)
        pypto.set_cube_tile_shapes([32, 64], [64, 128], [64, 128])
        out[b:, :, :] = pypto.matmul(attn, wo, pypto.DT_BF16)


def torch_attention_bf16(x, wq, wk, wv, wo, cfg: AttentionConfig):
    """The same computation with torch, rounding to BF16 where the kernel does."""
    bf16, b, s = torch.bfloat16, x.shape[0], x.shape[1]

    def mm(a, w):  # FP32 accumulation, then one rounding
        return (a.float() @ w.float()).to(bf16)

    def heads(t):
        return t.reshape(b, s, cfg.heads, cfg.head_dim).transpose(1, 2)

    q, k, v = heads(mm(x, wq)), heads(mm(x, wk)), heads(mm(x, wv))
    scores = (q.float() @ k.float().transpose(-1, -2)) * (1.0 / math.sqrt(cfg.head_dim))
    probs = torch.softmax(scores, dim=-1).to(bf16)
    attn = mm(probs, v).transpose(1, 2).reshape(b, s, cfg.proj_dim)
    return mm(attn, wo)


@pypto.options(pass_options={"enable_slice": True})
def test_attention_bf16(device: str = DEVICE) -> None:
    wq, wk, wv, wo = _weights(device, torch.bfloat16)
    x = torch.randn(2, SEQ, HIDDEN, device=device).to(torch.bfloat16)
    out = torch.zeros(2, SEQ, HIDDEN, dtype=torch.bfloat16, device=device)
    attention_bf16_kernel(x, wq, wk, wv, wo, out, CFG)
    golden = torch_attention_bf16(x, wq, wk, wv, wo, CFG)
    torch.testing.assert_close(out, golden, atol=2e-2, rtol=2e-2)
    # and close to the FP32 computation, within BF16 accuracy
    fp32 = torch_attention(x.float(), wq.float(), wk.float(), wv.float(), wo.float(), CFG)
    assert (out.float() - fp32).abs().max() < 1e-1


# ---- online softmax (flash attention) --------------------------------------------------------

@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def flash_attention_kernel(q: pypto.Tensor([pypto.DYNAMIC, SEQ, PROJ], pypto.DT_FP32),
                           k: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, PROJ], pypto.DT_FP32),
                           v: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, PROJ], pypto.DT_FP32),
                           out: pypto.Tensor([pypto.DYNAMIC, SEQ, PROJ], pypto.DT_FP32),
                           cfg: AttentionConfig):
    batch, kv_len = q.shape[0], k.shape[1]
    d, blk = cfg.head_dim, cfg.kv_block
    scale = 1.0 / math.sqrt(d)
    # loop-carried state, one row per query: running max, running sum, output accumulator
    max_update = pypto.tensor([1, SEQ, 1], pypto.DT_FP32, "max_update")
    sum_update = pypto.tensor([1, SEQ, 1], pypto.DT_FP32, "sum_update")
    oi_update = pypto.tensor([1, SEQ, d], pypto.DT_FP32, "oi_update")
    pypto.set_vec_tile_shapes(1, 32, 32)
    for b in pypto.loop(batch, name="LOOP_B", idx_name="b"):
        for h in pypto.loop(cfg.heads, name="LOOP_H", idx_name="h"):
            qh = q[b:b + 1, :, h * d:(h + 1) * d]                       # [1, S, D]
            for j in pypto.loop(0, kv_len, blk, name="LOOP_KV", idx_name="j"):
                valid = [1, (kv_len - j).min(blk), d]                  # tail block: fewer rows
                kj = pypto.view(k, [1, blk, d], [b, j, h * d], valid_shape=valid)
                vj = pypto.view(v, [1, blk, d], [b, j, h * d], valid_shape=valid)
                pypto.set_cube_tile_shapes([32, 64], [32, 32], [32, 32])
                s = pypto.matmul(qh, kj, pypto.DT_FP32, b_trans=True) * scale  # [1, S, blk]
                block_max = pypto.amax(s, dim=-1, keepdim=True)
                if pypto.is_loop_begin(j):
                    p = pypto.exp(s - block_max)
                    max_update[:] = block_max
                    sum_update[:] = pypto.sum(p, dim=-1, keepdim=True)
                    oi_update[:] = pypto.matmul(p, vj, pypto.DT_FP32)
                else:
                    new_max = pypto.maximum(max_update, block_max)
                    alpha = pypto.exp(max_update - new_max)    # rescales the old state
                    p = pypto.exp(s - new_max)
                    sum_update[:] = sum_update * alpha + pypto.sum(p, dim=-1, keepdim=True)
                    oi_update[:] = oi_update * alpha + pypto.matmul(p, vj, pypto.DT_FP32)
                    max_update[:] = new_max
                if pypto.is_loop_end(j):
                    out[b:, :, h * d:] = oi_update / sum_update


def torch_sdpa(q, k, v, cfg: AttentionConfig):
    """softmax(Q K^T / sqrt(D)) V per head, on [B, S, N] tensors."""
    def heads(t):
        return t.reshape(t.shape[0], t.shape[1], cfg.heads, cfg.head_dim).transpose(1, 2)

    p = torch.softmax(heads(q) @ heads(k).transpose(-1, -2) / math.sqrt(cfg.head_dim), -1)
    o = p @ heads(v)
    return o.transpose(1, 2).reshape(q.shape[0], q.shape[1], cfg.proj_dim)


@pypto.options(pass_options={"enable_slice": True})
def test_flash_attention(device: str = DEVICE) -> None:
    for batch, kv_len in ((2, 128), (1, 80), (3, 32)):   # 4 blocks; 2 + a tail of 16; 1 block
        q = torch.randn(batch, SEQ, PROJ, device=device)
        k = torch.randn(batch, kv_len, PROJ, device=device)
        v = torch.randn(batch, kv_len, PROJ, device=device)
        out = torch.zeros(batch, SEQ, PROJ, device=device)
        flash_attention_kernel(q, k, v, out, CFG)
        assert_allclose(out.numpy(), torch_sdpa(q, k, v, CFG).numpy(), rtol=1e-3, atol=1e-3)
    assert flash_attention_kernel.compile_count == 1


EXAMPLES = {
    "attention::test_attention": test_attention,
    "attention::test_attention_bf16": test_attention_bf16,
    "attention::test_flash_attention": test_flash_attention,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
