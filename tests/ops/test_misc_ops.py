"""The smaller HEAD ops against torch: ceil_div and axpy_ (elementwise), atomic_add,
interleave/deinterleave, pack/unpack and Tensor.copy (shape), plus set_print_options and
get_last_function/get_current_function, with the errors a user can cause."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pypto
from _opkit import check, kernel, rand, run
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError

DT = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16,
      torch.bfloat16: pypto.DT_BF16, torch.int32: pypto.DT_INT32, torch.int16: pypto.DT_INT16,
      torch.int8: pypto.DT_INT8, torch.uint8: pypto.DT_UINT8}
LIMIT = 1 << 24


def T(dtype=pypto.DT_FP32):
    """An annotation whose shape is taken from the argument."""
    return pypto.Tensor([], dtype)


def go(body, *tensors, tile=(4, 64), cube=None):
    """Run `body` over the given tensors (inputs and outputs alike) in a fresh kernel."""
    k = kernel(body, [f"t{i}" for i in range(len(tensors))], tile=tile, cube=cube)
    k(*tensors)
    return k


def raised_here(excinfo) -> str:
    """The error message, which must point at a line of this file."""
    msg = str(excinfo.value)
    assert "test_misc_ops.py:" in msg, msg
    return msg


# --------------------------------------------------------------------------------------------
# ceil_div

def _ceil_golden(a: torch.Tensor, b) -> torch.Tensor:
    a64 = a.long()
    b64 = b.long() if isinstance(b, torch.Tensor) else b
    return (-torch.div(-a64, b64, rounding_mode="floor")).to(a.dtype)


def test_ceil_div_matches_integer_ceiling():
    """ceil(a / b) for every sign combination, up to the +-2^24 limit, with a [m, 1] divisor
    broadcast; the method form gives the same."""
    g = torch.Generator().manual_seed(1)
    a = torch.randint(-LIMIT, LIMIT + 1, (8, 64), generator=g, dtype=torch.int32)
    a[0, :4] = torch.tensor([LIMIT, -LIMIT, 7, -7])
    b = torch.randint(1, 1000, (8, 1), generator=g, dtype=torch.int32)
    b[1::2] *= -1
    b[2, 0] = LIMIT
    check(run(lambda x, y: pypto.ceil_div(x, y), a, b), _ceil_golden(a, b))
    check(run(lambda x, y: x.ceil_div(y), a, b), _ceil_golden(a, b))
    doc = torch.tensor([[2, 4, 6]], dtype=torch.int32)
    out = run(lambda x, y: pypto.ceil_div(x, y), doc, torch.tensor([[4, 2, 5]], dtype=torch.int32),
              tile=(1, 64))
    assert out.tolist() == [[1, 2, 2]]


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32])
@pytest.mark.parametrize("divisor", [3, -4, 1])
def test_ceil_div_scalar(dtype, divisor):
    info = torch.iinfo(dtype)
    a = rand((4, 64), dtype, lo=max(info.min, -LIMIT), hi=min(info.max, LIMIT), seed=5)
    check(run(lambda x: pypto.ceil_div(x, divisor), a), _ceil_golden(a, divisor))


def test_ceil_div_runtime_range_and_zero_divisor():
    """A zero divisor or a value beyond 2^24 in a tensor is reported when the kernel runs, at the
    op's line."""
    a = torch.ones(4, 64, dtype=torch.int32)
    zero = torch.ones(4, 64, dtype=torch.int32)
    zero[2, 5] = 0
    with pytest.raises(PyptoRuntimeError, match=r"ceil_div: other holds 0") as ei:
        run(lambda x, y: pypto.ceil_div(x, y), a, zero)
    raised_here(ei)
    big = a.clone()
    big[0, 0] = LIMIT + 1
    with pytest.raises(PyptoRuntimeError, match=r"ceil_div: self holds 16777217, outside"):
        run(lambda x, y: pypto.ceil_div(x, y), big, a)


