"""Stitching: root-function instances, in the order the control walk creates them, batched
into windows (device tasks) of at most `stitch_function_max_num` instances, with the
dependencies between their tasks.

Takes the executor's per-call task records → a task DAG per window. Keeps: inside an instance
the call ops' own dependencies; between instances of one window, read-after-write,
write-after-read and write-after-write on overlapping GM windows; windows run one after the
other. An intermediate (op result) that only one root function touches is that root's
workspace, which every instance has its own copy of (PyPTO allocates workspace per stitched
instance): two instances of that root never depend on each other through it. A window also
closes when its call-op count would pass `stitch_function_size` and before a loop marked
`submit_before_loop`. Overlapping boxes are found on a grid (`box_grid.BoxGrid`), so linking a
window costs about linearly in its accesses.
"""
from __future__ import annotations

import weakref
from collections import defaultdict
from typing import Any, Iterable

from pypto.box_grid import BoxGrid
from pypto.machine.result import SimTask
from pypto.gc_pause import gc_paused

Access = tuple[int, tuple[int, ...], tuple[int, ...]]


def _overlap(a: Access, b: Access) -> bool:
    (_, ao, ae), (_, bo, be) = a, b
    if len(ao) != len(bo):
        return True
    for x, xe, y, ye in zip(ao, ae, bo, be):
        if x >= y + ye or y >= x + xe:
            return False
    return True


def private_storages(roots: Iterable[Any]) -> dict[str, frozenset[int]]:
    """Root name -> the op-result storages only that root function touches (its per-instance
    workspace). Parameters, `pypto.tensor` scratch and results shared by several roots (a value
    computed before a loop and read in it, a loop-carried buffer) are never private."""
    touched: dict[int, set[str]] = defaultdict(set)
    for root in roots:
        for sid in _temp_storages(root):
            touched[sid].add(root.name)
    out: dict[str, set[int]] = defaultdict(set)
    for sid, names in touched.items():
        if len(names) == 1:
            out[next(iter(names))].add(sid)
    return {name: frozenset(ids) for name, ids in out.items()}


# NOTE: computed once per root function: the scan over every region of every tile op cost
# more than the rest of a small kernel's stitching, on every call of the kernel
_TEMP_STORAGES: "weakref.WeakKeyDictionary[Any, frozenset[int]]" = weakref.WeakKeyDictionary()


def _temp_storages(root: Any) -> frozenset[int]:
    """The op-result (temp) storages the tile ops of `root` read or write."""
    found = _TEMP_STORAGES.get(root)
    if found is None:
        found = _TEMP_STORAGES[root] = frozenset(
            r.value.storage.id for op in root.graph.ops
            for r in op.inputs + ([op.output] if op.output is not None else [])
            if r.value.storage.kind.value == "temp")
    return found


class Stitcher:
    """Collects tasks instance by instance and closes windows."""

    def __init__(self, max_instances: int, max_calls: int,
                 private: dict[str, frozenset[int]] | None = None):
        self.private = private or {}
        self.max_instances = max_instances
        self.max_calls = max_calls
        self.tasks: list[SimTask] = []
        self.window = 0
        self.instances_in_window = 0
        self.calls_in_window = 0
        self.total_instances = 0
        self.cross_edges = 0
        self._window_start = 0  # index into tasks of the window's first task

    def begin_instance(self, calls: int) -> int:
        """Start a root instance of `calls` call ops; returns its index inside the window."""
        if self.instances_in_window and (
                self.instances_in_window >= self.max_instances
                or self.calls_in_window + calls > self.max_calls):
            self.flush()
        self.instances_in_window += 1
        self.calls_in_window += calls
        self.total_instances += 1
        return self.instances_in_window - 1

    def add(self, task: SimTask) -> None:
        task.id = len(self.tasks)
        task.window = self.window
        self.tasks.append(task)

    def flush(self) -> None:
        """Close the current window (dependencies across its instances are resolved now)."""
        if self.instances_in_window == 0:
            return
        with gc_paused():
            self._link(self.tasks[self._window_start:])
        self.window += 1
        self.instances_in_window = 0
        self.calls_in_window = 0
        self._window_start = len(self.tasks)

    def _link(self, tasks: list[SimTask]) -> None:
        reads: dict[int, _BoxIndex] = defaultdict(_BoxIndex)
        writes: dict[int, _BoxIndex] = defaultdict(_BoxIndex)
        for t in tasks:
            deps: set[int] = set()
            private = self.private.get(t.root, ())
            me, root = t.instance, t.root
            for acc in t.reads:
                own_root = acc[0] in private
                for group in writes[acc[0]].overlapping(acc):
                    for r, by_instance in group.items():
                        if not (own_root and r == root):
                            for inst, ids in by_instance.items():
                                if inst != me:
                                    deps.update(ids)
            for acc in t.writes:
                own_root = acc[0] in private
                for index in (writes[acc[0]], reads[acc[0]]):
                    for group in index.overlapping(acc):
                        for r, by_instance in group.items():
                            if not (own_root and r == root):
                                for inst, ids in by_instance.items():
                                    if inst != me:
                                        deps.update(ids)
            new = sorted(deps - set(t.preds))
            self.cross_edges += len(new)
            t.preds.extend(new)
            for acc in t.reads:
                reads[acc[0]].add(t, acc)
            for acc in t.writes:
                writes[acc[0]].add(t, acc)


# root -> instance -> ids of the tasks of that instance that accessed one box
# NOTE: by root first: a root's own workspace skips its own instances without visiting them
_Group = dict[str, dict[int, list[int]]]


class _BoxIndex:
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
        self.boxes: dict[tuple, _Group] = {}
        self.grid = BoxGrid()
        self._found: dict[tuple, tuple[int, list[_Group]]] = {}  # box -> (len(boxes), groups)

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

    def overlapping(self, acc: Access) -> list[_Group]:
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

    def _search(self, offs: tuple[int, ...], ext: tuple[int, ...]) -> list[_Group]:
        acc = (0, offs, ext)
        if self.mixed or len(offs) != self.rank:
            return [g for (o, e), g in self.boxes.items() if _overlap(acc, (0, o, e))]
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
