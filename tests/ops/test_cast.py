"""`pypto.cast` against torch and hand-built goldens: every CastMode for float -> int (RINT =
half to even, ROUND = half away from zero, FLOOR, CEIL, TRUNC; CAST_NONE truncates), directed
modes and CAST_ODD for narrowing float conversions, and SaturationMode ON (clamp) vs OFF
(wrap / overflow to inf)."""
from __future__ import annotations

import pytest
import torch

import pypto
from _opkit import DTYPES, FLOATS, check, kernel, rand

M = pypto.CastMode
ON, OFF = pypto.SaturationMode.ON, pypto.SaturationMode.OFF
TIES = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.7, 0.7, -1.2, 1.2, 0.0, -0.0, 6.0, -6.0]


def cast_run(x: torch.Tensor, dtype: torch.dtype, *args, **kw) -> torch.Tensor:
    """out[:] = pypto.cast(x, dtype, *args, **kw) in a fresh kernel."""
    out = torch.zeros(x.shape, dtype=dtype)

    def body(t, o):
        o[:] = pypto.cast(t, DTYPES[dtype], *args, **kw)

    kernel(body, ["x", "out"], tile=(4, 64))(x, out)
    return out


def _values(dtype: torch.dtype) -> torch.Tensor:
    x = rand((4, 64), torch.float32, -300, 300, seed=1)
    x[0, :len(TIES)] = torch.tensor(TIES)
    return x.to(dtype)


def _round(x: torch.Tensor, mode) -> torch.Tensor:
    """The float -> int rounding of each mode, in float64 (CAST_NONE/CAST_ODD truncate)."""
    x = x.double()
    return {M.CAST_RINT: torch.round, M.CAST_FLOOR: torch.floor, M.CAST_CEIL: torch.ceil,
            M.CAST_ROUND: lambda v: torch.sign(v) * torch.floor(v.abs() + 0.5),
            }.get(mode, torch.trunc)(x)


@pytest.mark.parametrize("src", FLOATS)
@pytest.mark.parametrize("mode", list(M), ids=[m.name for m in M])
def test_float_to_int32_modes(mode, src):
    """Float -> INT32 rounds by the mode: RINT half to even, ROUND half away from zero, FLOOR,
    CEIL, TRUNC; CAST_NONE (and CAST_ODD, unsupported for ints) truncate."""
    x = _values(src)
    check(cast_run(x, torch.int32, mode), _round(x, mode).to(torch.int32))
    check(cast_run(x, torch.int32, mode=mode, satmode=ON), _round(x, mode).to(torch.int32))


@pytest.mark.parametrize("src", [torch.float32, torch.float16])
@pytest.mark.parametrize("mode", [M.CAST_NONE, M.CAST_RINT, M.CAST_ROUND, M.CAST_FLOOR],
                         ids=lambda m: m.name)
def test_float_to_int8_saturation(mode, src):
    """Out-of-range values: SaturationMode.ON clamps to [-128, 127]; OFF (the default) wraps
    modulo 2**8 like an int64 -> int8 conversion."""
    x = _values(src)
    r = _round(x, mode)
    check(cast_run(x, torch.int8, mode, ON), r.clamp(-128, 127).to(torch.int8))
    check(cast_run(x, torch.int8, mode, OFF), r.long().to(torch.int8))
    check(cast_run(x, torch.int8, mode), r.long().to(torch.int8))


def test_float_to_int_special_values():
    """NaN -> 0; +-inf clamp to the range with ON and become 0 with OFF; huge finite values
    wrap modulo 2**32 (exactly) with OFF."""
    x = torch.zeros(4, 64)
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -float("inf"), 2.0 ** 33 + 2 ** 31])
    on = cast_run(x, torch.int32, M.CAST_TRUNC, ON)
    assert on[0, :3].tolist() == [0, 2 ** 31 - 1, -2 ** 31] and on[0, 3] == 2 ** 31 - 1
    off = cast_run(x, torch.int32, M.CAST_TRUNC, OFF)
    assert off[0, :4].tolist() == [0, 0, 0, -2 ** 31]


