"""Reductions (sum, amax, amin, prod, mean, var, argmax, argmin) with dim/keepdim, cumsum and
cumprod, and the composite softmax and rms_norm, against torch: low-precision inputs accumulate in
FP32 and round once, and only the valid region of a tail tile is reduced."""
from __future__ import annotations

import pytest
import torch

import pypto
from _opkit import FLOATS, check, golden_fp32, kernel, rand, run

REDUCE = {
    "sum": (pypto.sum, lambda x, d, k: torch.sum(x, d, keepdim=k)),
    "amax": (pypto.amax, lambda x, d, k: torch.amax(x, d, keepdim=k)),
    "amin": (pypto.amin, lambda x, d, k: torch.amin(x, d, keepdim=k)),
    "prod": (pypto.prod, lambda x, d, k: torch.prod(x, d, keepdim=k)),
    "mean": (pypto.mean, lambda x, d, k: torch.mean(x, d, keepdim=k)),
}


def _shape_after(shape, dim, keepdim):
    dim %= len(shape)
    if keepdim:
        return tuple(1 if i == dim else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i != dim) or (1,)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_3d(name, dim, keepdim, dtype):
    """Reductions over one dim of a [4,8,64] tensor (negative dims allowed) drop the dim or keep
    it as 1, and equal torch in FP32 rounded once."""
    op, ref = REDUCE[name]
    lo, hi = (0.8, 1.25) if name == "prod" else (-2.0, 2.0)
    x = rand((4, 8, 64), dtype, lo, hi, seed=1)
    shape = _shape_after(x.shape, dim, keepdim)
    out = run(lambda t: op(t, dim, keepdim=keepdim), x, out_shape=shape, tile=(2, 4, 64))
    check(out, golden_fp32(lambda t: ref(t, dim, keepdim), x))


def test_reduce_verified_shapes():
    """api_surface §4.4: sum over [1,16,32] on dim -1 gives [1,16]; amax with keepdim gives
    [1,16,1]."""
    x = rand((1, 16, 32), seed=2)
    seen = {}

    def body(t, o1, o2):
        s, m = pypto.sum(t, dim=-1), pypto.amax(t, dim=-1, keepdim=True)
        seen["sum"], seen["amax"] = s.shape, m.shape
        o1[:] = s
        o2[:] = m

    o1, o2 = torch.zeros(1, 16), torch.zeros(1, 16, 1)
    kernel(body, ["t", "o1", "o2"], tile=(1, 16, 32))(x, o1, o2)
    assert seen == {"sum": [1, 16], "amax": [1, 16, 1]}
    check(o1, x.sum(-1))
    check(o2, x.amax(-1, keepdim=True))


