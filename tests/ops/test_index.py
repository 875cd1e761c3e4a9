"""Index ops (gather, index_select, scatter*, index_add*, index_put_, topk, argsort, triu/tril,
one_hot, gathermask) against torch, including tail tiles and the errors a user can cause."""
import numpy as np
import pytest
import torch

import pypto
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError

DT = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16,
      torch.bfloat16: pypto.DT_BF16, torch.int32: pypto.DT_INT32}
FLOATS = [torch.float32, torch.float16, torch.bfloat16]
ALL = FLOATS + [torch.int32]
I32, I64 = pypto.DT_INT32, pypto.DT_INT64


def T(dtype=pypto.DT_FP32):
    """An annotation whose shape is taken from the argument."""
    return pypto.Tensor([], dtype)


def rand(shape, dtype):
    if dtype == torch.int32:
        return torch.randint(-50, 50, shape, dtype=torch.int32)
    return torch.randn(shape).to(dtype)


def distinct(shape, dtype):
    """Values without ties along the last axis (exact in FP16/BF16), for topk goldens."""
    n = shape[-1]
    rows = torch.stack([torch.randperm(n) for _ in range(int(np.prod(shape[:-1])))])
    vals = rows.reshape(shape) - n // 2
    return vals.to(dtype) if dtype == torch.int32 else (vals.float() / n).to(dtype)


def unique_index(shape, dim, size, dtype=torch.int32):
    """An index of `shape` whose entries are distinct along `dim` (values < size)."""
    full = list(shape)
    full[dim] = size
    idx = torch.rand(full).argsort(dim=dim)
    return idx.narrow(dim, 0, shape[dim]).to(dtype).contiguous()


def where_raised(excinfo):
    msg = str(excinfo.value)
    assert "test_index.py:" in msg, msg
    return msg


# --------------------------------------------------------------------------------------------
# gather / index_select

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_torch(dtype, dim):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), idx: T(I32), y: T(DT[dtype])):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = pypto.gather(x, dim, idx)

    x = rand((12, 32), dtype)
    idx = torch.randint(0, x.shape[dim], (10, 16), dtype=torch.int32)
    y = torch.zeros(10, 16, dtype=dtype)
    k(x, idx, y)
    torch.testing.assert_close(y, torch.gather(x, dim, idx.long()), rtol=0, atol=0)


def test_gather_3d_int64_index_and_getitem_and_method():
    @pypto.frontend.jit
    def k(x: T(), idx: T(I64), y0: T(), y1: T()):
        pypto.set_vec_tile_shapes(2, 4, 32)
        y0[:] = x[1:idx]
        y1[:] = x.gather(2, idx)

    x = torch.randn(3, 5, 32)
    idx = torch.randint(0, 5, (3, 4, 32))
    y0, y1 = torch.zeros(3, 4, 32), torch.zeros(3, 4, 32)
    k(x, idx, y0, y1)
    torch.testing.assert_close(y0, torch.gather(x, 1, idx))
    torch.testing.assert_close(y1, torch.gather(x, 2, idx))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gather_tail_tiles_in_dynamic_loop(dtype):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], DT[dtype]),
          idx: pypto.Tensor([pypto.DYNAMIC, 16], I32),
          y: pypto.Tensor([pypto.DYNAMIC, 16], DT[dtype])):
        pypto.set_vec_tile_shapes(8, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 8, name="L"):
            xv = pypto.view(x, [8, 64], [i, 0], valid_shape=[(n - i).min(8), 64])
            iv = pypto.view(idx, [8, 16], [i, 0], valid_shape=[(n - i).min(8), 16])
            y[i:, :] = pypto.gather(xv, 1, iv)

    for n in (13, 21):
        x = rand((n, 64), dtype)
        idx = torch.randint(0, 64, (n, 16), dtype=torch.int32)
        y = torch.zeros(n, 16, dtype=dtype)
        k(x, idx, y)
        torch.testing.assert_close(y, torch.gather(x, 1, idx.long()), rtol=0, atol=0)
    assert k.compile_count == 1


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_matches_torch(dtype, dim):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), idx: T(I64), y: T(DT[dtype])):
        pypto.set_vec_tile_shapes(4, 32)
        y[:] = x.index_select(dim, idx)

    x = rand((6, 32), dtype)
    idx = torch.randint(0, x.shape[dim], (5,))
    want = torch.index_select(x, dim, idx)
    y = torch.zeros_like(want)
    k(x, idx, y)
    torch.testing.assert_close(y, want, rtol=0, atol=0)