@pytest.mark.parametrize("src,dst", [(a, b) for a in FLOATS for b in FLOATS if a != b])
def test_float_to_float_default_is_rint(src, dst):
    """Float -> float conversions round to nearest even (torch's `.to`); widening is exact."""
    x = rand((4, 64), torch.float32, -100, 100, seed=2).to(src)
    check(cast_run(x, dst), x.to(dst), rtol=0, atol=0)
    check(cast_run(x, dst, M.CAST_RINT), x.to(dst), rtol=0, atol=0)


def _neighbours(x: torch.Tensor, dst: torch.dtype):
    """The representable values of `dst` just below and just above each FP32 value."""
    r = x.to(dst)
    inf = torch.full_like(r, float("inf"))
    lo = torch.where(r.double() > x.double(), torch.nextafter(r, -inf), r)
    hi = torch.where(r.double() < x.double(), torch.nextafter(r, inf), r)
    return lo, hi


@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", [M.CAST_FLOOR, M.CAST_CEIL, M.CAST_TRUNC, M.CAST_ROUND],
                         ids=lambda m: m.name)
def test_narrowing_float_directed_modes(mode, dst):
    """FP32 -> FP16/BF16 honours FLOOR (largest value <= x), CEIL (smallest >= x), TRUNC (toward
    zero) and ROUND (nearest, ties away from zero)."""
    x = rand((4, 64), torch.float32, -10, 10, seed=3)
    ulp = 2.0 ** -10 if dst == torch.float16 else 2.0 ** -7
    x[0, :6] = torch.tensor([1 + ulp / 2, -(1 + ulp / 2), 1 + 1.5 * ulp, 2.0, -3.0, 0.0])
    lo, hi = _neighbours(x, dst)
    xd = x.double()
    if mode is M.CAST_FLOOR:
        golden = lo
    elif mode is M.CAST_CEIL:
        golden = hi
    elif mode is M.CAST_TRUNC:
        golden = torch.where(x >= 0, lo, hi)
    else:
        dlo, dhi = xd - lo.double(), hi.double() - xd
        away = torch.where(x >= 0, hi, lo)
        golden = torch.where(dlo < dhi, lo, torch.where(dhi < dlo, hi, away))
    out = cast_run(x, dst, mode)
    check(out, golden, rtol=0, atol=0)
    if mode is M.CAST_ROUND:  # the ties went away from zero, where RINT goes to even
        assert out[0, 0] == 1 + ulp and out[0, 1] == -(1 + ulp) and out[0, 2] == 1 + 2 * ulp


def test_cast_odd_fp32_to_fp16():
    """CAST_ODD (FP32 -> FP16): exact values stay; otherwise, of the two neighbours, the one
    whose last mantissa bit is 1."""
    x = rand((4, 64), torch.float32, -10, 10, seed=4)
    e = 2.0 ** -10
    x[0, :6] = torch.tensor([1 + e / 2, 1 + 3 * e / 4, 1 + e + e / 4, 1.0, -(1 + e / 2), 0.1])
    lo, hi = _neighbours(x, torch.float16)
    lo_odd = (lo.view(torch.int16) & 1) == 1
    golden = torch.where(lo.double() == x.double(), lo, torch.where(lo_odd, lo, hi))
    out = cast_run(x, torch.float16, M.CAST_ODD)
    check(out, golden, rtol=0, atol=0)
    assert out[0, :5].tolist() == [1 + e, 1 + e, 1 + e, 1.0, -(1 + e)]


def test_cast_odd_elsewhere_is_rint():
    """CAST_ODD is only defined for FP32 -> FP16; for BF16 it is RINT."""
    x = rand((4, 64), torch.float32, -10, 10, seed=5)
    check(cast_run(x, torch.bfloat16, M.CAST_ODD), x.bfloat16(), rtol=0, atol=0)


def test_float_saturation():
    """Float overflow: SaturationMode.ON clamps to the largest finite value, OFF gives inf; NaN
    stays NaN either way."""
    x = torch.zeros(4, 64)
    x[0, :4] = torch.tensor([1e5, -1e5, 3.4e38, float("nan")])
    on = cast_run(x, torch.float16, M.CAST_NONE, ON)
    assert on[0, :2].tolist() == [65504.0, -65504.0] and on[0, 3].isnan()
    off = cast_run(x, torch.float16)
    assert off[0, :3].tolist() == [float("inf"), -float("inf"), float("inf")]
    bf_on = cast_run(x, torch.bfloat16, satmode=ON)
    assert bf_on[0, 2] == torch.finfo(torch.bfloat16).max
    assert cast_run(x, torch.bfloat16)[0, 2] == float("inf")
    assert cast_run(x, torch.float16, M.CAST_TRUNC)[0, 0] == 65504.0  # toward zero: finite


