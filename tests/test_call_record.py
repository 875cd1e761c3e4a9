"""A kernel call is a value (`call_record.CallRecord`): `kernel(...)` makes one and keeps it as
`kernel.last`; `kernel.evaluate(...)` makes one for a variant and leaves the kernel's record,
its compile cache and the caller's tensors as they were."""
import dataclasses
import os

import pytest
import torch

import pypto
from pypto.call_record import CallRecord
from pypto.errors import PyptoValueError

from marker_lines import marker_line

HERE = os.path.basename(__file__)


@pypto.frontend.jit
def _exp(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)                              # EXP_SITE
    y[:] = pypto.exp(x) + 1.0


def _site() -> str:
    return f"vec_tile@{HERE}:{marker_line(__file__, 'EXP_SITE')}"


def test_a_call_makes_a_frozen_record_and_last_is_it():
    x, y = torch.rand(64, 128), torch.zeros(64, 128)
    _exp(x, y)
    record = _exp.last
    assert isinstance(record, CallRecord) and record.ran and not record.timing_only
    assert record.args[0] is x and record.program is _exp.last_program
    assert record.compiled is _exp.last_compiled and record.executor is _exp.last_executor
    assert record.run is _exp.last_run and record.run is record.run   # simulated once
    assert _exp.last_call == ((x, y), {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.program = None


def test_evaluate_leaves_the_kernels_record_cache_and_tensors_alone():
    x, y = torch.rand(64, 128), torch.zeros(64, 128)
    _exp(x, y)
    last, cache, count = _exp.last, _exp.compile_cache.snapshot(), _exp.compile_count
    y.zero_()
    variant = _exp.evaluate(x, y, knobs={_site(): (64, 128), "stitch_function_max_num": 4})
    assert variant.timing_only and variant.run.stats["kernel_cycles"] > 0
    assert variant.run.stats["kernel_cycles"] != last.run.stats["kernel_cycles"]
    assert _exp.last is last and _exp.compile_cache.snapshot() == cache
    assert _exp.compile_count == count and torch.count_nonzero(y) == 0   # outputs untouched


def test_evaluate_with_numerics_computes_on_copies():
    x, y = torch.rand(64, 128), torch.zeros(64, 128)
    _exp(x, y)
    y.zero_()
    record = _exp.evaluate(x, y, timing_only=False)
    assert not record.timing_only and torch.count_nonzero(y) == 0
    out = record.args[1]
    assert out is not y and torch.allclose(out, torch.exp(x) + 1.0)


def test_evaluate_keeps_its_compiles_in_the_cache_it_is_given():
    from pypto.runtime.compile_cache import CompileCache
    x, y = torch.rand(64, 128), torch.zeros(64, 128)
    _exp(x, y)
    own = _exp.compile_cache.snapshot()
    mine = CompileCache()
    first = _exp.evaluate(x, y, knobs={_site(): (32, 128)}, cache=mine)
    again = _exp.evaluate(x, y, knobs={_site(): (32, 128)}, cache=mine)
    assert len(mine) == 1 and first.compiled is again.compiled
    assert _exp.compile_cache.snapshot() == own


def test_a_whatif_leaves_last_and_the_cache_untouched():
    x, y = torch.rand(64, 128), torch.zeros(64, 128)
    _exp(x, y)
    last, cache = _exp.last, _exp.compile_cache.snapshot()
    result = _exp.whatif({_site(): (64, 128)})
    assert result.before is last.run and result.after is not last.run
    assert _exp.last is last and _exp.compile_cache.snapshot() == cache


def test_a_knob_site_that_matches_nothing_is_an_error():
    x, y = torch.rand(64, 128), torch.zeros(64, 128)
    _exp(x, y)
    with pytest.raises(PyptoValueError, match="matched no"):
        _exp.evaluate(x, y, knobs={f"vec_tile@{HERE}:1": (8, 64)})
