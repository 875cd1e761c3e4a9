"""Golden comparisons with tolerances from the kernel's own precision chain.

A torch golden computes the kernel's mathematics its own way: in FP32 or FP64, without the
kernel's BF16 casts, summing in another order. Neither result is exact; each is within its
forward error bound of the exact result of the same arithmetic. `forward_bounds(kernel, ...)`
gives the kernel's bound per output element (runtime/error_bounds.py in forward mode: every
rounding on the element's paths, the terms each sum adds, the magnitudes that flow in), and
`assert_close` accepts |kernel - golden| <= 2 * bound: the kernel within its bound, the golden
(at least as precise at every step) within as much.

    with pypto.testing.forward_bounds(kernel, q, k, v, out) as bounds:
        kernel(q, k, v, out)
    pypto.testing.assert_close(out, golden(q, k, v), bounds["out"], "out")
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from pypto.errors import PyptoValueError
from pypto.frontend.binding import as_numpy
from pypto.runtime.error_bounds import bound_run


@contextlib.contextmanager
def forward_bounds(kernel: Any, *args: Any,
                   known: dict[str, np.ndarray] | None = None) -> Iterator[dict[str, np.ndarray]]:
    """The bounds of one call of `kernel` on `args`, made inside the block:

        with pypto.testing.forward_bounds(kernel, x, y) as bounds:
            kernel(x, y)
        pypto.testing.assert_close(y, golden, bounds["y"], "y")

    The arguments are copied on entry; on exit the kernel's compiled program for that call
    runs again on the copies, on the reference executor with the bounds' observer, giving
    {parameter name: bound}. Outputs' bounds are where the kernel writes them, zero elsewhere
    (or what `known` gives a parameter: the bound an earlier kernel's result carries in).
    Nothing runs through the kernel itself: no recompile, no run folder, no change to its
    record of the call."""
    copies = [_copy(a) for a in args if _is_tensor(a)]   # the program's parameters, in order
    bounds: dict[str, np.ndarray] = {}
    yield bounds
    ex = kernel.last_executor
    if ex is None:
        raise PyptoValueError(f"forward_bounds: kernel '{kernel.__name__}' was not called "
                              f"inside the block")
    plan = ex.plan
    arrays = {p.value.storage.id: as_numpy(c, p.name)[0]
              for p, c in zip(plan.program.params, copies)}
    given = {p.value.storage.id: np.array(known[p.name], np.float64).reshape(
        np.shape(arrays[p.value.storage.id])) for p in plan.program.params
        if known and p.name in known}
    found = bound_run(plan, dict(ex.env.values), arrays, forward=True, known=given)
    for p in plan.program.params:
        e = found.of(p.value.storage.id)
        shape = np.shape(arrays[p.value.storage.id])
        bounds[p.name] = np.zeros(shape) if e is None else e.reshape(shape)


def assert_close(actual: Any, expected: Any, bound: np.ndarray, name: str = "output") -> None:
    """|actual - expected| <= 2 * bound element by element (NaN matches NaN, an infinite bound
    anything); else an AssertionError naming the worst element, both values and its bound."""
    got, want = _float64(actual), _float64(expected)
    if got.shape != want.shape or got.shape != np.shape(bound):
        raise PyptoValueError(f"assert_close '{name}': shapes {list(got.shape)} (actual), "
                              f"{list(want.shape)} (expected) and {list(np.shape(bound))} "
                              f"(bound) differ")
    allowed = 2 * np.asarray(bound, np.float64)
    with np.errstate(invalid="ignore"):
        gap = np.abs(got - want)
        ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (gap <= allowed) | \
            np.isinf(allowed)
    if ok.all():
        return
    excess = np.where(ok, -np.inf, np.nan_to_num(gap - allowed, nan=np.inf))
    at = np.unravel_index(int(np.argmax(excess)), excess.shape)
    raise AssertionError(
        f"'{name}': {int(ok.size - ok.sum())} of {ok.size} elements differ from the golden by "
        f"more than twice their forward error bound; worst at {list(map(int, at))}: "
        f"kernel {got[at]!r}, golden {want[at]!r}, allowed ±{allowed[at]:.3g}")


def _is_tensor(a: Any) -> bool:
    return hasattr(a, "clone") or isinstance(a, np.ndarray)


def _copy(a: Any) -> Any:
    """A tensor argument's copy; other arguments (a config, a scalar) as they are."""
    if hasattr(a, "clone"):
        return a.clone()
    return np.array(a, copy=True) if isinstance(a, np.ndarray) else a


def _float64(a: Any) -> np.ndarray:
    if hasattr(a, "detach"):
        import torch
        return a.detach().to(torch.float64).cpu().numpy()
    return np.asarray(a).astype(np.float64)