def test_int_conversions():
    """INT32 -> FP32/FP16/BF16 (small values exact like torch), INT32 -> INT8 wraps (OFF) or
    clamps (ON), INT8 -> INT32 and -> FP16 are exact, and anything -> BOOL is `!= 0`."""
    x = rand((4, 64), torch.int32, -1000, 1000, seed=6)
    for dst in (torch.float32, torch.float16, torch.bfloat16):
        check(cast_run(x, dst), x.to(dst), rtol=0, atol=0)
    check(cast_run(x, torch.int8), x.to(torch.int8))
    check(cast_run(x, torch.int8, satmode=ON), x.clamp(-128, 127).to(torch.int8))
    i8 = rand((4, 64), torch.int8, -128, 128, seed=7)
    check(cast_run(i8, torch.int32), i8.int())
    check(cast_run(i8, torch.float16), i8.half(), rtol=0, atol=0)
    check(cast_run(x, torch.bool), x != 0)
    f = _values(torch.float32)
    check(cast_run(f, torch.bool), f != 0)


def test_glm_int8_quant_chain():
    """glm's per-token int8 quantisation chain: FP32 -> INT32 (RINT) -> FP16 (ROUND) -> INT8
    (TRUNC, saturating) equals round-half-even then clamp to [-128, 127]."""
    x = rand((4, 64), torch.float32, -200, 200, seed=8)
    x[0, :len(TIES)] = torch.tensor(TIES)
    out = torch.zeros(4, 64, dtype=torch.int8)

    def body(t, o):
        i = pypto.cast(t, pypto.DT_INT32, M.CAST_RINT)
        h = pypto.cast(i, pypto.DT_FP16, M.CAST_ROUND)
        o[:] = pypto.cast(h, pypto.DT_INT8, M.CAST_TRUNC, ON)

    kernel(body, ["x", "out"], tile=(4, 64))(x, out)
    check(out, torch.round(x).clamp(-128, 127).to(torch.int8))


@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16, torch.int32])
def test_cast_tail(dst):
    """A cast of a partial view in a loop over a DYNAMIC dim converts the valid rows only."""
    x = rand((37, 64), torch.float32, -50, 50, seed=9)
    out = torch.full((37, 64), 7, dtype=dst)

    def body(t, o):
        n = t.shape[0]
        for i in pypto.loop(0, n, 16, name="rows", idx_name="i"):
            o[i:, :] = pypto.cast(t[i:i + 16, :], DTYPES[dst], M.CAST_RINT)

    kernel(body, ["x", "out"], shapes=[[pypto.DYNAMIC, 64]] * 2, tile=(8, 64))(x, out)
    golden = torch.round(x).int() if dst == torch.int32 else x.to(dst)
    check(out, golden, rtol=0, atol=0)


def test_cast_errors():
    """A dtype that is not a DataType, an unsupported dtype or a bad mode is a pypto error
    naming cast."""
    x = rand((4, 64))
    E = pypto.errors
    with pytest.raises(E.PyptoTypeError, match=r"cast dtype must be a pypto.DataType"):
        _cast_with(x, torch.float16)
    with pytest.raises(E.PyptoValueError, match=r"cast dtype DataType.DT_HF8 is not supported"):
        _cast_with(x, pypto.DT_HF8)
    with pytest.raises(E.PyptoTypeError, match=r"cast: mode must be a pypto.CastMode"):
        _cast_with(x, pypto.DT_FP16, mode="rint")
    with pytest.raises(E.PyptoValueError, match=r"cast: mode 9 is not a CastMode"):
        _cast_with(x, pypto.DT_FP16, mode=9)


def _cast_with(x, dtype, **kw):
    def body(t, o):
        o[:] = pypto.cast(t, dtype, **kw)

    kernel(body, ["x", "out"], tile=(4, 64))(x, torch.zeros(x.shape, dtype=torch.float16))
