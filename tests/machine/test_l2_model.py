"""The L2 model's shortcuts (fast paths for one-run boxes, remembered line runs, the recent
region, deferred stamp writes) count exactly the hits of its plain definition: a line hits when
fewer than `capacity / line` line accesses happened since it was last touched."""
import math
import random

import pytest

from pypto.machine.memory import L2, segments

SHAPES = {1: (64, 1024), 2: (8, 16, 512), 3: (4096,), 4: (32, 32)}


class PlainL2:
    """The definition, one line at a time."""

    def __init__(self, capacity: float, line: int):
        self.line, self.max_lines = line, max(1, int(capacity // line))
        self.clock = 0
        self.stamps: dict[tuple[int, int], int] = {}

    def access(self, accs, layouts, uncached):
        nbytes, hit, total, cached = 0.0, 0, 0, False
        for (storage, offs, ext), (shape, itemsize) in zip(accs, layouts):
            nbytes += math.prod(ext) * itemsize
            if storage in uncached:
                continue
            cached = True
            for start, length in segments(offs, ext, shape):
                first = int(start * itemsize) // self.line
                last = int((start + length) * itemsize - 1) // self.line
                lines = range(first, last + 1)
                hit += sum(self.stamps.get((storage, k), -2**62) >= self.clock - self.max_lines
                           for k in lines)
                self.clock += len(lines)
                for k in lines:
                    self.stamps[storage, k] = self.clock
                total += len(lines)
        return nbytes, hit, total, cached


def _box(rng: random.Random, storage: int) -> tuple:
    shape = SHAPES[storage]
    kind = rng.random()
    if kind < 0.4:      # part of one row
        ext = (1,) * (len(shape) - 1) + (rng.randint(1, shape[-1]),)
    elif kind < 0.7:    # whole inner dims
        ext = tuple(rng.choice([1, d // 4]) for d in shape[:-1]) + (shape[-1],)
    else:               # anything (strided)
        ext = tuple(rng.randint(1, d) for d in shape)
    offs = tuple(rng.randrange(0, d - e + 1) for d, e in zip(shape, ext))
    return (storage, offs, ext), (shape, rng.choice([2, 4, 0.5]))


@pytest.mark.parametrize("seed", range(6))
def test_hits_match_the_plain_definition(seed):
    rng = random.Random(seed)
    capacity = rng.choice([4096, 32768, 1 << 20])
    fast, plain = L2(capacity, 128), PlainL2(capacity, 128)
    recent: list[tuple] = []
    for _ in range(600):
        boxes = []
        for _ in range(rng.randint(1, 3)):
            if recent and rng.random() < 0.4:   # re-read a recent box (covers its own lines)
                boxes.append(rng.choice(recent[-8:]))
            else:
                boxes.append(_box(rng, rng.choice(list(SHAPES))))
        recent += boxes
        accs, layouts = [b[0] for b in boxes], [b[1] for b in boxes]
        uncached = frozenset({4}) if rng.random() < 0.2 else frozenset()
        assert fast.access(accs, layouts, uncached) == plain.access(accs, layouts, uncached)
