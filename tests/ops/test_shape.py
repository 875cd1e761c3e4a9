"""Views, writes and layout ops against torch: view/assemble, the `t[key]` and `t[key] = v`
rules of api_surface §3 (int index drops its dim, slice assignment ignores the stop, `t[:] = v`
is a move, `...`, negative indices), reshape (incl. inplace aliasing of a kernel output),
transpose/permute/unsqueeze/squeeze/concat/expand_clone/clone/pad/fillpad, and tails."""
from __future__ import annotations

import pytest
import torch

import pypto
from _opkit import FLOATS, check, kernel, rand, run

E = pypto.errors
DYN = [pypto.DYNAMIC, ...]


def go(body, *tensors, shapes=None, tile=(4, 64)):
    """Run `body` over the given tensors (inputs and outputs alike) in a fresh kernel."""
    kernel(body, [f"t{i}" for i in range(len(tensors))], shapes=shapes, tile=tile)(*tensors)
    return tensors


# --------------------------------------------------------------------------------------------
# view and assemble

def test_view_window_and_valid_shape():
    """view(x, shape, offsets) reads a static window; its valid shape defaults to the part inside
    the parent's valid region and can be given explicitly (padding reads as 0)."""
    x = rand((16, 64), seed=1)
    o1, o2 = torch.full((4, 32), 7.0), torch.full((8, 64), 7.0)
    seen = {}

    def body(t, a, b):
        v = pypto.view(t, [4, 32], [3, 16])
        seen["v"] = [int(d) for d in v.valid_shape]
        a[:] = v
        w = pypto.view(t, [8, 64], [12, 0])  # rows 12..20 of 16: past the edge, 4 valid
        seen["w"] = [int(d) for d in w.valid_shape]
        b[:] = pypto.fillpad(pypto.view(t, [8, 64], [0, 0], valid_shape=[2, 40]), value=0.0)
        b[4:, :] = w  # writes its 4 valid rows

    go(body, x, o1, o2)
    check(o1, x[3:7, 16:48])
    assert seen == {"v": [4, 32], "w": [4, 64]}
    expect = torch.zeros(8, 64)
    expect[:2, :40] = x[:2, :40]
    expect[4:] = x[12:]
    check(o2, expect)


def test_static_tail_slices_in_a_python_loop():
    """A Python `for` unrolls: on a static 37-row tensor the last slice is x[32:37] (5 rows),
    and `y[32:, :] = ...` writes exactly those. x[32:48] (past the edge) is an error, not the
    5-row slice torch would clamp it to (issue 13); a window past the edge is pypto.view's."""
    x = rand((37, 64), seed=30)
    out = torch.full((37, 64), 7.0)

    def body(t, o):
        for i in range(0, 37, 16):
            o[i:, :] = t[i:min(i + 16, 37), :] * 2.0

    go(body, x, out)
    check(out, x * 2)

    def tail_past_the_edge(t, o):
        for i in range(0, 37, 16):
            o[i:, :] = t[i:i + 16, :] * 2.0
    with pytest.raises(E.PyptoValueError, match=r"t\[key\]: slice \[32:48\] is out of bounds "
                                                r"for dim 0 of 't0' \(size 37.*test_shape\.py:\d+"):
        go(tail_past_the_edge, x, out)


def test_view_symbolic_offsets():
    """Offsets may be SymbolicScalars (loop indices); a view's shape must be static ints."""
    x = rand((32, 64), seed=2)
    out = torch.full((32, 64), 7.0)

    def body(t, o):
        for i in pypto.loop(0, 32, 8, name="L", idx_name="i"):
            o[i:, :] = pypto.view(t, [8, 64], [i, 0]) * 2.0

    go(body, x, out)
    check(out, x * 2)
    with pytest.raises(E.PyptoValueError, match=r"view: shape must be static ints"):
        go(lambda t: pypto.view(t, [t.shape[0], 64], [0, 0]), x, shapes=[DYN])


def test_view_errors():
    """A negative offset, a valid_shape larger than the view, or a wrong entry count is a pypto
    ValueError naming view and the user's line (a window past the edge is a legal tail)."""
    x = rand((16, 64))
    with pytest.raises(E.PyptoValueError, match=r"view: offset -1 of dim 0 is negative"
                                                r".*test_shape\.py:\d+"):
        go(lambda t: pypto.view(t, [2, 64], [-1, 0]), x)
    with pytest.raises(E.PyptoValueError, match=r"view: valid_shape\[1\] = 80 exceeds"):
        go(lambda t: pypto.view(t, [8, 64], [0, 0], valid_shape=[8, 80]), x)
    with pytest.raises(E.PyptoValueError, match=r"view: shape \[8\] and offsets need 2"):
        go(lambda t: pypto.view(t, [8], [0]), x)


