#!/usr/bin/env python3
"""SwiGLU feed-forward (GLM-4.5's dense FFN): out = (silu(x·W_gate) * (x·W_up))·W_down.

Shapes, from public sources: hidden 5120 and intermediate 12288 are GLM-4.5's dense layers
(the first 3 of 92; the GLM-4.5 technical report, arXiv 2508.06471 Table 1, "Hidden Dim 5120",
"Dense Intermediate Dim 12288", and intermediate_size 12288 in the Hugging Face config of
zai-org/GLM-4.7, the same Glm4MoeForCausalLM architecture); GLM-4.5-Air's are 4096 / 10944
(`AIR`). hidden_act "silu": the gate/up/down SwiGLU of transformers' glm4_moe MLP. The two token
counts are ours: decode, 16 tokens (one step of a batch of 16, the batch of PyPTO's public
GLM-4.5 decode cases), and prefill, 4096 tokens (one 4k prompt).

BF16 activations and weights (the checkpoint's dtype); the three matmuls accumulate in FP32,
silu and the product run in FP32, the product is rounded to BF16 for the down projection
(as a BF16 model does between its layers), and the output is BF16. Tokens are walked in
blocks of `Tiles.block` rows (a `pypto.loop`, the last block short); each block's gate/up
products are [block, intermediate] and its down product [block, hidden].

Knobs (`Tiles`): the token block, the vector TileShape of the [block, intermediate] ops, the
cube TileShapes of the gate/up and of the down matmuls, and split-K on the down matmul (its
K = intermediate is long: without split-K a decode step has only hidden / nL1 down tasks).

Run:  python swiglu_ffn.py [--list] [swiglu_ffn::decode_t16] [--swimlane]
"""
from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass

import torch

import pypto
import pypto.testing
from pypto.toolkit.example_cli import checking, run_examples


@dataclass(frozen=True)
class Shape:
    tokens: int
    hidden: int = 5120          # GLM-4.5 hidden_size
    inter: int = 12288          # GLM-4.5 dense intermediate_size


AIR = dict(hidden=4096, inter=10944)    # GLM-4.5-Air's dense FFN


@dataclass(frozen=True)
class Tiles:
    """Token rows per iteration, vector TileShape, cube TileShapes ([mL0, mL1], [kL0, kL1],
    [nL0, nL1]) of gate/up and of down, and split-K for down."""

    block: int = 16
    vec: tuple[int, int] = (16, 512)
    cube_up: tuple = ((16, 16), (128, 512), (256, 256))
    cube_down: tuple = ((16, 16), (128, 512), (256, 256))
    split_k_down: bool = False


DECODE = Tiles()
DECODE_SPLIT_K = Tiles(split_k_down=True)
# the guide's starting point for large matmuls, [128,128],[64,256],[256,256], on 512-token
# blocks: each weight tile then serves 4 m-tiles of one instance at once (L2 hits), where
# 128-token blocks read the weights again per block
PREFILL = Tiles(block=512, vec=(32, 512), cube_up=((128, 128), (64, 256), (256, 256)),
                cube_down=((128, 128), (64, 256), (256, 256)))
PREFILL_BLOCK_128 = Tiles(block=128, vec=PREFILL.vec, cube_up=PREFILL.cube_up,
                          cube_down=PREFILL.cube_down)


def build(hidden: int, inter: int, tiles: Tiles = DECODE, stitch: int = 128):
    """`kernel(x, w_gate, w_up, w_down, out)`: x [T, hidden] BF16 (T dynamic), w_gate / w_up
    [hidden, inter], w_down [inter, hidden] BF16 -> out [T, hidden] BF16."""
    blk = tiles.block

    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": stitch})
    def swiglu_ffn(x: pypto.Tensor([pypto.DYNAMIC, hidden], pypto.DT_BF16),
                   w_gate: pypto.Tensor([hidden, inter], pypto.DT_BF16),
                   w_up: pypto.Tensor([hidden, inter], pypto.DT_BF16),
                   w_down: pypto.Tensor([inter, hidden], pypto.DT_BF16),
                   out: pypto.Tensor([pypto.DYNAMIC, hidden], pypto.DT_BF16)):
        tokens = x.shape[0]
        pypto.set_vec_tile_shapes(*tiles.vec)
        for i in pypto.loop(0, tokens, blk, name="LOOP_TOKENS", idx_name="i"):
            rows = (tokens - i).min(blk)                    # the last block may be short
            xb = pypto.view(x, [blk, hidden], [i, 0], valid_shape=[rows, hidden])
            pypto.set_cube_tile_shapes(*map(list, tiles.cube_up))
            gate = pypto.matmul(xb, w_gate, pypto.DT_FP32)  # [blk, inter]
            up = pypto.matmul(xb, w_up, pypto.DT_FP32)
            h = pypto.cast(gate * pypto.sigmoid(gate) * up, pypto.DT_BF16)
            pypto.set_cube_tile_shapes(*map(list, tiles.cube_down),
                                       enable_split_k=tiles.split_k_down)
            y = pypto.matmul(h, w_down, pypto.DT_FP32)      # [blk, hidden]
            out[i:, :] = pypto.cast(y, pypto.DT_BF16)
    return swiglu_ffn


