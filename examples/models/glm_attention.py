#!/usr/bin/env python3
"""GLM-4.5 attention decode: GQA flash decoding over the KV cache in 512-key blocks.

One decode step (one new token per sequence) of GLM-4.5's attention core, softmax(q·kᵀ/√d)·v,
written from the model's public description:
- 96 query heads over 8 KV heads (GQA group 12), head dim 128: the GLM-4.5 technical report
  (arXiv 2508.06471, Table 1: "96 heads", "# Key-Value Heads 8", "Attention Head Dim 128") and
  the Hugging Face config of zai-org/GLM-4.7, the same Glm4MoeForCausalLM architecture
  (num_attention_heads 96, num_key_value_heads 8, head_dim 128);
- batch 8 with a 16k cache (one query token each): the `ifa_b8_s1_1_s2_16k` decode case of
  PyPTO's public GLM-4.5 attention benchmark (hicann/pypto models/glm_v4_5);
- BF16 q/k/v, FP32 scores and online softmax (running max, sum and output per query row),
  512 keys per KV block: the layout of the guide's glm_attention stitch case study
  (compiler_runtime.md §6.1 #1-2: stitch 1 -> 128 -> 512).

The cache is laid out per (batch, KV head) pair, k/v [pairs, kv_len, 128] (a paged cache after
its block-table gather), and q as [pairs, 12, 128]: the 12 query heads that share the pair's KV
head. Every pair keeps its own running state (rows `pair` of `[pairs, 12, ...]` scratch
tensors), so pairs never wait for each other; each iteration of the KV loop reads its query
rows and its K/V block straight from the parameters. Root instances: pairs x ceil(kv_len/512).

Knobs: `stitch` (stitch_function_max_num, the guide's sweep 1 / 4 / 16 / 128 / 512), the loop
order (pairs outside the KV loop, as benchmarks/glm_attention.py, or KV blocks outside the pairs,
which puts many pairs in each stitch window), the KV block, the vector TileShape and the two cube
TileShapes (`Tiles`). Sizes: `Shape` (batch, kv_len, KV heads: 8 for the whole model, 1 for a
TP8 shard, PyPTO's own case). `build_guide` is the same step in the loop nest of the guide's
own glm file (b x s1 x n2 x g x s2, `unroll_list` [8, 4, 2, 1] on s2: `GUIDE`, 32 root
instances of 8 KV blocks). Full-size runs are examples run only when named (`--list`).

Run:  python glm_attention.py [--list] [glm_attention::decode_b8_16k] [--swimlane]
"""
from __future__ import annotations

import contextlib
import math
import sys
import time
from dataclasses import dataclass

import torch

import pypto
import pypto.testing
from pypto.toolkit.example_cli import checking, run_examples

HEAD_DIM = 128          # GLM-4.5 head_dim (q·k and v)
GROUP = 12              # 96 query heads / 8 KV heads
STITCH_SWEEP = (1, 4, 16, 128, 512)


@dataclass(frozen=True)
class Shape:
    """One decode step's sizes. `pairs` (batch x KV heads) independent softmax problems of
    `GROUP` query rows over `kv_len` keys each."""

    batch: int = 8
    kv_len: int = 16384
    kv_heads: int = 8

    @property
    def pairs(self) -> int:
        return self.batch * self.kv_heads


@dataclass(frozen=True)
class Tiles:
    """The tiling knobs: KV block (keys per root instance), the vector TileShape of the
    [1, 12, block] softmax ops, and the cube TileShapes ([mL0, mL1], [kL0, kL1], [nL0, nL1])
    of q·kᵀ (k = head dim) and p·v (k = block)."""

    kv_block: int = 512
    vec: tuple[int, ...] = (1, 16, 512)
    # one q·kᵀ task per block (n = 512 keys; kL0 64 keeps the K tile in L0B's 64 KiB)
    cube_qk: tuple = ((16, 16), (64, 128), (512, 512))
    cube_pv: tuple = ((16, 16), (128, 512), (128, 128))


# q·kᵀ as two [512-key / 2] tasks per block (what benchmarks/glm_attention.py uses)
HALF_N_QK = Tiles(cube_qk=((16, 16), (128, 128), (128, 256)))
# 1024-key blocks: half the instances and cube tasks (kL0 32 keeps the K tile in L0B)
BLOCK_1024 = Tiles(kv_block=1024, vec=(1, 16, 1024), cube_qk=((16, 16), (32, 128), (1024, 1024)),
                   cube_pv=((16, 16), (128, 1024), (128, 128)))


LOOP_ORDERS = ("pairs_outer", "blocks_outer")


