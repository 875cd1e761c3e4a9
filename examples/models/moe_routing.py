#!/usr/bin/env python3
"""GLM-4.5 MoE routing: sigmoid gate, correction bias for the choice, top-8 of 160 experts.

Per token, from the model's public description:
1. logits = x · W_gateᵀ in FP32 (the router runs in FP32: Hugging Face transformers'
   `glm4_moe` casts the hidden state and the gate weight to float32 before the linear);
2. scores = sigmoid(logits);
3. the 8 experts with the largest scores + e_score_correction_bias are chosen (the bias only
   chooses: "noaux_tc", loss-free balance routing);
4. weights = the chosen *unbiased* scores, normalised to sum 1 (norm_topk_prob) and multiplied
   by routed_scaling_factor 2.5.

Shapes and constants: hidden 5120, n_routed_experts 160, num_experts_per_tok 8, n_group 1,
topk_group 1, norm_topk_prob true, routed_scaling_factor 2.5, from the Hugging Face config of
zai-org/GLM-4.7 (the same Glm4MoeForCausalLM architecture as GLM-4.5, whose own config.json we
did not find public; the GLM-4.5 technical report, arXiv 2508.06471 Table 1, confirms 5120 /
160 experts / 8 active, and NVIDIA Megatron-Bridge's GLM 4.5 page "top-8 routing with 2.5x
scaling factor"). With n_group = topk_group = 1 the group-limited step (keep the best
topk_group of n_group expert groups) keeps the only group: it is the identity, so the kernel
does a plain top-8 over all 160. Token counts: PyPTO's public GLM-4.5 gate / select_experts
tests use T = 32 / 64 and T = 1026 (hicann/pypto models/glm_v4_5).

Tokens are processed in blocks of `block` rows (a `pypto.loop`, the last block short). The gate
weight arrives in BF16 (the checkpoint's dtype) and is cast to FP32 for the router matmul. The
knob is the guide's redundant-compute trick: `cast="shared"` casts it once before the loop,
one producer whose many consumers (every token block's matmul) wait for all of it through GM;
`cast="per_block"` casts it again inside every block, more vector work but every block is an
independent chain. `cast="none"` feeds the BF16 operands to the cube with FP32 accumulation:
BF16 x BF16 products are exact in FP32, so the logits are the FP32 router's up to the order of
the FP32 sums, without any cast (and the cube runs BF16 at twice its FP32 rate).

Run:  python moe_routing.py [--list] [moe_routing::route_t1026] [--swimlane]
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import torch

import pypto
from pypto.toolkit.example_cli import checking, run_examples

HIDDEN = 5120              # GLM-4.5 hidden_size
EXPERTS = 160              # n_routed_experts
TOP_K = 8                  # num_experts_per_tok
SCALING = 2.5              # routed_scaling_factor
NORM_EPS = 1e-20           # added to the sum of the chosen weights (transformers' glm4_moe)
CASTS = ("shared", "per_block", "none")


@dataclass(frozen=True)
class Tiles:
    """Token rows per loop iteration, the vector TileShape of the [rows, *] ops, and the router
    matmul's cube TileShape (FP32 operands: kL0 64 x n 160 x 4 B = 40 KiB of L0B; the
    [16, 5120] x [5120, 160] product is one cube task per token block)."""

    block: int = 16
    vec: tuple[int, int] = (16, 512)
    cube: tuple = ((16, 16), (64, 512), (160, 160))


def build(cast: str = "none", tiles: Tiles = Tiles(), stitch: int = 128):
    """`kernel(x, w_gate, bias, weights, ids)`: x [T, 5120] BF16, w_gate [160, 5120] BF16,
    bias [1, 160] FP32 -> weights [T, 8] FP32, ids [T, 8] INT32 (T dynamic), experts in
    descending order of biased score."""
    if cast not in CASTS:
        raise pypto.errors.PyptoValueError(f"moe_routing: cast must be one of {CASTS}, "
                                           f"got {cast!r}")
    blk = tiles.block

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch})
    def moe_routing(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_BF16),
                    w_gate: pypto.Tensor([EXPERTS, HIDDEN], pypto.DT_BF16),
                    bias: pypto.Tensor([1, EXPERTS], pypto.DT_FP32),
                    weights: pypto.Tensor([pypto.DYNAMIC, TOP_K], pypto.DT_FP32),
                    ids: pypto.Tensor([pypto.DYNAMIC, TOP_K], pypto.DT_INT32)):
        tokens = x.shape[0]
        pypto.set_vec_tile_shapes(*tiles.vec)
        pypto.set_cube_tile_shapes(*map(list, tiles.cube))
        shared = pypto.cast(w_gate, pypto.DT_FP32) if cast == "shared" else None
        for i in pypto.loop(0, tokens, blk, name="LOOP_TOKENS", idx_name="i"):
            rows = (tokens - i).min(blk)                    # the last block may be short
            xb = pypto.view(x, [blk, HIDDEN], [i, 0], valid_shape=[rows, HIDDEN])
            if cast == "none":
                xf, w = xb, w_gate                          # BF16 in, FP32 accumulation
            else:
                xf = pypto.cast(xb, pypto.DT_FP32)
                w = pypto.cast(w_gate, pypto.DT_FP32) if cast == "per_block" else shared
            logits = pypto.matmul(xf, w, pypto.DT_FP32, b_trans=True)   # [blk, 160]
            scores = pypto.sigmoid(logits)
            _, top = pypto.topk(scores + bias, TOP_K)       # the bias only chooses
            chosen = pypto.gather(scores, -1, top)          # [blk, 8] unbiased scores
            total = pypto.sum(chosen, dim=-1, keepdim=True) + NORM_EPS
            weights[i:, :] = chosen / total * SCALING
            ids[i:, :] = top
    return moe_routing


def inputs(tokens: int, seed: int = 0):
    """x, w_gate (BF16), bias (FP32) and zeroed outputs. The bias is large enough to change
    some choices, so a kernel that weighs by biased scores or ignores the bias fails."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, HIDDEN, generator=g).to(torch.bfloat16)
    w_gate = (torch.randn(EXPERTS, HIDDEN, generator=g) / HIDDEN ** 0.5).to(torch.bfloat16)
    bias = torch.randn(1, EXPERTS, generator=g) * 0.1
    return (x, w_gate, bias, torch.zeros(tokens, TOP_K),
            torch.zeros(tokens, TOP_K, dtype=torch.int32))


