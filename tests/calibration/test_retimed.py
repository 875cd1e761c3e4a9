"""`kernel.retimed(record, machine)`: a recorded call timed on another machine with its
compiled program unchanged, which is what a calibration varies."""
import pytest
import torch

import pypto
from pypto._config import CompStage
from pypto.errors import PyptoValueError
from pypto.machine.spec import from_table, table

F32 = pypto.DT_FP32


def _kernel(**options):
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only", **options})
    def k(a: pypto.Tensor([256, 512], F32), y: pypto.Tensor([256, 512], F32)):
        pypto.set_vec_tile_shapes(32, 512)
        for i in pypto.loop(4, name="rows"):
            y[i * 64:(i + 1) * 64, :] = pypto.exp(pypto.exp(a[i * 64:(i + 1) * 64, :])) + 1.0
    return k


def _times(run):
    return [(t.start, t.end) for t in run.tasks]


def test_retimed_on_its_own_machine_is_the_call_and_on_another_only_costs_change():
    k = _kernel(stitch_function_max_num=2)
    k(torch.rand(256, 512), torch.zeros(256, 512))
    own = k.last
    same = k.retimed(own, "a2a3")
    assert _times(same.run) == _times(own.run)
    assert k.last is own and k.compile_count == 1   # nothing of the kernel's own changed
    slower = table("a2a3")
    slower["vector"]["cycles_per_repeat"]["exp_fp32"] = 8
    other = k.retimed(own, from_table(slower))
    assert other.compiled.roots is own.compiled.roots   # the same compiled structure
    assert [t.task.leaf for t in other.run.tasks] == [t.task.leaf for t in own.run.tasks]
    assert other.run.stats["kernel_cycles"] > 1.2 * own.run.stats["kernel_cycles"]
    assert _times(k.retimed(own, "a2a3").run) == _times(own.run)   # the plan kept no spec


def test_a_call_that_did_not_run_cannot_be_retimed():
    k = _kernel()
    with pypto.options(host_options={"compile_stage": int(CompStage.TILE_GRAPH)}):
        k(torch.rand(256, 512), torch.zeros(256, 512))
    with pytest.raises(PyptoValueError, match="did not run"):
        k.retimed(k.last, "a2a3")


def test_a_run_read_from_its_trace_or_directly_has_the_same_features():
    from pypto.calibration.observed import Target
    from pypto.calibration.run_times import RunTimes
    from pypto.calibration.runs import trace_of
    k = _kernel(stitch_function_max_num=2)
    k(torch.rand(256, 512), torch.zeros(256, 512))
    data = trace_of(k.last_run)
    target = Target.of("k", data, data)
    assert len(target.labels) >= 4
    via_trace = target.features(RunTimes.of_trace(data))
    direct = target.features(RunTimes.of_result(k.last_run))
    assert via_trace.tolist() == direct.tolist()
