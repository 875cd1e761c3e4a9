"""Timing-only root instances made in bulk (`runtime.bulk_instances`) give the rows the
instance-by-instance path appends, field for field and in order, with templates and details
numbered alike, the same workspace per window, the same timeline and the same errors: on loops
with running state and scratch, whole ops between bulk instances, NONE_CACHEABLE, a mid-run
flush, tails of unrolled loops, nested loops with matmuls, windows closing mid-run, a
workspace budget (no bulk), the models at test size, a division by zero in one instance's
window, and a window larger than the device's memory."""
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import pypto
from pypto import driver
from pypto.errors import PyptoRuntimeError
from pypto.machine import compiled
from pypto.runtime import bulk_instances
from pypto.runtime.stitch import Stitcher
from pypto.runtime.tile_executor import TileExecutor

from tests.runtime import test_task_rows as rows_cases
from tests.runtime import test_window_arrays as window_cases

pytestmark = pytest.mark.skipif(
    not compiled.available() or compiled.core() != "compiled",
    reason="rows are made only when the compiled core links (none built, or OPENPTO_SIM=python)")
F32, DYN = pypto.DT_FP32, pypto.DYNAMIC
MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def small_windows():
    """Windows of 3 instances and at most 7 call ops: windows close in the middle of the bulk
    run, and before the last instance of a full one."""
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 3,
                                         "stitch_function_size": 7})
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        for i in pypto.loop(0, x.shape[0], 16, name="L"):
            y[i:, :] = pypto.exp(pypto.view(x, [16, 64], [i, 0])) * 2.0

    return k, (torch.rand(16 * 11, 64), torch.zeros(16 * 11, 64))


def interleaved():
    """Instances of a root with a whole op (made one by one) between bulk ones, both writing
    the same scratch in windows of 3: the bulk rows are settled before each one-by-one
    instance, and a window's scratch is counted once across both."""
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 3})
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 16], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        acc = pypto.tensor([16, 64], F32, "acc")
        for i in pypto.loop(0, x.shape[0], 16, name="O"):
            acc[:] = pypto.view(x, [16, 64], [i, 0]) * 1.0
            for _ in pypto.loop(0, 1, name="I"):
                pypto.set_vec_tile_shapes(16, 16)
                y[i * 4:, :] = pypto.reshape(acc * 2.0, [64, 16]) + 1.0
                pypto.set_vec_tile_shapes(16, 64)

    return k, (torch.rand(16 * 5, 64), torch.zeros(16 * 5 * 4, 16))


def glm():
    sys.path.insert(0, str(MODELS))
    import glm_attention as g
    return g.build(4), g.inputs(g.REDUCED)


def gdn():
    sys.path.insert(0, str(MODELS))
    import gated_deltanet as d
    cfg = d.REDUCED
    q, k, v, gg, beta = d.make_inputs(cfg)
    return d.make_kernel(cfg), (q, k, v, gg, beta, *d.constants(cfg).values(),
                                torch.zeros_like(v), torch.zeros(cfg.pairs, cfg.dim, cfg.dim))


CASES = {**{name: make for name, make in rows_cases.CASES.items()},
         "tails": window_cases.tails, "nested matmul": window_cases.nested,
         "small windows": small_windows, "interleaved": interleaved, "glm": glm, "gdn": gdn}


def call(make, monkeypatch, bulk: bool, count=True, bulk_min=1, **stitcher):
    """One timing-only call; (its rows, table, workspace per window, run, the sizes of the
    deferred runs made). `bulk_min`: `BULK_MIN` (1: every deferred run in bulk; huge: every
    one made one by one). (`count=False` for errors: the counting wrapper would be the frame
    an error message names.)"""
    with monkeypatch.context() as m:
        m.setattr(TileExecutor, "bulk", bulk)
        m.setattr(bulk_instances, "BULK_MIN", bulk_min)
        if stitcher:
            m.setattr(driver, "Stitcher",
                      lambda *a, **k: Stitcher(*a[:4], **{"as_rows": True, **stitcher}))
        made = []
        if count:
            m.setattr(bulk_instances, "make_rows", _counting(bulk_instances.make_rows, made))
        kernel, args = make()
        kernel.runtime_options["numerics"] = "timing_only"
        kernel(*args)
        stitched = kernel.last_executor.stitcher
        table = stitched.table
        return stitched.rows, table, list(stitched.window_workspace), kernel.last_run, made


