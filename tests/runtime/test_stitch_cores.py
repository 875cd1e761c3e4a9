"""Stitching's links by the compiled core (`InstanceLinker.link_compiled`, `_simcore.link`)
are exactly those of the Python definition (`InstanceLinker.link`): the same new predecessors
per task, in the same order, and the same count of cross-instance edges, on random windows
with several roots, a root's private workspace, temps whose creating root starts a new
generation, kernel memory, overlapping and identical boxes, and boxes of mixed ranks."""
import copy
import random

import pytest

from pypto.machine import compiled
from pypto.machine.result import SimTask
from pypto.runtime.slot_facts import SlotFacts
from pypto.runtime.stitch import Stitcher

pytestmark = pytest.mark.skipif(not compiled.available(), reason=compiled.unavailable_reason())

SHAPES = {1: (16, 64), 2: (8, 8, 32), 3: (64,), 4: (32, 32), 5: (16, 16)}


def _box(rng: random.Random, sid: int) -> tuple:
    shape = SHAPES[sid]
    if rng.random() < 0.05:   # a reshaped alias: another rank on the same storage
        shape = (shape[0] * (shape[1] if len(shape) > 1 else 1),) + shape[2:]
    ext = tuple(rng.choice([0, 1, max(1, d // 4), d // 2, d]) for d in shape)
    offs = tuple(rng.randrange(0, d - e + 1) if rng.random() < 0.9 else rng.randrange(0, d)
                 for d, e in zip(shape, ext))
    return (sid, offs, ext)


def _window(rng: random.Random) -> tuple[list[SimTask], SlotFacts]:
    roots = ["a", "b", "c"][:rng.randint(1, 3)]
    facts = SlotFacts(private={r: frozenset(rng.sample([4, 5], rng.randint(0, 1)))
                               for r in roots},
                      creators={sid: frozenset(rng.sample(roots, rng.randint(1, len(roots))))
                                for sid in (4, 5) if rng.random() < 0.7})
    tasks = []
    for inst in range(rng.randint(1, 12)):
        root = rng.choice(roots)
        first = len(tasks)
        for call in range(rng.randint(1, 5)):
            t = SimTask(len(tasks), 0, inst, root, 0, call, "leaf", 0, "AIV")
            t.reads = [_box(rng, rng.choice(list(SHAPES))) for _ in range(rng.randint(0, 3))]
            t.writes = [_box(rng, rng.choice(list(SHAPES))) for _ in range(rng.randint(0, 2))]
            if call and rng.random() < 0.5:
                t.preds.append(rng.randrange(first, len(tasks)))
            tasks.append(t)
    return tasks, facts


@pytest.mark.parametrize("seed", range(8))
def test_the_compiled_links_equal_the_definition(seed):
    rng = random.Random(seed)
    for _ in range(60):
        tasks, facts = _window(rng)
        model, fast = Stitcher(8, 1 << 30, facts), Stitcher(8, 1 << 30, facts)
        mine, theirs = copy.deepcopy(tasks), copy.deepcopy(tasks)
        model.linker.link(mine)
        assert fast.linker.link_compiled(theirs)[0]
        assert [t.preds for t in theirs] == [t.preds for t in mine]
        assert fast.cross_edges == model.cross_edges


@pytest.mark.parametrize("seed", range(4))
def test_windows_linked_in_one_batch_equal_window_by_window(seed, monkeypatch):
    # the compiled core links the windows closed since the last flush in one call (nothing
    # links across windows); the Python definition links each as it closes
    rng = random.Random(100 + seed)
    tasks, facts = _window(rng)
    for t in tasks:   # layouts, so the simulator's table is made too
        t.read_layouts = [(SHAPES[s] if len(o) == len(SHAPES[s]) else (1 << 20,) * len(o), 4)
                          for s, o, _ in t.reads]
        t.write_layouts = [(SHAPES[s] if len(o) == len(SHAPES[s]) else (1 << 20,) * len(o), 4)
                           for s, o, _ in t.writes]
    runs, per_window = {}, rng.choice([1, 2, 3])
    for core in ("python", "compiled"):
        monkeypatch.setenv(compiled.ENV, core)
        stitcher = Stitcher(per_window, 1 << 30, facts)
        rng_copy = random.Random(seed)
        for inst in sorted({t.instance for t in tasks}):
            mine = [copy.deepcopy(t) for t in tasks if t.instance == inst]
            stitcher.begin_instance(len(mine))
            first = len(stitcher.tasks)
            for t in mine:   # predecessors inside the instance, by position
                t.preds = [first + p - mine[0].id for p in t.preds]
                stitcher.add(t)
            if rng_copy.random() < 0.2:
                stitcher.flush()   # a batch boundary in the middle (submit_before_loop)
        stitcher.flush()
        runs[core] = stitcher
    python, fast = runs["python"], runs["compiled"]
    assert [(t.window, t.instance, t.preds) for t in fast.tasks] == \
        [(t.window, t.instance, t.preds) for t in python.tasks]
    assert fast.cross_edges == python.cross_edges
    if fast.table is not None:   # one batch: its columns carry the linked predecessors
        ptr, preds = fast.table.columns["pred_ptr"], fast.table.columns["preds"]
        assert [preds[a:b].tolist() for a, b in zip(ptr[:-1], ptr[1:])] == \
            [t.preds for t in fast.tasks]
