"""The windows of a loop's root instances computed for all of them at once
(`window_code.root_window_arrays`, numpy) equal the windows computed instance by instance
(`root_windows`), element for element: on loops with tails (clamped valid extents), nested
loops, unrolled copies and matmuls."""
import numpy as np
import pytest
import torch

import pypto
from pypto.runtime import plan as plan_module
from pypto.runtime.tile_executor import TileExecutor
from pypto.runtime.window_code import root_window_arrays

F32, DYN = pypto.DT_FP32, pypto.DYNAMIC


def tails():
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only"})
    def k(x: pypto.Tensor([DYN, 96], F32), y: pypto.Tensor([DYN, 96], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="L", unroll_list=[4, 1]):
            v = pypto.view(x, [16, 96], [i, 0], valid_shape=[(n - i).min(16), 96])
            y[i:, :] = pypto.exp(v) + 1.0
    return k, (torch.rand(16 * 9 + 5, 96), torch.zeros(16 * 9 + 5, 96))


def nested():
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only"})
    def k(a: pypto.Tensor([DYN, 64], pypto.DT_FP16), b: pypto.Tensor([64, 64], pypto.DT_FP16),
          y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        pypto.set_vec_tile_shapes(32, 64)
        n = a.shape[0]
        for i in pypto.loop(0, n, 64, name="O"):
            for j in pypto.loop(0, 2, name="I"):
                rows = pypto.view(a, [32, 64], [i + j * 32, 0],
                                  valid_shape=[(n - i - j * 32).max(0).min(32), 64])
                y[i + j * 32:, :] = pypto.matmul(rows, b, F32) * 0.5
    return k, (torch.randn(200, 64).half(), torch.randn(64, 64).half(), torch.zeros(200, 64))


def compare(scalar, array, k):
    if isinstance(array, np.ndarray):
        assert array[k] == scalar
    elif isinstance(scalar, tuple):
        assert isinstance(array, tuple) and len(array) == len(scalar)
        for s, a in zip(scalar, array):
            compare(s, a, k)
    else:
        assert array == scalar


@pytest.mark.parametrize("make", [tails, nested])
def test_all_instances_at_once_equal_one_by_one(make, monkeypatch):
    seen = {}
    original = plan_module.RootPlan.evaluate

    def record(self, values):
        out = original(self, values)
        seen.setdefault(self.name, (self, []))[1].append((dict(values), out))
        return out

    monkeypatch.setattr(plan_module.RootPlan, "evaluate", record)
    monkeypatch.setattr(TileExecutor, "bulk", False)   # (instance by instance, recorded)
    kernel, args = make()
    kernel(*args)
    checked = 0
    for name, (root_plan, calls) in seen.items():
        if calls[0][1] is None or len(calls) < 2:
            continue
        fn = root_window_arrays(kernel.last_compiled.roots[name].calls)
        keys = set().union(*(v.keys() for v, _ in calls))
        bound = {key: np.array([v[key] for v, _ in calls]) for key in keys}
        values = {key: (a if (a != a[0]).any() else int(a[0])) for key, a in bound.items()}
        with np.errstate(divide="raise"):
            together = fn(values)
        for k, (_, one) in enumerate(calls):
            compare(one, together, k)
        checked += 1
    assert checked
