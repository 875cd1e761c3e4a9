"""Shared helpers for the op tests: build a jit kernel around a traced expression, run it on
torch tensors, and compare with a torch golden.

Low-precision floats follow PyPTO's rule "compute in FP32, round once", so the golden is torch
computing in FP32 on the same (already rounded) inputs and casting the result once.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import pypto
import torch

DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16,
          torch.bfloat16: pypto.DT_BF16, torch.int32: pypto.DT_INT32,
          torch.int8: pypto.DT_INT8, torch.int16: pypto.DT_INT16, torch.int64: pypto.DT_INT64,
          torch.uint8: pypto.DT_UINT8, torch.bool: pypto.DT_BOOL}
FLOATS = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float16: dict(rtol=1e-3, atol=1e-3),
       torch.bfloat16: dict(rtol=1e-2, atol=1e-2)}


def default_tile(rank: int) -> tuple[int, ...]:
    """A legal vector tile of `rank` dims (64 elements on the last dim is 32-byte aligned for
    every dtype)."""
    return (4,) * (rank - 1) + (64,)


def kernel(body: Callable[..., None], names: Sequence[str], *, tile: Sequence[int] | None = None,
           cube: Sequence[Any] | None = None, shapes: Sequence[Any] | None = None,
           dtypes: Sequence[Any] | None = None, **jit_kw: Any) -> Any:
    """A `@pypto.frontend.jit` kernel whose tensor parameters are `names` (annotated
    `pypto.Tensor(shapes[i] or [], dtypes[i])`); it sets the tiles, then traces `body`."""
    def k(*ts):  # no annotations: jit rejects a return annotation
        if tile is not None:
            pypto.set_vec_tile_shapes(*tile)
        if cube is not None:
            pypto.set_cube_tile_shapes(*cube)
        body(*ts)

    params = []
    for i, name in enumerate(names):
        shape = shapes[i] if shapes is not None else []
        dtype = dtypes[i] if dtypes is not None else None
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        annotation=pypto.Tensor(shape, dtype)))
    k.__signature__ = inspect.Signature(params)
    k.__name__ = k.__qualname__ = getattr(body, "__name__", "k").strip("<>") or "k"
    return pypto.frontend.jit(k, **jit_kw)


def run(fn: Callable[..., Any], *inputs: torch.Tensor, out_shape: Sequence[int] | None = None,
        out_dtype: torch.dtype | None = None, tile: Sequence[int] | None = None,
        cube: Sequence[Any] | None = None) -> torch.Tensor:
    """Trace `out[:] = fn(*inputs)` in a fresh kernel, run it, and return `out`.

    The output defaults to the broadcast shape and dtype of the inputs; the tile defaults to
    `default_tile` of the first input's rank."""
    if out_shape is None:
        out_shape = torch.broadcast_shapes(*(x.shape for x in inputs))
    if out_dtype is None:
        out_dtype = inputs[0].dtype
    out = torch.full(tuple(out_shape), 7, dtype=out_dtype)  # not zero: a missed write shows
    if tile is None and cube is None:
        tile = default_tile(inputs[0].dim() if inputs else len(out_shape))
    n = len(inputs)

    def body(*ts: Any) -> None:
        ts[n][:] = fn(*ts[:n])

    names = [f"in{i}" for i in range(n)] + ["out"]
    kernel(body, names, tile=tile, cube=cube)(*inputs, out)
    return out


def golden_fp32(fn: Callable[..., torch.Tensor], *inputs: torch.Tensor,
                out_dtype: torch.dtype | None = None) -> torch.Tensor:
    """torch computing in FP32 on the (rounded) inputs, cast once to the output dtype (a BOOL
    result stays BOOL)."""
    wide = [x.float() if x.is_floating_point() else x for x in inputs]
    res = fn(*wide)
    if res.dtype == torch.bool and out_dtype is None:
        return res
    return res.to(out_dtype or inputs[0].dtype)


def check(out: torch.Tensor, golden: torch.Tensor, dtype: torch.dtype | None = None,
          **tol: Any) -> None:
    """Exact for integer/bool outputs; otherwise the tolerance of `dtype` (or out's dtype)."""
    assert out.dtype == golden.dtype, (out.dtype, golden.dtype)
    assert out.shape == golden.shape, (out.shape, golden.shape)
    if not out.is_floating_point():
        assert torch.equal(out, golden), f"\n{out}\n!=\n{golden}"
        return
    kw = dict(TOL[dtype or out.dtype])
    kw.update(tol)
    torch.testing.assert_close(out.float(), golden.float(), equal_nan=True, **kw)


def rand(shape: Sequence[int], dtype: torch.dtype = torch.float32, lo: float = -2.0,
         hi: float = 2.0, seed: int = 0) -> torch.Tensor:
    """Deterministic uniform values in [lo, hi), rounded to `dtype`."""
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.rand(tuple(shape), generator=g) * (hi - lo) + lo).to(dtype)
    return torch.randint(int(lo), int(hi), tuple(shape), generator=g).to(dtype)