def test_view_dtype_reinterprets_bytes():
    """view(x, dtype=) reinterprets the bytes; the last dim scales by the size ratio."""
    x = rand((4, 64), seed=3)
    out = torch.zeros(4, 128, dtype=torch.int16)
    go(lambda t, o: o.move(pypto.view(t, dtype=pypto.DT_INT16)), x, out)
    check(out, x.view(torch.int16))


def test_assemble_forms():
    """assemble(src, offsets, dst) copies src's valid region into dst at offsets (returns None);
    the list form writes several pieces; Tensor.assemble forwards."""
    a, b = rand((4, 64), seed=4), rand((4, 32), seed=5)
    out = torch.full((8, 64), 7.0)
    ret = {}

    def body(x, y, o):
        ret["r"] = pypto.assemble(x, [4, 0], o)
        pypto.assemble([(y, [0, 0]), (y, [0, 32])], o)
        o.assemble(pypto.view(x, [4, 64], [0, 0], valid_shape=[1, 64]), [3, 0])

    go(body, a, b, out)
    assert ret["r"] is None
    expect = torch.cat([torch.cat([b, b], 1), a])
    expect[3] = a[0]
    check(out, expect)


def test_assemble_errors():
    """Rank or dtype mismatches and static windows outside dst are pypto errors; an
    out-of-range write with a runtime offset is caught when the op runs."""
    a, out = rand((4, 64)), torch.zeros(8, 64)
    with pytest.raises(E.PyptoValueError, match=r"assemble: src rank 1, dst rank 2"):
        go(lambda x, o: pypto.assemble(x[0, :], [0, 0], o), a, out)
    with pytest.raises(E.PyptoTypeError, match=r"assemble: src dtype DT_INT32 != dst dtype"):
        go(lambda x, o: pypto.assemble(pypto.cast(x, pypto.DT_INT32), [0, 0], o), a, out)
    with pytest.raises(E.PyptoValueError, match=r"assemble: window \[6, 10\) of dim 0"):
        go(lambda x, o: pypto.assemble(x, [6, 0], o), a, out)

    def body(x, o):
        for i in pypto.loop(0, 2, name="L", idx_name="i"):
            pypto.assemble(x, [i * 6, 0], o)

    with pytest.raises(E.PyptoRuntimeError, match=r"assemble writes \[6, 10\) of dim 0"):
        go(body, a, out)


# --------------------------------------------------------------------------------------------
# t[key]

def test_getitem_slices_ints_ellipsis_negative():
    """Slices view (size = stop - start); an int index drops its dim (a[1, 1:3] has shape [2]);
    `...` expands; negative ints and bounds count from the end."""
    x = rand((4, 8, 64), seed=6)
    cases = [
        (lambda t: t[1:3, 2:6, 16:48], lambda t: t[1:3, 2:6, 16:48]),
        (lambda t: t[1, 2:6, :], lambda t: t[1, 2:6, :]),
        (lambda t: t[1, 2], lambda t: t[1, 2]),
        (lambda t: t[..., 0:32], lambda t: t[..., 0:32]),
        (lambda t: t[2, ...], lambda t: t[2, ...]),
        (lambda t: t[-1, -3:, :-32], lambda t: t[-1, -3:, :-32]),
        (lambda t: t[1:2], lambda t: t[1:2]),
        (lambda t: t[:, -1], lambda t: t[:, -1]),
    ]
    for fn, ref in cases:
        golden = ref(x)
        tile = (4,) * (golden.dim() - 1) + (64,)
        check(run(fn, x, out_shape=golden.shape, tile=tile), golden)


def test_getitem_shapes_and_identity():
    """`t[:]` returns t itself; `a[1, 1:3]` has shape [2]; x[i*T:(i+1)*T] has size T."""
    seen = {}

    def body(t, o):
        seen["same"] = t[:] is t and t[:, :] is t
        seen["a"] = t[1, 1:3].shape
        for i in pypto.loop(0, 2, name="L", idx_name="i"):
            v = t[i * 2:(i + 1) * 2, :]
            seen["T"] = v.shape
            o[i * 2:, :] = v

    x = rand((4, 64), seed=7)
    out = torch.zeros(4, 64)
    go(body, x, out)
    assert seen == {"same": True, "a": [2], "T": [2, 64]}
    check(out, x)


