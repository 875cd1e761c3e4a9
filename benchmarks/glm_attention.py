"""A glm-attention-size kernel: GQA flash decoding at GLM-4.5's attention shapes.

GLM-4.5 attention has 96 query heads over 8 KV heads of dim 128. One decode step with MTP
(2 tokens) for a batch of 16 with a 4k KV cache: per (batch, KV head) the 12 query heads x 2
tokens (24 rows) attend to 4096 cached keys in blocks of 512, with online softmax (running
max / sum / output carried across the KV loop). BF16 Q/K/V, FP32 scores and accumulation.
That is 128 (batch, KV head) pairs x 8 KV blocks = 1024 root instances of the KV-loop body,
plus 128 of the per-pair code before it (the query slice, 3 tiles): 1152 instances, 9,600
tasks. This is the loop structure whose stitching compiler_runtime.md §6.1 #1-2 tunes (stitch
1 -> 128 -> 512).

`run(stitch)` builds, runs and checks one call against torch; the benchmark suite times it.
"""
from __future__ import annotations

import math

import torch

import pypto

BATCH, KV_HEADS, GROUP, TOKENS, DIM = 16, 8, 12, 2, 128
ROWS = GROUP * TOKENS            # query rows per (batch, KV head)
KV_LEN, BLOCK = 4096, 512


def make_kernel(stitch: int = 128, debug: int = 0, pairs_max: int = BATCH * KV_HEADS):
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch},
                        debug_options={"runtime_debug_mode": debug})
    def glm_attention(q: pypto.Tensor([pypto.DYNAMIC, ROWS, DIM], pypto.DT_BF16),
                      k: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, DIM], pypto.DT_BF16),
                      v: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, DIM], pypto.DT_BF16),
                      out: pypto.Tensor([pypto.DYNAMIC, ROWS, DIM], pypto.DT_FP32)):
        pairs, kv_len = q.shape[0], k.shape[1]
        scale = 1.0 / math.sqrt(DIM)
        # running state per (batch, KV head) pair, so pairs do not wait for each other
        max_state = pypto.tensor([pairs_max, ROWS, 1], pypto.DT_FP32, "max_update")
        sum_state = pypto.tensor([pairs_max, ROWS, 1], pypto.DT_FP32, "sum_update")
        oi_state = pypto.tensor([pairs_max, ROWS, DIM], pypto.DT_FP32, "oi_update")
        pypto.set_vec_tile_shapes(1, 8, 512)
        for bg in pypto.loop(pairs, name="LOOP_BG", idx_name="bg"):
            qb = q[bg:bg + 1, :, :]                                    # [1, 24, 128]
            for j in pypto.loop(0, kv_len, BLOCK, name="LOOP_KV", idx_name="j"):
                valid = [1, (kv_len - j).min(BLOCK), DIM]
                kj = pypto.view(k, [1, BLOCK, DIM], [bg, j, 0], valid_shape=valid)
                vj = pypto.view(v, [1, BLOCK, DIM], [bg, j, 0], valid_shape=valid)
                pypto.set_cube_tile_shapes([32, 32], [128, 128], [128, 256])
                s = pypto.matmul(qb, kj, pypto.DT_FP32, b_trans=True) * scale  # [1, 24, 512]
                block_max = pypto.amax(s, dim=-1, keepdim=True)
                pypto.set_cube_tile_shapes([32, 32], [128, 512], [128, 128])
                if pypto.is_loop_begin(j):
                    p = pypto.exp(s - block_max)
                    max_state[bg:, :, :] = block_max
                    sum_state[bg:, :, :] = pypto.sum(p, dim=-1, keepdim=True)
                    oi_state[bg:, :, :] = pypto.matmul(pypto.cast(p, pypto.DT_BF16), vj,
                                                       pypto.DT_FP32)
                else:
                    old_max = max_state[bg:bg + 1, :, :]
                    new_max = pypto.maximum(old_max, block_max)
                    alpha = pypto.exp(old_max - new_max)
                    p = pypto.exp(s - new_max)
                    sum_state[bg:, :, :] = sum_state[bg:bg + 1, :, :] * alpha + pypto.sum(
                        p, dim=-1, keepdim=True)
                    oi_state[bg:, :, :] = oi_state[bg:bg + 1, :, :] * alpha + pypto.matmul(
                        pypto.cast(p, pypto.DT_BF16), vj, pypto.DT_FP32)
                    max_state[bg:, :, :] = new_max
                if pypto.is_loop_end(j):
                    out[bg:, :, :] = oi_state[bg:bg + 1, :, :] / sum_state[bg:bg + 1, :, :]
    return glm_attention


def inputs(batch: int = BATCH, kv_len: int = KV_LEN, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    pairs = batch * KV_HEADS
    q = torch.randn(pairs, ROWS, DIM, generator=g).to(torch.bfloat16)
    k = torch.randn(pairs, kv_len, DIM, generator=g).to(torch.bfloat16)
    v = torch.randn(pairs, kv_len, DIM, generator=g).to(torch.bfloat16)
    return q, k, v, torch.zeros(pairs, ROWS, DIM)


def golden(q, k, v):
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(DIM)
    return torch.softmax(s, dim=-1) @ v.float()


def run(stitch: int = 128, batch: int = BATCH, kv_len: int = KV_LEN, debug: int = 0):
    """One checked call; returns the kernel (its last_run holds the simulated run)."""
    kernel = make_kernel(stitch, debug, batch * KV_HEADS)
    q, k, v, out = inputs(batch, kv_len)
    kernel(q, k, v, out)
    torch.testing.assert_close(out, golden(q, k, v), atol=3e-2, rtol=3e-2)
    return kernel


if __name__ == "__main__":
    import time
    t = time.perf_counter()
    kern = run()
    run_ = kern.last_run
    print(f"{run_.stats['tasks']} tasks, kernel {run_.us(run_.stats['kernel_cycles']):.1f} us, "
          f"e2e {run_.us(run_.stats['e2e_cycles']):.1f} us, wall {time.perf_counter() - t:.2f} s")
