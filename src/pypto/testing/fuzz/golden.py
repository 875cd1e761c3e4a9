"""The golden side of a fuzz case: torch in float64, rounded after every op to that op's dtype.

Every generated script carries these helpers verbatim (`prelude()` copies their source), so a
saved case needs nothing from the fuzzer to reproduce.

Why the golden rounds per op: PyPTO computes each low-precision op in FP32 and rounds its result
once to the op's dtype, so a BF16 chain drifts from an FP32 one by far more than an ulp. Rounding
the float64 golden at the same points makes the two agree up to the few ulps by which an FP32
intermediate (numpy's `exp`, `tanh`, ... are not correctly rounded) can differ, and those ulps
only move a rounding boundary now and then.

Tolerance (`COMPARE`): from the compiled program, not from the generator. The script asks
`pypto.testing.forward_bounds` for each call's outputs: per element, how far the kernel's
result may be from the exact result of its arithmetic (every rounding on the element's paths,
the terms of each sum, the magnitudes flowing in: runtime/error_bounds.py). The golden, which
rounds at the same points in float64, is within about as much, so an element passes when
|got - golden| <= 2 * bound. A sum that cancels is judged by its terms, and `sin(2 * exp(x))`
by the ulps of `exp` near 7, not by the output's own size. Integers compare exactly unless
their bound allows (a comparison an error can flip). NaN must match NaN.
"""
from __future__ import annotations

_TORCH_MISSING = ("pypto.testing.fuzz needs torch for its golden: install the optional extra "
                  "with `pip install 'openpto[torch]'`")


def require_torch():
    """torch, imported lazily: it is an optional dependency of the package."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - the dev environment has torch
        raise ImportError(_TORCH_MISSING) from exc
    return torch


class GoldenUndefined(Exception):
    """The computation has no defined result (an integer division by zero, an assembly out of
    the destination): the kernel must raise a named pypto error."""


EPS = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "int32": 0.0}
TORCH_DTYPE = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "int32": "int32"}
PYPTO_DTYPE = {"fp32": "DT_FP32", "fp16": "DT_FP16", "bf16": "DT_BF16", "int32": "DT_INT32"}


def R(x, dt):
    """Round a float64 (int64) golden value to `dt` and widen it back: one op's result."""
    import torch
    if dt == "int32":
        x = x.to(torch.int64)
        if x.numel() and (x.abs().max() >= 2 ** 31):
            raise GoldenUndefined("int32 overflow")
        return x
    if not x.is_floating_point():
        x = x.to(torch.float64)
    return x.to(getattr(torch, TORCH_DTYPE[dt])).to(torch.float64)


def ASM(dst, src, offsets):
    """`dst[offsets:offsets + src.shape] = src`, an assemble; out of bounds is undefined."""
    index = []
    for off, n, size in zip(offsets, src.shape, dst.shape):
        if off < 0 or off + n > size:
            raise GoldenUndefined(f"assemble of {list(src.shape)} at {list(offsets)} "
                                  f"outside {list(dst.shape)}")
        index.append(slice(off, off + n))
    dst[tuple(index)] = src.to(dst.dtype)


def SL(x, starts, stops):
    """A static slice `x[a:b, ...]`; one reaching outside `x` is undefined (torch would clamp
    it silently, PyPTO must name it)."""
    index = []
    for a, b, size in zip(starts, stops, x.shape):
        if a < 0 or b > size or a > b:
            raise GoldenUndefined(f"slice [{a}:{b}] of a dim of size {size}")
        index.append(slice(a, b))
    return x[tuple(index)]


def VIEW(x, shape, offsets, valid):
    """`pypto.view(x, shape, offsets, valid_shape=valid)`: the valid part only (ops work on
    the valid region, stores write it); a negative valid extent is undefined."""
    index = []
    for n, off, v, size in zip(shape, offsets, valid, x.shape):
        if v < 0 or v > n:
            raise GoldenUndefined(f"valid extent {v} of a view dim of size {n}")
        if off + v > size:
            raise GoldenUndefined(f"view [{off}:{off + v}] of a dim of size {size}")
        index.append(slice(off, off + v))
    return x[tuple(index)]


def RS(x, shape):
    """`pypto.reshape(x, shape)`; a shape of another element count is undefined (with a
    dynamic dim that is only known at run time)."""
    import math
    if math.prod(shape) != x.numel():
        raise GoldenUndefined(f"reshape of {list(x.shape)} ({x.numel()} elements) to {shape}")
    return x.reshape(shape)


def FDIV(a, b):
    """Integer floor division; a zero divisor is undefined."""
    import torch
    b = torch.as_tensor(b, dtype=torch.int64)
    if bool((b == 0).any()):
        raise GoldenUndefined("integer floor_div by zero")
    return torch.div(a, b, rounding_mode="floor")


def UNROLL(start, stop, factors):
    """The (index, factor) pairs of `pypto.loop_unroll(start, stop, unroll_list=factors)`:
    each factor, largest first, covers what it can of the rest; 1 takes the remainder."""
    cur = start
    for p in sorted(set(factors) | {1}, reverse=True):
        end = stop - (stop - cur) % p
        while cur < end:
            yield cur, p
            cur += p


def COMPARE(name, got, want, dt, bound):
    """None when `got` (the kernel's output) matches the golden, else a one-line summary.
    Floats: |got - golden| <= 2 * bound, the kernel's forward error bound (see the module
    docstring); integers: exactly, unless the bound allows (a comparison errors can flip);
    NaN matches NaN."""
    import torch
    got = got.to(torch.float64) if dt != "int32" else got.to(torch.int64)
    if got.shape != want.shape:
        return f"{name}: shape {list(got.shape)} != golden {list(want.shape)}"
    allowed = 2 * torch.as_tensor(bound, dtype=torch.float64).reshape(got.shape)
    diff = (got.to(torch.float64) - want.to(torch.float64)).abs()
    bad = ~((diff <= allowed) | (got == want) | torch.isinf(allowed)
            | (torch.isnan(got.to(torch.float64)) & torch.isnan(want.to(torch.float64))))
    n = int(bad.sum())
    if n == 0:
        return None
    where = [int(i) for i in bad.nonzero()[0]]
    return (f"{name}: {n} of {bad.numel()} elements differ, first at {where}: "
            f"got {got[tuple(where)].item()!r} golden {want[tuple(where)].item()!r} "
            f"(allowed +-{allowed[tuple(where)].item():.3g})")


HELPERS = (GoldenUndefined, R, ASM, SL, VIEW, RS, FDIV, UNROLL, COMPARE)


def prelude() -> str:
    """The source of the golden helpers, for pasting into a self-contained script."""
    import inspect
    parts = [f"EPS = {EPS!r}", f"TORCH_DTYPE = {TORCH_DTYPE!r}"]
    parts += [inspect.getsource(h) for h in HELPERS]
    return "\n\n".join(parts)