def test_getitem_errors():
    """Steps other than 1, empty slices, too many indices, a non-static slice size on a dynamic
    dim, and a scalar read of a float tensor are pypto errors."""
    x = rand((4, 64))
    with pytest.raises(E.PyptoValueError, match=r"slice step must be 1"):
        go(lambda t: t[::2], x)
    with pytest.raises(E.PyptoValueError, match=r"slice of dim 0 is empty"):
        go(lambda t: t[2:2], x)
    with pytest.raises(E.PyptoValueError, match=r"too many indices"):
        go(lambda t: t[0, 0, 0], x)
    with pytest.raises(E.PyptoValueError, match=r"does not simplify to an int"):
        go(lambda t: t[1:, :], x, shapes=[DYN])
    with pytest.raises(E.PyptoTypeError, match=r"reading one element of a DT_FP32"):
        go(lambda t: t[0, 0], x)
    with pytest.raises(E.PyptoTypeError, match=r"must be an int or SymbolicScalar"):
        go(lambda t: t[0.5], x)


def test_getitem_full_int_index_reads_a_scalar():
    """A full int index of an INT32 tensor is a SymbolicScalar read at run time (glm's
    `kv_act_seqs[b]`): here it sizes a loop and fills a tensor."""
    idx = torch.tensor([[3, 5, 2, 9] * 16], dtype=torch.int32)
    out = torch.zeros(4, 64, dtype=torch.int32)

    def body(t, o):
        o[:] = pypto.full([4, 64], t[0, 1] * 10 + t[0, -1], pypto.DT_INT32)
        for _ in pypto.loop(t[0, 0], name="L"):
            o[:] = o + 1

    go(body, idx, out)
    assert (out == 59 + 3).all()


# --------------------------------------------------------------------------------------------
# t[key] = v

def test_setitem_ignores_stop():
    """Slice assignment writes v's extent at the slice start: `out[b:, ...] = v` and
    `out[b:b+1, ...] = v` are the same; a stop-only slice starts at 0."""
    v = rand((2, 64), seed=8)
    outs = [torch.full((6, 64), 7.0) for _ in range(4)]

    def body(x, o1, o2, o3, o4):
        o1[3:, ...] = x
        o2[3:4, ...] = x
        o3[3:100, :] = x
        o4[:6, :] = pypto.full([6, 64], 1.0, pypto.DT_FP32)  # offset 0

    go(body, v, *outs)
    expect = torch.full((6, 64), 7.0)
    expect[3:5] = v
    for o in outs[:3]:
        check(o, expect)
    check(outs[3], torch.ones(6, 64))


def test_setitem_move_and_negative_start():
    """`t[:] = v` and `t[...] = v` replace the whole tensor (a move; no broadcast, shapes must
    match); a negative start counts from the end; int indices insert size-1 dims."""
    v = rand((4, 64), seed=9)
    o1, o2, o3 = torch.zeros(4, 64), torch.zeros(4, 64), torch.full((3, 4, 64), 7.0)

    def body(x, a, b, c):
        a[:] = x
        b[...] = x * 2
        c[-1, :, :] = x      # v rank 2 == number of slices
        c[0, 1:, :] = x[0:1, :]

    go(body, v, o1, o2, o3, tile=(4, 64))
    check(o1, v)
    check(o2, v * 2)
    expect = torch.full((3, 4, 64), 7.0)
    expect[2] = v
    expect[0, 1] = v[0]
    check(o3, expect)
    with pytest.raises(E.PyptoValueError, match=r"move: source shape .* does not match"):
        go(lambda x, a: a.__setitem__(slice(None), x[0:2, :]), v, o1)
    with pytest.raises(E.PyptoValueError, match=r"the value has rank 2 but the index has 1"):
        go(lambda x, c: c.__setitem__((0, 1, slice(None)), x), v, o3)


def test_setitem_element():
    """An all-int assignment sets one element (SetTensorData)."""
    out = torch.zeros(4, 64, dtype=torch.int32)

    def body(o):
        o[:] = pypto.full([4, 64], 1, pypto.DT_INT32)
        o[2, 5] = 42
        o[-1, -1] = 7

    go(body, out)
    expect = torch.ones(4, 64, dtype=torch.int32)
    expect[2, 5], expect[-1, -1] = 42, 7
    check(out, expect)


