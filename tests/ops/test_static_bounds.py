"""Static slice bounds (issue 13): `out[:] = x[8:24, :]` on a 16-row `x` once read a view with
8 valid rows and left rows 8..15 of `out` unwritten. The rules (ops/shape.py getitem/setitem,
view):

- negative ints and slice bounds count from the end, once (Python);
- a static bound outside the dim after that is an error while tracing, naming the tensor, the
  dim, the bounds and the user's line; it is not clamped as in torch;
- a slice assignment writes the value's extent at the slice start (PyPTO ignores the stop);
  that extent must lie inside the destination;
- `pypto.view` windows may reach past the parent's edge (a tail: only the part inside is
  valid), but a static one starting at or past the end, or an explicit valid_shape reaching
  past it, is an error;
- symbolic offsets keep their run-time window semantics (see tests/runtime/test_extent_checks)."""
import pytest
import torch

import pypto
from _opkit import check, kernel, rand

E = pypto.errors
LINE = r" \[at .*test_static_bounds\.py:\d+\]"


def go(body, *tensors, tile=(8, 16)):
    kernel(body, ["x", "out"], tile=tile)(*tensors)


@pytest.mark.parametrize("key,bounds", [
    (lambda x: x[8:24, :], r"slice \[8:24\] is out of bounds for dim 0 of 'x' \(size 16"),
    (lambda x: x[20:28, :], r"slice \[20:28\] is out of bounds for dim 0"),
    (lambda x: x[16:17], r"slice \[16:17\] is out of bounds for dim 0"),
    (lambda x: x[-20:, :], r"slice \[-20:\] is out of bounds for dim 0"),
    (lambda x: x[:, 60:70], r"slice \[60:70\] is out of bounds for dim 1 of 'x' \(size 64"),
    (lambda x: x[16, :], r"index 16 is out of bounds for dim 0"),
    (lambda x: x[-17, :], r"index -17 is out of bounds for dim 0"),
])
def test_a_static_read_out_of_bounds_is_an_error_at_the_users_line(key, bounds):
    x, out = rand((16, 64)), torch.zeros(16, 64)

    def body(t, o):
        o[:] = key(t)
    with pytest.raises(E.PyptoValueError, match=r"t\[key\]: " + bounds + r".*" + LINE):
        go(body, x, out)
    assert torch.equal(out, torch.zeros(16, 64))


def test_the_issue_13_repro_raises_instead_of_writing_half():
    x, out = rand((16, 64)), torch.zeros(16, 64)

    def body(t, o):
        o[:] = t[8:24, :] * 2.0
    with pytest.raises(E.PyptoValueError, match=r"slice \[8:24\] is out of bounds for dim 0 of "
                                                r"'x' \(size 16"):
        go(body, x, out)


def test_in_bounds_and_negative_slices_match_torch():
    x = rand((16, 64), seed=3)
    outs = [torch.zeros(16, 64) for _ in range(3)]

    def body(t, a, b, c):
        a[:8] = t[-8:, :]            # rows 8..15 into 0..7
        a[8:] = t[:-8, :]            # rows 0..7 into 8..15
        b[-1:, :] = t[0:1, :]        # a negative start writes at the end
        b[:15] = t[1:16, :]
        c[:, -16:] = t[:, 0:16]
        c[:, :48] = t[:, -48:]
    kernel(body, ["x", "a", "b", "c"], tile=(8, 16))(x, *outs)
    check(outs[0], torch.cat([x[8:], x[:8]]))
    check(outs[1], torch.cat([x[1:16], x[0:1]]))
    check(outs[2], torch.cat([x[:, 16:], x[:, :16]], dim=1))


@pytest.mark.parametrize("write,msg", [
    (lambda t, o: o.__setitem__((slice(8, 24), slice(None)), t),
     r"assemble: window \[8, 24\) of dim 0 lies outside its parent \(size 16\)"),
    (lambda t, o: o.__setitem__((slice(16, None), slice(None)), t[0:1, :]),
     r"t\[key\] = v: slice start 16 is out of bounds for dim 0 of 'out' \(size 16"),
    (lambda t, o: o.__setitem__((slice(-17, None), slice(None)), t[0:1, :]),
     r"slice start -17 is out of bounds for dim 0"),
    (lambda t, o: o.__setitem__((16, slice(None)), t[0, :]),
     r"index 16 is out of bounds for dim 0"),
    (lambda t, o: pypto.assemble(t[0:8, :], [12, 0], o),
     r"assemble: window \[12, 20\) of dim 0 lies outside"),
    (lambda t, o: pypto.assemble(t[0:8, :], [-1, 0], o), r"assemble: offset -1 of dim 0"),
])
def test_a_static_write_outside_the_destination_is_an_error(write, msg):
    x, out = rand((16, 64)), torch.zeros(16, 64)
    with pytest.raises(E.PyptoValueError, match=msg + r".*" + LINE):
        go(write, x, out)


