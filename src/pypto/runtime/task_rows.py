"""The stitched tasks as rows of flat lists: what the executor appends, call by call, when the
compiled core links and simulates them, instead of one `SimTask` object per task.

Takes per task: its call op's `TaskDetail` (names, operand hints, merge ids: shared by every
instance of the call), its `CallCost` (the costs and the GM boxes' storages and layouts, shared
by every task of a cost class) and the instance's windows (where the boxes are) → the columns
of `machine.task_table.TaskTable`, made at the end with one numpy conversion per column.

What varies per task is only appended: window, instance, detail, template, predecessors and
the boxes' offsets and extents; what a cost class fixes (its costs, and its boxes' storages,
layouts, ranks, whether a storage bypasses L2) is kept once, as a `Template`, and spread over
its rows by numpy when the columns are made. A SimTask is made per row only when someone reads
one (`TaskTable.tasks()`): equal, field for field, to the one the object path makes
(tests/runtime/test_task_rows.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.machine.result import SimTask
from pypto.machine.task_table import COSTS, TaskDetail, TaskTable, counts_ptr

Box = tuple[int, tuple[int, ...], tuple[int, ...]]

# the fields of a row, one value each, and the flat ones (a row's predecessors, its boxes'
# offsets and extents dim by dim, in its template's box order)
ROW_FIELDS = ("window", "instance", "detail", "template_of", "pred_count")
FLAT_FIELDS = ("preds", "read_offs", "read_ext", "write_offs", "write_ext")


@dataclass(frozen=True)
class Template:
    """What one cost class fixes about its tasks' rows (a task made as an object has one of
    its own)."""

    index: int                             # its number in TaskRows.templates
    cost: tuple[float, ...]                # the COSTS of its tasks
    reads: tuple[tuple[int, int], ...]     # (tile op, region) of each read box, in order
    writes: tuple[tuple[int, int], ...]
    read_static: tuple                     # (storages, ranks, shapes flat, itemsizes, uncached)
    write_static: tuple
    metered: tuple[tuple[int, int, float], ...]   # (write box, storage, itemsize) to meter


class TaskRows:
    """Rows appended task by task (see the module docstring)."""

    def __init__(self) -> None:
        self.n = 0
        self.window: list[int] = []
        self.instance: list[int] = []
        self.detail: list[int] = []
        self.template_of: list[int] = []
        self.pred_count: list[int] = []
        self.preds: list[int] = []
        self.offs = {"read": [], "write": []}
        self.ext = {"read": [], "write": []}
        self.templates: list[Template] = []
        self.details: list[TaskDetail] = []
        self._templates: dict[int, tuple[Any, Template]] = {}   # id(CallCost) -> it, template
        self._detail_codes: dict[int, tuple[Any, int]] = {}     # id(key object) -> it, code
        # rows appended as arrays (`add_segment`), and the lists sealed before each: the lists
        # above hold rows _list_start.. only
        self._chunks: list[dict] = []
        self._list_start = 0
        self._arrays: tuple[int, dict] | None = None   # (n, every row's arrays), made once
        # the predecessors after linking, per linked batch of rows: (first row, ptr, preds);
        # the columns of a batch of every row
        self._linked: list[tuple[int, np.ndarray, np.ndarray]] = []
        self._columns: dict | None = None

    def __len__(self) -> int:
        return self.n

    # ---- appending ----
    def detail_code(self, key: Any, make: Any) -> int:
        """The code of the detail `make()` gives, made once per `key` object (a call op)."""
        found = self._detail_codes.get(id(key))
        if found is None:
            found = self._detail_codes[id(key)] = (key, len(self.details))
            self.details.append(make())
        return found[1]

    def template(self, cost: Any, uncached: frozenset, metered: frozenset) -> Template:
        """The template of a CallCost (`runtime.task_cost`), made once per cost object (the
        other two are fixed for a run): `uncached`, the NONE_CACHEABLE storages; `metered`,
        the storages whose written boxes the workspace meter counts."""
        found = self._templates.get(id(cost))
        if found is not None:
            return found[1]
        t = cost.totals
        template = self._new_template(
            tuple(float(getattr(t, k)) for k in COSTS),
            tuple((at, i) for _, at, i, _ in cost.reads),
            tuple((at, i) for _, at, i, _ in cost.writes),
            _static([(sid, layout) for sid, _, _, layout in cost.reads], uncached),
            _static([(sid, layout) for sid, _, _, layout in cost.writes], uncached),
            tuple((k, sid, layout[1]) for k, (sid, _, _, layout) in enumerate(cost.writes)
                  if sid in metered))
        self._templates[id(cost)] = (cost, template)
        return template

    def _new_template(self, *fields: Any) -> Template:
        template = Template(len(self.templates), *fields)
        self.templates.append(template)
        return template

    def add(self, window: int, instance: int, detail: int, template: Template,
            windows: list, preds: list[int]) -> int:
        """Append one task of `template`'s cost class with these windows; returns its id."""
        self.window.append(window)
        self.instance.append(instance)
        self.detail.append(detail)
        self.template_of.append(template.index)
        self.pred_count.append(len(preds))
        self.preds.extend(preds)
        for prefix, where in (("read", template.reads), ("write", template.writes)):
            offs, ext = self.offs[prefix], self.ext[prefix]
            for at, i in where:
                o, v = windows[at][i]
                offs.extend(o)
                ext.extend(v)
        self.n += 1
        return self.n - 1

    def add_task(self, task: SimTask, detail: int) -> int:
        """Append a task made as an object (a whole op's, a grid tile's): its own costs and
        boxes, as a template of its own."""
        template = self._new_template(
            tuple(float(getattr(task, k)) for k in COSTS), (), (),
            _static([(sid, layout) for (sid, _, _), layout in
                     zip(task.reads, task.read_layouts)], task.uncached),
            _static([(sid, layout) for (sid, _, _), layout in
                     zip(task.writes, task.write_layouts)], task.uncached), ())
        for prefix, boxes in (("read", task.reads), ("write", task.writes)):
            for _, o, v in boxes:
                self.offs[prefix].extend(o)
                self.ext[prefix].extend(v)
        self.window.append(task.window)
        self.instance.append(task.instance)
        self.detail.append(detail)
        self.template_of.append(template.index)
        self.pred_count.append(len(task.preds))
        self.preds.extend(task.preds)
        self.n += 1
        return self.n - 1

    def add_segment(self, segment: dict) -> None:
        """Append rows made as arrays (`runtime.bulk_instances`): the per-row fields of
        `ROW_FIELDS` and the flat ones of `FLAT_FIELDS`, as `add` would have appended them."""
        self._seal()
        self._chunks.append(segment)
        self.n += len(segment["window"])
        self._list_start = self.n

    def _seal(self) -> None:
        """The rows in the lists become a chunk of arrays (the lists start over)."""
        if self.n > self._list_start:
            self._chunks.append(self._listed())
            for name in ROW_FIELDS:
                setattr(self, name, [])
            self.preds = []
            self.offs, self.ext = {"read": [], "write": []}, {"read": [], "write": []}
            self._list_start = self.n

    def _listed(self) -> dict:
        """The rows in the lists, as a chunk of arrays."""
        chunk = {name: np.array(getattr(self, name), np.int64) for name in ROW_FIELDS}
        chunk["preds"] = np.array(self.preds, np.int64)
        for prefix in ("read", "write"):
            chunk[f"{prefix}_offs"] = np.array(self.offs[prefix], np.int64)
            chunk[f"{prefix}_ext"] = np.array(self.ext[prefix], np.int64)
        return chunk

    def arrays(self) -> dict:
        """Every row's fields (`ROW_FIELDS`, `FLAT_FIELDS`) as arrays (made once per count of
        rows; the lists stay as they are, for a workspace budget's move)."""
        if self._arrays is not None and self._arrays[0] == self.n:
            return self._arrays[1]
        chunks = self._chunks + ([self._listed()] if self.n > self._list_start else [])
        if len(chunks) == 1:
            out = chunks[0]
        else:
            out = {name: np.concatenate([c[name] for c in chunks] or [np.zeros(0, np.int64)])
                   for name in (*ROW_FIELDS, *FLAT_FIELDS)}
        self._arrays = (self.n, out)
        return out

    # ---- reading back ----
    def write_boxes_from(self, first: int) -> list[tuple[Box, float]]:
        """The GM boxes rows `first`.. (the last rows: the instance a workspace budget moves)
        write, with their itemsizes. (Their dims are counted back from the end: a move costs
        its own rows, not the run's.)"""
        assert first >= self._list_start, "rows made as arrays do not move"
        statics = [self.templates[t].write_static
                   for t in self.template_of[first - self._list_start:]]
        offs, ext = self.offs["write"], self.ext["write"]
        d0 = len(offs) - sum(sum(ranks) for _, ranks, _, _, _ in statics)
        out = []
        for sids, ranks, _, sizes, _ in statics:
            for sid, r, size in zip(sids, ranks, sizes):
                out.append(((sid, tuple(offs[d0:d0 + r]), tuple(ext[d0:d0 + r])), size))
                d0 += r
        return out

    def move(self, first: int, window: int) -> None:
        """Rows `first`.. become instance 0 of `window` (an instance the workspace budget sent
        to a new window)."""
        assert first >= self._list_start, "rows made as arrays do not move"
        self._arrays = None
        for row in range(first - self._list_start, self.n - self._list_start):
            self.window[row], self.instance[row] = window, 0

    def columns(self, start: int = 0, end: int | None = None) -> dict:
        """The table columns of rows start..end-1 (their own predecessors, not the links)."""
        end = self.n if end is None else end
        a = self.arrays()
        c: dict = {"n": end - start, "id": np.arange(start, end, dtype=np.int64)}
        c["window"] = a["window"][start:end]
        c["instance"] = a["instance"][start:end]
        detail = a["detail"][start:end]
        c["detail"] = detail
        kinds = np.array([d.core != "AIC" for d in self.details] + [False], np.int8)
        c["kind"] = kinds[detail]
        every = a["template_of"]   # (all rows: where their dims start)
        template = every[start:end]
        costs = np.array([t.cost for t in self.templates], np.float64).reshape(
            len(self.templates), len(COSTS))
        for k, name in enumerate(COSTS):
            c[name] = costs[template, k]
        c["empty"] = ~(c["mte2_bytes"].astype(bool) | c["mte3_bytes"].astype(bool)
                       | c["vector_cycles"].astype(bool) | c["cube_cycles"].astype(bool))
        c["empty"] = c["empty"].astype(np.uint8)
        pred_ptr = counts_ptr(a["pred_count"])
        c["pred_ptr"] = pred_ptr[start:end + 1] - pred_ptr[start]
        c["preds"] = a["preds"][pred_ptr[start]:pred_ptr[end]]
        for prefix in ("read", "write"):
            c.update(self._box_columns(prefix, a, start, end))
        return c

    def _box_columns(self, prefix: str, a: dict, start: int, end: int) -> dict:
        """The `prefix` box columns of rows start..end-1: each row's template's storages,
        layouts and flags spread over its boxes, the offsets and extents as appended."""
        statics = [t.read_static if prefix == "read" else t.write_static
                   for t in self.templates]
        n_boxes = np.array([len(s[0]) for s in statics], np.int64)
        n_dims = np.array([sum(s[1]) for s in statics], np.int64)
        sids = np.array([x for s in statics for x in s[0]], np.int64)
        ranks = np.array([x for s in statics for x in s[1]], np.int64)
        shapes = np.array([x for s in statics for x in s[2]], np.int64)
        sizes = np.array([x for s in statics for x in s[3]], np.float64)
        uncached = np.array([x for s in statics for x in s[4]], np.uint8)
        box0 = counts_ptr(n_boxes)[:-1]
        every = a["template_of"]
        template = every[start:end]
        counts = n_boxes[template]
        ptr = counts_ptr(counts)
        # each box of these rows: its template box (the row's first + its place in the row)
        box = np.repeat(box0[template], counts) + _local(counts)
        box_ranks = ranks[box]
        dim_ptr = counts_ptr(box_ranks)
        first_dim = np.repeat(counts_ptr(ranks)[:-1][box], box_ranks) + _local(box_ranks)
        d0 = int(n_dims[every[:start]].sum())
        d1 = d0 + int(dim_ptr[-1])
        return {f"{prefix}_ptr": ptr,
                f"{prefix}_storage": sids[box],
                f"{prefix}_dim_ptr": dim_ptr,
                f"{prefix}_offs": a[f"{prefix}_offs"][d0:d1],
                f"{prefix}_ext": a[f"{prefix}_ext"][d0:d1],
                f"{prefix}_shape": shapes[first_dim],
                f"{prefix}_itemsize": sizes[box],
                f"{prefix}_uncached": uncached[box]}

    def linked(self, first: int, ptr: np.ndarray, preds: np.ndarray,
               columns: dict | None = None) -> None:
        """The predecessors of rows first..first+len(ptr)-2 after linking (theirs, then the
        links found); `columns`: those rows' columns, kept when they are all the rows (the
        usual call: one batch), for `table`."""
        self._linked.append((first, ptr, preds))
        self._columns = columns if first == 0 and len(ptr) - 1 == self.n else None

    def table(self) -> TaskTable:
        """Every row as a TaskTable, with the linked predecessors."""
        c = self._columns
        if c is not None and c["n"] == self.n and len(self._linked) == 1:
            c = dict(c)
            c["pred_ptr"], c["preds"] = self._linked[0][1], self._linked[0][2]
            return TaskTable(c, details=self.details)
        c = self.columns()
        if self._linked:   # the linked batches' rows take their new lists, the rest keep theirs
            a = self.arrays()
            counts = a["pred_count"].copy()
            own = counts_ptr(counts)
            pieces, row = [], 0
            for first, ptr, preds in sorted(self._linked, key=lambda b: b[0]):
                pieces += [a["preds"][own[row]:own[first]], preds]
                row = first + len(ptr) - 1
                counts[first:row] = np.diff(ptr)
            pieces.append(a["preds"][own[row]:own[-1]])
            c["pred_ptr"] = counts_ptr(counts)
            c["preds"] = np.concatenate(pieces)
        return TaskTable(c, details=self.details)


def _static(boxes: list[tuple[int, tuple]], uncached: frozenset) -> tuple:
    """(storages, ranks, shapes flat, itemsizes, bypass L2) of boxes given as (storage,
    layout)."""
    return (tuple(sid for sid, _ in boxes),
            tuple(len(layout[0]) for _, layout in boxes),
            tuple(d for _, layout in boxes for d in layout[0]),
            tuple(layout[1] for _, layout in boxes),
            tuple(sid in uncached for sid, _ in boxes))


def _local(counts: np.ndarray) -> np.ndarray:
    """0..count-1 for each count, one after another."""
    total = int(counts.sum())
    return np.arange(total, dtype=np.int64) - np.repeat(counts_ptr(counts)[:-1], counts)
