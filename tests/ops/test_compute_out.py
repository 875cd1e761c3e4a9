"""Ops registered with `accepts_out` compute into `at["_out"]` with the same bits as without it,
and ignore it where the result would not have the out array's dtype."""
import numpy as np
import pytest

from pypto.dtypes import DataType
from pypto.ops.core import REGISTRY

OUT_OPS = sorted(code for code, d in REGISTRY.items() if d.accepts_out)
# the inputs hold infinities and NaNs on purpose (numpy warns about them either way)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _values(shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    flat = x.reshape(-1)
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e38, -1e38, 1e-40, -1e-42, 88.8,
                         -104.0], np.float32)
    flat[rng.integers(0, flat.size, 40)] = np.resize(specials, 40)
    return x


def _attrs(code, shape):
    at = {"_out_valid": shape, "_in_valid": [shape]}
    if code.endswith("S") and code[:-1] in REGISTRY:
        at.update(scalar=1.5, reverse=code == "SUBS", dtype=DataType.DT_FP32)
    return at


def test_the_common_elementwise_ops_accept_out():
    assert {"ADD", "SUB", "MUL", "DIV", "ADDS", "MULS", "EXP", "RSQRT", "SIGMOID",
            "SQRT"} <= set(OUT_OPS)
    assert "LOGICAL_NOT" not in OUT_OPS and "REDUCE_SUM" not in OUT_OPS


@pytest.mark.parametrize("code", [c for c in OUT_OPS
                                  if c not in ("BITWISE_NOT", "MATMUL", "VIEW")])
def test_computing_into_out_gives_the_same_bits(code):
    shape = (7, 96)
    n_inputs = 2 if code in ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM") else 1
    xs = [_values(shape, seed) for seed in range(n_inputs)]
    if n_inputs == 2:
        xs[1] = xs[1][:, :1].copy()   # a broadcast column
    compute = REGISTRY[code].compute
    expect = np.asarray(compute(list(xs), _attrs(code, shape)))
    out = np.full(shape, 7.0, np.float32)
    got = compute(list(xs), dict(_attrs(code, shape), _out=out))
    assert got is out
    assert np.array_equal(expect.view(np.uint32), out.view(np.uint32))


@pytest.mark.parametrize("code", ["ADD", "DIV", "NEG", "ABS"])
def test_integer_inputs_ignore_out(code):
    xs = [np.arange(1, 13, dtype=np.int32).reshape(3, 4)] * (1 if code in ("NEG", "ABS") else 2)
    out = np.zeros((3, 4), np.float32)
    compute = REGISTRY[code].compute
    got = compute(xs, {"_out_valid": (3, 4), "_out": out})
    assert got is not out and not out.any()
    assert np.array_equal(got, compute(xs, {"_out_valid": (3, 4)}))


@pytest.mark.parametrize("a_shape,b_shape,a_trans,b_trans", [
    ((37, 70), (70, 45), False, False), ((1, 64, 96), (1, 40, 64), True, True),
    ((3, 37, 70), (1, 45, 70), False, True), ((2, 1, 33, 16), (1, 4, 16, 8), False, False)])
def test_matmul_into_out_gives_the_same_bits(a_shape, b_shape, a_trans, b_trans):
    a, b = _values(a_shape, 1), _values(b_shape, 2)
    a[np.isnan(a)] = 0.0   # NaN payloads aside, a product with NaN is NaN either way
    at = {"a_trans": a_trans, "b_trans": b_trans, "bias": False, "scale": None, "relu": False}
    compute = REGISTRY["MATMUL"].compute
    expect = compute([a, b], dict(at))
    out = np.full(expect.shape, 7.0, np.float32)
    got = compute([a, b], dict(at, _out=out))
    assert got is out
    assert np.array_equal(expect.view(np.uint32), out.view(np.uint32))


@pytest.mark.parametrize("offsets", [(2, 5), (6, 90)], ids=["inside", "past_the_edge"])
def test_view_into_a_used_buffer_zeroes_what_lies_outside_the_parent(offsets):
    x = _values((9, 96), 3)
    at = {"offsets": offsets, "_out_valid": (4, 16)}
    expect = REGISTRY["VIEW"].compute([x], dict(at))
    out = np.full((4, 16), 7.0, np.float32)
    got = REGISTRY["VIEW"].compute([x], dict(at, _out=out))
    assert got is out and np.array_equal(expect.view(np.uint32), out.view(np.uint32))