def inputs(shape: Shape, seed: int = 0):
    """x and the weights in BF16 (weights scaled by 1/sqrt(fan-in), so every product is O(1)),
    and a zeroed BF16 out."""
    g = torch.Generator().manual_seed(seed)
    h, n = shape.hidden, shape.inter

    def bf16(*size, scale=1.0):
        return (torch.randn(*size, generator=g) * scale).to(torch.bfloat16)

    return (bf16(shape.tokens, h), bf16(h, n, scale=h ** -0.5), bf16(h, n, scale=h ** -0.5),
            bf16(n, h, scale=n ** -0.5), torch.zeros(shape.tokens, h, dtype=torch.bfloat16))


def golden(x, w_gate, w_up, w_down):
    """The same computation in torch: FP32 products, the hidden product rounded to BF16."""
    gate, up = x.float() @ w_gate.float(), x.float() @ w_up.float()
    h = (torch.nn.functional.silu(gate) * up).to(torch.bfloat16)
    return (h.float() @ w_down.float()).to(torch.bfloat16)


# Both round h and the output to BF16 (8 significant bits) after FP32 sums taken in different
# orders, so an element can land one BF16 step (2^-8 relative) apart: `check` compares them
# within twice the kernel's forward error bound (pypto.testing.forward_bounds), per element.


def run(shape: Shape, tiles: Tiles = DECODE, stitch: int = 128, check: bool = True):
    """One call at `shape`, checked against `golden`; returns the kernel (`last_run`)."""
    check = check and checking()   # (not under --timing-only)
    kernel = build(shape.hidden, shape.inter, tiles, stitch)
    x, wg, wu, wd, out = inputs(shape)
    with (pypto.testing.forward_bounds(kernel, x, wg, wu, wd, out) if check
          else contextlib.nullcontext({})) as bounds:
        kernel(x, wg, wu, wd, out)
    if check:
        pypto.testing.assert_close(out, golden(x, wg, wu, wd), bounds["out"], "out")
    return kernel


def timed(name: str, shape: Shape, tiles: Tiles = DECODE):
    t = time.perf_counter()
    kernel = run(shape, tiles)
    r = kernel.last_run
    st = r.stats
    print(f"{name}: kernel {r.us(st['kernel_cycles']):.1f} us, e2e {r.us(st['e2e_cycles']):.1f}"
          f" us, {st['tasks']} tasks, {st['instances']} instances, {st['windows']} windows,"
          f" wall {time.perf_counter() - t:.1f} s")
    return kernel


# ---- examples ----------------------------------------------------------------------------

REDUCED = Shape(tokens=40, hidden=256, inter=768)     # blocks of 16, 16 and 8 tokens


def test_reduced() -> None:
    """A reduced size (short last block), with and without split-K, against the golden."""
    for tiles, name in ((DECODE, "no split-K"), (DECODE_SPLIT_K, "split-K")):
        timed(f"T=40 256->768->256 {name}", REDUCED, tiles)


def decode_t16() -> None:
    """Decode: 16 tokens through GLM-4.5's dense FFN (5120 -> 12288 -> 5120), split-K or not."""
    for tiles, name in ((DECODE, "no split-K"), (DECODE_SPLIT_K, "split-K")):
        print(timed(f"decode T=16 {name}", Shape(16), tiles).last_run.summary())


def prefill_t4096() -> None:
    """Prefill: 4096 tokens, the guide's large-matmul tiles on 512-token blocks (minutes)."""
    print(timed("prefill T=4096", Shape(4096), PREFILL).last_run.summary())


def prefill_t1024() -> None:
    """A shorter prefill, 1024 tokens (about a minute each with numerics), in 512- and
    128-token blocks."""
    for tiles, name in ((PREFILL, "512-token blocks"), (PREFILL_BLOCK_128, "128-token blocks")):
        print(timed(f"prefill T=1024 {name}", Shape(1024), tiles).last_run.summary())


EXAMPLES = {
    "swiglu_ffn::test_reduced": test_reduced,
    "swiglu_ffn::decode_t16": decode_t16,
    "swiglu_ffn::prefill_t1024": prefill_t1024,
    "swiglu_ffn::prefill_t4096": prefill_t4096,
}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv, default=["swiglu_ffn::test_reduced"])


if __name__ == "__main__":
    sys.exit(main())
