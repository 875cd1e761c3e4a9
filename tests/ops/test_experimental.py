"""`pypto.experimental` ops against torch: online_softmax / online_softmax_update (alone and as
a two-block FlashAttention-style pipeline) and transposed_batchmatmul, with their errors."""
from __future__ import annotations

import pytest
import torch

import pypto
from _opkit import check, rand
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError

EXP = pypto.experimental
F32, BF16, F16 = pypto.DT_FP32, pypto.DT_BF16, pypto.DT_FP16


def T(dtype=F32):
    return pypto.Tensor([], dtype)


def raised_here(excinfo) -> str:
    msg = str(excinfo.value)
    assert "test_experimental.py:" in msg, msg
    return msg


def softmax_stats(scores: torch.Tensor, scale: float):
    s = scores * scale
    m = s.amax(0, keepdim=True)
    e = torch.exp(s - m)
    return e, m, e.sum(0, keepdim=True)


def test_online_softmax_matches_torch():
    """Column statistics of scale * scores (reduction over dim 0); the exponentials are rounded
    once to BF16, the sum is taken over their FP32 values."""
    scores = rand((16, 64), lo=-6, hi=6, seed=1)
    e_out, m_out, l_out = torch.zeros(16, 64, dtype=torch.bfloat16), torch.zeros(1, 64), \
        torch.zeros(1, 64)

    @pypto.frontend.jit
    def k(x: T(), e: T(BF16), m: T(), l: T()):
        pypto.set_vec_tile_shapes(16, 64)
        e[:], m[:], l[:] = EXP.online_softmax(x, 0.125)

    k(scores, e_out, m_out, l_out)
    e, m, l = softmax_stats(scores, 0.125)
    check(m_out, m, rtol=0, atol=0)
    check(l_out, l)
    check(e_out, e.to(torch.bfloat16), rtol=0, atol=2 ** -8)


def test_online_softmax_update_matches_torch():
    pm, cm = rand((1, 64), seed=2), rand((1, 64), seed=3)
    pm[0, :4] = torch.tensor([1.0, -3.0, 0.0, float("-inf")])
    cm[0, :4] = torch.tensor([1.0, 2.0, -1.0, 0.5])
    ps, cs = rand((1, 64), lo=1, hi=9, seed=4), rand((1, 64), lo=1, hi=9, seed=5)
    po, co = rand((32, 64), seed=6), rand((32, 64), seed=7)
    outs = (torch.zeros(1, 64), torch.zeros(1, 64), torch.zeros(32, 64))

    @pypto.frontend.jit
    def k(a: T(), b: T(), c: T(), d: T(), e: T(), f: T(), m: T(), l: T(), o: T()):
        pypto.set_vec_tile_shapes(32, 64)
        m[:], l[:], o[:] = EXP.online_softmax_update(a, b, c, d, e, f)

    k(pm, ps, po, cm, cs, co, *outs)
    m = torch.maximum(pm, cm)
    a, b = torch.exp(pm - m), torch.exp(cm - m)
    check(outs[0], m, rtol=0, atol=0)
    check(outs[1], ps * a + cs * b)
    check(outs[2], po * a + co * b)


def test_two_block_attention_with_online_softmax():
    """out = V^T softmax(scale * S, dim 0), computed block by block over 2 x 16 keys: local
    statistics, P @ V per block (BF16 exponentials, FP32 accumulation), merged states, then one
    division by the final sum."""
    S, V = rand((32, 64), lo=-4, hi=4, seed=8), rand((32, 32), seed=9).to(torch.bfloat16)
    out = torch.zeros(32, 64)
    scale = 0.5

    @pypto.frontend.jit
    def k(s: T(), v: T(BF16), o: T()):
        pypto.set_vec_tile_shapes(32, 64)
        pypto.set_cube_tile_shapes([32, 32], [16, 16], [64, 64])
        e0, m, l = EXP.online_softmax(s[0:16, :], scale)
        acc = pypto.matmul(v[0:16, :], e0, F32, a_trans=True)           # [32, 64]
        e1, m1, l1 = EXP.online_softmax(s[16:32, :], scale)
        part = pypto.matmul(v[16:32, :], e1, F32, a_trans=True)
        m, l, acc = EXP.online_softmax_update(m, l, acc, m1, l1, part)
        o[:] = acc / l

    k(S, V, out)
    golden = V.float().T @ torch.softmax(S * scale, dim=0)
    check(out, golden, rtol=2e-2, atol=2e-2)


