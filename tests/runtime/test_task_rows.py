"""The tasks as rows (`runtime.task_rows`, what a call stitches when the compiled core links
them) equal the tasks as objects, field for field, and simulate to the same timeline: on loops
with running state, cube and vector calls, whole ops, NONE_CACHEABLE parameters, a mid-run
flush (submit_before_loop) and windows cut by a workspace budget (instances moved)."""
import dataclasses

import pytest
import torch

import pypto
from pypto import driver
from pypto.machine import compiled
from pypto.runtime.stitch import Stitcher

pytestmark = pytest.mark.skipif(
    not compiled.available() or compiled.core() != "compiled",
    reason="rows are made only when the compiled core links (none built, or OPENPTO_SIM=python)")
F32, DYN = pypto.DT_FP32, pypto.DYNAMIC


def running_state(submit=False):
    """A pypto.tensor updated by every iteration (first one apart), then read by a second
    loop: links across instances, windows of 4."""
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 4})
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        acc = pypto.tensor([16, 64], F32, "acc")
        for i in pypto.loop(0, x.shape[0], 16, name="S"):
            blk = pypto.view(x, [16, 64], [i, 0])
            if pypto.is_loop_begin(i):
                acc[:] = blk * 1.0
            else:
                acc[:] = acc * 0.5 + blk
        for j in pypto.loop(0, 64, 16, name="W", submit_before_loop=submit):
            y[:, j:] = pypto.exp(pypto.view(acc, [16, 16], [0, j]))

    return k, (torch.randn(160, 64), torch.zeros(16, 64))


def matmul_exp():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([256, 512], pypto.DT_FP16), b: pypto.Tensor([512, 256], pypto.DT_FP16),
          out: pypto.Tensor([256, 256], F32)):
        pypto.set_cube_tile_shapes([64, 64], [128, 128], [64, 64])
        pypto.set_vec_tile_shapes(64, 128)
        out[:] = pypto.exp(pypto.matmul(a, b, F32) * 0.01)

    return k, (torch.randn(256, 512).half(), torch.randn(512, 256).half(), torch.zeros(256, 256))


def reshape_whole():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([256, 1024], F32), y: pypto.Tensor([512, 512], F32)):
        pypto.set_vec_tile_shapes(32, 1024)
        r = pypto.reshape(x * 2.0, [512, 512])
        pypto.set_vec_tile_shapes(64, 512)
        y[:] = r + 1.0

    return k, (torch.rand(256, 1024), torch.zeros(512, 512))


def uncached_rows():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 256], F32), w: pypto.Tensor([16, 256], F32),
          y: pypto.Tensor([DYN, 256], F32)):
        pypto.set_vec_tile_shapes(16, 256)
        w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        for i in pypto.loop(0, x.shape[0], 16, name="L"):
            y[i:, :] = pypto.view(x, [16, 256], [i, 0]) * w

    return k, (torch.rand(128, 256), torch.rand(16, 256), torch.zeros(128, 256))


def budget_windows():
    """Each instance's cube result crosses to its vector op through GM (16 KiB of workspace
    per instance): a 40 KiB budget cuts windows of two instances, moving every third."""
    @pypto.frontend.jit(runtime_options={"max_workspace_kb": 40, "stitch_function_max_num": 64})
    def k(a: pypto.Tensor([DYN, 64], pypto.DT_FP16), b: pypto.Tensor([64, 64], pypto.DT_FP16),
          y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
        pypto.set_vec_tile_shapes(64, 64)
        for i in pypto.loop(0, a.shape[0], 64, name="L"):
            y[i:, :] = pypto.exp(pypto.matmul(pypto.view(a, [64, 64], [i, 0]), b, F32) * 0.1)

    return k, (torch.randn(512, 64).half(), torch.randn(64, 64).half(), torch.zeros(512, 64))


CASES = {"running state": running_state, "matmul exp": matmul_exp,
         "whole reshape": reshape_whole, "NONE_CACHEABLE": uncached_rows,
         "submit_before_loop": lambda: running_state(submit=True),
         "workspace budget": budget_windows}


def run(make, monkeypatch, as_rows: bool):
    with monkeypatch.context() as m:
        m.setattr(driver, "Stitcher",
                  lambda *a, **k: Stitcher(*a, **{**k, "as_rows": as_rows}))
        kernel, args = make()
        kernel(*args)
        pending = kernel.last.pending
        return pending, kernel.last_run


@pytest.mark.parametrize("name", list(CASES))
def test_rows_equal_objects(name, monkeypatch):
    rows, run_rows = run(CASES[name], monkeypatch, True)
    objects, run_objects = run(CASES[name], monkeypatch, False)
    assert rows.stitched.rows is not None and objects.stitched.rows is None
    made = [dataclasses.asdict(t) for t in rows.tasks]
    assert made == [dataclasses.asdict(t) for t in objects.tasks]
    assert run_rows.stats == run_objects.stats
    assert [(r.core_index, r.start, r.end) for r in run_rows.tasks] == \
        [(r.core_index, r.start, r.end) for r in run_objects.tasks]


def test_the_budget_case_moves_instances():
    """(the budget case exercises what it says: more windows than stitch alone would cut)"""
    kernel, args = budget_windows()
    kernel(*args)
    assert kernel.last_executor.stitcher.rows is not None
    assert kernel.last_run.stats["windows"] == 4
