"""The stitched tasks as a table of columns: what crosses into the compiled simulator core.

Takes `SimTask`s (`TaskTable.of`) or columns made in bulk (`TaskTable(columns, names)`) → a dict
of numpy arrays, one row per task in task order (struct of arrays):
ids, windows, instances, core types, the cost-model inputs, the predecessors as one CSR
(`pred_ptr`, `preds`) and the GM boxes of the reads and of the writes as two CSRs (per box its
storage, itemsize, whether its storage is NONE_CACHEABLE, and its offsets, extents and tensor
shape as a CSR of dims). Keeps: every value as the Python model reads it (float64 for bytes and
cycles, int64 for ids and box dims), so the two cores see the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Sequence

import numpy as np

from pypto.gc_pause import gc_paused
from pypto.machine.result import SimTask

# the cost-model inputs of a task, one float64 column each (mte1_bytes is not simulated: the
# swimlane shows it)
COSTS = ("mte2_bytes", "mte3_bytes", "mte2_moved", "mte3_moved", "mte1_cycles", "cube_cycles",
         "vector_cycles", "fix_cycles", "mte1_bytes")


@dataclass(frozen=True)
class TaskDetail:
    """What every task of one call op shares and the simulation does not read: the names and
    numbers the swimlane shows, the operand hints and merge ids (shared objects), and the
    program's NONE_CACHEABLE storages. Rows name theirs by the `detail` column."""

    root: str
    root_index: int
    call: int
    leaf: str
    leaf_index: int
    core: str
    label: str
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    merge: dict = field(default_factory=dict)
    uncached: frozenset = frozenset()


class UnsupportedTasks(ValueError):
    """The tasks hold something the table does not carry (the Python model runs them)."""


class TaskTable:
    """The columns of a run's tasks, and the `SimTask` of each row when a reader asks for it:
    the one it was made from, or one made from the columns (`names`: per row the root, leaf
    and label strings, as lists of names and int64 code columns `root_code`, `leaf_code`,
    `label_code`; the row's root_index, call and leaf_index columns, when present; or
    `details`, one `TaskDetail` per code of a `detail` column, as `runtime.task_rows` makes)."""

    def __init__(self, columns: dict, names: dict[str, list[str]] | None = None,
                 source: Sequence[SimTask] | None = None,
                 details: Sequence[TaskDetail] | None = None):
        self.columns, self.names, self.source = columns, names or {}, source
        self.details = details

    @classmethod
    def of(cls, tasks: Sequence[SimTask]) -> TaskTable:
        return cls(task_table(tasks), source=tasks)

    def __len__(self) -> int:
        return self.columns["n"]

    def tasks(self) -> Sequence[SimTask]:
        """Every row's SimTask, in row order (made all at once from the columns as lists:
        indexing numpy arrays element by element cost ~30 us a task)."""
        if self.source is None:
            with gc_paused():   # (tens of thousands of tuples: no collection midway)
                self.source = self._make_all()
        return self.source

    def _make_all(self) -> list[SimTask]:
        c, names, n = self.columns, self.names, len(self)

        def column(key: str) -> list:
            return np.asarray(c[key]).tolist() if key in c else [0] * n

        ids, windows, instances = column("id"), column("window"), column("instance")
        empty = column("empty")
        costs = [(key, column(key)) for key in COSTS if key in c]
        pred_ptr, preds = column("pred_ptr"), column("preds")
        boxes = {prefix: _BoxLists(c, prefix) for prefix in ("read", "write")}
        if self.details is not None:
            detail = column("detail")
            made = [SimTask(ids[i], windows[i], instances[i], d.root, d.root_index, d.call,
                            d.leaf, d.leaf_index, d.core, d.label, uncached=d.uncached,
                            inputs=d.inputs, outputs=d.outputs, merge=d.merge)
                    for i, d in zip(range(n), map(self.details.__getitem__, detail))]
        else:
            def name(kind: str) -> list[str]:
                return [names[kind][k] for k in column(f"{kind}_code")] if kind in names \
                    else [""] * n
            roots, leaves, labels = name("root"), name("leaf"), name("label")
            root_index, call, leaf_index = column("root_index"), column("call"), \
                column("leaf_index")
            kind = column("kind")
            made = [SimTask(ids[i], windows[i], instances[i], roots[i], root_index[i], call[i],
                            leaves[i], leaf_index[i], "AIV" if kind[i] else "AIC", labels[i])
                    for i in range(n)]
        for i, task in enumerate(made):
            task.empty = bool(empty[i])
            for key, values in costs:
                setattr(task, key, values[i])
            task.preds = preds[pred_ptr[i]:pred_ptr[i + 1]]
            uncached = boxes["read"].fill(i, task.reads, task.read_layouts)
            uncached |= boxes["write"].fill(i, task.writes, task.write_layouts)
            if self.details is None:
                task.uncached = frozenset(uncached)
        return made