@pytest.mark.parametrize("fn,exc,text", [
    (lambda a, i: pypto.ceil_div(a, a), PyptoTypeError,
     "ceil_div: self must be a DT_INT8, DT_INT16 or DT_INT32 tensor, got DT_FP32"),
    (lambda a, i: pypto.ceil_div(i, 2.5), PyptoTypeError,
     "ceil_div: other must be a Tensor or an int, got float"),
    (lambda a, i: pypto.ceil_div(i, 0), PyptoValueError, "ceil_div: other is 0"),
    (lambda a, i: pypto.ceil_div(i, LIMIT + 1), PyptoValueError,
     "ceil_div: other = 16777217 is outside [-2^24, 2^24]"),
    (lambda a, i: pypto.ceil_div(i, pypto.cast(i, pypto.DT_INT16)), PyptoTypeError,
     "ceil_div: operands have different dtypes (DT_INT32 and DT_INT16)"),
    (lambda a, i: pypto.ceil_div(3, i), PyptoTypeError,
     "ceil_div: self must be a pypto.Tensor, got int"),
])
def test_ceil_div_errors(fn, exc, text):
    with pytest.raises(exc) as ei:
        go(lambda a, i: fn(a, i), torch.zeros(4, 64), torch.ones(4, 64, dtype=torch.int32))
    assert text in raised_here(ei)


# --------------------------------------------------------------------------------------------
# axpy_

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("alpha", [1.0, 2.5, -0.3])
def test_axpy_in_place_with_broadcast(dtype, alpha):
    """y += alpha * x in y's own buffer (a kernel output here); x [m, 1] broadcasts; alpha is
    rounded to y's dtype and the update is one FP32 computation rounded once."""
    y, x = rand((8, 64), dtype, seed=1), rand((8, 1), dtype, seed=2)
    golden = (y.float() + torch.tensor(alpha).to(dtype).float() * x.float()).to(dtype)
    seen = {}

    def body(yy, xx):
        seen["ret"] = yy.axpy_(xx, alpha=alpha) is yy

    go(body, y, x)
    check(y, golden)
    assert seen["ret"]


def test_axpy_mixed_fp32_fp16_default_alpha_and_program_order():
    """y DT_FP32 with x DT_FP16 is allowed; alpha defaults to 1.0; a read of y after the update
    sees it, a read recorded before does not."""
    y0, x = rand((4, 64), seed=3), rand((4, 64), torch.float16, seed=4)
    y = y0.clone()
    before, after = torch.zeros(4, 64), torch.zeros(4, 64)

    def body(yy, xx, b, a):
        early = yy[0:4, 0:64] * 1.0
        pypto.axpy_(yy, xx)
        b[:] = early
        a[:] = yy * 1.0

    go(body, y, x, before, after)
    check(before, y0)
    check(after, y0 + x.float())
    check(y, y0 + x.float())


def test_axpy_updates_only_the_valid_region():
    """With x valid over 5 of 8 rows only those rows of y change."""
    y, x = rand((8, 64), seed=5), rand((8, 64), seed=6)
    expect = y.clone()
    expect[:5] += 2 * x[:5]
    go(lambda yy, xx: yy.axpy_(pypto.view(xx, [8, 64], [0, 0], valid_shape=[5, 64]), 2.0),
       y, x)
    check(y, expect)


@pytest.mark.parametrize("fn,exc,text", [
    (lambda y, x, i, h: pypto.axpy_(i, i), PyptoTypeError,
     "axpy_: y must be DT_FP32, DT_FP16 or DT_BF16, got DT_INT32"),
    (lambda y, x, i, h: pypto.axpy_(h, y), PyptoTypeError,
     "axpy_: x dtype DT_FP32 cannot update a DT_FP16 y"),
    (lambda y, x, i, h: pypto.axpy_(x, y), PyptoValueError,
     "axpy_: x dim 1 (64) does not broadcast to y dim 1 (1)"),
    (lambda y, x, i, h: pypto.axpy_(y, y[0, :]), PyptoValueError,
     "axpy_: y and x must have the same rank, 1 to 4 (got 2 and 1)"),
    (lambda y, x, i, h: pypto.axpy_(y, x, alpha="2"), PyptoTypeError,
     "axpy_: alpha must be an int or float, got '2'"),
    (lambda y, x, i, h: pypto.axpy_(y, 1.0), PyptoTypeError,
     "axpy_: x must be a pypto.Tensor, got float"),
])
def test_axpy_errors(fn, exc, text):
    with pytest.raises(exc) as ei:
        go(lambda y, x, i, h: fn(y, x, i, h), torch.zeros(4, 64), torch.zeros(4, 1),
           torch.zeros(4, 64, dtype=torch.int32), torch.zeros(4, 64, dtype=torch.float16))
    assert text in raised_here(ei)


