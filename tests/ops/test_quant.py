"""Quantization ops against torch: quantize (round half to even, saturating, per-tensor or
per-slice scale and zero point along an axis), dequantize, and the rejected quant_mx."""
from __future__ import annotations

import pytest
import torch

import pypto
from _opkit import check, kernel, rand
from pypto.errors import PyptoTypeError, PyptoValueError

I8, U8, I16, I32, F32 = pypto.DT_INT8, pypto.DT_UINT8, pypto.DT_INT16, pypto.DT_INT32, \
    pypto.DT_FP32
TORCH = {I8: torch.int8, U8: torch.uint8, I16: torch.int16, I32: torch.int32, F32: torch.float32}
RANGE = {I8: (-128, 127), U8: (0, 255)}


def quant_golden(x, scale, otype, axis=-1, zp=None):
    """torch: FP32 product and sum, round half to even, NaN -> 0, saturate."""
    def along(p):
        if not isinstance(p, torch.Tensor):
            return torch.tensor(p, dtype=torch.float32)
        return p if p.dim() == x.dim() else p.unsqueeze(axis)
    y = x * along(scale)
    if zp is not None:
        y = y + along(zp)
    lo, hi = RANGE[otype]
    return torch.nan_to_num(torch.round(y), nan=0.0).clamp(lo, hi).to(TORCH[otype])


def dequant_golden(x, scale, axis=-1, zp=None):
    def along(p):
        if not isinstance(p, torch.Tensor):
            return torch.tensor(p, dtype=torch.float32)
        return p if p.dim() == x.dim() else p.unsqueeze(axis)
    y = x.float()
    if zp is not None:
        y = y + along(zp)
    return y * along(scale)


def go(body, *tensors, tile=(4, 64)):
    kernel(body, [f"t{i}" for i in range(len(tensors))], tile=tile)(*tensors)


def raised_here(excinfo) -> str:
    msg = str(excinfo.value)
    assert "test_quant.py:" in msg, msg
    return msg


# --------------------------------------------------------------------------------------------
# quantize

def test_quantize_doc_example():
    """The documented example: INT8 with scale 1, and UINT8 with zero point 5 (the formula
    round(x * scale + zero_points))."""
    x = torch.tensor([[1.1, -2.2, 3.3, -4.4]] * 3)
    y1, y2 = torch.zeros(3, 4, dtype=torch.int8), torch.zeros(3, 4, dtype=torch.uint8)

    def body(t, a, b, s, z):
        a[:] = pypto.quantize(t, s, I8, -1, None)
        b[:] = pypto.quantize(t, s, U8, -1, z)

    go(body, x, y1, y2, torch.ones(3), torch.full((3,), 5.0), tile=(4, 8))
    assert y1.tolist() == [[1, -2, 3, -4]] * 3
    assert y2.tolist() == [[6, 3, 8, 1]] * 3