def test_index_select_tail_rows():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), idx: T(I32), y: T()):
        pypto.set_vec_tile_shapes(8, 16)
        n = x.shape[0]
        for i in pypto.loop(0, n, 8, name="L"):
            xv = pypto.view(x, [8, 32], [i, 0], valid_shape=[(n - i).min(8), 32])
            y[i:, :] = pypto.index_select(xv, 1, idx)

    x = torch.randn(11, 32)
    idx = torch.tensor([31, 0, 7, 7, 3, 12, 30, 1, 2, 5, 6, 8, 9, 10, 11, 13], dtype=torch.int32)
    y = torch.zeros(11, 16)
    k(x, idx, y)
    torch.testing.assert_close(y, torch.index_select(x, 1, idx.long()))


def test_index_select_2d_index_adds_a_dim():
    @pypto.frontend.jit
    def k(x: T(), idx: T(I32), y: T()):
        pypto.set_vec_tile_shapes(2, 3, 32)
        y[:] = pypto.index_select(x, 0, idx)

    x = torch.randn(5, 32)
    idx = torch.randint(0, 5, (2, 3), dtype=torch.int32)
    y = torch.zeros(2, 3, 32)
    k(x, idx, y)
    torch.testing.assert_close(y, x[idx.long()])


# --------------------------------------------------------------------------------------------
# scatter / scatter_

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_tensor_src_in_place_and_out_of_place(dtype, dim):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), idx: T(I32), src: T(DT[dtype]), before: T(DT[dtype]),
          out: T(DT[dtype])):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.scatter(x, dim, idx, src)
        before[:] = pypto.clone(x)
        pypto.scatter_(x, dim, idx, src)

    x = rand((8, 32), dtype)
    idx = unique_index((6, 16), dim, x.shape[dim])
    src = rand((6, 20), dtype)
    want = x.scatter(dim, idx.long(), src)
    x0 = x.clone()
    out, before = torch.zeros_like(x), torch.zeros_like(x)
    k(x, idx, src, before, out)
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    torch.testing.assert_close(before, x0, rtol=0, atol=0)   # program order: read before write
    torch.testing.assert_close(x, want, rtol=0, atol=0)      # scatter_ wrote the caller's x


@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_scalar_src_and_setitem(dtype):
    @pypto.frontend.jit
    def k(mask: T(DT[dtype]), idx: T(I64), src: T(DT[dtype]), y: T(DT[dtype])):
        pypto.set_vec_tile_shapes(4, 32)
        pypto.scatter_(mask, 1, idx, 1.0)
        y[1:idx] = src

    mask = torch.zeros(4, 32, dtype=dtype)
    y = torch.zeros(4, 32, dtype=dtype)
    idx = unique_index((4, 5), 1, 32, torch.int64)
    src = rand((4, 5), dtype)
    k(mask, idx, src, y)
    torch.testing.assert_close(mask, torch.zeros(4, 32, dtype=dtype).scatter(1, idx, 1.0))
    torch.testing.assert_close(y, torch.zeros(4, 32, dtype=dtype).scatter(1, idx, src))