# --------------------------------------------------------------------------------------------
# atomic_add

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
def test_atomic_add_accumulates_overlapping_windows(dtype):
    """dst[i:i+4, 8:72] += src for i = 0..4 (overlapping rows accumulate, in program order);
    floats add in FP32 and round once per add."""
    dst, src = rand((8, 80), dtype, lo=-5, hi=5, seed=7), rand((4, 64), dtype, lo=-5, hi=5,
                                                                seed=8)
    expect = dst.clone()
    for i in range(5):
        region = expect[i:i + 4, 8:72]
        expect[i:i + 4, 8:72] = (region.float() + src.float()).to(dtype) if \
            dtype.is_floating_point else region + src

    def body(d, s):
        for i in pypto.loop(5, name="L", idx_name="i"):
            assert pypto.atomic_add(s, [i, 8], d) is None

    go(body, dst, src, tile=(4, 64))
    check(dst, expect)


def test_atomic_add_doc_example_and_valid_region():
    """Only the source's valid region is added (here 2 of its 4 columns)."""
    dst = torch.zeros(4, 8)
    dst[:2, :2] = 1
    src = torch.ones(4, 8)

    def body(d, s):
        pypto.atomic_add(pypto.view(s, [2, 4], [0, 0], valid_shape=[2, 2]), [0, 0], d)

    go(body, dst, src, tile=(4, 8))
    expect = torch.zeros(4, 8)
    expect[:2, :2] = 2
    check(dst, expect)


def test_atomic_add_symbolic_window_outside_destination():
    dst, src = torch.zeros(8, 64), torch.ones(4, 64)

    def body(d, s):
        for i in pypto.loop(3, name="L", idx_name="i"):
            pypto.atomic_add(s, [i * 3, 0], d)

    with pytest.raises(PyptoRuntimeError, match=r"atomic_add adds into \[6, 10\) of dim 0, "
                                                 r"outside the destination \(size 8\)") as ei:
        go(body, dst, src)
    raised_here(ei)


@pytest.mark.parametrize("fn,exc,text", [
    (lambda d, s, i: pypto.atomic_add(i, [0, 0], d), PyptoTypeError,
     "atomic_add: src dtype DT_INT32 != dst dtype DT_FP32"),
    (lambda d, s, i: pypto.atomic_add(s, [0], d), PyptoValueError,
     "atomic_add: src rank 2, dst rank 2 and 1 offsets must all match"),
    (lambda d, s, i: pypto.atomic_add(s, [6, 0], d), PyptoValueError,
     "atomic_add: window [6, 10) of dim 0 lies outside its parent (size 8)"),
    (lambda d, s, i: pypto.atomic_add(s, [0.5, 0], d), PyptoTypeError,
     "atomic_add: offsets entries must be ints"),
    (lambda d, s, i: pypto.atomic_add(s, [0, 0], 3), PyptoTypeError,
     "atomic_add: dst must be a pypto.Tensor, got int"),
])
def test_atomic_add_errors(fn, exc, text):
    with pytest.raises(exc) as ei:
        go(lambda d, s, i: fn(d, s, i), torch.zeros(8, 64), torch.zeros(4, 64),
           torch.zeros(4, 64, dtype=torch.int32))
    assert text in raised_here(ei)


# --------------------------------------------------------------------------------------------
# interleave / deinterleave

def _stream(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.stack([a, b], dim=-1).reshape(*a.shape[:-1], 2 * a.shape[-1])


def _pairs(body, ins, outs, tile):
    @pypto.frontend.jit
    def k(a: T(DT[ins[0].dtype]), b: T(DT[ins[1].dtype]), o0: T(DT[outs[0].dtype]),
          o1: T(DT[outs[1].dtype])):
        pypto.set_vec_tile_shapes(*tile)
        o0[:], o1[:] = body(a, b)

    k(*ins, *outs)


def test_interleave_doc_example():
    a = torch.arange(8.).reshape(2, 4)
    b = a + 10
    o0, o1 = torch.zeros(2, 4), torch.zeros(2, 4)
    _pairs(pypto.interleave, (a, b), (o0, o1), (2, 8))
    assert o0.tolist() == [[0, 10, 1, 11], [4, 14, 5, 15]]
    assert o1.tolist() == [[2, 12, 3, 13], [6, 16, 7, 17]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int8,
                                   torch.uint8, torch.int16, torch.int32])