def test_transposed_batchmatmul_matches_einsum():
    """(M, B, K) x (B, K, N) -> (M, B, N) with out[m, b] = a[m, b] @ b[b], FP32 accumulation."""
    for dtype, pdt, odt, tdt in ((torch.float16, F16, F16, torch.float16),
                                 (torch.bfloat16, BF16, BF16, torch.bfloat16),
                                 (torch.float16, F16, BF16, torch.bfloat16)):
        a, b = rand((16, 2, 32), dtype, seed=10), rand((2, 32, 64), dtype, seed=11)
        out = torch.zeros(16, 2, 64, dtype=tdt)

        @pypto.frontend.jit
        def k(x: T(pdt), y: T(pdt), o: T(odt)):
            pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
            o[:] = EXP.transposed_batchmatmul(x, y, odt)

        k(a, b, out)
        check(out, torch.einsum("mbk,bkn->mbn", a.float(), b.float()).to(tdt))


def _trace_error(body, *tensors, tile=(16, 64)):
    @pypto.frontend.jit
    def k(x: T(), h: T(F16), y: T(F16), z: T()):
        pypto.set_vec_tile_shapes(*tile)
        body(x, h, y, z)

    k(torch.zeros(16, 64), torch.zeros(16, 2, 32, dtype=torch.float16),
      torch.zeros(2, 32, 64, dtype=torch.float16), torch.zeros(1, 64))


@pytest.mark.parametrize("fn,exc,text", [
    (lambda x, h, y, z: EXP.online_softmax(pypto.cast(x, BF16), 1.0), PyptoTypeError,
     "online_softmax: scores must be DT_FP32, got DT_BF16"),
    (lambda x, h, y, z: EXP.online_softmax(x[0, :], 1.0), PyptoValueError,
     "online_softmax: scores must be 2-D, got rank 1"),
    (lambda x, h, y, z: EXP.online_softmax(x, "s"), PyptoTypeError,
     "online_softmax: scale must be a float, got 's'"),
    (lambda x, h, y, z: EXP.online_softmax_update(z, z, x, z, z, x[0:8, :]), PyptoValueError,
     "online_softmax_update: current_output shape [8, 64] != previous_output shape [16, 64]"),
    (lambda x, h, y, z: EXP.online_softmax_update(x, z, x, z, z, x), PyptoValueError,
     "online_softmax_update: previous_max must have shape [1, 64]"),
    (lambda x, h, y, z: EXP.transposed_batchmatmul(h, y, F32), PyptoTypeError,
     "transposed_batchmatmul: out_dtype must be DT_FP16 or DT_BF16"),
    (lambda x, h, y, z: EXP.transposed_batchmatmul(x, y, F16), PyptoTypeError,
     "transposed_batchmatmul: tensor_a must be DT_FP16 or DT_BF16, got DT_FP32"),
    (lambda x, h, y, z: EXP.transposed_batchmatmul(h, h, F16), PyptoValueError,
     "transposed_batchmatmul: B of tensor_a (dim 1, 2) != B of tensor_b (dim 0, 16)"),
    (lambda x, h, y, z: EXP.transposed_batchmatmul(h, y[:, 0:16, :], F16), PyptoValueError,
     "transposed_batchmatmul: K of tensor_a (dim 2, 32) != K of tensor_b (dim 1, 16)"),
    (lambda x, h, y, z: EXP.transposed_batchmatmul(h, y, F16), PyptoRuntimeError,
     "transposed_batchmatmul: no cube TileShape is set"),
])
def test_errors_name_op_argument_and_line(fn, exc, text):
    with pytest.raises(exc) as ei:
        _trace_error(fn)
    assert text in raised_here(ei)


def test_dim0_must_fit_one_tile():
    """PyPTO does not split dim 0 of the online-softmax ops."""
    with pytest.raises(PyptoValueError, match=r"online_softmax: dim 0 of scores \(16\) is split "
                                              r"by the vector TileShape \[8, 64\]") as ei:
        _trace_error(lambda x, h, y, z: EXP.online_softmax(x, 1.0), tile=(8, 64))
    raised_here(ei)
