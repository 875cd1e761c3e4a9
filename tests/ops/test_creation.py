"""Creation ops against torch: full (number, Element, SymbolicScalar fill, valid_shape for
tails), zeros/ones (both size forms, default FP32) and arange (INT32 for ints, FP32 for floats,
length ceil((end - start) / step))."""
from __future__ import annotations

import pytest
import torch

import pypto
from _opkit import DTYPES, FLOATS, check, kernel


def make(fn, shape, dtype, tile=None):
    """out[:] = fn() in a kernel whose only parameter is the output."""
    out = torch.full(tuple(shape), 7, dtype=dtype)

    def body(o):
        o[:] = fn()

    kernel(body, ["out"], tile=tile or ((4,) * (len(shape) - 1) + (64,)))(out)
    return out


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int8])
def test_full(dtype):
    """full(size, value, dtype) fills every element; an int value fills a float tensor and an
    Element carries its value."""
    check(make(lambda: pypto.full([4, 64], 3, DTYPES[dtype]), (4, 64), dtype),
          torch.full((4, 64), 3, dtype=dtype))
    if dtype.is_floating_point:
        check(make(lambda: pypto.full([2, 4, 64], -1.25, DTYPES[dtype]), (2, 4, 64), dtype),
              torch.full((2, 4, 64), -1.25, dtype=dtype))
        e = pypto.Element(DTYPES[dtype], 0.5)
        check(make(lambda: pypto.full([4, 64], e, DTYPES[dtype]), (4, 64), dtype),
              torch.full((4, 64), 0.5, dtype=dtype))


def test_full_symbolic_value_and_size():
    """The fill value may be a SymbolicScalar read at run time (here a dynamic dim); sizes of
    rank 1 to 4 are accepted."""
    x = torch.zeros(5, 64)
    out = torch.zeros(4, 64, dtype=torch.int32)

    def body(t, o):
        o[:] = pypto.full([4, 64], t.shape[0] * 2, pypto.DT_INT32)

    kernel(body, ["t", "o"], shapes=[[pypto.DYNAMIC, 64], []], tile=(4, 64))(x, out)
    assert (out == 10).all()
    check(make(lambda: pypto.full([64], 2.0, pypto.DT_FP32), (64,), torch.float32),
          torch.full((64,), 2.0))
    check(make(lambda: pypto.full([1, 2, 4, 64], 1.0, pypto.DT_FP32), (1, 2, 4, 64),
               torch.float32), torch.ones(1, 2, 4, 64))


def test_full_valid_shape_for_tails():
    """full(..., valid_shape=[min(16, N - i), 64]) inside a loop over a DYNAMIC dim fills only
    the valid rows of the last block; assembling it writes exactly N rows."""
    x = torch.zeros(37, 64)
    out = torch.full((37, 64), 7.0)

    def body(t, o):
        n = t.shape[0]
        for i in pypto.loop(0, n, 16, name="rows", idx_name="i"):
            f = pypto.full([16, 64], 2.5, pypto.DT_FP32, valid_shape=[(n - i).min(16), 64])
            o[i:, :] = f + t[i:i + 16, :]

    kernel(body, ["t", "o"], shapes=[[pypto.DYNAMIC, 64]] * 2, tile=(8, 64))(x, out)
    check(out, torch.full((37, 64), 2.5))


@pytest.mark.parametrize("form", ["args", "list"])
def test_zeros_ones(form):
    """zeros(2, 3) and zeros([2, 3]) are the same; the default dtype is FP32; dtype= overrides."""
    def size(*dims):
        return dims if form == "args" else (list(dims),)

    check(make(lambda: pypto.zeros(*size(4, 64)), (4, 64), torch.float32), torch.zeros(4, 64))
    check(make(lambda: pypto.ones(*size(4, 64)), (4, 64), torch.float32), torch.ones(4, 64))
    check(make(lambda: pypto.ones(*size(4, 64), dtype=pypto.DT_BF16), (4, 64), torch.bfloat16),
          torch.ones(4, 64, dtype=torch.bfloat16))
    check(make(lambda: pypto.zeros(*size(4, 64), dtype=pypto.DT_INT32), (4, 64), torch.int32),
          torch.zeros(4, 64, dtype=torch.int32))


ARANGE = [((64,), torch.int32), ((3, 67), torch.int32), ((0, 128, 2), torch.int32),
          ((10, -54, -1), torch.int32), ((0, 10, 3), torch.int32),
          ((0.0, 6.4, 0.1), torch.float32), ((-1, 1.0, 0.03125), torch.float32),
          ((2.5,), torch.float32)]


@pytest.mark.parametrize("args,dtype", ARANGE, ids=[str(a) for a, _ in ARANGE])
def test_arange(args, dtype):
    """arange(end) / (start, end) / (start, end, step): INT32 when all ints, else FP32; length
    ceil((end - start) / step); values start + i*step, like torch.arange."""
    golden = torch.arange(*args, dtype=torch.float64).to(dtype)
    seen = {}

    def fn():
        t = pypto.arange(*args)
        seen["dtype"] = t.dtype
        return t

    out = make(fn, golden.shape, dtype, tile=(64,))
    assert seen["dtype"] == DTYPES[dtype]
    check(out, golden, rtol=0, atol=1e-6)


def test_creation_errors():
    """Bad sizes, values and ranges are pypto errors naming the op and the user's line."""
    E = pypto.errors
    with pytest.raises(E.PyptoValueError, match=r"arange\(0, 5, -1\) is empty.*test_creation"):
        make(lambda: pypto.arange(0, 5, -1), (5,), torch.int32, tile=(64,))
    with pytest.raises(E.PyptoValueError, match=r"arange"):
        make(lambda: pypto.arange(0, 5, 0), (5,), torch.int32, tile=(64,))
    with pytest.raises(E.PyptoTypeError, match=r"arange bounds must be numbers"):
        make(lambda: pypto.arange("5"), (5,), torch.int32, tile=(64,))
    with pytest.raises(E.PyptoTypeError, match=r"arange dtype must be a pypto.DataType"):
        make(lambda: pypto.arange(64, dtype="int32"), (64,), torch.int32, tile=(64,))
    with pytest.raises(E.PyptoTypeError, match=r"full dtype must be a pypto.DataType"):
        make(lambda: pypto.full([4, 64], 1, torch.float32), (4, 64), torch.float32)
    with pytest.raises(E.PyptoTypeError, match=r"full: fill_value must be"):
        make(lambda: pypto.full([4, 64], "1", pypto.DT_FP32), (4, 64), torch.float32)
    with pytest.raises(E.PyptoValueError, match=r"full: size must have rank 1 to 4"):
        make(lambda: pypto.full([1, 1, 1, 4, 64], 1.0, pypto.DT_FP32), (1, 1, 1, 4, 64),
             torch.float32)
    with pytest.raises(E.PyptoValueError, match=r"full: size dims must be > 0"):
        make(lambda: pypto.full([0, 64], 1.0, pypto.DT_FP32), (4, 64), torch.float32)