def test_interleave_and_its_inverse(dtype):
    """interleave splits the stream a0 b0 a1 b1 ... at its middle; deinterleave(out0, out1)
    gives back (a, b) bit for bit, and deinterleave(stream) takes even/odd positions."""
    lo, hi = (0, 200) if dtype == torch.uint8 else (-100, 100)
    a, b = rand((2, 4, 64), dtype, lo, hi, seed=9), rand((2, 4, 64), dtype, lo, hi, seed=10)
    s = _stream(a, b)
    o0, o1 = torch.zeros_like(a), torch.zeros_like(a)
    _pairs(pypto.interleave, (a, b), (o0, o1), (2, 4, 64))
    assert torch.equal(o0, s[..., :64]) and torch.equal(o1, s[..., 64:])
    r0, r1 = torch.zeros_like(a), torch.zeros_like(a)
    _pairs(pypto.deinterleave, (o0, o1), (r0, r1), (2, 4, 64))
    assert torch.equal(r0, a) and torch.equal(r1, b)
    e0, e1 = torch.zeros_like(a), torch.zeros_like(a)
    _pairs(lambda x, _: pypto.deinterleave(x), (s, a), (e0, e1), (2, 4, 64))
    assert torch.equal(e0, a) and torch.equal(e1, b)


def test_interleave_partial_valid_region():
    """With 3 x 6 of 4 x 8 valid (and 4 x 6 for other) the stream holds 12 values per row:
    out0 is valid over 8 columns, out1 over 4; deinterleave of a 6-valid stream gives 3 even
    and 3 odd values. Rows: the smaller valid extent."""
    a, b = rand((4, 8), seed=11), rand((4, 8), seed=12)
    o0, o1 = torch.zeros(4, 8), torch.zeros(4, 8)
    d0, d1 = torch.zeros(4, 4), torch.zeros(4, 4)
    seen = {}

    def body(x, y, p, q, u, w):
        xv = pypto.view(x, [4, 8], [0, 0], valid_shape=[3, 6])
        yv = pypto.view(y, [4, 8], [0, 0], valid_shape=[4, 6])
        r0, r1 = pypto.interleave(xv, yv)
        e0, e1 = pypto.deinterleave(xv)
        seen["v"] = [[int(d) for d in t.valid_shape] for t in (r0, r1, e0, e1)]
        p[:], q[:] = pypto.fillpad(r0), pypto.fillpad(r1)
        u[:], w[:] = pypto.fillpad(e0), pypto.fillpad(e1)

    go(body, a, b, o0, o1, d0, d1, tile=(4, 8))
    assert seen["v"] == [[3, 8], [3, 4], [3, 3], [3, 3]]
    s = _stream(a[:, :6], b[:, :6])
    check(o0[:3], s[:3, :8])
    check(o1[:3, :4], s[:3, 8:])
    assert not o1[3:].any() and not o1[:, 4:].any() and not o0[3:].any()
    check(d0[:3, :3], a[:3, 0:6:2])
    check(d1[:3, :3], a[:3, 1:6:2])
    assert not d0[3:].any() and not d1[:, 3:].any()


@pytest.mark.parametrize("fn,exc,text", [
    (lambda a, b, o, i: pypto.interleave(o, o), PyptoValueError,
     "interleave: the last dim of input must be a static even size, got 7"),
    (lambda a, b, o, i: pypto.interleave(a, i), PyptoTypeError,
     "interleave: other dtype DT_INT32 != input dtype DT_FP32"),
    (lambda a, b, o, i: pypto.interleave(a, b), PyptoValueError,
     "interleave: other shape [2, 8] != input shape [4, 8]"),
    (lambda a, b, o, i: pypto.deinterleave(a, b), PyptoValueError,
     "deinterleave: other shape [2, 8] != input shape [4, 8]"),
    (lambda a, b, o, i: pypto.deinterleave(pypto.cast(a, pypto.DT_INT64)), PyptoTypeError,
     "deinterleave: input dtype DT_INT64 is not supported"),
    (lambda a, b, o, i: pypto.deinterleave(o), PyptoValueError,
     "deinterleave: the last dim of input must be a static even size, got 7"),
    (lambda a, b, o, i: pypto.interleave(a, None), PyptoTypeError,
     "interleave: other must be a pypto.Tensor, got NoneType"),
])
def test_interleave_errors(fn, exc, text):
    with pytest.raises(exc) as ei:
        go(lambda a, b, o, i: fn(a, b, o, i), torch.zeros(4, 8), torch.zeros(2, 8),
           torch.zeros(4, 7), torch.zeros(4, 8, dtype=torch.int32), tile=(4, 8))
    assert text in raised_here(ei)


