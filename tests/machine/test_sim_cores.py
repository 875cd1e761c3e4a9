"""The compiled core (`machine/_simcore.cpp`) decides exactly what the Python model
(`simulate.Simulator`, THE definition) decides, bit for bit: the same cores, starts, ends, L2
hits, AICPU records, flows and stats, on random task graphs in every scheduling mode, with one
to three slots per core, tiny and large L2s, few and many cores. And which core runs is the
user's to choose (`OPENPTO_SIM`)."""
import dataclasses
import random
import subprocess
import sys

import pytest

from _graphs import random_graph
from pypto.machine import compiled
from pypto.machine.simulate import Simulator, simulate
from pypto.machine.spec import load

needs_core = pytest.mark.skipif(not compiled.available(), reason=compiled.unavailable_reason())


def _spec(rng: random.Random):
    base = load("a2a3")
    return dataclasses.replace(
        base, aic=rng.choice([1, 2, 24]), aiv=rng.choice([1, 3, 48]),
        aicpu={**base.aicpu, "slots_per_core": rng.choice([1, 2, 3]),
               "completion_cycles": rng.choice([0, 324, 5000])},
        task={**base.task, "cold_start_cycles": rng.choice([0, 0, 3000])},
        memory={**base.memory, "l2_capacity": rng.choice([1 << 14, 1 << 20, 192 << 20])})


@needs_core
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_the_compiled_core_equals_the_model(mode):
    for seed in range(40):
        rng = random.Random(seed * 4 + mode)
        spec, tasks, threads = _spec(rng), random_graph(rng), rng.choice([None, 1, 2])
        model = Simulator(spec, mode, threads).run(tasks, "k", [1024.0] * 4)
        fast = compiled.simulate_compiled(tasks, spec, "k", mode, [1024.0] * 4, threads)
        assert fast.tasks == model.tasks
        assert fast.aicpu == model.aicpu
        assert fast.flows == model.flows
        assert fast.stats == model.stats
        assert fast.digest() == model.digest()


@needs_core
def test_a_task_waiting_outside_its_window_is_a_named_error():
    rng = random.Random(5)
    tasks = random_graph(rng)
    tasks[-1].preds.append(10**9)
    with pytest.raises(ValueError, match="waits for task 1000000000"):
        compiled.simulate_compiled(tasks, load("a2a3"), "k", 0, (), None)


def test_openpto_sim_chooses_the_core(monkeypatch):
    monkeypatch.setenv(compiled.ENV, "python")
    assert compiled.core() == "python"
    monkeypatch.setenv(compiled.ENV, "fortran")
    with pytest.raises(ValueError, match="OPENPTO_SIM='fortran'"):
        compiled.core()
    monkeypatch.setenv(compiled.ENV, "compiled")
    if compiled.available():
        assert compiled.core() == "compiled"
    else:
        with pytest.raises(RuntimeError, match="C\\+\\+17 compiler"):
            compiled.core()


def test_without_the_core_the_model_runs_after_one_warning(tmp_path):
    # a fresh interpreter where importing the extension fails, as on a machine without a
    # compiler: one warning naming how to build it, then the same timeline
    script = f"""
import sys, warnings
sys.modules["pypto.machine._simcore"] = None   # import fails
warnings.simplefilter("always")
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
import random
from _graphs import random_graph
from pypto.machine import compiled
from pypto.machine.simulate import simulate
from pypto.machine.spec import load
tasks = random_graph(random.Random(3))
with warnings.catch_warnings(record=True) as seen:
    first = simulate(tasks, load("a2a3"), "k")
    simulate(tasks, load("a2a3"), "k")
assert not compiled.available()
print(len(seen), str(seen[0].message) if seen else "", first.digest())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**__import__("os").environ, "OPENPTO_SIM": ""}, check=True)
    count, *message, digest = out.stdout.split()
    assert count == "1" and "pip install -e ." in " ".join(message)
    expected = Simulator(load("a2a3")).run(random_graph(random.Random(3)), "k").digest()
    assert digest == expected


def test_simulate_takes_the_core_it_is_told(sim_core):
    rng = random.Random(9)
    tasks = random_graph(rng)
    assert simulate(tasks, load("a2a3"), "k", 1).digest() == \
        Simulator(load("a2a3"), 1).run(tasks, "k").digest()


def test_a_table_gives_back_its_tasks():
    # a table made from SimTasks hands back the same ones; one made from its columns alone
    # rebuilds equal ones (what a stitcher that makes columns in bulk relies on)
    from pypto.machine.task_table import TaskTable, task_table
    tasks = random_graph(random.Random(4))
    assert TaskTable.of(tasks).tasks() is tasks
    names = {"root": ["root"], "leaf": sorted({t.leaf for t in tasks}), "label": [""]}
    columns = task_table(tasks)
    columns["root_code"] = [0] * len(tasks)
    columns["leaf_code"] = [names["leaf"].index(t.leaf) for t in tasks]
    columns["label_code"] = [0] * len(tasks)
    columns["call"] = [t.call for t in tasks]
    columns["leaf_index"] = [t.leaf_index for t in tasks]
    rebuilt = TaskTable(columns, names).tasks()
    # what the table carries: all the simulator reads (not mte1_bytes, operand hints, merge
    # groups, or uncached storages no box touches)
    carried = [f.name for f in dataclasses.fields(tasks[0])
               if f.name not in ("mte1_bytes", "inputs", "outputs", "merge", "uncached")]
    for made, task in zip(rebuilt, tasks):
        assert [getattr(made, k) for k in carried] == [getattr(task, k) for k in carried]
        touched = {s for s, _, _ in task.reads + task.writes}
        assert made.uncached == task.uncached & touched


@needs_core
def test_a_compiled_run_makes_its_records_only_when_read():
    tasks = random_graph(random.Random(6))
    run = compiled.simulate_compiled(tasks, load("a2a3"), "k", 0, (), None)
    assert {"tasks", "aicpu", "flows"}.isdisjoint(vars(run))   # not made yet
    assert run.stats["tasks"] == len(run.columns)
    model = Simulator(load("a2a3")).run(tasks, "k")
    assert run.tasks == model.tasks and "tasks" in vars(run)
    assert run == model and dataclasses.asdict(run)["aicpu"] == dataclasses.asdict(model)["aicpu"]
