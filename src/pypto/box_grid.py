"""A uniform grid over integer boxes, so that finding the boxes a query box may overlap looks at
the cells the query covers instead of at every box.

Takes boxes (offsets, extents) of one rank with an item each → for a query box, the items of
every box that shares a grid cell with it (a superset of the overlapping ones; callers test
each candidate exactly). Keeps: a box that overlaps the query under the closed-open rule
`x < y + ye and y < x + xe` per dim, for any extents (zero and negative included), is always
among the candidates, because a box counts as at least one cell wide in every dim.

Used by the dependency pass (tile regions of one storage, `passes/deps.py`) and by stitching
(GM boxes of one storage, `runtime/box_index.py`): both ask, per new access, which earlier
accesses it conflicts with, and the all-pairs scan made them quadratic in the number of tiles.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

# NOTE: a box spanning more cells than this (a whole-tensor access among tile-sized ones) is
# not spread over the grid but kept in a list every query returns: cheap while such boxes
# are few. When they are not (a storage written by small tiles first, then by big ones), the
# grid is rebuilt with cells as big as those boxes once they are a quarter of all boxes, which
# keeps adding amortised O(1) (each rebuild waits for a quarter more boxes).
MAX_CELLS_PER_BOX = 64
MAX_WIDE = 16


class BoxGrid:
    """Items keyed by integer boxes on a grid whose cell is the first box's extent (at least 1
    per dim)."""

    def __init__(self) -> None:
        self.cell: tuple[int, ...] | None = None
        self.cells: dict[tuple[int, ...], list[Any]] = {}
        self.wide: list[Any] = []      # boxes over MAX_CELLS_PER_BOX cells
        self.spread = False            # some item is in several cells (may come twice)
        self.boxes: list[tuple[tuple[int, ...], tuple[int, ...], Any]] = []  # for rebuilds
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def _ranges(self, offsets: tuple[int, ...], extents: tuple[int, ...]) -> list[range]:
        return [range(o // c, (o + (e if e > 1 else 1) - 1) // c + 1)
                for o, e, c in zip(offsets, extents, self.cell)]

    def add(self, offsets: tuple[int, ...], extents: tuple[int, ...], item: Any) -> None:
        if self.cell is None:
            self.cell = tuple(e if e > 1 else 1 for e in extents)
        self.count += 1
        self.boxes.append((offsets, extents, item))
        self._place(offsets, extents, item)
        if len(self.wide) > MAX_WIDE and 4 * len(self.wide) > self.count:
            self._rebuild()

    def _rebuild(self) -> None:
        """Cells as big as the widest boxes, every box placed again (in the order added)."""
        cell = list(self.cell)
        for offsets, extents, _ in self.boxes:
            for d, e in enumerate(extents):
                if e > cell[d]:
                    cell[d] = e
        self.cell = tuple(cell)
        self.cells, self.wide, self.spread = {}, [], False
        for offsets, extents, item in self.boxes:
            self._place(offsets, extents, item)

    def _place(self, offsets: tuple[int, ...], extents: tuple[int, ...], item: Any) -> None:
        key = self._single(offsets, extents)
        if key is not None:   # the usual box: one cell
            found = self.cells.get(key)
            if found is None:
                self.cells[key] = [item]
            else:
                found.append(item)
            return
        ranges = self._ranges(offsets, extents)
        n = 1
        for r in ranges:
            n *= len(r)
        if n > MAX_CELLS_PER_BOX:
            self.wide.append(item)
            return
        self.spread = True
        for key in itertools.product(*ranges):
            found = self.cells.get(key)
            if found is None:
                self.cells[key] = [item]
            else:
                found.append(item)

    def _single(self, offsets: tuple[int, ...], extents: tuple[int, ...]
                ) -> tuple[int, ...] | None:
        """The one cell a box lies in, None when it spans several."""
        key = []
        for o, e, c in zip(offsets, extents, self.cell):
            lo = o // c
            if e > 1 and (o + e - 1) // c != lo:
                return None
            key.append(lo)
        return tuple(key)

    def near(self, offsets: tuple[int, ...], extents: tuple[int, ...]) -> Iterator[Any]:
        """Candidate items for a query box: every item whose box may overlap it, each once per
        cell the two share (an item spread over several cells may come more than once)."""
        if self.cell is None:
            return
        yield from self.wide
        key = self._single(offsets, extents)
        if key is not None:   # the usual query: one cell
            items = self.cells.get(key)
            if items is not None:
                yield from items
            return
        ranges = self._ranges(offsets, extents)
        n = 1
        for r in ranges:
            n *= len(r)
        if n > len(self.cells):
            # NOTE: a query wider than the occupied grid: visiting the occupied cells is cheaper
            # than enumerating the query's (mostly empty) ones
            for key, items in self.cells.items():
                if all(k in r for k, r in zip(key, ranges)):
                    yield from items
            return
        cells = self.cells
        for key in itertools.product(*ranges):
            items = cells.get(key)
            if items is not None:
                yield from items