# --------------------------------------------------------------------------------------------
# pack / unpack

def test_pack_doc_example_little_endian():
    x = torch.tensor([[0x03040506, 0x01050608]], dtype=torch.int32)
    out = torch.zeros(8, dtype=torch.uint8)
    go(lambda t, o: o.move(pypto.pack(t)), x, out, tile=(1, 8))
    assert out.tolist() == [6, 5, 4, 3, 8, 6, 5, 1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32,
                                   torch.int16, torch.int8, torch.uint8, torch.int64])
def test_pack_unpack_roundtrip(dtype):
    """pack gives torch's byte view of the flattened tensor; unpack reads it back exactly."""
    x = rand((2, 4, 32), dtype, seed=13) if dtype != torch.uint8 else \
        rand((2, 4, 32), dtype, lo=0, hi=255, seed=13)
    nbytes = x.numel() * x.element_size()
    packed, back = torch.zeros(nbytes, dtype=torch.uint8), torch.zeros(x.numel(), dtype=dtype)
    go(lambda t, p: p.move(pypto.pack(t)), x, packed, tile=(2, 4, 32))
    assert torch.equal(packed, x.reshape(-1).view(torch.uint8))
    go(lambda p, b: b.move(pypto.unpack(p, DT[dtype] if dtype != torch.int64 else
                                        pypto.DT_INT64)), packed, back, tile=(256,))
    assert torch.equal(back, x.reshape(-1))


def test_pack_partial_rows_and_unpack_valid_length():
    """A tensor valid over 3 of 4 rows packs to the bytes of those rows; unpacking 10 valid
    bytes as INT32 gives 2 valid elements."""
    x = rand((4, 8), torch.int32, lo=-1000, hi=1000, seed=14)
    out, n = torch.zeros(128, dtype=torch.uint8), {}

    def body(t, o):
        p = pypto.pack(pypto.view(t, [4, 8], [0, 0], valid_shape=[3, 8]))
        pypto.set_vec_tile_shapes(128)
        u = pypto.unpack(pypto.view(o, [128], [0], valid_shape=[10]), pypto.DT_INT32)
        n["p"], n["u"] = int(p.valid_shape[0]), int(u.valid_shape[0])
        o[:] = pypto.fillpad(p)

    go(body, x, out, tile=(4, 8))
    assert n == {"p": 96, "u": 2}
    assert torch.equal(out[:96], x[:3].reshape(-1).view(torch.uint8))
    assert not out[96:].any()


@pytest.mark.parametrize("fn,exc,text", [
    (lambda x, u: pypto.pack(x > 0), PyptoTypeError, "pack: dtype DT_BOOL is not supported"),
    (lambda x, u: pypto.pack(pypto.view(x, [4, 8], [0, 0], valid_shape=[4, 3])),
     PyptoValueError, "pack: the valid region [4, 3] of x (shape [4, 8]) is not a row-major"),
    (lambda x, u: pypto.unpack(x, pypto.DT_INT32), PyptoTypeError,
     "unpack: x must be a DT_UINT8 tensor, got DT_FP32"),
    (lambda x, u: pypto.unpack(u, pypto.DT_INT64), PyptoValueError,
     "unpack: the length of x (36) must be a static multiple of 8 (the size of DT_INT64)"),
    (lambda x, u: pypto.unpack(u, pypto.DT_BOOL), PyptoTypeError,
     "unpack: dtype must be one of UINT8"),
    (lambda x, u: pypto.unpack(pypto.reshape(u, [6, 6]), pypto.DT_INT8), PyptoValueError,
     "unpack: x must be 1-D, got rank 2"),
])
def test_pack_unpack_errors(fn, exc, text):
    with pytest.raises(exc) as ei:
        go(lambda x, u: fn(x, u), torch.zeros(4, 8), torch.zeros(36, dtype=torch.uint8),
           tile=(4, 8))
    assert text in raised_here(ei)


# --------------------------------------------------------------------------------------------
# Tensor.copy

