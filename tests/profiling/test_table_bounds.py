"""The tuner's bound on columns (`profiling.table_bounds`) equals its definition on task
objects (`profiling.bounds.before_scheduling`) to the last bit: on random task graphs (boxes of
every kind: strided, whole, partial, fractional itemsizes), on kernels the stitcher tables,
and on a table whose rows are out of dependency order."""
import dataclasses
import random
import sys
from pathlib import Path

import pypto
import pytest
import torch

from pypto.machine.spec import load
from pypto.machine.task_table import TaskTable
from pypto.profiling import bounds, table_bounds

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "machine"))
from _graphs import random_graph  # noqa: E402


def one_itemsize_per_storage(tasks):
    """A storage's boxes all of its dtype (random_graph draws an itemsize per box, for which
    the object form's union is not defined: it takes whichever box comes last)."""
    sizes = {1: 2, 2: 4, 3: 0.5, 4: 2}
    for t in tasks:
        t.read_layouts = [(shape, sizes[sid]) for (sid, _, _), (shape, _) in
                          zip(t.reads, t.read_layouts)]
        t.write_layouts = [(shape, sizes[sid]) for (sid, _, _), (shape, _) in
                           zip(t.writes, t.write_layouts)]
    return tasks


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs(seed):
    tasks = one_itemsize_per_storage(random_graph(random.Random(seed)))
    spec = load()
    # a small L2 makes the outputs' term count too
    spec_small = dataclasses.replace(spec, memory={**spec.memory, "l2_capacity": 4096})
    for s in (spec, spec_small):
        table = TaskTable.of(tasks)
        assert table_bounds.before_scheduling(table, s) == bounds.before_scheduling(tasks, s)
    c = TaskTable.of(tasks).columns
    assert table_bounds.compulsory_bytes(c, 0) == bounds.tasks_compulsory_bytes(tasks, 0)


def test_a_kernel_the_stitcher_tabled():
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only"})
    def mm(a: pypto.Tensor([512, 256], pypto.DT_FP16), b: pypto.Tensor([256, 384], pypto.DT_FP16),
           out: pypto.Tensor([512, 384], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [128, 128], [128, 128])
        pypto.set_vec_tile_shapes(64, 128)
        out[:] = pypto.exp(pypto.matmul(a, b, pypto.DT_FP32) * 0.01)

    mm(torch.zeros(512, 256).half(), torch.zeros(256, 384).half(), torch.zeros(512, 384))
    pending = mm.last.pending
    if pending.table is None:
        pytest.skip("the Python core: the stitcher makes no table")
    assert table_bounds.before_scheduling(pending.table, pending.spec) == \
        bounds.before_scheduling(pending.tasks, pending.spec)


def test_rows_out_of_dependency_order_take_the_object_form():
    tasks = random_graph(random.Random(3))
    while len(tasks) < 3 or not any(t.preds for t in tasks):
        tasks = random_graph(random.Random(len(tasks) + 100))
    later = next(t for t in tasks if t.preds)
    later.preds.append(len(tasks) - 1)   # a predecessor after it (still acyclic? make it so)
    tasks[-1].preds = [p for p in tasks[-1].preds if p != later.id]
    spec = load()
    try:
        expected = bounds.before_scheduling(tasks, spec)
    except pypto.PyptoError:
        pytest.skip("the edit made a cycle")
    assert table_bounds.before_scheduling(TaskTable.of(tasks), spec) == expected