def test_scatter_element_and_int_scalar():
    @pypto.frontend.jit
    def k(a: T(pypto.DT_FP16), b: T(I32), idx: T(I32)):
        pypto.set_vec_tile_shapes(4, 32)
        a.scatter_(0, idx, pypto.Element(pypto.DT_FP16, -2.5))
        b.scatter_(0, idx, 7, reduce="add")

    a, b = torch.zeros(4, 32, dtype=torch.float16), torch.ones(4, 32, dtype=torch.int32)
    idx = torch.randint(0, 4, (3, 32), dtype=torch.int32)
    k(a, b, idx)
    torch.testing.assert_close(a, torch.zeros(4, 32, dtype=torch.float16).scatter(
        0, idx.long(), -2.5))
    want = torch.ones(4, 32, dtype=torch.int32).scatter_add(
        0, idx.long(), torch.full((3, 32), 7, dtype=torch.int32))
    torch.testing.assert_close(b, want)


def test_scatter_symbolic_scalar_src_and_returns_input():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], I32), idx: T(I32)):
        pypto.set_vec_tile_shapes(4, 32)
        assert pypto.scatter_(x, 1, idx, x.shape[0] * 10) is x

    x = torch.zeros(3, 32, dtype=torch.int32)
    idx = unique_index((3, 4), 1, 32)
    k(x, idx)
    torch.testing.assert_close(x, torch.zeros(3, 32, dtype=torch.int32).scatter(
        1, idx.long(), 30))


@pytest.mark.parametrize("reduce,torch_reduce", [("add", "sum"), ("multiply", "prod")])
@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_reduce_modes(reduce, torch_reduce, dtype):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), idx: T(I32), src: T(DT[dtype]), out: T(DT[dtype])):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.scatter(x, 1, idx, src, reduce=reduce)
        pypto.scatter_(x, 1, idx, src, reduce=reduce)

    x = rand((8, 32), dtype)
    src = rand((8, 12), dtype)
    # Repeated indices accumulate; FP32 only (torch rounds each step in FP16/BF16).
    idx = (torch.randint(0, 32, (8, 12)) if dtype == torch.float32
           else unique_index((8, 12), 1, 32, torch.int64)).to(torch.int32)
    want = x.scatter_reduce(1, idx.long(), src, torch_reduce, include_self=True)
    out = torch.zeros_like(x)
    k(x, idx, src, out)
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(x, want)


def test_scatter_tail_tiles_in_dynamic_loop():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), idx: T(I32), src: T(),
          y: T()):
        pypto.set_vec_tile_shapes(8, 32)
        n = x.shape[0]
        for i in pypto.loop(0, n, 8, name="L"):
            valid = [(n - i).min(8), 32]
            xv = pypto.view(x, [8, 32], [i, 0], valid_shape=valid)
            iv = pypto.view(idx, [8, 8], [i, 0], valid_shape=[(n - i).min(8), 8])
            sv = pypto.view(src, [8, 8], [i, 0], valid_shape=[(n - i).min(8), 8])
            y[i:, :] = pypto.scatter(xv, 1, iv, sv)

    x, src = torch.randn(19, 32), torch.randn(19, 8)
    idx = unique_index((19, 8), 1, 32)
    y = torch.zeros(19, 32)
    k(x, idx, src, y)
    torch.testing.assert_close(y, x.scatter(1, idx.long(), src))


# --------------------------------------------------------------------------------------------
# scatter_update