def _counting(fn, made):
    def counted(pending, *a, **k):
        made.append(len(pending))
        return fn(pending, *a, **k)
    return counted


@pytest.mark.parametrize("bulk_min", [1, 1 << 30], ids=["bulk", "deferred one by one"])
@pytest.mark.parametrize("name", list(CASES))
def test_deferred_rows_equal_rows_made_one_by_one(name, bulk_min, monkeypatch):
    rows, table, workspace, run, made = call(CASES[name], monkeypatch, True, bulk_min=bulk_min)
    rows1, table1, workspace1, run1, made1 = call(CASES[name], monkeypatch, False)
    assert not made1
    if name == "workspace budget":
        assert not made   # (where an instance goes depends on its bytes: one by one)
    elif name not in ("matmul exp", "whole reshape"):   # (one instance each)
        assert sum(made) > 1
    a, b = rows.arrays(), rows1.arrays()
    assert set(a) == set(b)
    for field in a:
        assert np.array_equal(a[field], b[field]), field
    assert rows.templates == rows1.templates
    assert rows.details == rows1.details
    for column, value in table.columns.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, table1.columns[column]), column
    assert workspace == workspace1
    assert run.stats == run1.stats
    assert [(r.core_index, r.start, r.end) for r in run.tasks] == \
        [(r.core_index, r.start, r.end) for r in run1.tasks]


def test_glm_defers_every_instance_to_one_bulk_run(monkeypatch):
    """(what the model takes at full size: every instance deferred, made in one go at the
    flush, in bulk with the default BULK_MIN; here 16 pairs x 5 blocks)"""
    ran = []
    monkeypatch.setattr(bulk_instances, "one_by_one",
                        lambda *a: ran.append("one by one") or pytest.fail("not in bulk"))
    def glm_eighty():
        import glm_attention as g
        return g.build(128), g.inputs(g.Shape(batch=2, kv_len=2560))

    glm()   # (its module on the path)
    rows, table, _, run, made = call(glm_eighty, monkeypatch, True,
                                     bulk_min=bulk_instances.BULK_MIN)
    assert made == [len(set(zip(table.columns["window"], table.columns["instance"])))]
    assert made[0] >= bulk_instances.BULK_MIN * 2 and not ran


def divide_by_zero():
    """The window of the 5th iteration divides by zero; the 6th's view offset is negative,
    which the walk checks before making the instance: the first error in walk order wins."""
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only"})
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for j in pypto.loop(0, 8, name="L"):
            v = pypto.view(x, [16, 64], [((j * 16) // (4 - j)).min(0), 0])
            y[j * 16:, :] = v + 1.0

    return k, (torch.rand(128, 64), torch.zeros(128, 64))


def test_an_instance_whose_window_fails_raises_the_same_error(monkeypatch):
    errors = []
    for bulk, bulk_min in ((True, 1), (True, 1 << 30), (False, 1)):
        with pytest.raises(PyptoRuntimeError) as raised:
            call(divide_by_zero, monkeypatch, bulk, count=False, bulk_min=bulk_min)
        errors.append(str(raised.value))
    assert errors[0] == errors[2]
    assert errors[0] == errors[1]
    assert "zero" in errors[0] and "negative" not in errors[0]


def test_a_window_larger_than_the_device_is_out_of_memory_either_way(monkeypatch):
    errors = []
    for bulk, bulk_min in ((True, 1), (True, 1 << 30), (False, 1)):
        with pytest.raises(PyptoRuntimeError, match="NPU out of memory: stitch window 0") \
                as raised:
            call(rows_cases.running_state, monkeypatch, bulk, count=False, bulk_min=bulk_min,
                 device_bytes=2048)
        errors.append(str(raised.value))
    assert errors[0] == errors[2]
    assert errors[0] == errors[1]
