"""GM bandwidth is shared over a task's life, not frozen at its dispatch (`machine.sharing`):
the time-average count of the tasks beside it, and a burst of HBM-bound tasks then takes about
the fluid model's time (all bytes at the HBM bandwidth) and never less."""
import pytest

from pypto.machine.result import SimTask, TaskRun
from pypto.machine.sharing import lifetime_sharers
from pypto.machine.simulate import Simulator, simulate
from pypto.machine.spec import load

MIB = 1 << 20


def _run(task_id: int, start: float, end: float, empty: bool = False) -> TaskRun:
    task = SimTask(task_id, 0, 0, "root", 0, 0, "leaf", 0, "AIV", empty=empty)
    return TaskRun(task, 0, start, end)


def test_sharers_are_the_time_average_of_the_tasks_running_beside():
    # 0: [0, 10] alone for 5 then with 1 -> 1.5; 1: [5, 10] always with 0 -> 2;
    # 2: empty, never a sharer; 3: did not run -> 1
    runs = [_run(0, 0, 10), _run(1, 5, 10), _run(2, 0, 10, empty=True)]
    assert lifetime_sharers(runs, 4) == [1.5, 2.0, 1.0, 1.0]


def _burst(n: int) -> list[SimTask]:
    """n independent AIV tasks that each read 1 MiB of their own and barely compute."""
    tasks = []
    for i in range(n):
        t = SimTask(i, 0, i, "root", 0, 0, "leaf0", 0, "AIV", mte2_bytes=MIB,
                    vector_cycles=10)
        t.reads.append((1, (i, 0), (1, MIB // 4)))
        t.read_layouts.append(((n, MIB // 4), 4))
        tasks.append(t)
    return tasks


@pytest.mark.parametrize("n", [24, 48, 96, 200])
def test_a_burst_takes_about_the_fluid_time_and_never_less(n):
    spec = load("a2a3")
    result = simulate(_burst(n), spec, "burst")
    span = max(r.end for r in result.tasks) - min(r.start for r in result.tasks)
    fluid = n * MIB / spec.memory["hbm_bytes_per_cycle"]
    assert fluid <= span <= 1.1 * fluid


def test_a_burst_shares_alike_where_dispatch_order_made_the_first_tasks_fast():
    spec, tasks = load("a2a3"), _burst(48)
    spread = {}
    for name, result in (("at dispatch", Simulator(spec).run(tasks, "burst")),
                         ("over the life", simulate(tasks, spec, "burst"))):
        durations = [r.end - r.start for r in result.tasks]
        spread[name] = max(durations) / min(durations)
    assert spread["at dispatch"] > 3 > 2 > spread["over the life"]   # 3.4 vs 1.8