def golden(x, w_gate, bias):
    """(weights, ids) as transformers' Glm4MoeTopkRouter + route_tokens_to_experts, FP32."""
    scores = torch.sigmoid(x.float() @ w_gate.float().t())
    ids = torch.topk(scores + bias, TOP_K, dim=-1).indices
    chosen = scores.gather(-1, ids)
    return chosen / (chosen.sum(-1, keepdim=True) + NORM_EPS) * SCALING, ids


# The logits are FP32 sums of exact BF16 products in a different order than torch's: relative
# differences ~1e-6, which sigmoid and the normalisation keep at that size; 1e-5 leaves room.
ATOL = RTOL = 1e-5


def check(x, w_gate, bias, weights, ids) -> None:
    """The kernel's experts and weights against the golden, per token (the same 8 experts in
    the same order: random data has no ties within ~1e-6)."""
    want_w, want_ids = golden(x, w_gate, bias)
    torch.testing.assert_close(ids, want_ids.to(torch.int32), rtol=0, atol=0)
    torch.testing.assert_close(weights, want_w, atol=ATOL, rtol=RTOL)


def run(tokens: int, cast: str = "none", tiles: Tiles = Tiles(), stitch: int = 128,
        check_result: bool = True):
    """One call for `tokens` tokens, checked; returns the kernel (`last_run`: the run)."""
    kernel = build(cast, tiles, stitch)
    args = inputs(tokens)
    kernel(*args)
    if check_result and checking():   # (not under --timing-only)
        check(*args)
    return kernel


def timed(name: str, tokens: int, cast: str = "none", tiles: Tiles = Tiles()):
    t = time.perf_counter()
    kernel = run(tokens, cast, tiles)
    r = kernel.last_run
    st = r.stats
    print(f"{name}: kernel {r.us(st['kernel_cycles']):.1f} us, e2e {r.us(st['e2e_cycles']):.1f}"
          f" us, {st['tasks']} tasks, {st['instances']} instances, {st['windows']} windows,"
          f" wall {time.perf_counter() - t:.1f} s")
    return kernel


# ---- examples ----------------------------------------------------------------------------

def test_reduced() -> None:
    """40 tokens (two blocks of 16 and a short one of 8), every cast, against the golden."""
    for cast in CASTS:
        timed(f"T=40 cast {cast}", 40, cast)


def route_t1026() -> None:
    """Full size: PyPTO's dynamic case T = 1026, every cast."""
    for cast in CASTS:
        print(timed(f"T=1026 cast {cast}", 1026, cast).last_run.summary())


def route_decode() -> None:
    """Decode sizes: T = 32 and 64 tokens, every cast."""
    for tokens in (32, 64):
        for cast in CASTS:
            timed(f"T={tokens} cast {cast}", tokens, cast)


EXAMPLES = {
    "moe_routing::test_reduced": test_reduced,
    "moe_routing::route_decode": route_decode,
    "moe_routing::route_t1026": route_t1026,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv, default=["moe_routing::test_reduced"])


if __name__ == "__main__":
    sys.exit(main())
