"""Why each stitch window closed is reported on its build event (`closed_by`): the instance
count (stitch_function_max_num, capped at the device's 1024), the call-op count
(stitch_function_size), a workspace budget (max_workspace_kb), a loop marked
submit_before_loop, or the end of the run; the same in both simulator cores."""
import pytest
import torch

import pypto
from pypto.errors import PyptoError
from pypto.machine import compiled

F32 = pypto.DT_FP32


def _rows(**options):
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only", **options})
    def k(a: pypto.Tensor([256, 128], F32), y: pypto.Tensor([256, 128], F32)):
        pypto.set_vec_tile_shapes(32, 128)
        for i in pypto.loop(8, name="rows"):
            y[i * 32:(i + 1) * 32, :] = pypto.exp(a[i * 32:(i + 1) * 32, :]) + 1.0

    k(torch.rand(256, 128), torch.zeros(256, 128))
    return k


def _reasons(kernel) -> list[str]:
    return [r.args["closed_by"] for r in kernel.last_run.aicpu
            if r.name.startswith("build window")]


@pytest.mark.parametrize("core", ["compiled", "python"])
def test_the_instance_and_call_limits_and_the_end_close_windows(core, monkeypatch):
    if core == "compiled" and compiled.core() != "compiled":
        pytest.skip("the compiled core is not built here")
    monkeypatch.setenv(compiled.ENV, core)
    assert _reasons(_rows(stitch_function_max_num=3)) == ["instances", "instances", "end"]
    # each instance is one call op (exp and add fuse): a limit of 5 call ops closes the first
    # window after 5 instances
    k = _rows(stitch_function_size=5)
    assert _reasons(k) == ["calls", "end"]
    assert [r.args["instances"] for r in k.last_run.aicpu
            if r.name.startswith("build")] == [5, 3]
    assert _reasons(_rows()) == ["end"]


def test_a_loop_marked_submit_before_loop_closes_the_window_before_it():
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only"})
    def k(x: pypto.Tensor([64, 64], F32), y: pypto.Tensor([64, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(0, 64, 16, name="A"):
            y[i:i + 16, :] = pypto.view(x, [16, 64], [i, 0]) * 2.0
        for j in pypto.loop(0, 64, 16, name="B", submit_before_loop=True):
            y[j:j + 16, :] = pypto.exp(pypto.view(y, [16, 64], [j, 0]))

    k(torch.rand(64, 64), torch.zeros(64, 64))
    assert _reasons(k) == ["loop", "end"]


def test_a_workspace_budget_closes_windows():
    """16 KiB of workspace per instance, a 40 KiB budget: windows of two instances."""
    from test_task_rows import budget_windows
    k, args = budget_windows()
    k(*args)
    reasons = _reasons(k)
    assert reasons[-1] == "end" and set(reasons[:-1]) == {"workspace"} and len(reasons) >= 3


def test_the_instance_limit_is_the_devices_hard_cap_of_1024():
    with pytest.raises(PyptoError, match="stitch_function_max_num"):
        _rows(stitch_function_max_num=1025)


@pytest.mark.parametrize("core", ["compiled", "python"])
def test_builds_overlap_execution_and_windows_drain_one_after_another(core, monkeypatch):
    """As the device does (reference/runtime_facts.md section 1): the control thread builds the
    next window while the cores run the last one, and a window's tasks start only after every
    task of the window before has ended (a barrier across the schedule threads)."""
    if core == "compiled" and compiled.core() != "compiled":
        pytest.skip("the compiled core is not built here")
    monkeypatch.setenv(compiled.ENV, core)
    run = _rows(stitch_function_max_num=2).last_run
    builds = [r for r in run.aicpu if r.name.startswith("build window")]
    spans = {}
    for r in run.tasks:
        first, last = spans.get(r.task.window, (r.start, r.end))
        spans[r.task.window] = (min(first, r.start), max(last, r.end))
    windows = sorted(spans)
    assert len(windows) == len(builds) == 4
    for w, nxt in zip(windows, windows[1:]):
        assert spans[nxt][0] >= spans[w][1]                 # drained one after another
    for a, b in zip(builds, builds[1:]):
        assert b.start == a.end                             # builds back to back ...
    assert builds[2].start < spans[windows[1]][1]           # ... while a window runs