@pytest.mark.parametrize("dtype", ALL)
def test_scatter_update_2d(dtype):
    @pypto.frontend.jit
    def k(cache: T(DT[dtype]), idx: T(I64), src: T(DT[dtype])):
        pypto.set_vec_tile_shapes(4, 32)
        cache.move(cache.scatter_update(-2, idx, src))

    cache = rand((16, 32), dtype)
    idx = torch.randperm(16)[:6].reshape(2, 3)
    src = rand((6, 32), dtype)
    want = cache.clone()
    for i in range(2):
        for j in range(3):
            want[idx[i, j]] = src[i * 3 + j]
    k(cache, idx, src)
    torch.testing.assert_close(cache, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_update_4d_paged_cache(dtype):
    @pypto.frontend.jit
    def k(cache: T(DT[dtype]), idx: T(I32), src: T(DT[dtype]), out: T(DT[dtype])):
        pypto.set_vec_tile_shapes(1, 2, 1, 32)
        out[:] = pypto.scatter_update(cache, -2, idx, src)

    blocks, block = 3, 4
    cache = rand((blocks, block, 1, 32), dtype)
    idx = torch.randperm(blocks * block)[:6].reshape(2, 3).to(torch.int32)
    src = rand((2, 3, 1, 32), dtype)
    want = cache.clone()
    for i in range(2):
        for j in range(3):
            s = int(idx[i, j])
            want[s // block, s % block, 0] = src[i, j, 0]
    out = torch.zeros_like(cache)
    k(cache, idx, src, out)
    torch.testing.assert_close(out, want, rtol=0, atol=0)


# --------------------------------------------------------------------------------------------
# index_add / index_add_ / index_put_

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_add_matches_torch(dtype, dim):
    alpha = 3 if dtype == torch.int32 else 0.5

    @pypto.frontend.jit
    def k(x: T(DT[dtype]), idx: T(I32), source: T(DT[dtype]), out: T(DT[dtype])):
        pypto.set_vec_tile_shapes(4, 32)
        out[:] = pypto.index_add(x, dim, idx, source, alpha=alpha)
        x.index_add_(dim, idx, source, alpha=alpha)

    x = rand((6, 32), dtype)
    n = 4
    # Repeated indices accumulate; FP32/INT32 only (torch rounds each step in FP16/BF16).
    idx = (torch.randint(0, x.shape[dim], (n,)) if dtype in (torch.float32, torch.int32)
           else torch.randperm(x.shape[dim])[:n]).to(torch.int32)
    shape = list(x.shape)
    shape[dim] = n
    source = rand(tuple(shape), dtype)
    want = x.index_add(dim, idx.long(), source, alpha=alpha)
    out = torch.zeros_like(x)
    k(x, idx, source, out)
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(x, want)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_torch(dtype, accumulate):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), i0: T(I32), v1: T(DT[dtype]), y: T(DT[dtype]), i1: T(I64),
          v2: T(DT[dtype])):
        pypto.set_vec_tile_shapes(16)
        assert pypto.index_put_(x, (i0,), v1, accumulate) is None
        pypto.index_put_(y, (i0, i1), v2, accumulate=accumulate)

    x, y = rand((6, 32), dtype), rand((6, 32), dtype)
    dup = accumulate and dtype in (torch.float32, torch.int32)
    i0 = (torch.tensor([1, 4, 1, 5]) if dup else torch.tensor([1, 4, 0, 5])).to(torch.int32)
    i1 = torch.tensor([3, -1, 3, 0])   # negative indices count from the end
    v1, v2 = rand((4, 32), dtype), rand((4,), dtype)
    want_x = x.index_put((i0.long(),), v1, accumulate=accumulate)
    want_y = y.index_put((i0.long(), i1), v2, accumulate=accumulate)
    k(x, i0, v1, y, i1, v2)
    torch.testing.assert_close(x, want_x)
    torch.testing.assert_close(y, want_y)


# --------------------------------------------------------------------------------------------
# topk / argsort

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch(dtype, largest):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), v: T(DT[dtype]), i: T(I32)):
        pypto.set_vec_tile_shapes(2, 4, 64)
        vals, idx = pypto.topk(x, 5, -1, largest)
        v[:] = vals
        i[:] = idx

    x = distinct((2, 3, 64), dtype)
    v, i = torch.zeros(2, 3, 5, dtype=dtype), torch.zeros(2, 3, 5, dtype=torch.int32)
    k(x, v, i)
    want = torch.topk(x, 5, -1, largest)
    torch.testing.assert_close(v, want.values, rtol=0, atol=0)
    torch.testing.assert_close(i, want.indices.int(), rtol=0, atol=0)


