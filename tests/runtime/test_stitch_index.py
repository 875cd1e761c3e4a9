"""Stitching's box index returns exactly the earlier boxes the all-pairs `_overlap` scan finds,
on random GM boxes: tile grids, unaligned and zero extents, whole-tensor boxes, mixed ranks."""
import random

import pytest

from pypto.machine.result import SimTask
from pypto.runtime.box_index import BoxIndex as _BoxIndex, boxes_overlap as _overlap


def _box(rng: random.Random, ranks: list[int]):
    rank = rng.choice(ranks)
    if rng.random() < 0.05:
        return tuple(0 for _ in range(rank)), tuple(64 for _ in range(rank))
    offs = tuple(rng.choice([rng.randrange(0, 64, 8), rng.randrange(0, 64)])
                 for _ in range(rank))
    ext = tuple(rng.choice([0, 1, 3, 8, 8, 8, 16]) for _ in range(rank))
    return offs, ext


@pytest.mark.parametrize("seed", range(8))
def test_box_index_matches_all_pairs_scan(seed):
    rng = random.Random(seed)
    ranks = [[2], [3], [1], [2, 3]][seed % 4]
    index = _BoxIndex()
    seen: list[tuple] = []
    for n in range(500):
        offs, ext = _box(rng, ranks)
        acc = (7, offs, ext)
        want = {box for box in dict.fromkeys(seen) if _overlap(acc, (7, *box))}
        got = index.overlapping(acc)
        assert len(got) == len(want)
        assert {id(g) for g in got} == {id(index.boxes[box]) for box in want}
        task = SimTask(n, 0, n % 5, "root", 0, 0, "leaf", 0, "AIV")
        index.add(task, acc)
        seen.append((offs, ext))
