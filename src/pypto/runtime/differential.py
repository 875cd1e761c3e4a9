"""Differential execution: run the tile executor and the reference executor on the same call
and require the same results, to within what floating point allows on any CPU.

Enabled by the environment variable OPENPTO_CHECK_EXECUTORS=1 (the test suite sets it, so every
test and example checks the tile-level execution against the tensor-level golden). The
reference runs on copies of the caller's buffers; the tile executor then runs on the real ones.

Outputs that agree bit for bit pass at once. Otherwise each element must lie within its error
bound (`runtime/error_bounds.py`): a bound derived from the element's precision chain in the
program — the BF16/FP16/FP32 roundings on its paths from the inputs, how many terms each sum
and matmul on those paths adds, and the magnitudes of the values that flow into it — not from
the output's dtype or its largest value. So an FP32 output that went through a BF16 cast may
differ by a BF16 ulp where a rounding boundary lies within the error of what was cast, an
exactly rounded elementwise chain must match bitwise, and a cancellation (a - a of a large
matmul) is judged by its operands' magnitudes, not by its own tiny result. Integer and boolean
outputs must match exactly unless they depend on a comparison the errors can flip.
"""
from __future__ import annotations

import os

import numpy as np

from pypto.errors import PyptoRuntimeError
from pypto.runtime.error_bounds import bound_run
from pypto.runtime.plan import ExecutionPlan
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.tile_executor import TileExecutor

ENV = "OPENPTO_CHECK_EXECUTORS"


def enabled() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def identical(got: np.ndarray, ref: np.ndarray) -> bool:
    """Bitwise equal values (NaNs of either sign match each other)."""
    if ref.dtype.kind not in "fV":
        return np.array_equal(got, ref)
    if ref.dtype.kind == "f" and got.dtype == ref.dtype:
        return np.array_equal(got, ref, equal_nan=True)
    g, r = got.astype(np.float64), ref.astype(np.float64)
    return bool(np.all((g == r) | (np.isnan(g) & np.isnan(r))))


def within(got: np.ndarray, ref: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Per element: equal, both NaN, |got - ref| <= bound, or no bound (inf)."""
    g, r = got.astype(np.float64), ref.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return (g == r) | (np.isnan(g) & np.isnan(r)) | (np.abs(g - r) <= bound) | \
            np.isinf(bound)


def run_checked(plan: ExecutionPlan, symbols: dict[str, int],
                arrays: dict[int, np.ndarray], stitcher=None,
                tolerance: tuple[float, float] | None = None, bounds=None) -> TileExecutor:
    """Run the reference and the tile executor; where they differ, run the reference again
    with error bounds and raise where they differ by more than the bounds. `tolerance` = (rtol, atol) replaces the bounds by numpy's
    allclose rule (verify_options.pass_verify_error_tol). `bounds`: the call's
    `gm_bounds.BoundsLog`, which the tile executor's windows are checked into (an index past
    the end is raised before any comparison; mode 4's log is the driver's to raise)."""
    program = plan.program
    # NOTE: the bounds cost a few reference runs; where every output agrees bit for bit (every
    # elementwise kernel) they are not needed, so the plain reference runs first
    pristine = {k: np.array(a, copy=True) for k, a in arrays.items()}
    copies = {k: np.array(a, copy=True) for k, a in arrays.items()}
    ReferenceExecutor(plan, dict(symbols), copies).run()
    tile = TileExecutor(plan, symbols, arrays, stitcher)
    tile.state.bounds = bounds
    tile.run()
    if bounds and bounds.indices_only:
        raise bounds.error(program.name)
    names = {p.value.storage.id: p.name for p in program.params}
    tile.error_bounds = {}
    if all(identical(arrays[k], ref) for k, ref in copies.items()):
        return tile
    bounds = bound_run(plan, symbols, pristine)
    copies = pristine   # the same reference results (the bound run is the unfused reference)
    # the bounds by parameter name, for whoever wants to see how much room each element had
    tile.error_bounds = {names[k]: bounds.of(k) for k in copies if bounds.of(k) is not None}
    for key, ref in copies.items():
        got = arrays[key]
        if identical(got, ref):
            continue
        if tolerance is not None and ref.dtype.kind in "fV":
            rtol, atol = tolerance
            g, r = got.astype(np.float64), ref.astype(np.float64)
            ok = np.isclose(g, r, rtol=rtol, atol=atol, equal_nan=True)
            bound = atol + rtol * np.abs(r)
        else:
            bound = bounds.of(key)
            bound = np.zeros(ref.shape) if bound is None else bound.reshape(ref.shape)
            ok = within(got, ref, bound)
        if not ok.all():
            raise _disagreement(names.get(key, key), program.name, got, ref, bound, ok)
    return tile


def _disagreement(name, kernel: str, got: np.ndarray, ref: np.ndarray, bound: np.ndarray,
                  ok: np.ndarray) -> PyptoRuntimeError:
    """Name the element that is furthest outside its bound, and how many are outside."""
    g, r = got.astype(np.float64), ref.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        excess = np.where(ok, -np.inf, np.nan_to_num(np.abs(g - r) - bound, nan=np.inf))
    where = np.unravel_index(int(np.argmax(excess)), excess.shape)
    bad = int(ok.size - np.count_nonzero(ok))
    return PyptoRuntimeError(
        f"tile executor and reference disagree on '{name}' of kernel '{kernel}': at "
        f"{list(map(int, where))} tile={g[where]!r} reference={r[where]!r}, allowed "
        f"±{float(bound[where]):.3g} there (the error bound of its precision chain, "
        f"runtime/error_bounds.py); {bad} of {ok.size} elements outside their bounds",
        locate=False)
