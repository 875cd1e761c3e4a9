"""Root instances made in bulk: a run of timing-only root instances turned into task rows by
numpy over all of them at once, instead of instance by instance.

Root instances of one root function are isomorphic up to their windows' offsets and valid
extents. While the control walk runs, a timing-only instance is only recorded
(`Stitcher.begin_deferred`: its window, its place in it, its first row and the values of the
symbols its windows read). `make_rows` then, per root function:
- evaluates the windows of all its recorded instances at once (`window_code.root_window_arrays`);
- finds each call op's cost classes as the distinct rows of its valid extents and of which cube
  loads coincide, and charges one instance of each class, the first (`Charges.cost`: the same
  `CallCost` the instance-by-instance path finds under the same key);
- writes every row's fields (window, instance, detail, template, intra-instance predecessors,
  box offsets and extents) by fancy indexing.
The rows equal, field for field and in order, what `TaskRows.add` appends instance by instance,
and templates and details are numbered in the order that path meets them
(tests/runtime/test_bulk_instances.py). The cross-instance links are made afterwards, on the
columns, as for every row (`InstanceLinker.link_rows`). A run whose roots have few
instances each (under `BULK_MIN` on average) is made by `one_by_one`: the readable
specification, and there the faster way.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from pypto.machine.task_table import counts_ptr
from pypto.runtime.task_rows import FLAT_FIELDS, ROW_FIELDS, Template, TaskRows
from pypto.runtime.workspace import box_bytes

Box = tuple[int, tuple[int, ...], tuple[int, ...]]


class Pending(NamedTuple):
    """One recorded root instance (`Stitcher.begin_deferred`)."""

    plan: Any                      # its root function's `RootPlan`
    values: tuple[int, ...]        # the values of `plan.bulk_names`
    window: int
    instance: int                  # its place in its window
    first_row: int


@dataclass(frozen=True)
class Charges:
    """What the executor gives to charge a class and name a call op (its instance-by-instance
    path's own functions)."""

    cost: Callable[[Any, int, list, tuple], Any]     # (plan, call index, windows, valid key)
    detail: Callable[[Any, int], int]                # (plan, call index) -> detail code
    template: Callable[[Any], Template]              # CallCost -> its template
    explain: Callable[[Any, tuple], None]            # raise the error of (plan, values)


@dataclass
class Metered:
    """What the workspace meter counts of the rows made: each instance's bytes of its own
    copies of temps (its distinct boxes); the distinct scratch boxes written in the first and
    last windows (window, box, bytes), and the bytes of those written in the windows between
    (from the first window on)."""

    own: np.ndarray
    scratch: list[tuple[int, Box, int]]
    inner_scratch: np.ndarray


# a run is made in bulk when its roots have this many instances each, on average; fewer, and
# numpy's per-call overhead costs more than making them one by one (GDN at test size: one
# instance of a root of ~400 call ops)
BULK_MIN = 16


def make_rows(pending: list[Pending], rows: TaskRows, charges: Charges,
              temps: frozenset[int]) -> Metered:
    """Append the rows of `pending` (consecutive instances, from row `len(rows)` on) to
    `rows`; returns what the workspace meter counts of them (`temps`: the storages each
    instance has its own copy of)."""
    groups: dict[int, list[int]] = {}
    for k, p in enumerate(pending):
        groups.setdefault(id(p.plan), []).append(k)
    if len(pending) < BULK_MIN * len(groups):
        return one_by_one(pending, rows, charges, temps)
    return _Bulk(pending, groups, rows, charges).make(temps)


def one_by_one(pending: list[Pending], rows: TaskRows, charges: Charges,
               temps: frozenset[int]) -> Metered:
    """The rows of `pending` made instance by instance, as `TileExecutor._add_row` appends
    them: the specification the bulk rows equal, and the faster way for a few instances."""
    own = np.zeros(len(pending), np.int64)
    scratch: dict[tuple[int, Box], int] = {}
    for k, p in enumerate(pending):
        plan = p.plan
        evaluated = plan.evaluate(dict(zip(plan.bulk_names, p.values)))
        if evaluated is None:
            charges.explain(plan, p.values)
        _, keys, windows = evaluated
        copies: dict[Box, int] = {}   # (a box written twice counts once)
        for c, call in enumerate(plan.calls):
            cost = charges.cost(plan, c, windows[c], keys[c])
            detail = charges.detail(plan, c)
            template = charges.template(cost)
            rows.add(p.window, p.instance, detail, template, windows[c],
                     [p.first_row + q for q in call.preds])
            for m, sid, itemsize in template.metered:
                at, i = template.writes[m]
                box = (sid, *windows[c][at][i])
                if sid in temps:
                    copies[box] = box_bytes(box, itemsize)
                else:
                    scratch.setdefault((p.window, box), box_bytes(box, itemsize))
        own[k] = sum(copies.values())
    return Metered(own, [(w, box, b) for (w, box), b in scratch.items()],
                   np.zeros(pending[-1].window - pending[0].window + 1, np.int64))


class _Bulk:
    """One run of pending instances made at once (see the module docstring); groups: the
    run's positions of each root function's instances."""

    def __init__(self, pending: list[Pending], groups: dict[int, list[int]], rows: TaskRows,
                 charges: Charges):
        self.pending, self.groups, self.rows, self.charges = pending, groups, rows, charges
        self.plans = {g: pending[ks[0]].plan for g, ks in groups.items()}
        self.base = len(rows)
        self.first = np.array([p.first_row for p in pending], np.int64) - self.base
        self.window = np.array([p.window for p in pending], np.int64)
        # per group: (valid keys per call, windows per call), ints or arrays over its instances
        self.evaluated = _evaluate_all(pending, groups, charges)
        self.classes: dict[tuple[int, int], np.ndarray] = {}   # (group, call) -> class of each
        self.templates: dict[tuple[int, int, int], Template] = {}   # (group, call, class)
        self.where: dict[tuple[int, int], np.ndarray] = {}     # (group, call) -> its rows

    def make(self, temps: frozenset[int]) -> Metered:
        self._charge()
        out = self._row_fields()
        metered = []
        for prefix in ("read", "write"):
            metered += self._box_fields(out, prefix)
        assert set(out) == {*ROW_FIELDS, *FLAT_FIELDS}
        self.rows.add_segment(out)
        return _metered(metered, self.window, temps)

    def _charge(self) -> None:
        """Each call's cost classes, charged (and their templates made) in the order the
        rows meet them, as instance by instance."""
        found = []   # (first row, group, call, class, its first instance in the group)
        for g, ks in self.groups.items():
            plan = self.plans[g]
            keys, windows = self.evaluated[g]
            for c in range(len(plan.calls)):
                self.classes[g, c], reps = _classes(plan, c, keys[c], windows[c], len(ks))
                found += [(int(self.first[ks[r]]) + c, g, c, u, r) for u, r in enumerate(reps)]
        for _, g, c, u, r in sorted(found):
            keys, windows = self.evaluated[g]
            cost = self.charges.cost(self.plans[g], c, _pick(windows[c], r), _pick(keys[c], r))
            self.templates[g, c, u] = self.charges.template(cost)

    def _row_fields(self) -> dict:
        """The per-row fields and the predecessors (the instance's own, by call index)."""
        first, pending = self.first, self.pending
        total = sum(len(ks) * len(self.plans[g].calls) for g, ks in self.groups.items())
        out = {name: np.zeros(total, np.int64) for name in ROW_FIELDS}
        instance = np.array([p.instance for p in pending], np.int64)
        calls = sorted((int(first[ks[0]]) + c, g, c) for g, ks in self.groups.items()
                       for c in range(len(self.plans[g].calls)))
        for _, g, c in calls:   # (details numbered in the order rows meet them)
            ks = self.groups[g]
            r = self.where[g, c] = first[ks] + c
            out["window"][r] = self.window[ks]
            out["instance"][r] = instance[ks]
            out["detail"][r] = self.charges.detail(self.plans[g], c)
            classes = self.classes[g, c]
            index = np.array([self.templates[g, c, u].index
                              for u in range(int(classes.max()) + 1)], np.int64)
            out["template_of"][r] = index[classes]
            out["pred_count"][r] = len(self.plans[g].calls[c].preds)
        pred_ptr = counts_ptr(out["pred_count"])
        out["preds"] = np.zeros(int(pred_ptr[-1]), np.int64)
        for (g, c), r in self.where.items():
            preds = self.plans[g].calls[c].preds
            if preds:
                at = pred_ptr[r][:, None] + np.arange(len(preds))
                out["preds"][at] = (r + self.base)[:, None] - c + np.array(preds, np.int64)
        return out

    def _box_fields(self, out: dict, prefix: str) -> list:
        """The `prefix` boxes' offsets and extents into `out`, dim by dim in each row's
        template's box order; returns the metered write boxes (entries, storage, itemsize,
        offsets, extents)."""
        dims = np.zeros(len(self.rows.templates), np.int64)   # each template's dims
        for t in self.templates.values():
            dims[t.index] = sum((t.read_static if prefix == "read" else t.write_static)[1])
        dim_ptr = counts_ptr(dims[out["template_of"]])
        offs = np.zeros(int(dim_ptr[-1]), np.int64)
        ext = np.zeros(int(dim_ptr[-1]), np.int64)
        metered = []
        for (g, c, u), template in self.templates.items():
            windows = self.evaluated[g][1][c]
            chosen = np.flatnonzero(self.classes[g, c] == u)
            boxes = template.reads if prefix == "read" else template.writes
            columns = [[_column(x, chosen) for at, i in boxes for x in windows[at][i][part]]
                       for part in (0, 1)]
            if columns[0]:
                at = dim_ptr[self.where[g, c][chosen]][:, None] + np.arange(len(columns[0]))
                offs[at] = np.stack(columns[0], 1)
                ext[at] = np.stack(columns[1], 1)
            if prefix == "write":
                entries = np.array(self.groups[g], np.int64)[chosen]
                for k, sid, itemsize in template.metered:
                    o, v = windows[boxes[k][0]][boxes[k][1]]
                    metered.append((entries, sid, itemsize,
                                    np.stack([_column(x, chosen) for x in o], 1),
                                    np.stack([_column(x, chosen) for x in v], 1)))
        out[f"{prefix}_offs"], out[f"{prefix}_ext"] = offs, ext
        return metered


def _evaluate_all(pending: list[Pending], groups: dict[int, list[int]],
                  charges: Charges) -> dict[int, tuple]:
    """Per group: (valid keys per call, windows per call), each value an int where every
    instance has the same, else an array over the group's instances. Where numpy fails (a
    division by zero, maybe in an arm a select does not take), instance by instance; where an
    instance fails, the first such in the walk's order raises its error (`Charges.explain`)."""
    out, failed = {}, []
    for g, ks in groups.items():
        plan = pending[ks[0]].plan
        table = np.array([pending[k].values for k in ks], np.int64).reshape(
            len(ks), len(plan.bulk_names))
        values = {}
        for j, name in enumerate(plan.bulk_names):
            column = table[:, j]
            values[name] = int(column[0]) if (column == column[0]).all() else column
        try:
            with np.errstate(divide="raise", invalid="raise"):
                _, keys, windows = plan.window_arrays(values)
            out[g] = keys, windows
        except (KeyError, ZeroDivisionError, TypeError, FloatingPointError, ValueError):
            failed.append(g)
    bad = []
    for g in failed:
        ks = groups[g]
        plan = pending[ks[0]].plan
        one = [plan.evaluate(dict(zip(plan.bulk_names, pending[k].values)))
               for k in ks]
        bad += [k for k, got in zip(ks, one) if got is None]
        if not bad:
            out[g] = _stack([got[1] for got in one]), _stack([got[2] for got in one])
    if bad:
        k = min(bad)
        charges.explain(pending[k].plan, pending[k].values)
    return out


def _stack(items: list) -> Any:
    """Nested tuples of ints, one per instance -> one such structure with an array wherever
    the instances differ."""
    head = items[0]
    if isinstance(head, tuple):
        return tuple(_stack([x[j] for x in items]) for j in range(len(head)))
    column = np.array(items, np.int64)
    return int(head) if (column == column[0]).all() else column


def _pick(x: Any, k: int) -> Any:
    """Instance `k`'s part of a nested structure of ints and arrays, as plain ints."""
    if isinstance(x, tuple):
        return tuple(_pick(y, k) for y in x)
    if isinstance(x, np.ndarray):
        return int(x[k])
    return x


def _column(x: Any, chosen: np.ndarray) -> np.ndarray:
    return x[chosen] if isinstance(x, np.ndarray) else np.full(len(chosen), x, np.int64)


def _classes(plan: Any, c: int, key: tuple, windows: tuple, n: int
             ) -> tuple[np.ndarray, list[int]]:
    """Call `c`'s cost classes over the group's `n` instances: each instance's class, and the
    first instance of each class. A class is a distinct row of the call's valid key
    (`RootPlan.evaluate`) and of which of its shareable cube loads coincide
    (`CallCost.sharing`): what `TileExecutor._cost` keys its charges by."""
    columns = [x for x in key if isinstance(x, np.ndarray)]
    for (a, i), (b, j) in plan.facts[c].sharing:
        (oa, va), (ob, vb) = windows[a][i], windows[b][j]
        same = np.ones(n, bool)
        for x, y in zip((*oa, *va), (*ob, *vb)):
            same &= np.broadcast_to(np.asarray(x) == np.asarray(y), (n,))
        if len(oa) != len(ob) or len(va) != len(vb):
            same[:] = False
        columns.append(same.astype(np.int64))
    columns = [np.broadcast_to(x, (n,)) for x in columns]
    if not columns or all((x == x[0]).all() for x in columns):
        return np.zeros(n, np.int64), [0]
    _, reps, inverse = np.unique(np.stack(columns, 1), axis=0, return_index=True,
                                 return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(reps, kind="stable")      # classes numbered by first instance
    renumber = np.empty_like(order)
    renumber[order] = np.arange(len(order))
    return renumber[inverse], [int(r) for r in reps[order]]


def _metered(metered: list, window: np.ndarray, temps: frozenset[int]) -> Metered:
    """Each instance's bytes of its own copies of temps (a box it writes twice counts once,
    as `WorkspaceMeter.add_box` keeps one per box), and the distinct scratch boxes written per
    window (found by numpy; only the first and last windows' become tuples, for the meter's
    per-window sets).
    NOTE: a box's bytes take the itemsize of its first write; a storage has one dtype."""
    own = np.zeros(len(window), np.int64)
    scratch: list[tuple[int, Box, int]] = []
    inner_bytes = np.zeros(int(window[-1] - window[0]) + 1, np.int64)
    by_storage: dict[tuple[int, int], list] = {}
    for entries, sid, itemsize, offs, ext in metered:
        by_storage.setdefault((sid, offs.shape[1]), []).append((entries, itemsize, offs, ext))
    for (sid, rank), parts in by_storage.items():
        entries = np.concatenate([p[0] for p in parts])
        itemsize = np.concatenate([np.full(len(p[0]), p[1], np.float64) for p in parts])
        offs = np.concatenate([p[2] for p in parts])
        ext = np.concatenate([p[3] for p in parts])
        nbytes = (np.prod(ext, axis=1).astype(np.float64) * itemsize).astype(np.int64)
        if sid in temps:   # per instance
            _, keep = np.unique(np.column_stack([entries, offs, ext]), axis=0,
                                return_index=True)
            own += np.bincount(entries[keep], nbytes[keep], minlength=len(window)).astype(
                np.int64)
        else:              # per window
            where = window[entries]
            _, keep = np.unique(np.column_stack([where, offs, ext]), axis=0, return_index=True)
            keep.sort()
            # the first and last windows may hold instances made one by one, which count
            # their scratch boxes in sets: their boxes as tuples; the others' bytes summed
            edge = (where[keep] == window[0]) | (where[keep] == window[-1])
            inner = keep[~edge]
            np.add.at(inner_bytes, where[inner] - window[0], nbytes[inner])
            keep = keep[edge]
            scratch += [(int(w), (sid, tuple(o), tuple(x)), int(b)) for w, o, x, b in
                        zip(where[keep].tolist(), offs[keep].tolist(), ext[keep].tolist(),
                            nbytes[keep].tolist())]
    return Metered(own, scratch, inner_bytes)