def test_a_view_starting_past_the_end_or_with_a_valid_shape_past_it_is_an_error():
    x, out = rand((16, 64)), torch.zeros(16, 64)
    with pytest.raises(E.PyptoValueError, match=r"view: offset 16 of dim 0 of 'x' starts at "
                                                r"or past its end \(size 16\)" + LINE):
        go(lambda t, o: o.__setitem__(slice(None), pypto.view(t, [16, 64], [16, 0])), x, out)
    with pytest.raises(E.PyptoValueError, match=r"view: valid_shape\[0\] = 16 at offset 8 "
                                                r"reaches past the end of dim 0 of 'x' \(size 16\)" + LINE):
        go(lambda t, o: o.__setitem__(slice(None), pypto.view(t, [16, 64], [8, 0],
                                                                 valid_shape=[16, 64])), x, out)
    with pytest.raises(E.PyptoValueError, match=r"view: valid_shape\[1\] = -1 is negative"):
        go(lambda t, o: o.__setitem__(slice(None), pypto.view(t, [16, 64], [0, 0],
                                                                 valid_shape=[16, -1])), x, out)


def test_a_view_window_past_the_edge_is_a_tail():
    """The explicit window form keeps PyPTO's tail rule: 8 of its 16 rows are valid and a
    write of it writes those 8."""
    x, out = rand((16, 64), seed=4), torch.full((16, 64), 7.0)

    def body(t, o):
        v = pypto.view(t, [16, 64], [8, 0])
        assert [int(d) for d in v.valid_shape] == [8, 64]
        o[0:, :] = v
    go(body, x, out)
    expect = torch.full((16, 64), 7.0)
    expect[:8] = x[8:]
    check(out, expect)


def test_three_d_bounds_name_the_dim():
    x, out = rand((2, 8, 64)), torch.zeros(2, 8, 64)

    def body(t, o):
        o[:] = t[:, 4:12, :]
    with pytest.raises(E.PyptoValueError, match=r"slice \[4:12\] is out of bounds for dim 1 of "
                                                r"'x' \(size 8"):
        go(body, x, out, tile=(1, 8, 64))


def test_a_dynamic_dim_keeps_run_time_semantics():
    """On a dynamic dim the bounds are only known when the kernel runs: x[0:16] of a 12-row x
    is a window with 12 valid rows (no trace-time error)."""
    x, out = rand((12, 64), seed=5), torch.full((12, 64), 7.0)

    def body(t, o):
        o[0:, :] = t[0:16, :] * 2.0
    kernel(body, ["x", "out"], tile=(8, 64),
           shapes=[[pypto.DYNAMIC, 64], [pypto.DYNAMIC, 64]])(x, out)
    check(out, x * 2.0)


@pytest.mark.parametrize("make,msg", [
    (lambda t: pypto.full([16, 64], 1.0, pypto.DT_FP32, valid_shape=[-2, 64]),
     r"full: valid_shape\[0\] = -2 is negative"),
    (lambda t: pypto.full([16, 64], 1.0, pypto.DT_FP32, valid_shape=[16, 65]),
     r"full: valid_shape\[1\] = 65 exceeds the size 64 of dim 1"),
    (lambda t: pypto.reshape(t, [16, 64], valid_shape=[17, 64]),
     r"reshape: valid_shape\[0\] = 17 exceeds the size 16 of dim 0"),
    (lambda t: pypto.expand_clone(t[0:1, :], [16, 64], valid_shape=[16, -1]),
     r"expand_clone: valid_shape\[1\] = -1 is negative"),
])
def test_a_static_valid_shape_outside_zero_to_size_is_an_error(make, msg):
    x, out = rand((16, 64)), torch.zeros(16, 64)
    with pytest.raises(E.PyptoValueError, match=msg + LINE):
        go(lambda t, o: o.__setitem__(slice(None), make(t) * 1.0), x, out, tile=(8, 64))


def test_a_run_time_element_write_outside_the_tensor_is_an_error():
    """t[i, j] = v with a symbolic i: numpy would wrap i = -1 to the last row."""
    @pypto.frontend.jit
    def k(n: pypto.Tensor([1, 8], pypto.DT_INT32), out: pypto.Tensor([4, 8], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[n[0, 0], 1] = 5
    out = torch.zeros(4, 8, dtype=torch.int32)
    k(torch.full((1, 8), 2, dtype=torch.int32), out)
    assert out[2, 1] == 5 and out.sum() == 5
    with pytest.raises(E.PyptoRuntimeError, match=r"t\[i, j\] = v: index \[-1, 1\] is outside "
                                                  r"the tensor's shape \[4, 8\]" + LINE):
        k(torch.full((1, 8), -1, dtype=torch.int32), out)