def test_move_method_and_fill():
    """`t.move(v)` is `t[:] = v`; `t.fill_(v)` moves a full tensor of v."""
    x = rand((4, 64), seed=10)
    o1, o2 = torch.zeros(4, 64), torch.zeros(4, 64)

    def body(t, a, b):
        a.move(t + 1.0)
        b.fill_(2.5)

    go(body, x, o1, o2)
    check(o1, x + 1)
    check(o2, torch.full((4, 64), 2.5))


# --------------------------------------------------------------------------------------------
# reshape

@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
def test_reshape(dtype):
    """reshape keeps row-major order; one -1 is inferred; unsqueeze/squeeze add/drop 1s."""
    x = rand((4, 8, 64), dtype, seed=11)
    check(run(lambda t: pypto.reshape(t, [32, 64]), x, out_shape=(32, 64), tile=(4, 64)),
          x.reshape(32, 64))
    check(run(lambda t: t.reshape([2, -1, 64]), x, out_shape=(2, 16, 64)), x.reshape(2, 16, 64))
    check(run(lambda t: pypto.unsqueeze(t, 1), x, out_shape=(4, 1, 8, 64), tile=(1, 1, 4, 64)),
          x.unsqueeze(1))
    check(run(lambda t: pypto.unsqueeze(t, -1), x, out_shape=(4, 8, 64, 1), tile=(1, 1, 4, 64)),
          x.unsqueeze(-1))
    y = x.reshape(4, 1, 8, 64)
    check(run(lambda t: pypto.squeeze(t, 1), y, out_shape=(4, 8, 64)), x)
    check(run(lambda t: pypto.squeeze(t), y.reshape(1, 4, 1, 8, 64)[0], out_shape=(4, 8, 64)), x)


def test_reshape_inplace_aliases_kernel_output():
    """`reshape(out, shape, inplace=True)` aliases the output's buffer: writes through the
    reshaped tensor land in the kernel output (symbolic dims allowed)."""
    x = rand((6, 64), seed=12)
    out = torch.zeros(3, 2, 64)

    def body(t, o):
        flat = pypto.reshape(o, [o.shape[0] * 2, 64], inplace=True)
        flat[0:, :] = t * 3.0
        flat[4:, :] = t[0:2, :]

    go(body, x, out, shapes=[[pypto.DYNAMIC, 64], [pypto.DYNAMIC, 2, 64]])
    expect = (x * 3).reshape(3, 2, 64)
    expect[2] = x[0:2]
    check(out, expect)


def test_reshape_of_a_tail_view_keeps_valid_rows():
    """Reshaping a partial view maps its valid rows (here [min(16, N-i), 64] -> [.., 2, 32] and
    -> [.. * 2, 32]), so the tail writes exactly N rows."""
    x = rand((37, 64), seed=13)
    o1, o2 = torch.full((37, 2, 32), 7.0), torch.full((74, 32), 7.0)

    def body(t, a, b):
        n = t.shape[0]
        for i in pypto.loop(0, n, 16, name="rows", idx_name="i"):
            v = t[i:i + 16, :]
            a[i:, :, :] = pypto.reshape(v, [16, 2, 32])
            b[i * 2:, :] = pypto.reshape(v, [32, 32])

    go(body, x, o1, o2, shapes=[DYN] * 3)
    check(o1, x.reshape(37, 2, 32))
    check(o2, x.reshape(74, 32))


def test_reshape_errors():
    """Element-count mismatches, two -1s, symbolic dims without inplace, and a partial valid
    region without a rectangular image are pypto ValueErrors naming reshape."""
    x = rand((4, 64))
    with pytest.raises(E.PyptoValueError, match=r"reshape: cannot reshape \(4, 64\)"):
        go(lambda t: pypto.reshape(t, [3, 64]), x)
    with pytest.raises(E.PyptoValueError, match=r"only one -1"):
        go(lambda t: pypto.reshape(t, [-1, -1]), x)
    with pytest.raises(E.PyptoValueError, match=r"inplace=False needs an all-int shape"):
        go(lambda t: pypto.reshape(t, [t.shape[0], 64]), x, shapes=[DYN])
    with pytest.raises(E.PyptoValueError, match=r"reshape: the input's valid shape"):
        go(lambda t: pypto.reshape(pypto.view(t, [4, 64], [0, 0], valid_shape=[4, 5]), [256]),
           x)