@pytest.mark.parametrize("dtype", [torch.int32])
@pytest.mark.parametrize("name", ["sum", "amax", "amin", "prod"])
def test_reduce_int32(name, dtype):
    """Integer reductions are exact and keep INT32."""
    op, ref = REDUCE[name]
    lo, hi = (-3, 4) if name == "prod" else (-100, 100)
    x = rand((8, 8), dtype, lo, hi, seed=3)
    for dim in (0, -1):
        check(run(lambda t: op(t, dim), x, out_shape=(8,), tile=(8, 8)),
              ref(x, dim, False).to(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("correction", [0, 1])
def test_var(correction, dtype):
    """var(x, dim, correction=) equals torch.var; dim may be an int, a list, or None (all)."""
    x = rand((4, 8, 64), dtype, seed=4)
    check(run(lambda t: pypto.var(t, -1, correction=correction), x, out_shape=(4, 8),
              tile=(2, 4, 64)),
          golden_fp32(lambda t: torch.var(t, -1, correction=correction), x))
    check(run(lambda t: pypto.var(t, [0, 2], correction=correction, keepdim=True), x,
              out_shape=(1, 8, 1), tile=(2, 4, 64)),
          golden_fp32(lambda t: torch.var(t, [0, 2], correction=correction, keepdim=True), x))
    check(run(lambda t: pypto.var(t, correction=correction), x, out_shape=(1,),
              tile=(2, 4, 64)),
          golden_fp32(lambda t: torch.var(t, correction=correction).reshape(1), x))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, dim, keepdim, dtype):
    """argmax/argmin give DT_INT32 indices (the first one on ties), like torch (INT64)."""
    op = getattr(pypto, name)
    ref = getattr(torch, name)
    x = rand((8, 64), dtype, -4, 4, seed=5)  # few distinct values in int32: many ties
    shape = _shape_after(x.shape, dim, keepdim)
    out = run(lambda t: op(t, dim, keepdim), x, out_shape=shape, out_dtype=torch.int32)
    check(out, ref(x, dim, keepdim).int())


def test_arg_reductions_need_single_dim():
    """argmax takes one int dim: a list is a pypto ValueError naming argmax."""
    with pytest.raises(pypto.errors.PyptoValueError, match=r"argmax takes a single int dim"):
        run(lambda t: pypto.argmax(t, [0, 1]), rand((8, 64)), out_shape=(1,),
            out_dtype=torch.int32)


def test_reduce_errors():
    """A dim out of range, a non-bool keepdim and mean of an INT32 tensor are pypto errors naming
    the op and the user's line."""
    x = rand((8, 64))
    with pytest.raises(pypto.errors.PyptoValueError,
                       match=r"sum: dim 2 is out of range.*test_reduce\.py:\d+"):
        run(lambda t: pypto.sum(t, 2), x, out_shape=(8,))
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"amax: keepdim must be a bool"):
        run(lambda t: pypto.amax(t, 0, keepdim=1), x, out_shape=(64,))
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"mean needs a floating-point"):
        run(lambda t: pypto.mean(t, 0), x.int(), out_shape=(64,))
    with pytest.raises(pypto.errors.PyptoRuntimeError, match=r"sum: the vector TileShape"):
        run(lambda t: pypto.sum(t, 0), x, out_shape=(64,), tile=(64,))
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"var: correction must be"):
        run(lambda t: pypto.var(t, 0, correction=0.5), x, out_shape=(64,))
    with pytest.raises(pypto.errors.PyptoValueError, match=r"softmax: dim -3 is out of range"):
        run(lambda t: pypto.softmax(t, -3), x)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(dim, dtype):
    """cumsum(x, dim) is the running sum, accumulated in FP32 (BF16/FP16 rounded once at the
    end). torch's CPU cumsum accumulates FP32 in double, so FP32 results agree to the rounding
    of a 64-term running sum (atol 1e-5)."""
    x = rand((4, 8, 64), dtype, -3, 3, seed=6)
    check(run(lambda t: pypto.cumsum(t, dim), x, tile=(2, 4, 64)),
          golden_fp32(lambda t: torch.cumsum(t, dim).to(t.dtype), x), atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cumprod(dtype):
    """cumprod(x, dim) is the running product."""
    x = rand((4, 64), dtype, 0.8, 1.25, seed=7)
    check(run(lambda t: pypto.cumprod(t, 0), x), golden_fp32(lambda t: torch.cumprod(t, 0), x))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax(dim, dtype):
    """softmax(x, dim) is computed in FP32 (max-subtracted) and cast back once."""
    x = rand((4, 8, 64), dtype, -4, 4, seed=8)
    check(run(lambda t: pypto.softmax(t, dim), x, tile=(2, 4, 64)),
          golden_fp32(lambda t: torch.softmax(t, dim), x))
    check(run(lambda t: t.softmax(dim), x, tile=(2, 4, 64)),
          golden_fp32(lambda t: torch.softmax(t, dim), x))


def _rms_ref(x, g, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if g is None else y * g


@pytest.mark.parametrize("dtype", FLOATS)
def test_rms_norm(dtype):
    """rms_norm(x, gamma, eps) = x / sqrt(mean(x^2, -1) + eps) * gamma, in FP32 and cast back."""
    x = rand((8, 64), dtype, seed=9)
    g = rand((64,), dtype, 0.5, 1.5, seed=10)
    check(run(lambda t, w: pypto.rms_norm(t, w, 1e-5), x, g),
          golden_fp32(lambda t, w: _rms_ref(t, w, 1e-5), x, g))
    check(run(lambda t: pypto.rms_norm(t), x), golden_fp32(lambda t: _rms_ref(t, None, 1e-6), x))
    with pytest.raises(pypto.errors.PyptoTypeError, match=r"rms_norm"):
        run(lambda t: pypto.rms_norm(t, 2.0), x)


# --------------------------------------------------------------------------------------------
# Tails: only the valid rows/columns of a view are reduced

def _tail_kernel(fn, rows: int, out_cols=None):
    def body(x, out):
        n = x.shape[0]
        for i in pypto.loop(0, n, rows, name="rows", idx_name="i"):
            v = pypto.view(x, [rows, 64], [i, 0], valid_shape=[(n - i).min(rows), 64])
            out[i:, :] = fn(v)

    return kernel(body, ["x", "out"], shapes=[[pypto.DYNAMIC, 64], [pypto.DYNAMIC, out_cols or 64]],
                  tile=(8, 64))


TAIL = [
    ("sum_last", lambda v: pypto.sum(v, -1, keepdim=True), lambda x: x.sum(-1, keepdim=True), 1),
    ("amin_last", lambda v: pypto.amin(v, -1, keepdim=True), lambda x: x.amin(-1, True), 1),
    ("softmax", lambda v: pypto.softmax(v, -1), lambda x: torch.softmax(x, -1), 64),
    ("rms_norm", lambda v: pypto.rms_norm(v), lambda x: _rms_ref(x, None, 1e-6), 64),
    ("cumsum_rows", lambda v: pypto.cumsum(v, 1), lambda x: torch.cumsum(x, 1), 64),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", TAIL, ids=[c[0] for c in TAIL])
def test_tail_row_reductions(case, dtype):
    """Row-wise reductions on 16-row views of a 37-row DYNAMIC tensor equal torch on every row;
    the partial last view produces only its valid rows."""
    _, fn, ref, cols = case
    x = rand((37, 64), dtype, seed=11)
    out = torch.full((37, cols), 7.0, dtype=dtype)
    _tail_kernel(fn, 16, cols)(x, out)
    check(out, golden_fp32(ref, x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_tail_reduce_over_rows(dtype):
    """Reducing dim 0 of a partial view sums only its valid rows (the padding is not added):
    column sums per 16-row block of a 37-row tensor."""
    x = rand((37, 64), dtype, seed=12)

    def body(t, out):
        n = t.shape[0]
        for i in pypto.loop(0, n, 16, name="blk", idx_name="i"):
            v = t[i:i + 16, :]
            out[i // 16:, :] = pypto.amax(v, 0, keepdim=True) + pypto.sum(v, 0, keepdim=True)

    out = torch.zeros(3, 64, dtype=dtype)
    kernel(body, ["t", "out"], shapes=[[pypto.DYNAMIC, 64], []], tile=(8, 64))(x, out)
    blocks = [x[0:16], x[16:32], x[32:37]]
    golden = torch.cat([golden_fp32(torch.add, golden_fp32(lambda b: b.amax(0, True), b),
                                    golden_fp32(lambda b: b.sum(0, True), b)) for b in blocks])
    check(out, golden)
