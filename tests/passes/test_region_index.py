"""The dependency pass's region index returns exactly what the all-pairs scan returns: the same
earlier entries, in program order, duplicates included, on random regions with constant and
symbolic offsets, zero-size dims, unshaped and whole accesses and mixed ranks."""
import random

import pytest

from pypto.box_grid import BoxGrid
from pypto.dtypes import DataType
from pypto.ir.tensor import Storage, StorageKind, TensorValue
from pypto.passes.deps import _RegionIndex, _touches
from pypto.passes.kinds import AIV, COMPUTE, WHOLE
from pypto.passes.tile_graph import Region, TileOp, split_offset
from pypto.symbolic import Const, Sym, binary
from pypto.symbolic import const_diff

I, J, N = Sym("i"), Sym("j"), Sym("n")


def _value(rank: int) -> TensorValue:
    shape = tuple(Const(64) for _ in range(rank))
    storage = Storage(1, StorageKind.ARG, "x", DataType.DT_FP32, shape)
    return TensorValue(2, shape, DataType.DT_FP32, shape, storage)


def _offset(rng: random.Random, symbolic: bool):
    c = rng.randrange(-4, 24)
    if not symbolic or rng.random() < 0.5:
        return Const(c)
    base = rng.choice([binary("mul", I, 8), binary("add", binary("mul", I, 8), J), N,
                       binary("min", N, 16), binary("mul", I, J)])
    return binary("add", base, c)


def _region(rng: random.Random, ranks: list[int], symbolic: bool) -> Region:
    rank = rng.choice(ranks)
    if rng.random() < 0.03:
        return Region(_value(rank), (), (), ())      # unshaped: a whole-tensor access
    shape = tuple(rng.choice([0, 1, 2, 3, 4, 4, 4, 8, 30]) for _ in range(rank))
    offsets = tuple(_offset(rng, symbolic) for _ in range(rank))
    return Region(_value(rank), offsets, shape, tuple(Const(s) for s in shape))


@pytest.mark.parametrize("seed", range(12))
def test_index_matches_all_pairs_scan(seed):
    """Each query's answer is the all-pairs `_touches` scan over the entries added so far."""
    rng = random.Random(seed)
    ranks = [[2], [3], [1, 2], [2, 3, 3]][seed % 4]
    symbolic = seed % 3 != 0
    index = _RegionIndex({})
    entries: list[tuple[TileOp, Region]] = []
    for n in range(400):
        region = _region(rng, ranks, symbolic)
        everything = rng.random() < 0.02
        want = [op for op, r in entries
                if everything or op.kind == "whole" or _touches(r, region)]
        assert index.overlapping(region, everything) == want
        if entries and rng.random() < 0.1:
            op = entries[-1][0]                   # a second region of the same op
        else:
            kind = WHOLE if rng.random() < 0.02 else COMPUTE
            op = TileOp(n, kind, "ADD", AIV, [], region, None)
        index.add(op, region)
        entries.append((op, region))


def test_split_offset_agrees_with_constant_difference():
    """Offsets with equal symbolic parts differ by the difference of their constant parts;
    otherwise their difference is not a constant."""
    rng = random.Random(5)
    exprs = [_offset(rng, True) for _ in range(200)]
    for a, b in zip(exprs, reversed(exprs)):
        (ka, ca), (kb, cb) = split_offset(a, {}), split_offset(b, {})
        assert const_diff(a, b) == (ca - cb if ka == kb else None)


@pytest.mark.parametrize("seed", range(6))
def test_box_grid_candidates_cover_every_overlap(seed):
    """Every box overlapping a query under the closed-open rule is a candidate, including
    zero and negative extents and boxes wider than the grid spreads."""
    rng = random.Random(seed)
    rank = 1 + seed % 3
    grid = BoxGrid()
    boxes = []
    for n in range(300):
        offs = tuple(rng.randrange(-40, 200) for _ in range(rank))
        ext = tuple(rng.choice([-1, 0, 1, 5, 8, 8, 8, 17, 300]) for _ in range(rank))
        found = set(grid.near(offs, ext))
        for k, (o, e) in enumerate(boxes):
            if all(x < y + ye and y < x + xe for x, xe, y, ye in zip(offs, ext, o, e)):
                assert k in found
        grid.add(offs, ext, n)
        boxes.append((offs, ext))
    assert len(grid) == len(boxes)


def test_box_grid_grows_its_cells_when_boxes_outgrow_them():
    """A storage touched first by a 1x1 box, then by 40x40 ones: the grid rebuilds with bigger
    cells (instead of returning every big box to every query) and still finds every overlap."""
    rng = random.Random(3)
    grid = BoxGrid()
    grid.add((0, 0), (1, 1), "first")
    boxes = [((0, 0), (1, 1), "first")]
    for n in range(200):
        offs = (rng.randrange(0, 400), rng.randrange(0, 400))
        grid.add(offs, (40, 40), n)
        boxes.append((offs, (40, 40), n))
    assert grid.cell == (40, 40) and len(grid.wide) == 0
    for _ in range(100):
        q = (rng.randrange(-20, 420), rng.randrange(-20, 420)), (rng.randrange(0, 60), 9)
        found = set(grid.near(*q))
        for o, e, item in boxes:
            if all(x < y + ye and y < x + xe for x, xe, y, ye in zip(q[0], q[1], o, e)):
                assert item in found