# --------------------------------------------------------------------------------------------
# transpose, permute, concat, expand_clone, clone, pad, fillpad

@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
def test_transpose_permute(dtype):
    """transpose swaps two dims (negative allowed; in 4-D only the hardware's pairs (0,2),
    (1,3), (2,3), (1,2), or a no-op); permute reorders all dims."""
    x = rand((2, 4, 8, 64), dtype, seed=14)
    t4 = (1, 2, 4, 64)
    for d0, d1 in [(2, 3), (1, 3), (0, 2), (1, 2), (-1, -2)]:
        golden = x.transpose(d0, d1)
        check(run(lambda t: pypto.transpose(t, d0, d1), x, out_shape=golden.shape, tile=t4),
              golden)
    golden = x.permute(3, 0, 2, 1)
    check(run(lambda t: pypto.permute(t, [3, 0, 2, 1]), x, out_shape=golden.shape, tile=t4),
          golden)
    y = rand((8, 64), dtype, seed=15)
    check(run(lambda t: t.transpose(0, 1), y, out_shape=(64, 8), tile=(8, 64)), y.t())
    with pytest.raises(E.PyptoTypeError, match=r"use pypto.permute"):
        run(lambda t: pypto.transpose(t, [0, 1, 3, 2]), x, tile=t4)
    with pytest.raises(E.PyptoValueError, match=r"transpose: dims \(0, 1\) cannot be swapped"):
        run(lambda t: pypto.transpose(t, 0, 1), x, out_shape=(4, 2, 8, 64), tile=t4)
    check(run(lambda t: pypto.transpose(t, 0, 0), x, tile=t4), x)
    with pytest.raises(E.PyptoValueError, match=r"permute: \[0, 0, 1, 2\] is not a permutation"):
        run(lambda t: pypto.permute(t, [0, 0, 1, 2]), x, tile=t4)


def test_transpose_of_partial_view():
    """The valid shape is permuted with the data: a [16,64] view with 5 valid rows transposes
    to [64,16] with 5 valid columns."""
    x = rand((16, 64), seed=16)
    out = torch.full((64, 16), 7.0)
    go(lambda t, o: o.__setitem__((slice(0, None), slice(0, None)), pypto.transpose(
        pypto.view(t, [16, 64], [0, 0], valid_shape=[5, 64]), 0, 1)), x, out, tile=(16, 16))
    expect = torch.full((64, 16), 7.0)
    expect[:, :5] = x[:5].t()
    check(out, expect)


@pytest.mark.parametrize("dtype", FLOATS)
def test_concat(dtype):
    """concat joins 2..128 tensors of one dtype/rank along dim (negative allowed)."""
    a, b, c = (rand((4, 64), dtype, seed=s) for s in (17, 18, 19))
    check(run(lambda x, y, z: pypto.concat([x, y, z], 0), a, b, c, out_shape=(12, 64)),
          torch.cat([a, b, c], 0))
    d = rand((4, 32), dtype, seed=20)
    check(run(lambda x, y: pypto.concat([x, y], -1), a, d, out_shape=(4, 96)),
          torch.cat([a, d], -1))
    with pytest.raises(E.PyptoValueError, match=r"concat: tensors\[1\] dim 0 is 8"):
        run(lambda x, y: pypto.concat([x, y], 1), a, rand((8, 64), dtype), out_shape=(4, 128))
    with pytest.raises(E.PyptoValueError, match=r"concat takes a list of 2 to 128"):
        run(lambda x: pypto.concat([x], 0), a)


def test_concat_tail():
    """Concatenating partial views along dim 1 keeps their common valid rows."""
    a, b = rand((37, 64), seed=21), rand((37, 64), seed=22)
    out = torch.full((37, 128), 7.0)

    def body(x, y, o):
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="rows", idx_name="i"):
            o[i:, :] = pypto.concat([x[i:i + 16, :], y[i:i + 16, :]], 1)

    go(body, a, b, out, shapes=[DYN] * 3, tile=(8, 64))
    check(out, torch.cat([a, b], 1))


