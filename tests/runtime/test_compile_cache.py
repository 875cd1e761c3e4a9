"""A kernel's compile cache is an object of its own (`runtime.compile_cache`): a call finds its
program by a `CacheKey`, a new static shape adds an entry, and what runs variants beside the
kernel (the tuner, `kernel.evaluate`) reads it and keeps its own compiles in a cache of its
own."""
import torch

import pypto
from pypto.runtime.compile_cache import CacheEntry, CacheKey, CompileCache
from pypto.tune.backends import Evaluator

F32 = pypto.DT_FP32


def _kernel():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.exp(x) + 1.0

    return k


def test_a_call_reuses_its_entry_and_a_new_shape_adds_one():
    k = _kernel()
    x, y = torch.rand(32, 64), torch.zeros(32, 64)
    k(x, y)
    k(x, y)
    assert k.compile_count == 1 and len(k.compile_cache) == 1
    key = next(iter(k.compile_cache))
    entry = k.compile_cache.get(key)
    assert isinstance(key, CacheKey) and isinstance(entry, CacheEntry)
    assert entry.program is k.last_program and entry.compiled is k.last_compiled
    assert entry.plan.compiled is entry.compiled


def test_the_tuners_evaluator_keeps_only_its_last_compiles_and_leaves_the_kernels_alone():
    k = _kernel()
    k.runtime_options["numerics"] = "timing_only"
    k(torch.rand(32, 64), torch.zeros(32, 64))
    own, last = k.compile_cache.snapshot(), k.last
    evaluate = Evaluator(k, k.last_call, "kernel_cycles")
    line = _kernel.__code__.co_firstlineno + 3
    site = f"vec_tile@{__file__.rsplit('/', 1)[-1]}:{line}"
    for rows in (1, 2, 4, 8, 32, 64):
        assert evaluate({site: (rows, 64)}, None).value_us is not None
    assert len(evaluate.cache) == Evaluator.KEEP       # the older ones dropped
    assert k.compile_cache.snapshot() == own and k.last is last and k.compile_count == 1


def test_a_limited_cache_drops_its_oldest_entry_first():
    k = _kernel()
    k(torch.rand(32, 64), torch.zeros(32, 64))
    entry = k.compile_cache.get(next(iter(k.compile_cache)))
    cache = CompileCache(limit=2)
    keys = [CacheKey((n,), ()) for n in range(3)]
    for key in keys:
        cache.add(key, entry)
    assert list(cache) == keys[1:] and cache.get(keys[0]) is None
