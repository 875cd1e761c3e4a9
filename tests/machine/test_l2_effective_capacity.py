"""L2 keeps its effective capacity, not its physical size (runtime_facts §4): Huawei's matmul
templates treat 100 MiB of the 192 MiB as the working set (catlass `L2_TILE_THRESHOLD =
100 * 1024 * 1024`), so a working set between the two streams on re-read, and writes allocate
lines (write-allocate) that push inputs out. Both simulator cores: the compiled one gets what
L2 keeps from `compiled.constants`, no C++ of its own."""
import dataclasses

import pytest

from pypto.machine import compiled
from pypto.machine.memory import Memory, l2_kept
from pypto.machine.result import SimTask
from pypto.machine.simulate import simulate
from pypto.machine.spec import load

MIB = 1 << 20
ROWS = 512                 # rows of 1024 FP16 per task: 1 MiB
X, Y = 1, 2                # storage ids: an input and an output


def _physical():
    """a2a3 with L2 keeping all of its 192 MiB (the model before the effective capacity)."""
    spec = load("a2a3")
    memory = {**spec.memory, "l2_effective_capacity": spec.memory["l2_capacity"]}
    return dataclasses.replace(spec, memory=memory)


def _chain(passes: list[tuple], size: int | None = None) -> list[SimTask]:
    """One AIV task per MiB, each after the one before (so L2 sees them in this order): per
    pass (read, write or both, storage, MiB[, first MiB]) of a storage of `size` (default: the
    pass's) MiB, 1024 FP16 per row."""
    tasks: list[SimTask] = []
    for kind, storage, mib, *first in passes:
        shape = ((size or mib) * ROWS, 1024)
        for k in range(first[0] if first else 0, (first[0] if first else 0) + mib):
            i = len(tasks)
            t = SimTask(i, 0, i, "root", 0, 0, "leaf", 0, "AIV", vector_cycles=100,
                        preds=[i - 1] if i else [])
            box, layout = (storage, (k * ROWS, 0), (ROWS, 1024)), (shape, 2)
            if kind in ("read", "add"):
                t.mte2_bytes = MIB
                t.reads.append(box)
                t.read_layouts.append(layout)
            if kind in ("write", "add"):
                t.mte3_bytes = MIB
                t.writes.append(box)
                t.write_layouts.append(layout)
            tasks.append(t)
    return tasks


def _hit_mib(tasks: list[SimTask], spec, first: int) -> float:
    """MiB of L2 hits of the tasks from index `first` on."""
    result = simulate(tasks, spec, "l2", 0, (), None)
    return sum(r.l2_hit_bytes for r in result.tasks if r.task.id >= first) / MIB


def test_the_constants():
    """100 MiB (the source's 100 * 1024 * 1024) of a2a3's 192 MiB; 910B4 by proportion; a
    machine file that shrinks L2 below it keeps its whole L2; the compiled core gets the same."""
    a2 = load("a2a3")
    assert (a2.memory["l2_capacity"], l2_kept(a2.memory)) == (192 * MIB, 100 * MIB)
    assert l2_kept(load("910b4").memory) == 168 * MIB * 100 // 192
    assert l2_kept({**a2.memory, "l2_capacity": 8 * MIB}) == 8 * MIB
    assert l2_kept({"l2_capacity": 4096}) == 4096
    c = compiled.constants(a2, 0, None)
    assert (c["l2_capacity"], c["l2_max_lines"]) == (100 * MIB, Memory(a2.memory).l2.max_lines)


def test_a_working_set_between_100_and_192_mib_streams(sim_core):
    """150 MiB read twice in order: the second pass misses everywhere with the effective
    capacity (an LRU of 100 MiB), and hits everywhere when L2 keeps all 192 MiB."""
    tasks = _chain([("read", X, 150), ("read", X, 150)])
    assert _hit_mib(tasks, load("a2a3"), 150) == 0
    assert _hit_mib(tasks, _physical(), 150) == 150
    # a working set under 100 MiB keeps hitting either way
    small = _chain([("read", X, 90), ("read", X, 90)])
    assert _hit_mib(small, load("a2a3"), 90) == _hit_mib(small, _physical(), 90) == 90


def test_writes_allocate_lines_that_evict_inputs(sim_core):
    """60 MiB read, 60 MiB written, the 60 MiB read again: the writes' lines push the input
    out of a 100 MiB L2 (no re-read hits); with the output NONE_CACHEABLE, or in a 192 MiB
    L2, the input stays (every re-read hits)."""
    tasks = _chain([("read", X, 60), ("write", Y, 60), ("read", X, 60)])
    assert _hit_mib(tasks, load("a2a3"), 120) == 0
    assert _hit_mib(tasks, _physical(), 120) == 60
    for t in tasks:
        t.uncached = frozenset({Y})
    assert _hit_mib(tasks, load("a2a3"), 120) == 60


@pytest.mark.parametrize("physical", [False, True])
def test_write_back_absorbs_what_l2_keeps(physical):
    """Writes land in L2 until the kernel has written what L2 keeps (100 MiB on a2a3), then
    each write evicts a dirty line and goes at the HBM share."""
    memory = Memory((_physical() if physical else load("a2a3")).memory)
    landed = [memory.serve(t)[2] for t in _chain([("write", Y, 120)])]
    assert landed == [True] * 120 if physical else [True] * 100 + [False] * 20


def test_the_sources_l2_split_sample(sim_core):
    """asc-devkit's L2 split sample (runtime_facts §4): `data = data + 1` in place on 384 MiB,
    two rounds. Whole rounds: the second finds nothing of the first in L2. Four 96 MiB batches
    (under its "100MB effective working-set threshold"), both rounds per batch: every second
    round hits."""
    whole = _chain([("add", X, 384), ("add", X, 384)])
    assert _hit_mib(whole, load("a2a3"), 0) == 0
    batches = _chain([("add", X, 96, 96 * b) for b in range(4) for _ in range(2)], size=384)
    assert _hit_mib(batches, load("a2a3"), 0) == 4 * 96
