"""Random task graphs for the simulator's tests: AIC/AIV mixes across windows and instances,
reads and writes that hit L2, uncached storages, empty tasks, edges inside and across
instances."""
import random

from pypto.machine.result import SimTask

SHAPES = {1: (256, 1024), 2: (64, 64, 512), 3: (4096, 64), 4: (128, 128)}


def random_box(rng: random.Random) -> tuple:
    storage = rng.choice(list(SHAPES))
    shape = SHAPES[storage]
    ext = tuple(rng.choice([1, d // 8, d]) for d in shape)
    offs = tuple(rng.randrange(0, d - e + 1) for d, e in zip(shape, ext))
    return (storage, offs, ext), (shape, rng.choice([2, 4, 0.5]))


def random_graph(rng: random.Random) -> list[SimTask]:
    """Random DAGs across windows and instances: AIC/AIV mixes, reads and writes that hit L2,
    uncached storages, empty tasks, edges inside and across instances."""
    tasks: list[SimTask] = []
    per_instance, stitch = rng.randint(1, 8), rng.randint(1, 6)
    aic_share = rng.choice([0.0, 0.3, 1.0])
    for i in range(rng.randint(1, 150)):
        instance, call = divmod(i, per_instance)
        window, inst = divmod(instance, stitch)
        core = "AIC" if rng.random() < aic_share else "AIV"
        t = SimTask(i, window, inst, "root", 0, call, f"leaf{call}", call, core,
                    mte2_bytes=rng.choice([0, 4096, 65536]), mte1_bytes=rng.choice([0, 8192]),
                    vector_cycles=rng.choice([0, 300, 2000]), cube_cycles=rng.choice([0, 4096]),
                    mte3_bytes=rng.choice([0, 8192]), empty=rng.random() < 0.1,
                    uncached=frozenset({4}) if rng.random() < 0.3 else frozenset())
        # the shape and pipe terms of `timing.task_terms`: narrow bursts, MTE1, fixpipe
        t.mte2_moved = t.mte2_bytes * rng.choice([0, 1, 1.5, 4])
        t.mte3_moved = t.mte3_bytes * rng.choice([0, 1, 3])
        t.mte1_cycles = rng.choice([0, 64, 5000])
        t.fix_cycles = rng.choice([0, 900, 9000]) if core == "AIC" else 0.0
        first = i - call - inst * per_instance   # the window's first task
        t.preds = sorted(set(rng.sample(range(first, i), min(i - first, rng.randint(0, 3)))))
        for _ in range(rng.randint(0, 3)):
            acc, layout = random_box(rng)
            t.reads.append(acc)
            t.read_layouts.append(layout)
        if rng.random() < 0.5:
            acc, layout = random_box(rng)
            t.writes.append(acc)
            t.write_layouts.append(layout)
        tasks.append(t)
    return tasks
