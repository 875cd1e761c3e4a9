"""Stitching: root-function instances, in the order the control walk creates them, batched
into windows (device tasks) of at most `stitch_function_max_num` instances, with the
dependencies between their tasks.

Takes the executor's per-call task records → a task DAG per window. Keeps: inside an instance
the call ops' own dependencies; between instances of one window, read-after-write,
write-after-read and write-after-write on overlapping GM windows; windows run one after the
other. An intermediate (op result) that only one root function touches is that root's
workspace, which every instance has its own copy of (PyPTO allocates workspace per stitched
instance): two instances of that root never depend on each other through it. A window also closes when its call-op count would pass `stitch_function_size` and
before a loop marked `submit_before_loop`.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from pypto.machine.result import SimTask

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
        for op in root.graph.ops:
            for r in op.inputs + ([op.output] if op.output is not None else []):
                if r.value.storage.kind.value == "temp":
                    touched[r.value.storage.id].add(root.name)
    out: dict[str, set[int]] = defaultdict(set)
    for sid, names in touched.items():
        if len(names) == 1:
            out[next(iter(names))].add(sid)
    return {name: frozenset(ids) for name, ids in out.items()}


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
            for acc in t.reads:
                deps.update(prev.id for prev in writes[acc[0]].overlapping(acc)
                            if prev.instance != t.instance
                            and not (acc[0] in private and prev.root == t.root))
            for acc in t.writes:
                for index in (writes[acc[0]], reads[acc[0]]):
                    deps.update(prev.id for prev in index.overlapping(acc)
                                if prev.instance != t.instance
                                and not (acc[0] in private and prev.root == t.root))
            new = sorted(deps - set(t.preds))
            self.cross_edges += len(new)
            t.preds.extend(new)
            for acc in t.reads:
                reads[acc[0]].add(t, acc)
            for acc in t.writes:
                writes[acc[0]].add(t, acc)


class _BoxIndex:
    """Accesses of one storage bucketed by their rows (first dim), so finding the earlier
    accesses a box overlaps looks at its rows' buckets, not at every access of the window.
    NOTE: the bucket height is the first access's row extent (typically the tile height)."""

    def __init__(self) -> None:
        self.height = 0
        self.rank = -1
        self.mixed = False   # accesses of different ranks (reshaped aliases): scan them all
        self.all: list[tuple[SimTask, Access]] = []
        self.buckets: dict[int, list[tuple[SimTask, Access]]] = defaultdict(list)

    def _rows(self, acc: Access) -> range:
        offs, ext = acc[1], acc[2]
        if not offs:
            return range(0, 1)
        return range(offs[0] // self.height, (offs[0] + max(ext[0], 1) - 1) // self.height + 1)

    def add(self, task: SimTask, acc: Access) -> None:
        if not self.height:
            self.height = max(acc[2][0], 1) if acc[2] else 1
            self.rank = len(acc[1])
        self.mixed = self.mixed or len(acc[1]) != self.rank
        self.all.append((task, acc))
        if not self.mixed:
            for b in self._rows(acc):
                self.buckets[b].append((task, acc))

    def overlapping(self, acc: Access) -> list[SimTask]:
        if not self.height:
            return []
        seen: set[int] = set()
        found = []
        if self.mixed or len(acc[1]) != self.rank:
            candidates = [self.all]
        else:
            candidates = [self.buckets.get(b, ()) for b in self._rows(acc)]
        for bucket in candidates:
            for task, prev in bucket:
                if task.id not in seen and _overlap(acc, prev):
                    seen.add(task.id)
                    found.append(task)
        return found
