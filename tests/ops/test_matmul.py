"""`pypto.matmul` against torch: 2-D/3-D/4-D with batch broadcast, a_trans/b_trans, out_dtype
(FP32 accumulation, INT32 for INT8, cast once), bias via extend_params, the `@` operator, tails
of a dynamic M, and the errors for bad operands."""
from __future__ import annotations

import pytest
import torch

import pypto
from _opkit import check, kernel, rand

CUBE = ([32, 32], [32, 32], [32, 32])
CUBE_INT8 = ([32, 32], [64, 64], [32, 32])  # 32-byte aligned for 1-byte inputs


def _mm_golden(a, b, out_dtype, a_trans=False, b_trans=False, bias=None):
    """torch in FP32 (INT64 for INT8, exact) with the optional transposes and bias, cast once."""
    wide = (lambda t: t.long()) if a.dtype == torch.int8 else (lambda t: t.float())
    a, b = wide(a), wide(b)
    if a_trans:
        a = a.transpose(-1, -2)
    if b_trans:
        b = b.transpose(-1, -2)
    out = torch.matmul(a, b)
    if bias is not None:
        out = out + wide(bias)
    return out.to(out_dtype)


def _run_mm(a, b, out_dtype, out_shape, **kw):
    cube = CUBE_INT8 if a.dtype == torch.int8 else CUBE
    tile = (16, 64) if len(out_shape) == 2 else (1,) * (len(out_shape) - 2) + (16, 64)
    pd = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16,
          torch.bfloat16: pypto.DT_BF16, torch.int32: pypto.DT_INT32, torch.int8: pypto.DT_INT8}

    def body(x, y, out):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.matmul(x, y, pd[out_dtype], **kw)

    out = torch.full(tuple(out_shape), 7, dtype=out_dtype)
    kernel(body, ["a", "b", "out"], cube=cube)(a, b, out)
    return out


DTYPE_PAIRS = [(torch.float32, torch.float32), (torch.float16, torch.float16),
               (torch.float16, torch.float32), (torch.bfloat16, torch.bfloat16),
               (torch.bfloat16, torch.float32), (torch.int8, torch.int32)]
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float16: dict(rtol=1e-3, atol=1e-3),
       torch.bfloat16: dict(rtol=1e-2, atol=1e-2)}


def _inputs(shape_a, shape_b, dtype, seed=0):
    if dtype == torch.int8:
        return rand(shape_a, dtype, -128, 128, seed), rand(shape_b, dtype, -128, 128, seed + 1)
    return rand(shape_a, dtype, -1, 1, seed), rand(shape_b, dtype, -1, 1, seed + 1)


def _check_mm(out, golden):
    if out.dtype == torch.int32:
        check(out, golden)
    else:
        check(out, golden, **TOL[out.dtype])


@pytest.mark.parametrize("a_trans", [False, True])
@pytest.mark.parametrize("b_trans", [False, True])
@pytest.mark.parametrize("in_dt,out_dt", DTYPE_PAIRS, ids=[f"{a}->{b}".replace("torch.", "")
                                                            for a, b in DTYPE_PAIRS])
def test_matmul_2d(in_dt, out_dt, a_trans, b_trans):
    """out = op(a) @ op(b) for [M,K]x[K,N]: with a_trans the data is [K,M], with b_trans
    [N,K]; FP32 accumulation (INT32 for INT8), one cast to out_dtype."""
    m, k, n = 32, 96, 64
    a, b = _inputs((k, m) if a_trans else (m, k), (n, k) if b_trans else (k, n), in_dt)
    out = _run_mm(a, b, out_dt, (m, n), a_trans=a_trans, b_trans=b_trans)
    _check_mm(out, _mm_golden(a, b, out_dt, a_trans, b_trans))


BATCH = [((2, 32, 64), (2, 64, 32)), ((1, 32, 64), (3, 64, 32)), ((3, 32, 64), (1, 64, 32)),
         ((2, 2, 32, 64), (2, 2, 64, 32)), ((2, 1, 32, 64), (1, 3, 64, 32))]


@pytest.mark.parametrize("in_dt,out_dt", DTYPE_PAIRS[:4] + DTYPE_PAIRS[5:],
                         ids=["fp32", "fp16", "fp16->fp32", "bf16", "int8"])
@pytest.mark.parametrize("shapes", BATCH, ids=["3d", "3d_bcast_a", "3d_bcast_b", "4d", "4d_bc"])
def test_matmul_batched(shapes, in_dt, out_dt):
    """3-D and 4-D matmuls broadcast batch dims of size 1 ([1,M,K] @ [B,K,N] -> [B,M,N])."""
    sa, sb = shapes
    a, b = _inputs(sa, sb, in_dt, seed=3)
    golden = _mm_golden(a, b, out_dt)
    _check_mm(_run_mm(a, b, out_dt, golden.shape), golden)


def test_matmul_batched_transposes():
    """a_trans/b_trans swap the last two dims of 3-D operands too."""
    a, b = _inputs((2, 64, 32), (2, 16, 64), torch.float32, seed=5)
    golden = _mm_golden(a, b, torch.float32, True, True)
    _check_mm(_run_mm(a, b, torch.float32, golden.shape, a_trans=True, b_trans=True), golden)


@pytest.mark.parametrize("in_dt,out_dt", [(torch.float32, torch.float32),
                                          (torch.float16, torch.float32),
                                          (torch.bfloat16, torch.bfloat16)])
