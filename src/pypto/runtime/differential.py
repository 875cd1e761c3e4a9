"""Differential execution: run the tile executor and the reference executor on the same call
and require equal results.

Enabled by the environment variable OPENPTO_CHECK_EXECUTORS=1 (the test suite sets it, so every
test and example checks the tile-level execution against the tensor-level golden). The
reference runs on copies of the caller's buffers; the tile executor then runs on the real ones.
Results must agree bitwise where the computation order is the same (elementwise chains) and
within a few ulps scaled to the data where accumulation order differs (split reductions,
matmul blocks).
"""
from __future__ import annotations

import os

import numpy as np

from pypto.errors import PyptoRuntimeError
from pypto.runtime.plan import ExecutionPlan
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.tile_executor import TileExecutor

ENV = "OPENPTO_CHECK_EXECUTORS"

# Relative tolerance per element size: accumulation-order differences only.
_RTOL = {8: 1e-12, 4: 2e-5, 2: 8e-3, 1: 0.13}


def enabled() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def _tolerance(ref: np.ndarray, itemsize: int) -> tuple[float, float]:
    rtol = _RTOL.get(itemsize, 2e-5)
    finite = ref[np.isfinite(ref)] if ref.dtype.kind == "f" else ref
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return rtol, rtol * scale


def run_checked(plan: ExecutionPlan, symbols: dict[str, int],
                arrays: dict[int, np.ndarray], stitcher=None,
                tolerance: tuple[float, float] | None = None) -> TileExecutor:
    """Run reference and tile executors; `tolerance` = (rtol, atol) overrides the
    accumulation-order default (verify_options.pass_verify_error_tol)."""
    program = plan.program
    copies = {k: np.array(a, copy=True) for k, a in arrays.items()}
    ReferenceExecutor(plan, dict(symbols), copies).run()
    tile = TileExecutor(plan, symbols, arrays, stitcher)
    tile.run()
    names = {p.value.storage.id: p.name for p in program.params}
    for key, ref in copies.items():
        got = arrays[key]
        floating = ref.dtype.kind in "fV"  # V: ml_dtypes low-precision floats
        r = ref.astype(np.float64) if floating else ref
        g = got.astype(np.float64) if floating else got
        if floating:
            rtol, atol = tolerance or _tolerance(r, ref.dtype.itemsize)
            ok = np.allclose(g, r, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(g, r)
        if not ok:
            diff = np.abs(g.astype(np.float64) - r.astype(np.float64))
            where = np.unravel_index(int(np.nanargmax(diff)), diff.shape)
            raise PyptoRuntimeError(
                f"tile executor and reference disagree on '{names.get(key, key)}' of kernel "
                f"'{program.name}': at {list(map(int, where))} tile={g[where]} "
                f"reference={r[where]}", locate=False)
    return tile
