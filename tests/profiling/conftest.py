"""A small hand-built `SimResult` shared by the profiling tests (PyPTO's samples are in
tests/conftest.py).

The run (clock 1000 MHz, so 1 us = 1000 cycles; 2 AIC + 4 AIV cores, 3 AICPU schedulers):
  t0 AIV core 0  window 0 instance 0 call 0  leaf vadd  1000 -> 3000
  t1 AIV core 1  window 0 instance 0 call 1  leaf vadd  1200 -> 3200
  t2 AIC core 0  window 0 instance 0 call 2  leaf mm    4000 -> 9000   preds t0, t1
  t3 AIV core 0  window 0 instance 1 call 0  leaf vexp 10000 -> 10500  pred t2
plus four AICPU runs (control thread 0, scheduler threads 1 and 2).
"""
import pytest

from pypto.dtypes import DataType
from pypto.machine.result import AicpuRun, SimResult, SimTask, TaskRun


def make_result(shuffle: bool = False) -> SimResult:
    def task(i, inst, call, leaf, leaf_index, core, preds=(), **kw):
        return SimTask(id=i, window=0, instance=inst, root="LOOP_B", root_index=3, call=call,
                       leaf=leaf, leaf_index=leaf_index, core=core, label=kw.pop("label", ""),
                       preds=list(preds), **kw)
    t0 = task(0, 0, 0, "vadd", 0, "AIV", mte2_bytes=1024, mte3_bytes=512, vector_cycles=300)
    t1 = task(1, 0, 1, "vadd", 0, "AIV", mte2_bytes=1024, mte3_bytes=512, vector_cycles=300)
    t2 = task(2, 0, 2, "mm", 1, "AIC", preds=(0, 1), label="Sa_C1", mte2_bytes=2048,
              cube_cycles=4000, merge={"l1_reuse": 2, "groups": (1, 2)},
              inputs=[{"magic": 5, "shape": [16, 32], "dtype": DataType.DT_FP16, "rawmagic": 3}],
              outputs=[{7: {"shape": [-1, 32], "dtype": 7, "rawmagic": 4}}])
    t3 = task(3, 1, 0, "vexp", 2, "AIV", preds=(2,), mte3_bytes=1024, vector_cycles=100)
    runs = [TaskRun(t0, 0, 1000, 3000, l2_hit_bytes=512, hbm_bytes=1024),
            TaskRun(t1, 1, 1200, 3200, l2_hit_bytes=512, hbm_bytes=1024),
            TaskRun(t2, 0, 4000, 9000, hbm_bytes=2048),
            TaskRun(t3, 0, 10000, 10500)]
    cpu = [AicpuRun(0, "build_window", 0, 800, {"window": 0}),
           AicpuRun(1, "dispatch", 800, 1000),
           AicpuRun(2, "dispatch", 850, 1050),
           AicpuRun(1, "resolve", 3200, 3590, {"task": 2})]
    flows = [(0, 2), (1, 2), (2, 3)]
    if shuffle:
        runs, cpu, flows = runs[::-1], cpu[::-1], flows[::-1]
    stats = {"kernel_cycles": 9500, "e2e_cycles": 11000, "gm_read_bytes": 4096,
             "gm_write_bytes": 2048, "l2_hit_bytes": 1024, "workspace_bytes": 512,
             "windows": 1, "instances": 2, "sched_threads": 3, "hbm_peak_gbps": 1.5,
             "aicpu_busy": {"ctrl": 800, "sched": 790}}
    return SimResult("toy", 1000, 2, 4, runs, cpu, flows, stats)


@pytest.fixture
def result() -> SimResult:
    return make_result()


@pytest.fixture
def shuffled() -> SimResult:
    """The same run with tasks, AICPU runs and flows in reverse order."""
    return make_result(shuffle=True)


@pytest.fixture
def odd_result() -> SimResult:
    """The run with every rare case the writer handles: ties between AICPU events, a
    zero-duration task, a merge dict JSON must convert, AICPU args that share keys with the
    task args (with other types), non-finite numbers."""
    result = make_result()
    result.aicpu += [AicpuRun(1, "dispatch", 800, 1000, {"z": 1}),
                     AicpuRun(1, "dispatch", 800, 1000, {"a": [1, 2]}),
                     AicpuRun(2, "resolve", 1100, 1200, {"window": "w0", "cost": 3,
                                                         "merge": None, "x": float("nan")})]
    result.tasks[3].end = result.tasks[3].start
    result.tasks[3].task.merge = {"a": (1, 2), 3: "x", "s": {2, 1}}
    result.tasks[0].hbm_bytes = float("inf")
    return result
