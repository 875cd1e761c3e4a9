"""The earlier GM accesses of one storage in a stitched window, grouped by box, then by root,
then by instance, so linking a new access finds the ones it overlaps without scanning them all.

Its own module: it is a search structure, not a rule — the links (`runtime.instance_links`)
say which overlapping accesses become edges; this only answers which accesses overlap, and
forgets the ones a later write stands in for (tests/runtime/test_stitch_index.py holds it
equal to an all-pairs `boxes_overlap` scan).
"""
from __future__ import annotations

from pypto.box_grid import BoxGrid
from pypto.machine.result import SimTask

# (storage id, offsets, extents): one GM box a task reads or writes
Access = tuple[int, tuple[int, ...], tuple[int, ...]]

# root -> instance -> ids of the tasks of that instance that accessed one box
# NOTE: by root first: a root's own workspace skips its own instances without visiting them
Group = dict[str, dict[int, list[int]]]


def boxes_overlap(a: Access, b: Access) -> bool:
    """Whether two boxes share an element (boxes of different ranks: assumed to)."""
    (_, ao, ae), (_, bo, be) = a, b
    if len(ao) != len(bo):
        return True
    for x, xe, y, ye in zip(ao, ae, bo, be):
        if x >= y + ye or y >= x + xe:
            return False
    return True


class BoxIndex:
    """Accesses of one storage grouped by box, the boxes on a `BoxGrid` (cells the size of the
    first box, typically the tile), so finding the earlier accesses a box overlaps looks at the
    cells it covers, not at every access of the window.
    NOTE: the instances of a loop touch the same few boxes over and over (a tile of a running
    state, a block of the cache): grouping by box tests each distinct box once per query
    instead of once per earlier task, and hands back whole per-instance id lists.
    NOTE: the answer for a box is kept until a new box arrives: the instances of a loop ask
    about the same boxes over and over, between which only the id lists grow."""

    def __init__(self) -> None:
        self.rank = -1
        self.mixed = False   # accesses of different ranks (reshaped aliases): scan them all
        self.boxes: dict[tuple, Group] = {}
        self.grid = BoxGrid()
        self._found: dict[tuple, tuple[int, list[Group]]] = {}  # box -> (len(boxes), groups)

    def add(self, task: SimTask, acc: Access) -> None:
        if self.rank < 0:
            self.rank = len(acc[1])
        self.mixed = self.mixed or len(acc[1]) != self.rank
        box = (acc[1], acc[2])
        group = self.boxes.get(box)
        if group is None:
            group = self.boxes[box] = {}
            if not self.mixed:
                self.grid.add(acc[1], acc[2], (box, group))
        by_instance = group.get(task.root)
        if by_instance is None:
            by_instance = group[task.root] = {}
        ids = by_instance.get(task.instance)
        if ids is None:
            by_instance[task.instance] = [task.id]
        elif ids[-1] != task.id:
            ids.append(task.id)

    def supersede(self, instance: int, acc: Access, keep_root: str | None = None) -> None:
        """Forget the other instances' accesses to exactly the box of `acc` (but those of
        `keep_root`): a write to it by `instance` depends on them all, so it stands in."""
        group = self.boxes.get((acc[1], acc[2]))
        if group is None:
            return
        for root in [r for r in group if r != keep_root]:
            by_instance = group[root]
            for inst in [i for i in by_instance if i != instance]:
                del by_instance[inst]
            if not by_instance:
                del group[root]

    def overlapping(self, acc: Access) -> list[Group]:
        """The groups of the earlier boxes `acc` overlaps, each once."""
        if not self.boxes:
            return []
        offs, ext = acc[1], acc[2]
        known = self._found.get((offs, ext))
        if known is not None and known[0] == len(self.boxes):
            return known[1]
        found = self._search(offs, ext)
        self._found[(offs, ext)] = (len(self.boxes), found)
        return found

    def _search(self, offs: tuple[int, ...], ext: tuple[int, ...]) -> list[Group]:
        acc = (0, offs, ext)
        if self.mixed or len(offs) != self.rank:
            return [g for (o, e), g in self.boxes.items() if boxes_overlap(acc, (0, o, e))]
        found = []
        seen: set[tuple] = set()
        for box, group in self.grid.near(offs, ext):
            if box in seen:
                continue
            seen.add(box)
            o, e = box
            for x, xe, y, ye in zip(offs, ext, o, e):
                if x >= y + ye or y >= x + xe:
                    break
            else:
                found.append(group)
        return found