def test_tensor_copy_is_a_named_clone():
    x = rand((4, 64), seed=15)
    out, orig = torch.zeros(4, 64), torch.zeros(4, 64)
    seen = {}

    def body(t, o, p):
        c = t.copy("kv_copy")
        seen["name"], seen["storage"] = c.name, c.value.storage.name
        c[0:1, :] = t[1:2, :] * 0.0  # writes the copy only
        o[:] = c
        p[:] = t

    go(body, x, out, orig)
    assert seen == {"name": "kv_copy", "storage": "kv_copy"}
    expect = x.clone()
    expect[0] = 0
    check(out, expect)
    check(orig, x)
    with pytest.raises(PyptoTypeError, match=r"copy: name must be a str, got int") as ei:
        go(lambda t: t.copy(3), x)
    raised_here(ei)


# --------------------------------------------------------------------------------------------
# set_print_options

@pytest.fixture
def restore_print_options():
    saved = pypto.get_global_config("print_options")
    yield
    pypto.set_global_config("print_options", saved)


def test_print_options_shape_printed_tensors(capsys, restore_print_options):
    """pass_verify_print formats tensors with numpy's array2string under the current options
    (defaults edgeitems=3, precision=4, threshold=10, linewidth=10)."""
    x = torch.arange(24, dtype=torch.float32).reshape(2, 12) / 3
    assert pypto.get_print_options() == {"edgeitems": 3, "precision": 4, "threshold": 10,
                                         "linewidth": 10}

    def printed():
        capsys.readouterr()
        go(lambda t: pypto.pass_verify_print("x:", t), x, tile=(2, 16))
        return capsys.readouterr().out

    default = np.array2string(x.numpy(), edgeitems=3, precision=4, threshold=10,
                              max_line_width=10)
    assert printed().endswith("x: " + default + "\n")
    pypto.set_print_options(edgeitems=1, precision=2, threshold=1000, linewidth=200)
    wide = np.array2string(x.numpy(), edgeitems=1, precision=2, threshold=1000,
                           max_line_width=200)
    assert printed().endswith("x: " + wide + "\n")
    assert "..." not in wide and "0.33" in wide and "0.3333" not in wide
    pypto.set_print_options()
    assert pypto.get_print_options()["threshold"] == 10


@pytest.mark.parametrize("kwargs,exc,text", [
    (dict(edgeitems=-1), PyptoValueError, "set_print_options: edgeitems must be >= 0, got -1"),
    (dict(linewidth=0), PyptoValueError, "set_print_options: linewidth must be >= 1, got 0"),
    (dict(precision=2.5), PyptoTypeError, "set_print_options: precision must be an int"),
    (dict(threshold=True), PyptoTypeError, "set_print_options: threshold must be an int"),
])
def test_print_options_errors(kwargs, exc, text, restore_print_options):
    with pytest.raises(exc, match=text.replace("(", r"\(")):
        pypto.set_print_options(**kwargs)
    with pytest.raises(TypeError):
        pypto.set_print_options(3)  # keyword-only


# --------------------------------------------------------------------------------------------
# get_current_function / get_last_function

def test_current_and_last_function():
    """Inside a kernel body get_current_function() is the Program being traced; after the call
    get_last_function() is that same object. A cached call does not trace and changes nothing;
    a failed trace leaves the last function alone."""
    assert pypto.get_current_function() is None
    seen = {}

    @pypto.frontend.jit
    def first(x: T(), y: T()):
        pypto.set_vec_tile_shapes(4, 64)
        seen["prog"] = pypto.get_current_function()
        seen["params"] = [p.name for p in seen["prog"].params]
        y[:] = x + 1.0

    x, y = torch.zeros(4, 64), torch.zeros(4, 64)
    first(x, y)
    prog = seen["prog"]
    assert isinstance(prog, pypto.Function) and prog.name == "first"
    assert seen["params"] == ["x", "y"]
    assert pypto.get_last_function() is prog is first.last_program
    assert [op.opcode for b in prog.blocks() for op in b.ops][:1] == ["ADDS"]
    assert pypto.get_current_function() is None

    @pypto.frontend.jit
    def second(x: T(), y: T()):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x * 2.0

    second(x, y)
    assert pypto.get_last_function() is second.last_program
    first(x, y)  # cache hit: nothing traced
    assert pypto.get_last_function() is second.last_program

    @pypto.frontend.jit
    def broken(x: T(), y: T()):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x + "a"

    with pytest.raises(PyptoTypeError):
        broken(x, y)
    assert pypto.get_last_function() is second.last_program
