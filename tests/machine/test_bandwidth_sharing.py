"""GM bandwidth is shared as it happens (`machine.flow`, the fluid model): a task's busiest
pipe runs at the share it has at each moment, so a burst of HBM-bound tasks takes about the
fluid time (all bytes at the HBM bandwidth) and never less, and equal tasks that run side by
side take equal time, whatever order they were dispatched in."""
import pytest

from pypto.machine.result import SimTask
from pypto.machine.simulate import simulate
from pypto.machine.spec import load
from pypto.machine.timing import CoreTiming, busy_cycles, task_terms

MIB = 1 << 20


def _burst(n: int, size: int = MIB) -> list[SimTask]:
    """n independent AIV tasks that each read `size` bytes of their own and barely compute."""
    tasks = []
    for i in range(n):
        t = SimTask(i, 0, i, "root", 0, 0, "leaf0", 0, "AIV", mte2_bytes=size,
                    vector_cycles=10)
        t.reads.append((1, (i, 0), (1, size // 4)))
        t.read_layouts.append(((n, size // 4), 4))
        tasks.append(t)
    return tasks


@pytest.mark.parametrize("n", [24, 48, 96, 200])
def test_a_burst_takes_about_the_fluid_time_and_never_less(n):
    spec = load("a2a3")
    result = simulate(_burst(n), spec, "burst")
    span = max(r.end for r in result.tasks) - min(r.start for r in result.tasks)
    fluid = n * MIB / spec.memory["hbm_bytes_per_cycle"]
    assert fluid <= span <= 1.1 * fluid


def test_a_burst_shares_alike_whatever_the_dispatch_order():
    # 48 equal tasks on 48 AIV cores: dispatched one after another, they all run together
    # for most of their lives, and processor sharing gives them nearly equal durations (the
    # first ones run alone only for the few dispatches before the others begin)
    result = simulate(_burst(48), load("a2a3"), "burst")
    durations = [r.end - r.start for r in result.tasks]
    assert max(durations) / min(durations) < 1.05


def test_a_lone_task_takes_its_own_rate_and_a_shared_one_its_share():
    spec = load("a2a3")
    core = CoreTiming.of(spec, "AIV")
    alone = simulate(_burst(1, 4 * MIB), spec, "one").tasks[0]
    task = alone.task
    pipe = busy_cycles(task_terms(task, False), core, 0.0, 4 * MIB, False, False,
                       float(spec.memory["hbm_bytes_per_cycle"]),
                       float(spec.memory["l2_bytes_per_cycle"]))
    assert alone.end - alone.start == core.head + core.fill_latency + pipe
    assert pipe == 4 * MIB / core.in_bw   # one task is capped by its core's DMA rate


def test_a_task_speeds_up_when_the_others_end():
    # one long task beside 47 short ones: it runs at 1/48 of HBM while they run, then at its
    # core's rate; its end lies between both constant-share answers
    spec = load("a2a3")
    tasks = _burst(48, 64 * 1024)
    long = tasks[0]
    long.mte2_bytes = 8 * MIB
    long.reads[0] = (2, (0, 0), (1, 2 * MIB))
    long.read_layouts[0] = ((1, 2 * MIB), 4)
    result = simulate(tasks, spec, "mixed")
    run = next(r for r in result.tasks if r.task.id == 0)
    core = CoreTiming.of(spec, "AIV")
    own_rate = 8 * MIB / core.in_bw
    shared = 8 * MIB / (spec.memory["hbm_bytes_per_cycle"] / 48)
    assert own_rate < run.end - run.start - core.head - core.fill_latency < shared