@pytest.mark.parametrize("otype", [I8, U8])
@pytest.mark.parametrize("form", ["float", "reduced", "kept"])
def test_quantize_per_row_scale_and_zero_point(otype, form):
    """axis=-1: one scale (and zero point) per row, given as a float, a [rows] tensor or a
    [rows, 1] tensor; values saturate and round half to even."""
    x = rand((8, 64), lo=-40, hi=40, seed=1)
    x[0, :6] = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 1e9])
    x[1, :3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
    scale = rand((8,), lo=0.5, hi=4, seed=2)
    scale[0] = 1.0
    zp = rand((8,), lo=-20, hi=20, seed=3).round() if otype == U8 else None
    if zp is not None:
        zp[0] = 0.0
    if form == "float":
        s, z = 1.5, (None if zp is None else 3.0)
    elif form == "reduced":
        s, z = scale, zp
    else:
        s, z = scale[:, None].contiguous(), None if zp is None else zp[:, None].contiguous()
    out = torch.zeros(8, 64, dtype=TORCH[otype])
    extra = [t for t in (s, z) if isinstance(t, torch.Tensor)]

    def body(t, o, *ps):
        it = iter(ps)
        sv = next(it) if isinstance(s, torch.Tensor) else s
        zv = (next(it) if isinstance(z, torch.Tensor) else z)
        o[:] = pypto.quantize(t, sv, otype, -1, zero_points=zv)

    go(body, x, out, *extra)
    check(out, quant_golden(x, s, otype, -1, z))
    if form == "reduced":
        lo, hi = RANGE[otype]
        assert out[0, :6].tolist() == [max(lo, v) for v in [0, 2, 2, 0, -2, hi]]
        assert out[1, :3].tolist() == [0, hi, lo]


def test_quantize_axis_minus_2_and_3d():
    """axis=-2 takes one scale per column ([..., col]); a 3-D input with axis=-1 one per
    (batch, row)."""
    x = rand((8, 64), lo=-30, hi=30, seed=4)
    s_col = rand((64,), lo=0.5, hi=3, seed=5)
    out = torch.zeros(8, 64, dtype=torch.int8)
    go(lambda t, o, s: o.move(pypto.quantize(t, s, I8, -2)), x, out, s_col)
    check(out, quant_golden(x, s_col, I8, -2))
    x3 = rand((2, 4, 64), lo=-30, hi=30, seed=6)
    s3 = rand((2, 4), lo=0.5, hi=3, seed=7)
    out3 = torch.zeros(2, 4, 64, dtype=torch.int8)
    go(lambda t, o, s: o.move(pypto.quantize(t, s, I8, 2)), x3, out3, s3, tile=(2, 4, 64))
    check(out3, quant_golden(x3, s3, I8, -1))


def test_quantize_1d_and_valid_region():
    """A 1-D input takes a [1] scale tensor; a partially valid input gives a result valid over
    the same region."""
    x = rand((64,), lo=-30, hi=30, seed=8)
    out = torch.zeros(64, dtype=torch.int8)
    go(lambda t, o, s: o.move(pypto.quantize(t, s, I8, -1)), x, out, torch.tensor([2.0]),
       tile=(64,))
    check(out, quant_golden(x, 2.0, I8))
    x2 = rand((4, 64), lo=-30, hi=30, seed=9)
    out2 = torch.zeros(4, 64, dtype=torch.int8)
    seen = {}

    def body(t, o, s):
        q = pypto.quantize(pypto.view(t, [4, 64], [0, 0], valid_shape=[3, 64]), s, I8, -1)
        seen["valid"] = [int(d) for d in q.valid_shape]
        o[:] = pypto.fillpad(q)

    go(body, x2, out2, torch.ones(4))
    assert seen["valid"] == [3, 64]
    check(out2[:3], quant_golden(x2[:3], 1.0, I8))
    assert not out2[3].any()


# --------------------------------------------------------------------------------------------
# dequantize

def test_dequantize_doc_example():
    x = torch.tensor([[1, 2, 3, 4]] * 3, dtype=torch.int8)
    y1, y2 = torch.zeros(3, 4), torch.zeros(3, 4)

    def body(t, a, b, s, z):
        a[:] = pypto.dequantize(t, s, F32, -1, None)
        b[:] = pypto.dequantize(t, s, F32, -1, z)

    go(body, x, y1, y2, torch.ones(3, 1), torch.full((3, 1), -2.0), tile=(4, 32))
    assert y1.tolist() == [[1.0, 2.0, 3.0, 4.0]] * 3
    assert y2.tolist() == [[-1.0, 0.0, 1.0, 2.0]] * 3


@pytest.mark.parametrize("itype", [I8, I16, I32])
@pytest.mark.parametrize("axis", [-1, -2])
def test_dequantize_matches_torch(itype, axis):
    """(float(x) + zero_points) * scale in FP32, per row (axis=-1) or per column (axis=-2)."""
    x = rand((8, 64), TORCH[itype], lo=-100, hi=100, seed=10)
    n = 8 if axis == -1 else 64
    s, z = rand((n,), lo=0.01, hi=2, seed=11), rand((n,), lo=-5, hi=5, seed=12)
    out = torch.zeros(8, 64)
    go(lambda t, o, sv, zv: o.move(pypto.dequantize(t, sv, F32, axis, zv)), x, out, s, z)
    check(out, dequant_golden(x, s, axis, z), rtol=0, atol=0)
    go(lambda t, o: o.move(pypto.dequantize(t, 0.25, F32, axis)), x, out)
    check(out, dequant_golden(x, 0.25, axis), rtol=0, atol=0)


def test_quantize_dequantize_roundtrip():
    """Per-row symmetric INT8: dequantize(quantize(x, 127/amax), amax/127) is within half a
    step of x."""
    x = rand((4, 64), lo=-3, hi=3, seed=13)
    back = torch.zeros(4, 64)

    def body(t, o):
        amax = pypto.amax(pypto.abs(t), -1, keepdim=True)
        q = pypto.quantize(t, 127.0 / amax, I8, -1)
        o[:] = pypto.dequantize(q, amax / 127.0, F32, -1)

    go(body, x, back)
    step = x.abs().amax(-1, keepdim=True) / 127
    assert ((back - x).abs() <= step / 2 + 1e-6).all()


# --------------------------------------------------------------------------------------------
# Errors

@pytest.mark.parametrize("fn,exc,text", [
    (lambda x, i, s: pypto.quantize(pypto.cast(x, pypto.DT_FP16), 1.0, I8, -1), PyptoTypeError,
     "quantize: input must be DT_FP32, got DT_FP16"),
    (lambda x, i, s: pypto.quantize(x, 1.0, I16, -1), PyptoValueError,
     "quantize: otype must be DT_INT8 or DT_UINT8"),
    (lambda x, i, s: pypto.quantize(x, 1.0, I8, 0), PyptoValueError,
     "quantize: axis 0 is not supported for a rank-3 input"),
    (lambda x, i, s: pypto.quantize(x, s, I8, -2), PyptoValueError,
     "quantize: scale shape [2, 4] does not fit an input of shape [2, 4, 64] with axis -2"),
    (lambda x, i, s: pypto.quantize(x, i, I8, -1), PyptoTypeError,
     "quantize: scale must be a DT_FP32 tensor, got DT_INT8"),
    (lambda x, i, s: pypto.quantize(x, "2", I8, -1), PyptoTypeError,
     "quantize: scale must be a float or a DT_FP32 tensor, got str"),
    (lambda x, i, s: pypto.quantize(x, s, U8, -1, zero_points=[1.0]), PyptoTypeError,
     "quantize: zero_points must be a float or a DT_FP32 tensor, got list"),
    (lambda x, i, s: pypto.quantize(x, 1.0, I8, axis=1.0), PyptoTypeError,
     "quantize: axis must be an int, got 1.0"),
    (lambda x, i, s: pypto.dequantize(x, 1.0, F32, -1), PyptoTypeError,
     "dequantize: input must be DT_INT8, DT_INT16 or DT_INT32, got DT_FP32"),
    (lambda x, i, s: pypto.dequantize(i, 1.0, pypto.DT_FP16, -1), PyptoValueError,
     "dequantize: otype must be DT_FP32"),
    (lambda x, i, s: pypto.dequantize(pypto.view(i, [2, 4, 64], [0, 0, 0])[0, 0, :], 1.0, F32,
                                      -2), PyptoValueError,
     "dequantize: axis -2 is not supported for a rank-1 input"),
])
def test_errors_name_op_argument_and_line(fn, exc, text):
    with pytest.raises(exc) as ei:
        go(lambda x, i, s: fn(x, i, s), torch.zeros(2, 4, 64),
           torch.zeros(2, 4, 64, dtype=torch.int8), torch.ones(2, 4), tile=(2, 4, 64))
    assert text in raised_here(ei)


def test_quant_mx_is_rejected():
    """The MX format is not reproduced: quant_mx (and the Tensor method) raise a clear error."""
    for call in (lambda t: pypto.quant_mx(t), lambda t: t.quant_mx()):
        with pytest.raises(PyptoValueError, match=r"quant_mx: the MX format .*FP8E8M0.* not "
                                                  r"supported") as ei:
            go(lambda t: call(t), torch.zeros(4, 64))
        raised_here(ei)
