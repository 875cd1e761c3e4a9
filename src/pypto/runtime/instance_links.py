"""The links between the root instances of a stitched window: which earlier tasks of other
instances each task must wait for. Keeps PyPTO's runtime semantics (compiler_runtime.md §5.3,
§5.6):
- inside an instance, the call ops' own (compile-time) dependencies (already on the tasks);
- kernel parameters and `pypto.tensor` scratch are real memory: between instances of a window,
  read-after-write, write-after-read and write-after-write on overlapping regions;
- an op result (a temp) is workspace, and every stitched instance has its own copy of its
  root's workspace. A temp that only one root function touches never links two instances. A
  temp that crosses root boundaries lives in a slot: when an instance of the root that
  *creates* the value writes it, the instance gets a fresh copy (a new generation of the slot),
  so later readers match that last producer only and no write-after-read / write-after-write
  edge to earlier copies appears. Writes into part of an existing value (assemble into a temp
  made elsewhere) share that copy's memory and conflict as real memory does. The window's
  workspace pool holds a copy per instance (PyPTO sizes it by the stitch depth), so memory is
  reused only across windows, which run one after the other: nothing links across windows.
Overlapping boxes are found on a grid (`runtime.box_index`), so linking a window costs about
linearly in its accesses.

Its own module: the stitcher (`runtime.stitch`) decides which instances share a window; this
decides what sharing costs in dependencies, from the tasks' boxes and the slot facts alone.
`InstanceLinker.link` is THE definition, `link_compiled` and `link_rows` its transcription by
the compiled core (`_simcore.link`), held equal by tests/runtime/test_stitch_cores.py.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from pypto.machine import compiled
from pypto.machine.result import SimTask
from pypto.machine.task_table import TaskTable, UnsupportedTasks, box_columns, csr
from pypto.runtime.box_index import BoxIndex
from pypto.runtime.slot_facts import SlotFacts
from pypto.runtime.task_rows import TaskRows


class InstanceLinker:
    """Adds the cross-instance predecessors of windows' tasks, counting the edges it adds."""

    def __init__(self, facts: SlotFacts):
        self.facts = facts
        self.cross_edges = 0

    def link(self, tasks: list[SimTask]) -> None:
        """THE definition of the links between one window's instances (see the module
        docstring)."""
        reads: dict[tuple[int, int], BoxIndex] = defaultdict(BoxIndex)
        writes: dict[tuple[int, int], BoxIndex] = defaultdict(BoxIndex)
        creators = self.facts.creators
        generation: dict[int, int] = {}               # slot -> its current copy
        producer: dict[int, tuple[str, int]] = {}     # slot -> (root, instance) that made it
        for t in tasks:
            deps: set[int] = set()
            private = self.facts.private.get(t.root, ())
            me, root = t.instance, t.root
            for acc in t.writes:   # a creating instance writes a fresh copy of the slot
                sid = acc[0]
                if root in creators.get(sid, ()) and producer.get(sid) != (root, me):
                    producer[sid] = (root, me)
                    generation[sid] = generation.get(sid, 0) + 1
            for acc in t.reads:
                own_root = acc[0] in private
                slot = (acc[0], generation.get(acc[0], 0))
                for group in writes[slot].overlapping(acc):
                    for r, by_instance in group.items():
                        if not (own_root and r == root):
                            for inst, ids in by_instance.items():
                                if inst != me:
                                    deps.update(ids)
            for acc in t.writes:
                own_root = acc[0] in private
                slot = (acc[0], generation.get(acc[0], 0))
                for index in (writes[slot], reads[slot]):
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
                reads[(acc[0], generation.get(acc[0], 0))].add(t, acc)
            for acc in t.writes:
                slot = (acc[0], generation.get(acc[0], 0))
                # t now orders every earlier access of other instances to this very box (but
                # its own root's, to its private workspace), so later tasks need to wait for t
                # only: the last writer and the readers since
                keep = root if acc[0] in private else None
                reads[slot].supersede(me, acc, keep)
                writes[slot].supersede(me, acc, keep)
                writes[slot].add(t, acc)

    def link_compiled(self, tasks: list[SimTask], bounds: list[int] | None = None
                      ) -> tuple[bool, TaskTable | None]:
        """`link` by the compiled core on the windows `tasks[bounds[w]:bounds[w + 1]]`
        (default: one): the same edges. Returns whether it linked them (not for boxes whose
        offsets and extents differ in rank), and the tasks' table with the predecessors after
        linking (None where the simulator's columns cannot be made)."""
        try:
            table = TaskTable.of(tasks)
            columns = table.columns
        except UnsupportedTasks:   # (no layouts, say): the boxes alone are enough to link
            table = None
            try:
                columns = _box_only_columns(tasks)
            except UnsupportedTasks:
                return False, None
        roots: dict[str, int] = {}
        root = np.array([roots.setdefault(t.root, len(roots)) for t in tasks], np.int64)
        out = self._link_columns(columns, root, roots,
                                 bounds if bounds is not None else [0, len(tasks)])
        ptr, found = out["pred_ptr"].tolist(), out["preds"].tolist()
        for t, a, b in zip(tasks, ptr, ptr[1:]):
            if b > a:
                t.preds.extend(found[a:b])
        if table is not None:
            columns["pred_ptr"], columns["preds"] = out["all_pred_ptr"], out["all_preds"]
        return True, table

    def link_rows(self, rows: TaskRows, start: int, ends: list[int]) -> None:
        """`link_compiled` on the columns of rows start..ends[-1]-1, the windows ending at
        `ends`."""
        columns = rows.columns(start, ends[-1])
        roots: dict[str, int] = {}
        root_of = np.array([roots.setdefault(d.root, len(roots)) for d in rows.details]
                           + [0], np.int64)
        out = self._link_columns(columns, root_of[columns["detail"]], roots,
                                 [0] + [e - start for e in ends])
        rows.linked(start, out["all_pred_ptr"], out["all_preds"], columns)

    def _link_columns(self, columns: dict, root: np.ndarray, roots: dict[str, int],
                      bounds: list[int]) -> dict:
        """`_simcore.link` on these columns (`root`: each row's root code, `roots` the codes)."""
        window = dict(columns)
        window["root"] = root
        window["bounds"] = bounds
        window["private"] = [(code, sid) for name, code in roots.items()
                             for sid in self.facts.private.get(name, ())]
        window["creators"] = [(sid, roots[name]) for sid, names in self.facts.creators.items()
                              for name in names if name in roots]
        out = compiled.link(window)
        self.cross_edges += out["cross_edges"]
        return out


def _box_only_columns(tasks: list[SimTask]) -> dict:
    """The columns linking reads, for tasks the simulator's table cannot take: ids,
    instances, predecessors and boxes (raises `UnsupportedTasks` for boxes it cannot hold)."""
    columns = {"n": len(tasks),
               "id": np.fromiter((t.id for t in tasks), np.int64, len(tasks)),
               "instance": np.fromiter((t.instance for t in tasks), np.int64, len(tasks))}
    columns["pred_ptr"], columns["preds"] = csr([t.preds for t in tasks])
    for prefix, accesses in (("read", [t.reads for t in tasks]),
                             ("write", [t.writes for t in tasks])):
        columns.update(box_columns(prefix, accesses))
    return columns