def test_topk_tail_rows_and_method():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), v: T(), i: T(I32)):
        pypto.set_vec_tile_shapes(8, 32)
        n = x.shape[0]
        for r in pypto.loop(0, n, 8, name="L"):
            xv = pypto.view(x, [8, 32], [r, 0], valid_shape=[(n - r).min(8), 32])
            vals, idx = xv.topk(3)
            v[r:, :] = vals
            i[r:, :] = idx

    x = distinct((11, 32), torch.float32)
    v, i = torch.zeros(11, 3), torch.zeros(11, 3, dtype=torch.int32)
    k(x, v, i)
    want = torch.topk(x, 3)
    torch.testing.assert_close(v, want.values)
    torch.testing.assert_close(i, want.indices.int())


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [None, 0])
def test_argsort_is_stable_like_torch(dtype, descending, dim):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), y: T(I32)):
        pypto.set_vec_tile_shapes(8, 32)
        y[:] = x.argsort(dim, descending)

    x = torch.randint(0, 4, (8, 32)).to(dtype)   # many ties
    y = torch.zeros(8, 32, dtype=torch.int32)
    k(x, y)
    want = torch.argsort(x, dim=-1 if dim is None else dim, descending=descending, stable=True)
    torch.testing.assert_close(y, want.int(), rtol=0, atol=0)


# --------------------------------------------------------------------------------------------
# triu / tril

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("diagonal", [-2, 0, 3])
def test_triu_tril_match_torch(dtype, diagonal):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), u: T(DT[dtype]), l: T(DT[dtype])):
        pypto.set_vec_tile_shapes(2, 8, 16)
        u[:] = pypto.triu(x, diagonal)
        l[:] = x.tril(diagonal=diagonal)

    x = rand((2, 8, 16), dtype)
    u, l = torch.zeros_like(x), torch.zeros_like(x)
    k(x, u, l)
    torch.testing.assert_close(u, torch.triu(x, diagonal), rtol=0, atol=0)
    torch.testing.assert_close(l, torch.tril(x, diagonal), rtol=0, atol=0)


def test_triu_symbolic_diagonal_and_in_place_forms():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), y: T(), a: T(), b: T()):
        pypto.set_vec_tile_shapes(8, 16)
        n = x.shape[0]
        for i in pypto.loop(0, n, 8, name="L"):
            xv = pypto.view(x, [8, 16], [i, 0], valid_shape=[(n - i).min(8), 16])
            y[i:, :] = pypto.triu(xv, i - 8)   # block-causal: the diagonal follows the row
        a.triu_(1)
        pypto.tril_(b, -1)

    x = torch.randn(21, 16)
    y = torch.zeros(21, 16)
    a, b = torch.randn(8, 16), torch.randn(8, 16)
    a0, b0 = a.clone(), b.clone()
    k(x, y, a, b)
    want = torch.cat([torch.triu(x[r:r + 8], r - 8) for r in range(0, 21, 8)])
    torch.testing.assert_close(y, want)
    torch.testing.assert_close(a, torch.triu(a0, 1))
    torch.testing.assert_close(b, torch.tril(b0, -1))


# --------------------------------------------------------------------------------------------
# one_hot / gathermask

@pytest.mark.parametrize("idx_dtype", [torch.int32, torch.int64])
def test_one_hot_matches_torch(idx_dtype):
    @pypto.frontend.jit
    def k(x: T(DT.get(idx_dtype, I64)), y1: T(I64), x2: T(I32), y2: T(I64)):
        pypto.set_vec_tile_shapes(8, 8)
        y1[:] = pypto.one_hot(x, 8)
        pypto.set_vec_tile_shapes(2, 3, 8)
        y2[:] = pypto.one_hot(x2, 8)

    x = torch.randint(0, 8, (10,), dtype=idx_dtype)
    x2 = torch.randint(0, 8, (2, 3), dtype=torch.int32)
    y1, y2 = torch.zeros(10, 8, dtype=torch.int64), torch.zeros(2, 3, 8, dtype=torch.int64)
    k(x, y1, x2, y2)
    torch.testing.assert_close(y1, torch.nn.functional.one_hot(x.long(), 8))
    torch.testing.assert_close(y2, torch.nn.functional.one_hot(x2.long(), 8))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("mode,start,step", [(1, 0, 2), (2, 1, 2), (3, 0, 4), (4, 1, 4),
                                             (5, 2, 4), (6, 3, 4), (7, 0, 1)])
