#!/usr/bin/env python3
"""Matmul M = N = K = 6144 in FP16: the matmul guide's cube tiles, then L2-aware outer loops.

Source of the shape and the knobs: PyPTO's matmul performance guide as summarised in
compiler_runtime.md §6.1 #7 ("Matmul M=N=K=6144 FP16", cube tiles `[128,128],[64,256],
[256,256]`, then L2-aware outer loops with m view 768 = 128 x 6 and n view 1024 = 256 x 4:
about 2.1 ms -> 1.6 ms on the board). The tiles are the guide's first recommended starting
point (§6.2: 32 KiB of L0A/L0B each, mL1 = nL1 in the 128-256 range).

What the knobs do here:
- cube tiles: each cube subgraph is one (mL1 = 128, nL1 = 256) output block over the whole K,
  so the plain kernel is (M/128)(N/256) = 1,152 blocks at full size, one task each. The
  automatic L1 reuse (floor(S / 48) blocks per task) would merge the 24 blocks that load the
  same A row panel, but PyPTO needs the shared operand whole in L1 for that, so a very long K
  disables it (compiler_runtime.md §4.4): at K = 6144 an A row panel is 128 x 6144 x 2 B =
  1.5 MiB and a B column panel 3 MiB, against a 512 KiB L1, and the merge pass only shares a
  load that fits L1 whole; at the test size (K = 256, 64 KiB panels) it still merges. Before
  that rule it loaded each A panel once per 24 blocks (48 tasks, 1.56 ms), which a 512 KiB L1
  cannot do: that, not the L2, was why our plain form beat the loops;
- L2-aware loops: `pypto.loop` over m views of 768 rows and n views of 1024 columns, one
  matmul per (m view, n view) pair: 48 root instances of (768/128)(1024/256) = 24 blocks each,
  one wave on 24 cube cores (the guide's mDim = 6, nDim = 4). Blocks of one instance share
  their A rows and B columns. Each body has too few blocks for the automatic L1 reuse
  (24 < 48); `loops_l1_reuse` sets 4 by hand, which the same L1 rule refuses at K = 6144.

What our model shows: the first wave of each form has exactly the guide's per-wave L2 hit
ratio, 1 - (1/(nDim nL1) + 1/(mDim mL1)) / (1/nL1 + 1/mL1): 0.32 for the plain form (one A
panel, 24 B panels) and 0.81 for the loops. After that both forms keep B in the 100 MiB
the modelled L2 keeps (`l2_effective_capacity`): the plain form re-reads B every wave after
75 MiB of distinct lines (B, one A panel, one row of C tiles), the loops after under 74 MiB,
so both read only the compulsory 151 MB from HBM and take the same time (full size,
2026-12-05: plain 1437 us, loops 1450 us; the guide: 2.1 and 1.6 ms). Below 75 MiB the plain
form streams B every wave (2.85 ms), above it keeps B (1.44 ms): the board's 2.1 ms is in
between, a partial reuse no LRU capacity gives (docs/calibration.md, "What still disagrees").

Numerics: FP16 inputs, FP32 accumulation, one rounding to FP16 (as the cube's fixpipe does).
Full-size numerics take 20-45 s per call on a busy 2-core host; the tests use 1536 x 2048 x 256.

Run:  python matmul_6144.py [--list] [matmul_6144::loops_full] [--swimlane]
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import torch

import pypto
import pypto.machine.spec
from pypto.toolkit.example_cli import checking, peek_run_mode, run_examples

global_run_mode = peek_run_mode()

GUIDE_TILES = ([128, 128], [64, 256], [256, 256])   # [mL0, mL1], [kL0, kL1], [nL0, nL1]
M_VIEW, N_VIEW = 768, 1024                           # the guide's L2-aware views


@dataclass(frozen=True)
class MatmulConfig:
    m: int = 6144
    n: int = 6144
    k: int = 6144
    tiles: tuple = GUIDE_TILES
    m_view: int | None = None     # None: one matmul over the whole output (no outer loops)
    n_view: int | None = None
    l1_reuse: int | None = None   # cube_l1_reuse_setting {-1: l1_reuse}; None: automatic
    stitch: int = 128

    def check(self) -> None:
        if (self.m_view is None) != (self.n_view is None):
            raise ValueError("m_view and n_view go together (both or neither)")
        if self.m_view is not None and (self.m % self.m_view or self.n % self.n_view):
            raise ValueError(f"views {self.m_view} x {self.n_view} must divide the output "
                             f"{self.m} x {self.n}")


FULL = MatmulConfig()
REDUCED = MatmulConfig(m=1536, n=2048, k=256)


def make_kernel(cfg: MatmulConfig):
    """The jit kernel for `cfg`: c[M, N] (FP16) = a[M, K] @ b[K, N]. With `l1_reuse` None the
    automatic L1 reuse applies (the merge pass shares only loads that fit L1: the docstring)."""
    cfg.check()
    l1_reuse = cfg.l1_reuse
    pass_options = {} if l1_reuse is None else {"cube_l1_reuse_setting": {-1: l1_reuse}}
    m, n, k, mv, nv = cfg.m, cfg.n, cfg.k, cfg.m_view, cfg.n_view

    @pypto.frontend.jit(runtime_options={"run_mode": global_run_mode,
                                         "stitch_function_max_num": cfg.stitch},
                        pass_options=pass_options)
    def matmul_6144(a: pypto.Tensor([m, k], pypto.DT_FP16),
                    b: pypto.Tensor([k, n], pypto.DT_FP16),
                    c: pypto.Tensor([m, n], pypto.DT_FP16)):
        pypto.set_cube_tile_shapes(*cfg.tiles)
        if mv is None:
            c[:] = pypto.matmul(a, b, pypto.DT_FP16)
            return
        for mi in pypto.loop(m // mv, name="LOOP_M_VIEW", idx_name="mi"):
            for ni in pypto.loop(n // nv, name="LOOP_N_VIEW", idx_name="ni"):
                a_rows = pypto.view(a, [mv, k], [mi * mv, 0])
                b_cols = pypto.view(b, [k, nv], [0, ni * nv])
                c[mi * mv:, ni * nv:] = pypto.matmul(a_rows, b_cols, pypto.DT_FP16)
    return matmul_6144


def make_inputs(cfg: MatmulConfig, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(cfg.m, cfg.k, generator=g).half()
    b = torch.randn(cfg.k, cfg.n, generator=g).half()
    return a, b, torch.zeros(cfg.m, cfg.n, dtype=torch.float16)


def golden(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """FP32 accumulation, one FP16 rounding."""
    return (a.float() @ b.float()).half()


def check(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    # FP32 sums in another order differ by ~1e-6 relative, which can flip the FP16 rounding
    # by one ulp (2^-10 relative): rtol 2e-3 allows that ulp, atol covers outputs near zero
    torch.testing.assert_close(c, golden(a, b), rtol=2e-3, atol=1e-2)


def run(cfg: MatmulConfig, verbose: bool = False):
    """One checked call; returns the kernel (`.last_run` holds the simulated run)."""
    kernel = make_kernel(cfg)
    a, b, c = make_inputs(cfg)
    start = time.perf_counter()
    kernel(a, b, c)
    wall = time.perf_counter() - start
    if checking():   # (not under --timing-only)
        check(c, a, b)
    if verbose:
        print(f"{cfg}\n  wall {wall:.1f} s\n{kernel.last_run.summary()}")
    return kernel


VARIANTS = {
    "plain": {},                                     # auto L1 reuse: off at full (K too long)
    "plain_no_reuse": {"l1_reuse": 1},               # 1,152 blocks, one task each
    "loops": {"m_view": M_VIEW, "n_view": N_VIEW},   # 48 instances x 24 blocks
    "loops_l1_reuse": {"m_view": M_VIEW, "n_view": N_VIEW, "l1_reuse": 4},  # x 6 tasks
}


def _example(base: MatmulConfig, variant: str):
    def example(device: str = "cpu") -> None:
        run(MatmulConfig(**{**base.__dict__, **VARIANTS[variant]}), verbose=True)
    return example


EXAMPLES = {f"matmul_6144::{v}_{size}": _example(cfg, v)
            for size, cfg in (("reduced", REDUCED), ("full", FULL)) for v in VARIANTS}


def main(argv=None) -> int:
    return run_examples(EXAMPLES, __doc__, argv,
                        default=[e for e in EXAMPLES if e.endswith("_reduced")])


if __name__ == "__main__":
    sys.exit(main())