def _block_step(tiles: Tiles):
    """One (pair p, KV block at key j) instance body of `tiles.kv_block` keys, shared by the
    loop nests of `build` and `build_guide`."""
    blk = tiles.kv_block
    scale = 1.0 / math.sqrt(HEAD_DIM)

    @pypto.frontend.function
    def block_step(q, k, v, out, run_max, run_sum, run_out, p, j, kv_len):
        """One (pair p, KV block at key j) instance: scores, then the online-softmax update."""
        rows = pypto.view(q, [1, GROUP, HEAD_DIM], [p, 0, 0])
        valid = [1, (kv_len - j).min(blk), HEAD_DIM]      # the last block may be short
        kj = pypto.view(k, [1, blk, HEAD_DIM], [p, j, 0], valid_shape=valid)
        vj = pypto.view(v, [1, blk, HEAD_DIM], [p, j, 0], valid_shape=valid)
        pypto.set_cube_tile_shapes(*map(list, tiles.cube_qk))
        s = pypto.matmul(rows, kj, pypto.DT_FP32, b_trans=True) * scale  # [1, 12, blk]
        block_max = pypto.amax(s, dim=-1, keepdim=True)
        pypto.set_cube_tile_shapes(*map(list, tiles.cube_pv))
        if pypto.is_loop_begin(j):
            e = pypto.exp(s - block_max)
            run_max[p:, :, :] = block_max
            run_sum[p:, :, :] = pypto.sum(e, dim=-1, keepdim=True)
            run_out[p:, :, :] = pypto.matmul(pypto.cast(e, pypto.DT_BF16), vj, pypto.DT_FP32)
        else:
            old_max = run_max[p:p + 1, :, :]
            new_max = pypto.maximum(old_max, block_max)
            alpha = pypto.exp(old_max - new_max)          # rescales the old state
            e = pypto.exp(s - new_max)
            run_sum[p:, :, :] = run_sum[p:p + 1, :, :] * alpha + pypto.sum(
                e, dim=-1, keepdim=True)
            run_out[p:, :, :] = run_out[p:p + 1, :, :] * alpha + pypto.matmul(
                pypto.cast(e, pypto.DT_BF16), vj, pypto.DT_FP32)
            run_max[p:, :, :] = new_max
        if pypto.is_loop_end(j):
            out[p:, :, :] = run_out[p:p + 1, :, :] / run_sum[p:p + 1, :, :]
    return block_step


def build(stitch: int = 128, tiles: Tiles = Tiles(), order: str = "blocks_outer"):
    """The decode kernel: `kernel(q, k, v, out)` with q [pairs, 12, 128] BF16,
    k/v [pairs, kv_len, 128] BF16, out [pairs, 12, 128] FP32 (pairs and kv_len dynamic).

    `order` is the loop nest. "pairs_outer" walks one pair's KV blocks after another (the loop
    nest of benchmarks/glm_attention.py), so a stitch window of N instances holds only about
    N / blocks pairs, each a chain of dependent blocks; "blocks_outer" visits every pair per KV
    block, so a window holds up to N different pairs that run side by side."""
    if order not in LOOP_ORDERS:
        raise pypto.errors.PyptoValueError(
            f"glm_attention: order must be one of {LOOP_ORDERS}, got {order!r}")
    blk = tiles.kv_block
    block_step = _block_step(tiles)

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch})
    def glm_attention(q: pypto.Tensor([pypto.DYNAMIC, GROUP, HEAD_DIM], pypto.DT_BF16),
                      k: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, HEAD_DIM], pypto.DT_BF16),
                      v: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, HEAD_DIM], pypto.DT_BF16),
                      out: pypto.Tensor([pypto.DYNAMIC, GROUP, HEAD_DIM], pypto.DT_FP32)):
        pairs, kv_len = q.shape[0], k.shape[1]
        state = _running_state(pairs, ("run_max", "run_sum", "run_out"))
        pypto.set_vec_tile_shapes(*tiles.vec)
        if order == "pairs_outer":
            for p in pypto.loop(pairs, name="LOOP_PAIR", idx_name="p"):
                for j in pypto.loop(0, kv_len, blk, name="LOOP_KV", idx_name="j"):
                    block_step(q, k, v, out, *state, p, j, kv_len)
        else:
            for j in pypto.loop(0, kv_len, blk, name="LOOP_KV", idx_name="j"):
                for p in pypto.loop(pairs, name="LOOP_PAIR", idx_name="p"):
                    block_step(q, k, v, out, *state, p, j, kv_len)
    return glm_attention