def test_gathermask_patterns(dtype, mode, start, step):
    @pypto.frontend.jit
    def k(x: T(DT[dtype]), y: T(DT[dtype])):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x.gathermask(mode)

    x = rand((4, 64), dtype)
    y = torch.zeros(4, 64 // step, dtype=dtype)
    k(x, y)
    torch.testing.assert_close(y, x[:, start::step], rtol=0, atol=0)


# --------------------------------------------------------------------------------------------
# Errors: message names the op and argument, and points at this file

def _trace_error(body, *arrays):
    @pypto.frontend.jit
    def k(a: T(), b: T(I32), c: T(), f: T()):
        pypto.set_vec_tile_shapes(4, 32)
        body(a, b, c, f)

    a, c = torch.zeros(4, 32), torch.zeros(4, 32)
    b = torch.zeros(4, 32, dtype=torch.int32)
    k(a, b, c, c.clone())


@pytest.mark.parametrize("body,exc,text", [
    (lambda a, b, c, f: pypto.gather(a, 1, f), PyptoTypeError,
     "gather: index must be an INT32/INT64 tensor, got DT_FP32"),
    (lambda a, b, c, f: pypto.gather(a, 2, b), PyptoValueError,
     "gather: dim 2 is out of range for a rank-2 tensor"),
    (lambda a, b, c, f: pypto.scatter_(a, 1, b, c, reduce="max"), PyptoValueError,
     "scatter_: reduce must be None, 'add' or 'multiply', got 'max'"),
    (lambda a, b, c, f: pypto.scatter(a, 1, b, "x"), PyptoTypeError,
     "scatter: src must be a pypto.Tensor, int, float or Element, got str"),
    (lambda a, b, c, f: pypto.scatter_(b, 1, b, 1.5), PyptoTypeError,
     "scatter_: a float src (1.5) cannot be combined with a DT_INT32 tensor; use an int or cast"),
    (lambda a, b, c, f: pypto.scatter_(a, 1, b, b), PyptoTypeError,
     "scatter_: src dtype DT_INT32 does not match input dtype DT_FP32"),
    (lambda a, b, c, f: pypto.scatter_update(a, 1, b, c), PyptoValueError,
     "scatter_update: dim must be -2, got 1"),
    (lambda a, b, c, f: pypto.scatter_update(a, -2, b, c), PyptoValueError,
     "scatter_update: src dim 0 is 4, expected 128"),
    (lambda a, b, c, f: pypto.index_add(a, 0, b, c), PyptoValueError,
     "index_add: index must have rank 1, got rank 2"),
    (lambda a, b, c, f: pypto.index_put_(a, (b,), c), PyptoValueError,
     "index_put_: indices[0] must have rank 1, got rank 2"),
    (lambda a, b, c, f: pypto.topk(a, 33), PyptoValueError,
     "topk: k must be in [1, 32] (the last dim), got 33"),
    (lambda a, b, c, f: pypto.topk(a, 2, dim=0), PyptoValueError,
     "topk: only the last axis is supported"),
    (lambda a, b, c, f: pypto.one_hot(a, 4), PyptoTypeError,
     "one_hot: input must be an INT8/INT16/INT32/INT64 tensor, got DT_FP32"),
    (lambda a, b, c, f: pypto.gathermask(a, 8), PyptoValueError,
     "gathermask: pattern_mode must be an int in 1..7, got 8"),
    (lambda a, b, c, f: pypto.triu(a, 1.5), PyptoTypeError,
     "triu: diagonal must be an int or SymbolicScalar, got 1.5"),
])
def test_trace_time_errors_name_op_argument_and_line(body, exc, text):
    with pytest.raises(exc) as ei:
        _trace_error(body)
    assert text in where_raised(ei)


def test_index_put_values_rank_error():
    @pypto.frontend.jit
    def k(x: T(), i: T(I32), v: T()):
        pypto.set_vec_tile_shapes(16)
        pypto.index_put_(x, (i, i), v)

    with pytest.raises(PyptoValueError) as ei:
        k(torch.zeros(4, 32), torch.zeros(3, dtype=torch.int32), torch.zeros(3, 32))
    assert "index_put_: values must have rank 1 (input rank 2 + 1 - 2 index tensors), got " \
           "rank 2" in where_raised(ei)


def test_topk_k_larger_than_tile():
    @pypto.frontend.jit
    def k(x: T(), v: T(), i: T(I32)):
        pypto.set_vec_tile_shapes(4, 16)
        v[:], i[:] = pypto.topk(x, 20)

    with pytest.raises(PyptoValueError) as ei:
        k(torch.zeros(4, 64), torch.zeros(4, 20), torch.zeros(4, 20, dtype=torch.int32))
    assert "topk: k=20 exceeds the last vector tile dim 16" in where_raised(ei)


@pytest.mark.parametrize("op,text", [
    ("gather", "gather: index value 32 at position [2, 5] is out of range [0, 32) for dim 1"),
    ("gather0", "gather: index value -1 at position [0, 0] is out of range [0, 4) for dim 0"),
    ("index_select", "index_select: index value 9 at position [1] is out of range [0, 4)"),
    ("scatter_", "scatter_: index value 32 at position [2, 5] is out of range [0, 32)"),
    ("scatter", "scatter: index value 32 at position [2, 5] is out of range [0, 32)"),
    ("index_add_", "index_add_: index value 9 at position [1] is out of range [0, 4)"),
    ("index_put_", "index_put_: indices[0] value 9 at position [1] is out of range [-4, 4)"),
    ("scatter_update", "scatter_update: index value 9 at position [1] is out of range [0, 4)"),
    ("one_hot", "one_hot: input value 9 at position [1] is out of range [0, 8) for 8 classes"),
])
def test_out_of_range_indices_raise_at_run_time(op, text):
    @pypto.frontend.jit
    def k(x: T(), idx2: T(I32), idx1: T(I32), src: T(), out: T(), oh: T(I64)):
        pypto.set_vec_tile_shapes(4, 32)
        if op == "gather":
            out[:] = pypto.gather(x, 1, idx2)
        elif op == "gather0":
            out[:] = pypto.gather(x, 0, idx2)
        elif op == "index_select":
            out[:] = pypto.index_select(x, 0, idx1)
        elif op == "scatter_":
            pypto.scatter_(x, 1, idx2, src)
        elif op == "scatter":
            out[:] = pypto.scatter(x, 1, idx2, src)
        elif op == "index_add_":
            pypto.index_add_(x, 0, idx1, src)
        elif op == "scatter_update":
            out[:] = pypto.scatter_update(pypto.view(x, [4, 32], [0, 0]), -2,
                                          pypto.reshape(idx1, [2, 2]), src)
        elif op == "one_hot":
            pypto.set_vec_tile_shapes(4, 8)
            oh[:] = pypto.one_hot(idx1, 8)
        else:
            pypto.set_vec_tile_shapes(16)
            pypto.index_put_(x, (idx1,), src)

    idx2 = torch.zeros(4, 32, dtype=torch.int32)
    idx2[2, 5] = 32
    if op == "gather0":
        idx2[0, 0] = -1
    idx1 = torch.tensor([0, 9, 1, 2], dtype=torch.int32)
    with pytest.raises(PyptoRuntimeError) as ei:
        k(torch.zeros(4, 32), idx2, idx1, torch.zeros(4, 32), torch.zeros(4, 32),
          torch.zeros(4, 8, dtype=torch.int64))
    assert text in where_raised(ei)
