"""A kernel's compile cache is an object of its own (`runtime.compile_cache`): a call finds its
program by a `CacheKey`, a new static shape adds an entry, and what runs variants beside the
kernel (the tuner) adds and drops entries through its public methods only."""
import torch

import pypto
from pypto.runtime.compile_cache import CacheEntry, CacheKey
from pypto.toolkit.tune_eval import Evaluator

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


def test_the_tuners_evaluator_keeps_only_its_last_compiles_and_the_kernels_own():
    k = _kernel()
    k.runtime_options["numerics"] = "timing_only"
    k(torch.rand(32, 64), torch.zeros(32, 64))
    own = k.compile_cache.snapshot()
    evaluate = Evaluator(k, "kernel_cycles")
    line = _kernel.__code__.co_firstlineno + 3
    site = f"vec_tile@{__file__.rsplit('/', 1)[-1]}:{line}"
    for rows in (1, 2, 4, 8, 32, 64):
        assert evaluate({site: (rows, 64)}, None).value_us is not None
    added = k.compile_cache.added_since(own)
    assert len(added) == Evaluator.KEEP            # the older ones dropped
    assert all(k.compile_cache.get(key) is entry for key, entry in own.items())
    k.compile_cache.restore(own)
    assert k.compile_cache.snapshot() == own and len(k.compile_cache) == len(own)
