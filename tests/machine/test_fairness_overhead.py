"""The fairness modes of `device_sched_mode` (2, 3) cost their scheduler threads
`fairness_cycles_per_dispatch` more per dispatched task (PyPTO documents "extra scheduling
cost"; the number is assumed, a2a3.toml): exactly that much more dispatch work on the threads'
records when the picks are the same as mode 0's, and at 0 the timelines before the overhead
existed, unchanged. Both simulator cores."""
import dataclasses
import random

import pytest

from _graphs import random_graph
from pypto.machine import compiled
from pypto.machine.result import SimTask
from pypto.machine.simulate import simulate
from pypto.machine.spec import load
from test_simulate_pinned import _interleaved, _tasks

FAIR = 100.0   # a2a3.toml's assumed fairness_cycles_per_dispatch


def _spec(fairness: float | None = None, **changes):
    base = load("a2a3")
    aicpu = dict(base.aicpu)
    if fairness is not None:
        aicpu["fairness_cycles_per_dispatch"] = fairness
    return dataclasses.replace(base, aicpu=aicpu, **changes)


def _chains(chains: int, length: int) -> list[SimTask]:
    """`chains` independent chains of `length` vector tasks, one window."""
    tasks = []
    for c in range(chains):
        for k in range(length):
            i = c * length + k
            tasks.append(SimTask(i, 0, c, "root", 0, k, "leaf", 0, "AIV", vector_cycles=1500,
                                 preds=[i - 1] if k else []))
    return tasks


def _dispatch_work(result) -> dict[int, tuple[float, int]]:
    """Per scheduler thread: its dispatch records' total time and the tasks they dispatched."""
    out: dict[int, tuple[float, int]] = {}
    for r in result.aicpu:
        if r.name == "dispatch":
            cycles, count = out.get(r.thread, (0.0, 0))
            out[r.thread] = (cycles + (r.end - r.start), count + r.args["count"])
    return out


def test_the_default_constant_is_the_assumed_one():
    a = load("a2a3").aicpu
    assert a["fairness_cycles_per_dispatch"] == FAIR
    for mode, cost in ((0, 100.0), (1, 100.0), (2, 200.0), (3, 200.0)):
        assert compiled.constants(load("a2a3"), mode, None)["dispatch_cost"] == cost


@pytest.mark.parametrize("threads", [1, None])
def test_mode_2_pays_the_overhead_on_every_dispatch(threads, sim_core):
    """Chains on as many cores as there are chains: every core is idle when its next task is
    ready, so mode 2 picks what mode 0 picks (each chain keeps its core); it only dispatches
    slower, by `fairness_cycles_per_dispatch` per task, on each thread's records."""
    spec = _spec(aic=1, aiv=3)
    tasks = _chains(3, 6)
    fifo = simulate(tasks, spec, "k", 0, (), threads)
    fair = simulate(tasks, spec, "k", 2, (), threads)
    assert [r.core_index for r in fair.tasks] == [r.core_index for r in fifo.tasks]
    work0, work2 = _dispatch_work(fifo), _dispatch_work(fair)
    assert {t: n for t, (_, n) in work2.items()} == {t: n for t, (_, n) in work0.items()}
    assert sum(n for _, n in work2.values()) == len(tasks)
    for thread, (cycles, n) in work2.items():
        assert cycles - work0[thread][0] == n * FAIR


def test_a_chain_ends_one_overhead_later_per_task(sim_core):
    """One chain, one thread: nothing else queues on the thread, so its k-th task starts k+1
    overheads later than in mode 0, and the run ends `length` overheads later."""
    spec = _spec(aic=1, aiv=1)
    fifo, fair = (simulate(_chains(1, 8), spec, "k", mode, (), 1) for mode in (0, 2))
    assert [b.start - a.start for a, b in zip(fifo.tasks, fair.tasks)] == \
        [(k + 1) * FAIR for k in range(8)]
    assert fair.stats["e2e_cycles"] - fifo.stats["e2e_cycles"] == 8 * FAIR


@pytest.mark.parametrize("mode", [2, 3])
def test_every_dispatch_costs_dispatch_plus_fairness(mode, sim_core):
    """Whatever the picks, each thread's dispatch work is its tasks times the sum of both."""
    cost = load("a2a3").aicpu["dispatch_cycles_per_task"] + FAIR
    for seed in range(10):
        rng = random.Random(seed)
        result = simulate(random_graph(rng), _spec(), "k", mode, (), rng.choice([None, 2]))
        for cycles, n in _dispatch_work(result).values():
            assert cycles == n * cost


# the pinned timelines of test_simulate_pinned in modes 2/3 before fairness cost anything
BEFORE = {
    (_tasks, 3, 3000, 16, 2): (1143320.0010416666, 'b78511112c2fad46'),
    (_tasks, 4, 3000, 128, 3): (850351.2757442186, 'e1651e277e1910bd'),
    (_interleaved, 12, 1500, 16, 3): (582105.1518695395, '265e5301a7976ce5'),
}


@pytest.mark.parametrize("case", list(BEFORE), ids=lambda c: f"{c[0].__name__}-{c[1]}")
def test_at_zero_the_timelines_are_those_before(case, sim_core):
    make, seed, n, stitch, mode = case
    result = simulate(make(seed, n, stitch), _spec(0), "pinned", mode)
    assert (float(result.stats["kernel_cycles"]), result.digest()) == BEFORE[case]
    charged = simulate(make(seed, n, stitch), _spec(), "pinned", mode)
    assert charged.stats["kernel_cycles"] > BEFORE[case][0]
