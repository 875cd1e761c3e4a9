#!/usr/bin/env python3
"""Gated DeltaNet chunked prefill (Qwen3-Next's linear attention), our own chunked WY kernel.

Sources of the math and the shapes:
- the gated delta rule S_t = S_{t-1} (a_t (I - b_t k_t k_t^T)) + b_t v_t k_t^T, o_t = S_t q_t:
  Yang, Kautz, Hatamizadeh, "Gated Delta Networks: Improving Mamba2 with Delta Rule",
  arXiv 2412.06464 (ICLR 2025); we keep the state transposed, S [Dk, Dv], as the public
  implementations do;
- the chunked form (WY representation, UT transform T = (I + A)^-1 of the strictly lower
  A = diag(b) K K^T * Gamma): Yang et al., "Parallelizing Linear Transformers with the Delta
  Rule over Sequence Length", NeurIPS 2024 (arXiv 2406.06484), with the decay matrix
  Gamma[i, j] = exp(gamma_i - gamma_j) of the gated paper (gamma = cumsum of log-decay g);
- the size B = 2, T = 8192, H = 4 value heads, D = 128: the tensor-parallel shard of
  Qwen3-Next-80B-A3B (32 value heads of 128 over TP8) that PyPTO's GDN case study tunes
  (compiler_runtime.md §6.1 #8-13; reference/models.md §3), chunk 64 (flash-linear-attention)
  or 128 (PyPTO).

The knobs of that case study, as arguments of `GdnConfig`:
- `chunk` 64 / 128 with the vector TileShape [chunk, 128]: half as many chunk iterations,
  root instances and tasks at 128 (§6.1 #9);
- `stitch` 32 / 128 (`stitch_function_max_num`): how many chunk instances share a window (#8);
- `unroll` 16: `unroll_list=[16]` on the chunk loop, one root instance per 16 chunks (#11);
- `inv_blocks` 1 / 4 / 8: the diagonal 16 x 16 blocks of (I + A) are inverted by the row
  recurrence on a [16, chunk] tensor (the blocks side by side: row i of every block is one
  128-wide row, PyPTO's tail concatenation) whose vector TileShape [16, 16 inv_blocks] takes
  `inv_blocks` blocks per tile: 1 = 8 isomorphic [16, 16] row-update subgraphs,
  4 = 2 x [16, 64], 8 = one [16, 128] (#10, #12, #13);
- `order` "pairs_outer" (the loop over (batch, head) pairs outside the chunk loop) or
  "chunks_outer": a stitch window then holds the same chunks of every pair, whose state
  recurrences run side by side, instead of one or two pairs' chains.

The rest of the inverse is cube work: with Dinv the block-diagonal inverse and L the strictly
block-lower part of -A, (I + A)^-1 = (I - M)^-1 Dinv with M = Dinv L nilpotent, and
(I - M)^-1 = (I + M)(I + M^2)(I + M^4) for 8 blocks (two factors for 4). The WY factors
W = T diag(b e^gamma) K and U = T diag(b) V are computed by applying those factors to
[b e^gamma K | b V], so T itself is never formed.

Every op here has a tile rule, so the chunk body is 27 call ops at chunk 128 (one [C, 128]
tile per vector op, fused into subgraphs): tril/triu, cumsum, concat and a reshape that
regroups dims have none in OpenPTO (each would be one GM-sized "whole" task, never fused), so
masks are constant inputs (multiplied in), cumsum(g) is g @ upper-ones (as PyPTO's GDN does
it), and the diagonal blocks move between [C, C] and [16, C] through matmuls with constant 0/1
matrices (exact in FP32).

What our model shows at full size (kernel time; the guide gives no us for GDN): chunk 128
6.6 ms, chunk 64 18.3 ms, stitch 32 10.0 ms (17 windows instead of 5), unroll 16 4.9 ms (40
instances in one window), inverse tiles [16,16] 7.2 / [16,64] 6.6 / [16,128] 6.6 ms, chunks
outer 3.5 ms. Only the state recurrence (4 dependent tasks per chunk) crosses chunks, so a
window that holds one pair's chunks runs that chain alone and windows run one after another;
with chunks outer the 8 pairs' chains share each window and the kernel is within 1.3x of the
cube work spread over the 24 AIC cores (64.5 ms / 24 = 2.7 ms).

Golden: the token-by-token recurrence in float64 (`recurrent_golden`); the kernel computes in
FP32, so o and the final state match it to ~1e-5 relative (tests: rtol 1e-4, atol 1e-5 on
outputs of magnitude ~0.1).

Run:  python gated_deltanet.py [--list] [gated_deltanet::prefill_full] [--swimlane]
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace

import torch

import pypto
from pypto.toolkit.example_cli import checking, peek_run_mode, run_examples

global_run_mode = peek_run_mode()

BLOCK = 16      # diagonal block of the triangular inverse


@dataclass(frozen=True)
class GdnConfig:
    batch: int = 2
    seq: int = 8192
    heads: int = 4
    dim: int = 128
    chunk: int = 128
    stitch: int = 128
    unroll: int | None = None       # unroll_list=[unroll] on the chunk loop
    inv_blocks: int = 8             # 16 x 16 blocks per vector tile of the row recurrence
    order: str = "pairs_outer"      # or "chunks_outer": the loop nest's order

    @property
    def pairs(self) -> int:
        return self.batch * self.heads

    @property
    def blocks(self) -> int:
        return self.chunk // BLOCK

    def check(self) -> None:
        if self.chunk not in (32, 64, 128):
            raise ValueError(f"chunk must be 32, 64 or 128, got {self.chunk}")
        if self.seq % self.chunk:
            raise ValueError(f"seq {self.seq} must be a multiple of chunk {self.chunk}")
        if self.unroll is not None and (self.seq // self.chunk) % self.unroll:
            raise ValueError(f"unroll {self.unroll} must divide the {self.seq // self.chunk} "
                             f"chunks (the kernel's chunk windows are always whole)")
        if self.order not in ("pairs_outer", "chunks_outer"):
            raise ValueError(f"order must be 'pairs_outer' or 'chunks_outer', got {self.order!r}")
        if self.order == "chunks_outer" and self.unroll is not None:
            raise ValueError("unroll applies to the chunk loop of order 'pairs_outer' only")
        if self.blocks % self.inv_blocks:
            raise ValueError(f"inv_blocks {self.inv_blocks} must divide the {self.blocks} "
                             f"diagonal blocks of a {self.chunk} chunk")


FULL = GdnConfig()
REDUCED = GdnConfig(batch=1, seq=256, heads=2)


def _rows(x, pair, start, length, width):
    """x[pair, start:start + length, :width] as a [length, width] tensor. The window is
    always whole (seq is a multiple of the chunk), so its valid shape is static."""
    window = pypto.view(x, [1, length, width], [pair, start, 0],
                        valid_shape=[1, length, width])
    return pypto.reshape(window, [length, width])


def _block_inverse(n_cat, coef, eye16, eye_cat, cfg: GdnConfig):
    """(I - N_b)^-1 of every strictly lower 16 x 16 diagonal block N_b, by the row recurrence
    X[i] = N[i] + sum_j N[i, j] X[j], on all blocks at once: the blocks side by side as
    [16, chunk] (n_cat[i, 16b + c] = N_b[i, c]); coef[j, 16 C i + 16b + c] = N_b[i, j] is
    row i's coefficient of row j. Returns the inverses side by side, [16, chunk]. The vector
    TileShape [16, 16 inv_blocks] makes it chunk / (16 inv_blocks) isomorphic subgraphs."""
    c = cfg.chunk
    pypto.set_vec_tile_shapes(BLOCK, BLOCK * cfg.inv_blocks)
    x = n_cat * eye16[:, 1:2]                           # row 1 = N[1]; the other rows 0
    for i in range(2, BLOCK):
        row = n_cat[i:i + 1, :] + pypto.sum(coef[:, i * c:(i + 1) * c] * x, dim=0,
                                            keepdim=True)
        x = x + eye16[:, i:i + 1] * row                 # write row i (it was 0)
    return x + eye_cat


def make_kernel(cfg: GdnConfig):
    """The jit kernel for `cfg`: o [P, T, D] and the final state [P, D, D] (P = batch x heads)
    from q, k, v [P, T, D], the log decay g and beta [P, T], and the constant matrices of
    `constants(cfg)` (masks and 0/1 fold matrices)."""
    cfg.check()
    p_, t_, d, c, nb = cfg.pairs, cfg.seq, cfg.dim, cfg.chunk, cfg.blocks
    steps = max(nb.bit_length() - 1, 0)          # log2(blocks) factors (I + M^(2^s))
    f32 = pypto.DT_FP32
    loop_kw = {} if cfg.unroll is None else {"unroll_list": [cfg.unroll]}

    @pypto.frontend.jit(runtime_options={"run_mode": global_run_mode,
                                         "stitch_function_max_num": cfg.stitch})
    def gated_deltanet(q: pypto.Tensor([p_, t_, d], f32), k: pypto.Tensor([p_, t_, d], f32),
                       v: pypto.Tensor([p_, t_, d], f32), g: pypto.Tensor([p_, t_], f32),
                       beta: pypto.Tensor([p_, t_], f32),
                       lower: pypto.Tensor([c, c], f32), strict: pypto.Tensor([c, c], f32),
                       block_diag: pypto.Tensor([c, c], f32),
                       fold: pypto.Tensor([BLOCK, c], f32),
                       select: pypto.Tensor([c, BLOCK * c], f32),
                       eye16: pypto.Tensor([BLOCK, BLOCK], f32),
                       eye_cat: pypto.Tensor([BLOCK, c], f32),
                       o: pypto.Tensor([p_, t_, d], f32), state: pypto.Tensor([p_, d, d], f32)):
        def chunk(p, ci):
            """One chunk of one (batch, head) pair: intra-chunk WY factors, then the state."""
            t0 = ci * c
            pypto.set_semantic_label("chunk_prep")
            pypto.set_vec_tile_shapes(c, 128)
            qc, kc, vc = (_rows(x, p, t0, c, d) for x in (q, k, v))
            g_row = pypto.view(g, [1, c], [p, t0], valid_shape=[1, c])
            b_row = pypto.view(beta, [1, c], [p, t0], valid_shape=[1, c])
            gam_row = pypto.matmul(g_row, lower, f32, b_trans=True)  # cumsum: [1, C]
            gam = pypto.transpose(gam_row, 0, 1)                    # [C, 1]
            b_col = pypto.transpose(b_row, 0, 1)
            # decay Gamma[i, j] = exp(gamma_i - gamma_j) for i >= j, masked before the
            # exp (the upper triangle would overflow)
            decay = pypto.exp((gam - gam_row) * lower) * lower
            kk = pypto.matmul(kc, kc, f32, b_trans=True)           # [C, C]
            n = kk * decay * b_col * strict * -1.0                 # N = -A
            # diagonal blocks side by side ([16, C]), and row i's coefficients
            pypto.set_semantic_label("block_inverse")
            n_cat = pypto.matmul(fold, n * block_diag, f32)
            n_t_cat = pypto.matmul(fold, pypto.transpose(n, 0, 1) * block_diag, f32)
            coef = pypto.matmul(n_t_cat, select, f32)              # [16, 16 C]
            x_cat = _block_inverse(n_cat, coef, eye16, eye_cat, cfg)
            pypto.set_semantic_label("wy_factors")
            pypto.set_vec_tile_shapes(c, 128)
            dinv = pypto.matmul(fold, x_cat, f32, a_trans=True) * block_diag
            m = pypto.matmul(dinv, n - n * block_diag, f32)        # Dinv L, nilpotent
            zk = pypto.matmul(dinv, kc * (b_col * pypto.exp(gam)), f32)
            zv = pypto.matmul(dinv, vc * b_col, f32)
            for s in range(steps):                # W, U = (I + M^(2^s))... Dinv [K', V']
                zk = zk + pypto.matmul(m, zk, f32)
                zv = zv + pypto.matmul(m, zv, f32)
                if s + 1 < steps:
                    m = pypto.matmul(m, m, f32)
            # inter-chunk recurrence through the state
            pypto.set_semantic_label("state_update")
            s_old = _rows(state, p, 0, d, d)
            v_new = zv - pypto.matmul(zk, s_old, f32)
            attn = pypto.matmul(qc, kc, f32, b_trans=True) * decay
            out = pypto.matmul(qc * pypto.exp(gam), s_old, f32) + \
                pypto.matmul(attn, v_new, f32)
            o[p:, t0:, :] = pypto.reshape(out, [1, c, d])
            g_last = gam[c - 1:c, :]                               # [1, 1]
            k_dec = kc * pypto.exp(g_last - gam)
            kv = pypto.matmul(k_dec, v_new, f32, a_trans=True)     # [D, D]
            # NOTE: a scope of its own for the decayed state: left to depth merging, the
            # s_old * e^g_last product joined the chunk's first vector subgraph (through
            # its g_last input), which then waited for the previous chunk's state write,
            # serialising every chunk (chunk 64 at full size: 52.7 ms, 12,987 of the
            # 23,560 tasks on the critical path)
            pypto.set_pass_options(sg_set_scope=1)
            pypto.set_vec_tile_shapes(d, d)
            s_new = s_old * pypto.exp(g_last) + kv
            state[p:, :, :] = pypto.reshape(s_new, [1, d, d])
            pypto.set_pass_options(sg_set_scope=-1)

        pypto.set_cube_tile_shapes([c, c], [64, 128], [128, 128])
        if cfg.order == "pairs_outer":
            for p in pypto.loop(p_, name="LOOP_PAIR", idx_name="p"):
                pypto.set_vec_tile_shapes(1, d, d)
                state[p:, :, :] = pypto.full([1, d, d], 0.0, f32)
                for ci in pypto.loop(t_ // c, name="LOOP_CHUNK", idx_name="ci", **loop_kw):
                    chunk(p, ci)
        else:   # chunks outer: one window holds the same chunks of every pair
            for p in pypto.loop(p_, name="LOOP_PAIR", idx_name="p"):
                pypto.set_vec_tile_shapes(1, d, d)
                state[p:, :, :] = pypto.full([1, d, d], 0.0, f32)
            for ci in pypto.loop(t_ // c, name="LOOP_CHUNK", idx_name="ci"):
                for p in pypto.loop(p_, name="LOOP_CHUNK_PAIR", idx_name="p"):
                    chunk(p, ci)
    return gated_deltanet


INVERSE = GdnConfig(batch=1, seq=128, heads=1)   # the guide's inverse study: one [128,128] chunk
INVERSE_FORMS = {"16x16": 1, "16x64": 4, "16x128": 8}   # form -> inv_blocks (blocks per tile)


def make_inverse_kernel(cfg: GdnConfig):
    """The triangular inverse alone, at the guide's size (B = 1, T = 128, H = 1: one
    [C, C] chunk tile), as the case study timed it (compiler_runtime.md §6.1 #10-#13): from
    N = -A [C, C] (strictly lower) to the inverses of its 16 x 16 diagonal blocks side by side,
    x_cat [16, C]. Two stages: "block_fold", the cube matmuls that put the diagonal blocks side
    by side and spread row i's coefficients (as in `make_kernel`), and "row_inverse", the row
    recurrence (`_block_inverse`) whose vector tile [16, 16 inv_blocks] makes it
    chunk / (16 inv_blocks) isomorphic row-update tasks: 8 x [16, 16], 2 x [16, 64] or one
    [16, 128]. The state of the recurrence stays in UB in every form (one subgraph per tile).
    `inverse_time_us` reads off the time of the "row_inverse" tasks."""
    cfg.check()
    c = cfg.chunk
    f32 = pypto.DT_FP32

    @pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
    def gdn_inverse(n: pypto.Tensor([c, c], f32), block_diag: pypto.Tensor([c, c], f32),
                    fold: pypto.Tensor([BLOCK, c], f32),
                    select: pypto.Tensor([c, BLOCK * c], f32),
                    eye16: pypto.Tensor([BLOCK, BLOCK], f32),
                    eye_cat: pypto.Tensor([BLOCK, c], f32),
                    x_out: pypto.Tensor([BLOCK, c], f32)):
        pypto.set_cube_tile_shapes([c, c], [64, 128], [128, 128])
        pypto.set_semantic_label("block_fold")
        pypto.set_vec_tile_shapes(c, 128)
        n_cat = pypto.matmul(fold, n * block_diag, f32)
        n_t_cat = pypto.matmul(fold, pypto.transpose(n, 0, 1) * block_diag, f32)
        coef = pypto.matmul(n_t_cat, select, f32)              # [16, 16 C]
        pypto.set_semantic_label("row_inverse")
        x_out[0:, 0:] = _block_inverse(n_cat, coef, eye16, eye_cat, cfg)
    return gdn_inverse


def inverse_input(cfg: GdnConfig = INVERSE, seed: int = 0) -> torch.Tensor:
    """N = -A [C, C] of the first chunk of the first pair of `make_inputs(cfg)`: A = diag(b)
    K K^T * Gamma, strictly lower (what `make_kernel` builds on chip)."""
    q, k, v, g, beta = make_inputs(cfg, seed)
    c = cfg.chunk
    kc, gc, bc = k[0, :c], g[0, :c], beta[0, :c]
    gam = torch.cumsum(gc, 0)
    lower = torch.tril(torch.ones(c, c))
    decay = torch.exp((gam[:, None] - gam[None, :]) * lower) * lower
    return -(kc @ kc.T) * decay * bc[:, None] * torch.tril(torch.ones(c, c), -1)


def inverse_golden(n: torch.Tensor) -> torch.Tensor:
    """(I - N_b)^-1 of every 16 x 16 diagonal block of n, side by side [16, C] (float64)."""
    c = n.shape[0]
    eye = torch.eye(BLOCK, dtype=torch.float64)
    return torch.cat([torch.linalg.inv(eye - n[b:b + BLOCK, b:b + BLOCK].double())
                      for b in range(0, c, BLOCK)], dim=1)


def run_inverse(form: str = "16x128", check: bool = True, base: GdnConfig = INVERSE):
    """The inverse alone in one of `INVERSE_FORMS` (checked against `inverse_golden`);
    returns the kernel (its `last_run` holds the timeline)."""
    cfg = replace(base, inv_blocks=INVERSE_FORMS[form])
    kernel = make_inverse_kernel(cfg)
    n = inverse_input(cfg)
    consts = constants(cfg)
    x = torch.zeros(BLOCK, cfg.chunk)
    kernel(n, *(consts[key] for key in ("block_diag", "fold", "select", "eye16", "eye_cat")), x)
    if check and checking():   # (not under --timing-only)
        torch.testing.assert_close(x.double(), inverse_golden(n), rtol=1e-4, atol=1e-5)
    return kernel


def inverse_time_us(kernel, label: str = "row_inverse") -> tuple[int, float]:
    """(tasks, summed duration in us) of the kernel's last run's tasks labelled `label`: the
    inverse's time as the case study reports it ("8 tasks x 22 us"), i.e. the AIV time its
    row-update tasks take, not the wall time (those tasks run side by side on 8 cores)."""
    run = kernel.last_run
    spans = [r.end - r.start for r in run.tasks if r.task.label == label]
    return len(spans), run.us(sum(spans))


def constants(cfg: GdnConfig) -> dict[str, torch.Tensor]:
    """The kernel's constant 0/1 matrices, in its argument order. Masks: lower (i >= j),
    strict (i > j), block_diag (same 16-block). fold [16, C] = 16 x 16 identities side by
    side: fold @ Y adds Y's row blocks (the diagonal blocks of a block-diagonal Y side by
    side), fold^T @ X stacks X's copies. select [C, 16 C]: column block i copies column
    16b + i of each block over that block. eye_cat: I16 side by side (the unit diagonal)."""
    c, nb = cfg.chunk, cfg.blocks
    ones = torch.ones(c, c)
    eye16 = torch.eye(BLOCK)
    select = torch.zeros(c, BLOCK * c)
    for i in range(BLOCK):
        for b in range(nb):
            select[b * BLOCK + i, i * c + b * BLOCK:i * c + (b + 1) * BLOCK] = 1.0
    return {"lower": torch.tril(ones), "strict": torch.tril(ones, -1),
            "block_diag": torch.block_diag(*[torch.ones(BLOCK, BLOCK)] * nb),
            "fold": eye16.repeat(1, nb), "select": select, "eye16": eye16,
            "eye_cat": eye16.repeat(1, nb)}


def make_inputs(cfg: GdnConfig, seed: int = 0):
    """q, k L2-normalised over the head dim (q also scaled by D^-0.5, as Qwen3-Next does in the
    kernel), v ~ N(0, 1), log decay g in (-0.2, 0) and beta = sigmoid(N(0, 1))."""
    gen = torch.Generator().manual_seed(seed)
    shape = (cfg.pairs, cfg.seq, cfg.dim)
    q = torch.nn.functional.normalize(torch.randn(shape, generator=gen), dim=-1) * cfg.dim ** -0.5
    k = torch.nn.functional.normalize(torch.randn(shape, generator=gen), dim=-1)
    v = torch.randn(shape, generator=gen)
    g = -0.2 * torch.rand(cfg.pairs, cfg.seq, generator=gen)
    beta = torch.sigmoid(torch.randn(cfg.pairs, cfg.seq, generator=gen))
    return q, k, v, g, beta


def recurrent_golden(q, k, v, g, beta):
    """Token by token in float64: S <- e^g S; u = beta (v - S^T k); S <- S + k u^T; o = S^T q.
    Returns o [P, T, D] and the final state [P, D, D]."""
    threads = torch.get_num_threads()
    # NOTE: one thread: each step's ops are tiny, and on a busy host torch's thread pool
    # made the loop 50-100x slower (2.99 s vs 0.04 s for 2 x 256 tokens)
    torch.set_num_threads(1)
    try:
        return _recurrence(q, k, v, g, beta)
    finally:
        torch.set_num_threads(threads)


def _recurrence(q, k, v, g, beta):
    q, k, v, g, beta = (x.double() for x in (q, k, v, g, beta))
    pairs, seq, dim = q.shape
    s = torch.zeros(pairs, dim, dim, dtype=torch.float64)
    o = torch.empty(pairs, seq, dim, dtype=torch.float64)
    decay = g.exp()
    for t in range(seq):
        kt = k[:, t, None, :]                                   # [P, 1, Dk]
        s.mul_(decay[:, t, None, None])
        u = beta[:, t, None, None] * (v[:, t, None, :] - torch.bmm(kt, s))   # [P, 1, Dv]
        s.baddbmm_(kt.transpose(1, 2), u)                       # S += k u^T
        o[:, t] = torch.bmm(q[:, t, None, :], s)[:, 0]
    return o, s


def run(cfg: GdnConfig, verbose: bool = False, check: bool = True):
    """One call (checked against the recurrent golden); returns the kernel."""
    kernel = make_kernel(cfg)
    q, k, v, g, beta = make_inputs(cfg)
    o = torch.zeros_like(v)
    state = torch.zeros(cfg.pairs, cfg.dim, cfg.dim)
    start = time.perf_counter()
    kernel(q, k, v, g, beta, *constants(cfg).values(), o, state)
    wall = time.perf_counter() - start
    if check and checking():   # (not under --timing-only)
        o_ref, s_ref = recurrent_golden(q, k, v, g, beta)
        torch.testing.assert_close(o.double(), o_ref, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(state.double(), s_ref, rtol=1e-4, atol=1e-5)
    if verbose:
        print(f"{cfg}\n  wall {wall:.1f} s\n{kernel.last_run.summary()}")
    return kernel


def _unroll16(cfg: GdnConfig) -> GdnConfig:
    """unroll_list=[16] needs 16 chunks per pair: a base shorter than that (the reduced size)
    becomes one pair of 16 chunks."""
    if cfg.seq >= 16 * cfg.chunk:
        return replace(cfg, unroll=16)
    return replace(cfg, unroll=16, seq=16 * cfg.chunk, batch=1, heads=1)


VARIANTS = {   # name -> the change to a base size
    "prefill": lambda cfg: cfg,                               # chunk 128, one [16,128] block
    "chunk64": lambda cfg: replace(cfg, chunk=64, inv_blocks=4),
    "stitch32": lambda cfg: replace(cfg, stitch=32),
    "unroll16": _unroll16,
    "inverse_16x16": lambda cfg: replace(cfg, inv_blocks=1),  # 8 x [16, 16] tiles
    "inverse_16x64": lambda cfg: replace(cfg, inv_blocks=4),  # 2 x [16, 64] tiles
    "chunks_outer": lambda cfg: replace(cfg, order="chunks_outer"),
}


def _example(base: GdnConfig, variant: str):
    def example(device: str = "cpu") -> None:
        run(VARIANTS[variant](base), verbose=True)
    return example


EXAMPLES = {f"gated_deltanet::{v}_{size}": _example(cfg, v)
            for size, cfg in (("reduced", REDUCED), ("full", FULL)) for v in VARIANTS}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv,
                        default=[e for e in EXAMPLES if e.endswith("_reduced")])


if __name__ == "__main__":
    sys.exit(main())
