"""The reference executor hands the buffers of dead temporaries to later results
(runtime/liveness.py): results are bit-identical to fresh buffers, and a temporary read later
(by another block, or as a tensor element in an expression) is never recycled."""
import math

import numpy as np
import torch

import pypto
from pypto.runtime.liveness import BufferPool
from pypto.runtime.reference import ReferenceExecutor

F32 = pypto.DT_FP32


def _run(kernel, args, fuse, monkeypatch):
    monkeypatch.setattr(ReferenceExecutor, "fuse", fuse)
    args = [a.clone() for a in args]
    with pypto.options(runtime_options={"executor": "reference"}):
        kernel(*args)
    return args


def _attention(heads, seq, dim):
    @pypto.frontend.jit
    def k(q: pypto.Tensor([], F32), kk: pypto.Tensor([], F32), v: pypto.Tensor([], F32),
          o: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(1, 32, 64)
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        for h in range(heads):
            s = pypto.matmul(q[h:h + 1], kk[h:h + 1], F32, b_trans=True) * (1 / math.sqrt(dim))
            e = pypto.exp(s - pypto.amax(s, dim=-1, keepdim=True))
            p = e / pypto.sum(e, dim=-1, keepdim=True)
            o[h:h + 1] = pypto.matmul(p, v[h:h + 1], F32)
    return k


def test_per_head_temporaries_are_reused_with_the_same_bits(monkeypatch):
    monkeypatch.setattr(ReferenceExecutor, "chunk_min_bytes", 0)
    monkeypatch.setattr(ReferenceExecutor, "chunk_bytes", 7 * 40 * 4)
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(4, 40, 32, generator=g) for _ in range(3)] + [torch.zeros(4, 40, 32)]
    k = _attention(4, 40, 32)
    fused = _run(k, args, True, monkeypatch)
    assert k.last_executor.pool.reused > 0
    plain = _run(k, args, False, monkeypatch)
    assert k.last_executor.pool.reused == 0
    assert np.array_equal(fused[3].numpy().view(np.uint32), plain[3].numpy().view(np.uint32))


def test_a_temporary_read_by_a_later_block_lives_on(monkeypatch):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        t = pypto.exp(x) * 2.0
        u = t + 1.0
        for i in pypto.loop(2):
            y[:] = u * t
    x = torch.randn(8, 64)
    fused, plain = _run(k, [x, torch.zeros(8, 64)], True, monkeypatch), \
        _run(k, [x, torch.zeros(8, 64)], False, monkeypatch)
    assert torch.equal(fused[1], plain[1])


def test_a_temporary_read_as_an_element_is_never_recycled(monkeypatch):
    """`n` is computed, read by one op (in a chunked chain), then read as a loop bound."""
    monkeypatch.setattr(ReferenceExecutor, "chunk_min_bytes", 0)
    monkeypatch.setattr(ReferenceExecutor, "chunk_bytes", 64 * 4)
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_INT32), y: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        n = x + 1
        m = n * 2
        for i in pypto.loop(n[0, 0]):
            y[i:i + 1, :] = pypto.cast(m[0:1, :], F32)
    x = torch.full((4, 64), 2, dtype=torch.int32)
    fused = _run(k, [x, torch.zeros(4, 64)], True, monkeypatch)
    assert k.last_executor.chunked_ops >= 2
    plain = _run(k, [x, torch.zeros(4, 64)], False, monkeypatch)
    assert torch.equal(fused[1], plain[1]) and fused[1][:3].eq(6).all() and fused[1][3].eq(0).all()


def test_the_pool_hands_out_only_matching_owned_buffers():
    pool = BufferPool()
    a = np.ones((4, 8), np.float32)
    pool.give(a)
    pool.give(np.ones((8, 8), np.float32)[:4])        # a view: not pooled
    assert pool.empty((4, 8), np.float64) is not a
    b = pool.zeros((4, 8), np.float32)
    assert b is a and not b.any() and pool.reused == 1
    assert pool.empty((4, 8), np.float32) is not a