def test_concat_partial_last_part_along_dim():
    """Each part sits at a fixed offset along the concat dim: a partial last part makes the
    result end at its valid extent (here 16 + 5 rows are written)."""
    a, b = rand((16, 64), seed=27), rand((16, 64), seed=28)
    out = torch.full((32, 64), 7.0)

    def body(x, y, o):
        c = pypto.concat([x, pypto.view(y, [16, 64], [0, 0], valid_shape=[5, 64])], 0)
        o[0:, :] = c

    go(body, a, b, out)
    expect = torch.full((32, 64), 7.0)
    expect[:16], expect[16:21] = a, b[:5]
    check(out, expect)


def test_expand_clone_valid_shape():
    """expand_clone(x, shape, valid_shape=) produces only the given valid region."""
    x = rand((1, 64), seed=29)
    out = torch.full((8, 64), 7.0)
    go(lambda t, o: o.__setitem__((slice(0, None), slice(0, None)), pypto.expand_clone(
        t, [8, 64], valid_shape=[3, 40])), x, out)
    expect = torch.full((8, 64), 7.0)
    expect[:3, :40] = x[:, :40]
    check(out, expect)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
def test_expand_clone_and_clone(dtype):
    """expand_clone materialises a broadcast of size-1 dims (same rank); clone copies."""
    x = rand((1, 64), dtype, seed=23)
    check(run(lambda t: pypto.expand_clone(t, [8, 64]), x, out_shape=(8, 64)), x.expand(8, 64))
    y = rand((4, 1, 64), dtype, seed=24)
    check(run(lambda t: pypto.expand_clone(t, [4, 8, 64]), y, out_shape=(4, 8, 64)),
          y.expand(4, 8, 64))
    check(run(lambda t: pypto.clone(t), y), y)
    with pytest.raises(E.PyptoValueError, match=r"expand_clone: dim 1 of size 64 cannot"):
        run(lambda t: pypto.expand_clone(t, [8, 128]), x, out_shape=(8, 128))


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
def test_pad(dtype):
    """pad adds right/bottom padding only, (0, r) or (0, r, 0, b), filled with `value`."""
    x = rand((4, 64), dtype, seed=25)
    v = 3 if dtype == torch.int32 else 1.5
    check(run(lambda t: pypto.pad(t, (0, 64)), x, out_shape=(4, 128)),
          torch.nn.functional.pad(x, (0, 64)))
    check(run(lambda t: pypto.pad(t, [0, 64, 0, 3], value=v), x, out_shape=(7, 128)),
          torch.nn.functional.pad(x, (0, 64, 0, 3), value=v))
    with pytest.raises(E.PyptoValueError, match=r"pad: only right/bottom padding"):
        run(lambda t: pypto.pad(t, (1, 0)), x)
    with pytest.raises(E.PyptoValueError, match=r"pad: only mode='constant'"):
        run(lambda t: pypto.pad(t, (0, 1), mode="reflect"), x)
    with pytest.raises(E.PyptoTypeError, match=r"pad: pad must be a tuple of non-negative"):
        run(lambda t: pypto.pad(t, 3), x)
    with pytest.raises(E.PyptoTypeError, match=r"pad: value must be an int or float"):
        run(lambda t: pypto.pad(t, (0, 1), value="0"), x)
    with pytest.raises(E.PyptoTypeError, match=r"fillpad: value must be an int or float"):
        run(lambda t: pypto.fillpad(t, value=None), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_fillpad(dtype):
    """fillpad fills the area outside the valid shape with `value`; the shape is unchanged and
    the whole tensor becomes valid (so the fill reaches the output)."""
    x = rand((8, 64), dtype, seed=26)
    out = torch.zeros(8, 64, dtype=dtype)

    def body(t, o):
        o[:] = pypto.fillpad(pypto.view(t, [8, 64], [0, 0], valid_shape=[3, 50]), value=-1.0)

    go(body, x, out)
    expect = torch.full((8, 64), -1.0, dtype=dtype)
    expect[:3, :50] = x[:3, :50]
    check(out, expect)


def test_shape_op_errors_name_the_op():
    """Dims out of range and non-tensor inputs are pypto errors naming the op."""
    x = rand((4, 64))
    with pytest.raises(E.PyptoValueError, match=r"transpose: dim 2 is out of range"):
        run(lambda t: pypto.transpose(t, 0, 2), x)
    with pytest.raises(E.PyptoValueError, match=r"unsqueeze: dim 3 is out of range"):
        run(lambda t: pypto.unsqueeze(t, 3), x)
    with pytest.raises(E.PyptoTypeError, match=r"clone: input must be a pypto.Tensor"):
        run(lambda t: pypto.clone(2.0), x)