class _BoxLists:
    """One box CSR of a table as Python lists, to fill the tasks' boxes from."""

    def __init__(self, c: dict, prefix: str):
        def column(key: str) -> list:
            return np.asarray(c[f"{prefix}_{key}"]).tolist()
        self.ptr, self.dims, self.storage = column("ptr"), column("dim_ptr"), column("storage")
        self.offs, self.ext, self.shape = column("offs"), column("ext"), column("shape")
        self.size = [int(x) if x.is_integer() else x for x in column("itemsize")]
        self.uncached = column("uncached")

    def fill(self, i: int, boxes: list, layouts: list) -> set[int]:
        """Row i's boxes and layouts into these lists; the storages that bypass L2."""
        uncached = set()
        dims = self.dims
        for b in range(self.ptr[i], self.ptr[i + 1]):
            d0, d1 = dims[b], dims[b + 1]
            storage = self.storage[b]
            boxes.append((storage, tuple(self.offs[d0:d1]), tuple(self.ext[d0:d1])))
            layouts.append((tuple(self.shape[d0:d1]), self.size[b]))
            if self.uncached[b]:
                uncached.add(storage)
        return uncached


def task_table(tasks: Sequence[SimTask]) -> dict:
    n = len(tasks)
    table: dict = {"n": n}
    table["id"] = np.fromiter((t.id for t in tasks), np.int64, n)
    table["window"] = np.fromiter((t.window for t in tasks), np.int64, n)
    table["instance"] = np.fromiter((t.instance for t in tasks), np.int64, n)
    table["kind"] = np.fromiter((t.core != "AIC" for t in tasks), np.int8, n)
    table["empty"] = np.fromiter((t.empty for t in tasks), np.uint8, n)
    for name in COSTS:
        table[name] = np.array([getattr(t, name) for t in tasks], np.float64)
    table["pred_ptr"], table["preds"] = csr([t.preds for t in tasks])
    _boxes(table, "read", [t.reads for t in tasks], [t.read_layouts for t in tasks], tasks)
    _boxes(table, "write", [t.writes for t in tasks], [t.write_layouts for t in tasks], tasks)
    return table


def counts_ptr(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    """The CSR row pointer of rows of these lengths: row i is items ptr[i]..ptr[i+1]-1."""
    ptr = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr


def _ptr(rows: list[list]) -> np.ndarray:
    """The CSR row pointer of `rows`."""
    return counts_ptr([len(r) for r in rows])


def csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(row pointer, items) of `rows` of ints."""
    ptr = _ptr(rows)
    return ptr, np.fromiter(chain.from_iterable(rows), np.int64, int(ptr[-1]))


def box_columns(prefix: str, accesses: list[list]) -> dict:
    """The GM boxes of each row as one CSR: `<prefix>_ptr` (per row), `_storage`, `_dim_ptr`
    (per box) and `_offs`, `_ext` (per dim)."""
    boxes = list(chain.from_iterable(accesses))
    storages, offs, exts = zip(*boxes) if boxes else ((), (), ())
    ranks = list(map(len, exts))
    if ranks != list(map(len, offs)):
        raise UnsupportedTasks(f"a {prefix} box's offsets and extents differ in rank")
    dim_ptr = np.zeros(len(boxes) + 1, np.int64)
    np.cumsum(ranks, out=dim_ptr[1:])
    return {f"{prefix}_ptr": _ptr(accesses),
            f"{prefix}_storage": np.array(storages, np.int64),
            f"{prefix}_dim_ptr": dim_ptr,
            f"{prefix}_offs": _flat(offs, ranks), f"{prefix}_ext": _flat(exts, ranks)}


def _flat(rows: tuple, ranks: list[int]) -> np.ndarray:
    """Tuples of ints, one after another, as one int64 array."""
    if ranks and min(ranks) == max(ranks) > 0:   # NOTE: one rank: numpy reads them in C
        return np.array(rows, np.int64).ravel()
    return np.fromiter(chain.from_iterable(rows), np.int64, sum(ranks))


def _boxes(table: dict, prefix: str, accesses: list[list], layouts: list[list],
           tasks: Sequence[SimTask]) -> None:
    """`box_columns`, and per box its itemsize, whether its storage is uncached, and its
    tensor's shape (per dim)."""
    boxes = list(chain.from_iterable(accesses))
    shapes = list(chain.from_iterable(layouts))
    if len(shapes) != len(boxes):
        raise UnsupportedTasks(f"{prefix}s and their layouts differ in number")
    if any(len(shape) != len(ext) for (_, _, ext), (shape, _) in zip(boxes, shapes)):
        raise UnsupportedTasks(f"a {prefix} box's rank differs from its tensor's")
    table.update(box_columns(prefix, accesses))
    tensor_shapes, sizes = zip(*shapes) if shapes else ((), ())
    table[f"{prefix}_itemsize"] = np.array(sizes, np.float64)
    table[f"{prefix}_uncached"] = np.fromiter(
        (s in t.uncached for t, row in zip(tasks, accesses) for s, _, _ in row), np.uint8,
        len(boxes))
    table[f"{prefix}_shape"] = _flat(tensor_shapes, list(map(len, tensor_shapes)))
