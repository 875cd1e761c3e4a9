"""The AICPU's share of a dependency hop and of a call, on hand-made task graphs: a finished
task is seen by its scheduler thread `completion_cycles` after it ends, its successors are
resolved and dispatched from then on, and the host's launch is counted in `host_e2e_cycles`
only (the timeline starts at the first build)."""
import dataclasses

import pytest

from pypto.machine.result import SimTask
from pypto.machine.simulate import Simulator
from pypto.machine.spec import load


def _chain(windows: tuple[int, ...]) -> list[SimTask]:
    """One vector task per entry, each waiting for the one before; entry = its window."""
    tasks = []
    for i, w in enumerate(windows):
        tasks.append(SimTask(i, w, 0, "root", 0, i, "leaf", 0, "AIV", vector_cycles=1000,
                             preds=[i - 1] if i and windows[i - 1] == w else []))
    return tasks


def _run(tasks, **aicpu):
    base = load("a2a3")
    spec = dataclasses.replace(base, aicpu={**base.aicpu, **aicpu})
    result = Simulator(spec).run(tasks, "k")
    return spec, result


@pytest.mark.parametrize("completion", [0, 324, 4000])
def test_a_hop_pays_completion_resolve_and_dispatch(completion):
    spec, result = _run(_chain((0, 0)), completion_cycles=completion)
    first, second = sorted(result.tasks, key=lambda r: r.task.id)
    a = spec.aicpu
    assert second.ready == first.end + completion + a["resolve_cycles_per_edge"]
    assert second.start == second.ready + a["dispatch_cycles_per_task"]


def test_the_next_window_waits_until_the_last_end_is_seen():
    free = {"launch_cycles": 0, "window_base_cycles": 0, "instance_cycles": 0}
    spec, slow = _run(_chain((0, 1)), completion_cycles=20000, **free)
    _, fast = _run(_chain((0, 1)), completion_cycles=0, **free)
    gap = [b.start - a.end for a, b in (sorted(r.tasks, key=lambda r: r.task.id)
                                        for r in (slow, fast))]
    assert gap[0] - gap[1] == 20000


def test_the_host_launch_is_in_host_e2e_only():
    spec, result = _run(_chain((0,)), start_cycles=90000)
    st = result.stats
    assert st["host_launch_cycles"] == 90000
    assert st["host_e2e_cycles"] == st["e2e_cycles"] + 90000
    # the timeline itself starts with the first build at cycle 0
    assert min(a.start for a in result.aicpu) == 0.0
    assert "with the host's launch" in result.summary()