def test_matmul_bias(in_dt, out_dt):
    """extend_params={'bias_tensor': [1,N]} adds the bias to the FP32 accumulator before the
    single cast to out_dtype."""
    a, b = _inputs((32, 64), (64, 32), in_dt, seed=7)
    bias = rand((1, 32), in_dt, -1, 1, seed=9)
    pd = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}

    def body(x, y, z, out):
        out[:] = pypto.matmul(x, y, pd[out_dt], extend_params={"bias_tensor": z})

    out = torch.zeros(32, 32, dtype=out_dt)
    kernel(body, ["a", "b", "bias", "out"], cube=CUBE)(a, b, bias, out)
    _check_mm(out, _mm_golden(a, b, out_dt, bias=bias))


def test_matmul_operator_out_dtype():
    """`a @ b` gives the rhs dtype for FP16/BF16/FP32 and INT32 for INT8."""
    for dt, out_dt in [(torch.float16, torch.float16), (torch.bfloat16, torch.bfloat16),
                       (torch.float32, torch.float32), (torch.int8, torch.int32)]:
        a, b = _inputs((32, 64), (64, 32), dt, seed=11)

        def body(x, y, out):
            out[:] = x @ y

        out = torch.zeros(32, 32, dtype=out_dt)
        kernel(body, ["a", "b", "out"], cube=CUBE_INT8 if dt == torch.int8 else CUBE)(a, b, out)
        _check_mm(out, _mm_golden(a, b, out_dt))


def test_matmul_tail_rows():
    """A [16,K] view of a DYNAMIC-row input with a partial valid shape multiplies only its valid
    rows; the product written at out[i:] equals torch on all 37 rows."""
    a, b = rand((37, 64), seed=13), rand((64, 32), seed=14)

    def body(x, w, out):
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="m", idx_name="i"):
            xv = pypto.view(x, [16, 64], [i, 0], valid_shape=[(n - i).min(16), 64])
            out[i:, :] = pypto.matmul(xv, w, pypto.DT_FP32)

    out = torch.full((37, 32), 7.0)
    kernel(body, ["x", "w", "out"], shapes=[[pypto.DYNAMIC, 64], [], [pypto.DYNAMIC, 32]],
           cube=CUBE)(a, b, out)
    _check_mm(out, a @ b)


def test_matmul_tail_k():
    """A K-dim tail (valid K < view K) contracts only the valid K columns of A and rows of B."""
    a, b = rand((16, 64), seed=15), rand((64, 32), seed=16)

    def body(x, w, out):
        xv = pypto.view(x, [16, 64], [0, 0], valid_shape=[16, 40])
        wv = pypto.view(w, [64, 32], [0, 0], valid_shape=[40, 32])
        out[:] = pypto.matmul(xv, wv, pypto.DT_FP32)

    out = torch.zeros(16, 32)
    kernel(body, ["x", "w", "out"], cube=CUBE)(a, b, out)
    _check_mm(out, a[:, :40] @ b[:40])


def test_matmul_errors():
    """Bad operands are pypto errors naming matmul and the argument."""
    a, b = rand((32, 64)), rand((64, 32))
    E = pypto.errors

    def go(fn, x=a, y=b, cube=CUBE, out=(32, 32), dt=torch.float32):
        def body(p, q, o):
            o[:] = fn(p, q)
        kernel(body, ["a", "b", "o"], cube=cube)(x, y, torch.zeros(out, dtype=dt))

    with pytest.raises(E.PyptoValueError, match=r"matmul: K of input .* != K of mat2"):
        go(lambda p, q: pypto.matmul(p, p, pypto.DT_FP32))
    with pytest.raises(E.PyptoTypeError, match=r"matmul: input dtype DT_FP32 != mat2 dtype"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32), y=b.half())
    with pytest.raises(E.PyptoTypeError, match=r"matmul: DT_FP32 inputs cannot produce"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP16))
    with pytest.raises(E.PyptoTypeError, match=r"matmul: out_dtype is required"):
        go(lambda p, q: pypto.matmul(p, q))
    with pytest.raises(E.PyptoValueError, match=r"matmul: both operands must have the same rank"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32), y=rand((1, 64, 32)))
    with pytest.raises(E.PyptoRuntimeError, match=r"matmul: no cube TileShape"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32), cube=None)
    with pytest.raises(E.PyptoRuntimeError, match=r"matmul: cube tile .* not 32-byte aligned"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32), cube=([4, 4], [4, 4], [4, 4]))
    with pytest.raises(E.PyptoValueError, match=r"matmul: bias_tensor last dim"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32, extend_params={"bias_tensor": p}))
    with pytest.raises(E.PyptoTypeError, match=r"matmul: extend_params must be a dict"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32, extend_params=[("scale", 1.0)]))
    with pytest.raises(E.PyptoValueError, match=r"matmul: unknown extend_params keys"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32, extend_params={"bias": p}))
    with pytest.raises(E.PyptoValueError, match=r"matmul: shapes .* cannot be broadcast"):
        go(lambda p, q: pypto.matmul(p, q, pypto.DT_FP32), x=rand((2, 32, 64)),
           y=rand((3, 64, 32)), out=(2, 32, 32))
    with pytest.raises(E.PyptoRuntimeError, match=r"a @ b is not supported for DT_INT32"):
        go(lambda p, q: p @ q, x=a.int(), y=b.int(), dt=torch.int32)


def test_matmul_scale_and_relu():
    """extend_params 'scale' multiplies the accumulator and 'relu_type' RELU clamps it at 0,
    before the cast."""
    a, b = rand((32, 64), seed=17), rand((64, 32), seed=18)

    def body(x, y, out):
        out[:] = pypto.matmul(x, y, pypto.DT_FP32,
                              extend_params={"scale": 0.5, "relu_type": pypto.ReLuType.RELU})

    out = torch.zeros(32, 32)
    kernel(body, ["a", "b", "out"], cube=CUBE)(a, b, out)
    _check_mm(out, torch.relu((a @ b) * 0.5))
