#!/usr/bin/env python3
"""DeepSeek-V3.2-Exp lightning-indexer prolog (decode, batch 4 with one MTP token): int8 Q
projection with dequant, RoPE, per-head int8 requant; the key and the head weights.

Sources of the shapes and the math:
- DeepSeek-V3.2-Exp `inference/config_671B_v3.2.json` (and the transformers-style
  `DeepseekV32Config` defaults): index_n_heads 64, index_head_dim 128, q_lora_rank 1536,
  dim (hidden) 7168, qk_rope_head_dim 64; the indexer (DeepSeek Sparse Attention) in the
  V3.2 paper: I_ts = sum_j w_tj ReLU(q_tj . k_s), per-head weights w = x W_proj / sqrt(64) and
  the softmax scale 128^-0.5 folded in;
- RoPE on the first 64 of each 128-dim indexer head in the non-interleaved (rotate-half)
  layout: the DeepSeek inference fix of Nov 2025 ("the input tensor to RoPE in the indexer
  module requires a non-interleaved layout");
- int8 instead of FP8 on Ascend (W8A8 on the Q projection with a per-token scale on qr and a
  per-channel scale on the weight, int8 q per (token, head) and int8 k per token, scale =
  max|x| / 127): PyPTO's QuantIndexerProlog description (reference/models.md §2);
- batch 4, MTP1 (2 tokens per sequence: 8 rows): the guide's QuantIndexerProlog case study
  (compiler_runtime.md §6.1 #4-6: 76 -> 56 -> 49 us).
Left out: the Hadamard rotation (orthonormal on both q and k, it does not change q . k and the
vLLM indexer skips it) and the scatter of k into the paged cache (k is returned per token).

Per token t (T = batch x tokens rows):
  q[h] = dequant(qr_int8 @ Wq_int8[h]) = (qr @ Wq[h]) * qr_scale[t] * wq_scale[h]   [T, 128]
  q[h][:64] = rotate_half RoPE;  q_int8[h], q_scale[h] = quant(q[h]) per (head, token)
  k = LayerNorm(x @ Wk) (eps 1e-6), RoPE on k[:64], k_int8, k_scale = quant(k) per token
  weights = (x @ Wproj) * 64^-0.5 * 128^-0.5                                         [T, 64]
The Q weight is stored head-major, [64, 1536, 128]: the Q projection is a batched matmul with
one [T, 128] block per head. The three weights are stored NZ (`TileOpFormat.TILEOP_NZ`), as in
PyPTO's kernel (`lightning_indexer_prolog_quant_impl.py`: w_qb INT8 NZ, wk and w_proj BF16 NZ):
their GM -> L1 copies move contiguous fractal blocks, not one short ND row per K.

Knobs (the case study's three steps):
- `vec_tile` "aligned" (1, T, 128): dequant, RoPE and requant of a head are one fused
  subgraph, the 64 heads 64 isomorphic copies (one leaf); "unaligned" (4, T, 128) for the
  dequant: one dequant tile feeds four heads' RoPE, so the graph splits at that fan-out into
  more subgraphs and leaves;
- `cube_tiles` "square" [128,128] x 3 vs "small_m", PyPTO's own configuration for this shape
  (test_b4_s1_2_s2_64k: q_linear m 16, k 512, n 128; k_linear m 16, k 512, n 64; w_linear
  m 16, k 1024, n 32; the guide's "m=16, k=512/1024, n=64/32"), except that the int8 Q
  projection takes m = 32: our set_cube_tile_shapes asks every size to be 32-byte aligned in
  the input dtype (its documented constraint; 16 int8 rows are 16 B), PyPTO's accepts 16;
- `l1_reuse` on the Q projection (`cube_l1_reuse_setting={"q_proj": n}`, keyed by the semantic
  label; PyPTO's configuration: {1: 4}): merges n Q cube tasks that load the same qr rows.

What our model shows at full size (kernel time; the guide: ? -> 76 -> 56 -> 49 us): out of
the box 69.8 us, aligned 80.8, small m 34.2, L1 reuse 12.6. The square forms are bound by
the key projection ([8, 7168] x [7168, 128] is a single [128, 128] block: 12.4 us of L1 -> L0B
moves alone); the n = 64 / 32 tiles split it and the weight projection over 2 cores each, and
their 64 KiB L0B tiles (kL0 x nL0) leave no second L0B buffer, so loads and MADs take turns.
Most of each time is the simulator's HBM share, which a task takes at its start (HBM
bandwidth / tasks running then) and keeps to its end: a long cube task started beside dozens
of short ones moves its weights at a small fraction of its core's rate long after they end.
With a share over the task's lifetime (the tasks still running at its midpoint) the four are
19.9, 19.9, 15.6 and 12.6 us: 1.28x and 1.23x for the guide's 1.36x and 1.14x.
Our partitioner also fuses a four-head dequant tile with its heads' RoPE (fewer, bigger
isomorphic subgraphs) where the guide's out-of-box graph split them, so the vector tiling
does not make out of the box slower.

Run:  python indexer_prolog.py [--list] [indexer_prolog::aligned_full] [--swimlane]
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace

import torch

import pypto
from pypto.toolkit.example_cli import checking, peek_run_mode, run_examples

global_run_mode = peek_run_mode()

ROPE_DIM = 64
HALF = ROPE_DIM // 2
EPS = 1e-6

SQUARE = ([128, 128], [128, 128], [128, 128])
CUBE_TILES = {   # name -> (Q projection, key projection, weight projection tiles)
    "square": (SQUARE, SQUARE, SQUARE),
    # PyPTO's own b4 / s1 = 2 configuration (q_linear, k_linear, w_linear of
    # deepseekv32_lightning_indexer_prolog_quant.py test_b4_s1_2_s2_64k), but for the int8 Q
    # projection's m = 32 (our set_cube_tile_shapes asks 32-byte sizes; PyPTO's takes 16)
    "small_m": (([32, 32], [512, 512], [128, 128]), ([16, 16], [512, 512], [64, 64]),
                ([16, 16], [1024, 1024], [32, 32])),
}
VEC_TILES = {"aligned": 1, "unaligned": 4}   # heads per dequant tile
NZ = pypto.TileOpFormat.TILEOP_NZ   # the weights' layout in PyPTO's kernel


@dataclass(frozen=True)
class IndexerConfig:
    batch: int = 4
    tokens: int = 2               # MTP1: one extra token per sequence
    heads: int = 64
    head_dim: int = 128
    q_lora: int = 1536
    hidden: int = 7168
    vec_tile: str = "aligned"
    cube_tiles: str = "small_m"
    l1_reuse: int | None = None   # cube_l1_reuse_setting {"q_proj": n} (None: automatic)

    @property
    def rows(self) -> int:
        return self.batch * self.tokens

    def check(self) -> None:
        if self.vec_tile not in VEC_TILES or self.cube_tiles not in CUBE_TILES:
            raise ValueError(f"vec_tile must be one of {sorted(VEC_TILES)} and cube_tiles one "
                             f"of {sorted(CUBE_TILES)}, got {self.vec_tile!r}, "
                             f"{self.cube_tiles!r}")
        if self.heads % VEC_TILES[self.vec_tile]:
            raise ValueError(f"heads {self.heads} must be a multiple of "
                             f"{VEC_TILES[self.vec_tile]} for vec_tile {self.vec_tile!r}")


FULL = IndexerConfig()
REDUCED = IndexerConfig(heads=8, q_lora=512, hidden=1024)


def _rope(x1, x2, cos, sin):
    """Rotate-half RoPE of the halves x1 = x[:32], x2 = x[32:64]."""
    return x1 * cos - x2 * sin, x2 * cos + x1 * sin


def _quant(parts):
    """int8 of the concatenation of `parts` along the last dim with one scale per row:
    scale = max|x| / 127, q = rint(x / scale). Returns (int8 parts, scale)."""
    amax = pypto.amax(pypto.abs(parts[0]), dim=-1, keepdim=True)
    for p in parts[1:]:
        amax = pypto.maximum(amax, pypto.amax(pypto.abs(p), dim=-1, keepdim=True))
    inv = 127.0 / amax
    return [pypto.cast(p * inv, pypto.DT_INT8, pypto.CastMode.CAST_RINT) for p in parts], \
        amax * (1.0 / 127.0)


def make_kernel(cfg: IndexerConfig):
    """The jit kernel for `cfg`; see the module docstring for the math and layouts."""
    cfg.check()
    t, h, d, ql, hid = cfg.rows, cfg.heads, cfg.head_dim, cfg.q_lora, cfg.hidden
    q_tiles, k_tiles, w_tiles = CUBE_TILES[cfg.cube_tiles]
    dequant_heads = VEC_TILES[cfg.vec_tile]
    w_scale = 1.0 / math.sqrt(h) / math.sqrt(d)
    f32, i8 = pypto.DT_FP32, pypto.DT_INT8
    # keyed by the semantic label: the Q projection's cube subgraphs only
    pass_options = {} if cfg.l1_reuse is None else \
        {"cube_l1_reuse_setting": {"q_proj": cfg.l1_reuse}}

    @pypto.frontend.jit(runtime_options={"run_mode": global_run_mode},
                        pass_options=pass_options)
    def indexer_prolog(qr: pypto.Tensor([1, t, ql], i8), qr_scale: pypto.Tensor([1, t, 1], f32),
                       wq: pypto.Tensor([h, ql, d], i8, format=NZ),
                       wq_scale: pypto.Tensor([h, 1, d], f32),
                       x: pypto.Tensor([t, hid], pypto.DT_FP16),
                       wk: pypto.Tensor([hid, d], pypto.DT_FP16, format=NZ),
                       ln_gamma: pypto.Tensor([1, d], f32), ln_beta: pypto.Tensor([1, d], f32),
                       wproj: pypto.Tensor([hid, h], pypto.DT_FP16, format=NZ),
                       cos: pypto.Tensor([t, HALF], f32), sin: pypto.Tensor([t, HALF], f32),
                       q_int8: pypto.Tensor([h, t, d], i8), q_scale: pypto.Tensor([h, t, 1], f32),
                       k_int8: pypto.Tensor([t, d], i8), k_scale: pypto.Tensor([t, 1], f32),
                       weights: pypto.Tensor([t, h], pypto.DT_FP16)):
        # ---- query: int8 matmul per head, dequant, RoPE, requant per (head, token)
        pypto.set_semantic_label("q_proj")
        pypto.set_cube_tile_shapes(*q_tiles)
        q32 = pypto.matmul(qr, wq, pypto.DT_INT32)                     # [H, T, D]
        pypto.set_semantic_label("q_dequant_rope")
        pypto.set_vec_tile_shapes(dequant_heads, t, d)
        q = pypto.cast(q32, f32) * qr_scale * wq_scale
        pypto.set_vec_tile_shapes(1, t, d)
        parts = [*_rope(q[:, :, :HALF], q[:, :, HALF:ROPE_DIM], cos, sin), q[:, :, ROPE_DIM:]]
        q_parts, q_scale[:] = _quant(parts)
        for part, start in zip(q_parts, (0, HALF, ROPE_DIM)):
            q_int8[:, :, start:] = part
        # ---- key: matmul, LayerNorm, RoPE, requant per token
        pypto.set_semantic_label("k_proj")
        pypto.set_cube_tile_shapes(*k_tiles)
        k = pypto.matmul(x, wk, f32)                                   # [T, D]
        pypto.set_semantic_label("k_norm_rope")
        pypto.set_vec_tile_shapes(t, d)
        mean = pypto.mean(k, dim=-1, keepdim=True)
        centred = k - mean
        var = pypto.mean(centred * centred, dim=-1, keepdim=True)
        k = centred * pypto.rsqrt(var + EPS) * ln_gamma + ln_beta
        k_parts, k_scale[:] = _quant(
            [*_rope(k[:, :HALF], k[:, HALF:ROPE_DIM], cos, sin), k[:, ROPE_DIM:]])
        for part, start in zip(k_parts, (0, HALF, ROPE_DIM)):
            k_int8[:, start:] = part
        # ---- per-head weights
        pypto.set_semantic_label("weights")
        pypto.set_cube_tile_shapes(*w_tiles)
        weights[:] = pypto.cast(pypto.matmul(x, wproj, f32) * w_scale, pypto.DT_FP16)
    return indexer_prolog


def make_inputs(cfg: IndexerConfig, seed: int = 0):
    """int8 qr and Q weight with positive scales, FP16 hidden state and weights, LayerNorm
    parameters, and the RoPE tables of positions 4096 + t (theta 10000 over 64 dims)."""
    gen = torch.Generator().manual_seed(seed)
    t, h, d = cfg.rows, cfg.heads, cfg.head_dim

    def rand(*shape):
        return torch.randn(*shape, generator=gen)

    qr = torch.randint(-127, 128, (1, t, cfg.q_lora), generator=gen, dtype=torch.int8)
    wq = torch.randint(-127, 128, (h, cfg.q_lora, d), generator=gen, dtype=torch.int8)
    qr_scale = 0.01 + 0.01 * torch.rand(1, t, 1, generator=gen)
    wq_scale = 0.001 + 0.001 * torch.rand(h, 1, d, generator=gen)
    x = rand(t, cfg.hidden).half()
    wk = (rand(cfg.hidden, d) / math.sqrt(cfg.hidden)).half()
    wproj = (rand(cfg.hidden, h) / math.sqrt(cfg.hidden)).half()
    ln_gamma, ln_beta = 1.0 + 0.1 * rand(1, d), 0.1 * rand(1, d)
    pos = 4096.0 + torch.arange(t, dtype=torch.float64)[:, None]
    inv_freq = 10000.0 ** (-torch.arange(HALF, dtype=torch.float64) * 2 / ROPE_DIM)
    cos, sin = (pos * inv_freq).cos().float(), (pos * inv_freq).sin().float()
    return qr, qr_scale, wq, wq_scale, x, wk, ln_gamma, ln_beta, wproj, cos, sin


def outputs(cfg: IndexerConfig):
    t, h, d = cfg.rows, cfg.heads, cfg.head_dim
    return (torch.zeros(h, t, d, dtype=torch.int8), torch.zeros(h, t, 1),
            torch.zeros(t, d, dtype=torch.int8), torch.zeros(t, 1),
            torch.zeros(t, h, dtype=torch.float16))


def golden(qr, qr_scale, wq, wq_scale, x, wk, ln_gamma, ln_beta, wproj, cos, sin):
    """The prolog in torch FP32 (int32 for the int8 matmul): q_int8, q_scale, k_int8,
    k_scale, weights."""
    def rope(v):
        x1, x2 = v[..., :HALF], v[..., HALF:ROPE_DIM]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, v[..., ROPE_DIM:]], -1)

    def quant(v):
        amax = v.abs().amax(-1, keepdim=True)
        return torch.round(v * (127.0 / amax)).to(torch.int8), amax * (1.0 / 127.0)

    q32 = torch.matmul(qr.int(), wq.int())                              # [H, T, D] exact
    q = q32.float() * qr_scale * wq_scale
    q_int8, q_scale = quant(rope(q))
    k = x.float() @ wk.float()
    k = torch.nn.functional.layer_norm(k, (k.shape[-1],), eps=EPS) * ln_gamma + ln_beta
    k_int8, k_scale = quant(rope(k))
    heads, dim = wq.shape[0], wq.shape[-1]
    weights = ((x.float() @ wproj.float()) * (1.0 / math.sqrt(heads) / math.sqrt(dim))).half()
    return q_int8, q_scale, k_int8, k_scale, weights


def check(got, expected) -> None:
    """The Q path is exact up to FP32 rounding (int32 matmul, the same multiplications), so
    its int8 values match; the key's FP32 sums run in another order, which can move a value
    across a rounding boundary: at most one unit, on under 1% of the elements. Scales and
    weights within FP32 / FP16 rounding."""
    q_int8, q_scale, k_int8, k_scale, weights = got
    e_q, e_qs, e_k, e_ks, e_w = expected
    torch.testing.assert_close(q_scale, e_qs, rtol=1e-5, atol=1e-7)
    assert (q_int8.int() - e_q.int()).abs().max() <= 1
    assert (q_int8 != e_q).float().mean() < 1e-3
    torch.testing.assert_close(k_scale, e_ks, rtol=1e-4, atol=1e-6)
    assert (k_int8.int() - e_k.int()).abs().max() <= 1
    assert (k_int8 != e_k).float().mean() < 1e-2
    torch.testing.assert_close(weights, e_w, rtol=2e-3, atol=1e-3)   # one FP16 ulp


def run(cfg: IndexerConfig, verbose: bool = False):
    """One call checked against `golden`; returns the kernel."""
    kernel = make_kernel(cfg)
    args, outs = make_inputs(cfg), outputs(cfg)
    start = time.perf_counter()
    kernel(*args, *outs)
    wall = time.perf_counter() - start
    if checking():   # (not under --timing-only)
        check(outs, golden(*args))
    if verbose:
        print(f"{cfg}\n  wall {wall:.1f} s\n{kernel.last_run.summary()}")
    return kernel


VARIANTS = {   # the case study's steps, in order
    "out_of_box": {"vec_tile": "unaligned", "cube_tiles": "square"},
    "aligned": {"cube_tiles": "square"},
    "small_m": {},
    "l1_reuse": {"l1_reuse": 4},
}


def _example(base: IndexerConfig, variant: str):
    def example(device: str = "cpu") -> None:
        run(replace(base, **VARIANTS[variant]), verbose=True)
    return example


EXAMPLES = {f"indexer_prolog::{v}_{size}": _example(cfg, v)
            for size, cfg in (("reduced", REDUCED), ("full", FULL)) for v in VARIANTS}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv,
                        default=[e for e in EXAMPLES if e.endswith("_reduced")])


if __name__ == "__main__":
    sys.exit(main())