def _running_state(pairs, names: tuple[str, str, str]) -> tuple:
    """The online-softmax state of every pair, as scratch tensors named `names`: row max, row
    sum, unnormalised output."""
    return (pypto.tensor([pairs, GROUP, 1], pypto.DT_FP32, names[0]),
            pypto.tensor([pairs, GROUP, 1], pypto.DT_FP32, names[1]),
            pypto.tensor([pairs, GROUP, HEAD_DIM], pypto.DT_FP32, names[2]))


# The guide's own case (runtime_facts §3: hicann/pypto models/glm_v4_5/glm_attention.py at
# 08cec41e4, whose stitch 1 / 128 / 512 table the performance guide prints): b 8, s1 1, s2 16k,
# nq 12, nkv 1, head dim 128, s2 tile 512, g tile 12, BF16, `unroll_list` [8, 4, 2, 1] on s2.
GUIDE = Shape(batch=8, kv_len=16384, kv_heads=1)
GUIDE_UNROLL = (8, 4, 2, 1)


def build_guide(stitch: int = 128, tiles: Tiles = Tiles(), unroll=GUIDE_UNROLL,
                kv_heads: int = GUIDE.kv_heads):
    """The decode kernel in the guide's loop nest: b x s1 (1 query token) x n2 (KV heads) x
    g (12 query heads / g tile 12 = 1) x s2 (`tiles.kv_block`-key tiles), `unroll_list` on the
    s2 loop. Each s2 tier is a root function whose instance holds `factor` block steps: at
    `GUIDE` 8 batches x 32 tiles / 8 = 32 root instances of 8 s2 tiles (256 bodies), where
    `build` makes 256 instances of one. Same tensors, block step and golden as `build`; K/V
    contiguous per (batch, KV head), where the guide gathers its 128-key pages through a
    block table first."""
    blk = tiles.kv_block
    block_step = _block_step(tiles)
    g_loops = 1   # g tile 12 = GROUP: one g iteration

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch})
    def glm_attention_guide(
            q: pypto.Tensor([pypto.DYNAMIC, GROUP, HEAD_DIM], pypto.DT_BF16),
            k: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, HEAD_DIM], pypto.DT_BF16),
            v: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, HEAD_DIM], pypto.DT_BF16),
            out: pypto.Tensor([pypto.DYNAMIC, GROUP, HEAD_DIM], pypto.DT_FP32)):
        pairs, kv_len = q.shape[0], k.shape[1]
        # the guide's names for the running state
        state = _running_state(pairs, ("max_update", "sum_update", "oi_update"))
        pypto.set_vec_tile_shapes(*tiles.vec)
        for b in pypto.loop(pairs // kv_heads, name="LOOP_b", idx_name="b_idx"):
            for _s1 in pypto.loop(1, name="LOOP_s1", idx_name="s1_idx"):
                for n2 in pypto.loop(kv_heads, name="LOOP_n2", idx_name="n2_idx"):
                    for _g in pypto.loop(g_loops, name="LOOP_g", idx_name="g_idx"):
                        p = b * kv_heads + n2
                        for j in pypto.loop(0, kv_len, blk, name="LOOP_s2", idx_name="s2_idx",
                                            unroll_list=list(unroll)):
                            block_step(q, k, v, out, *state, p, j, kv_len)
    return glm_attention_guide


def inputs(shape: Shape, seed: int = 0):
    """q, k, v (BF16, standard normal) and a zeroed FP32 out."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(shape.pairs, GROUP, HEAD_DIM, generator=g).to(torch.bfloat16)
    k = torch.randn(shape.pairs, shape.kv_len, HEAD_DIM, generator=g).to(torch.bfloat16)
    v = torch.randn(shape.pairs, shape.kv_len, HEAD_DIM, generator=g).to(torch.bfloat16)
    return q, k, v, torch.zeros(shape.pairs, GROUP, HEAD_DIM)


def golden(q, k, v):
    """softmax(q·kᵀ/√d)·v per pair, in FP32 from the BF16 inputs."""
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(HEAD_DIM)
    return torch.softmax(s, dim=-1) @ v.float()


# The kernel rounds each block's probabilities to BF16 for the p·v matmul (8 significant bits:
# relative error <= 2^-9 per weight) and the golden does not: `check` compares the two within
# twice the kernel's forward error bound, element by element (pypto.testing.forward_bounds:
# the BF16 roundings, the sums' lengths and the magnitudes on each element's paths).


def run(shape: Shape, stitch: int = 128, tiles: Tiles = Tiles(), order: str = "blocks_outer",
        check: bool = True):
    """One call at `shape`; checks it against `golden` and returns the kernel (its `last_run`
    holds the simulated run)."""
    check = check and checking()   # (not under --timing-only)
    kernel = build(stitch, tiles, order)
    q, k, v, out = inputs(shape)
    with (pypto.testing.forward_bounds(kernel, q, k, v, out) if check
          else contextlib.nullcontext({})) as bounds:
        kernel(q, k, v, out)
    if check:
        pypto.testing.assert_close(out, golden(q, k, v), bounds["out"], "out")
    return kernel


def report(name: str, kernel, wall_s: float) -> str:
    """One line per run: kernel and end-to-end time, tasks, instances, windows, wall time."""
    r = kernel.last_run
    st = r.stats
    return (f"{name}: kernel {r.us(st['kernel_cycles']):.1f} us, e2e {r.us(st['e2e_cycles']):.1f}"
            f" us, {st['tasks']} tasks, {st['instances']} instances, {st['windows']} windows,"
            f" wall {wall_s:.1f} s")


def timed(name: str, shape: Shape, stitch: int = 128, tiles: Tiles = Tiles(),
          order: str = "blocks_outer"):
    t = time.perf_counter()
    kernel = run(shape, stitch, tiles, order)
    print(report(name, kernel, time.perf_counter() - t))
    return kernel


# ---- examples ----------------------------------------------------------------------------

REDUCED = Shape(batch=1, kv_len=1200, kv_heads=2)    # 2 pairs x 3 blocks, the last one short


def test_reduced() -> None:
    """The model at a reduced size (a short last block) against the torch golden."""
    timed("reduced b1 kv1200 2 KV heads", REDUCED, stitch=4)


def decode_b8_16k() -> None:
    """Full size at the recommended settings: batch 8, 16k cache, all 8 KV heads (64 pairs x 32
    blocks = 2048 instances), blocks outer, one q·kᵀ task per block, stitch 128."""
    print(timed("b8 kv16384", FULL).last_run.summary())


def stitch_sweep() -> None:
    """The guide's sweep 1 / 4 / 16 / 128 / 512 at batch 8 with a 16k cache, both loop orders."""
    for order in LOOP_ORDERS:
        for stitch in STITCH_SWEEP:
            timed(f"b8 kv16384 {order} stitch {stitch}", FULL, stitch, order=order)


def loop_orders_and_tiles() -> None:
    """Full size, stitch 128: both loop orders, q·kᵀ as one or two tasks per block, and
    1024-key blocks."""
    for order in LOOP_ORDERS:
        for tiles, name in ((Tiles(), "q·kᵀ n512"), (HALF_N_QK, "q·kᵀ n256"),
                            (BLOCK_1024, "1024-key blocks")):
            timed(f"b8 kv16384 {order} {name}", FULL, 128, tiles, order)


FULL = Shape(batch=8, kv_len=16384)
FORTY = Shape(batch=1, kv_len=2560)      # 8 pairs x 5 blocks = 40 root instances


def stitch_40_instances() -> None:
    """Stitch 1 vs 128 on the issue's 40-instance attention kernel, both loop orders."""
    for order in LOOP_ORDERS:
        for stitch in (1, 128):
            timed(f"40 instances {order} stitch {stitch}", FORTY, stitch, order=order)


def pairs_8_vs_1() -> None:
    """8 independent (batch, KV head) pairs vs 1 (a TP8 shard: one KV head) at stitch 128."""
    for order in LOOP_ORDERS:
        for shape in (Shape(1, 4096, kv_heads=1), Shape(1, 4096, kv_heads=8)):
            timed(f"{shape.pairs} pair(s) kv4096 {order}", shape, order=order)


def guide_form() -> None:
    """The guide's own case and loop nest (`build_guide`: 32 root instances of 8 s2 tiles) at
    the guide's stitch 1 / 128 / 512 (kernel 1230 / 180 / 150 us, E2E 1590 / 803 / 977)."""
    for stitch in (1, 128, 512):
        t = time.perf_counter()
        kernel = build_guide(stitch)
        q, k, v, out = inputs(GUIDE)
        kernel(q, k, v, out)
        if checking():
            torch.testing.assert_close(out, golden(q, k, v), atol=2e-2, rtol=2e-2)
        print(report(f"guide's form stitch {stitch}", kernel, time.perf_counter() - t))


EXAMPLES = {
    "glm_attention::test_reduced": test_reduced,
    "glm_attention::decode_b8_16k": decode_b8_16k,
    "glm_attention::stitch_sweep": stitch_sweep,
    "glm_attention::loop_orders_and_tiles": loop_orders_and_tiles,
    "glm_attention::stitch_40_instances": stitch_40_instances,
    "glm_attention::pairs_8_vs_1": pairs_8_vs_1,
    "glm_attention::guide_form": guide_form,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv, default=["glm_attention::test_reduced"])


if __name__ == "__main__":
    sys.exit(main())
