"""Stitching: root-function instances, in the order the control walk creates them, batched
into windows (device tasks) of at most `stitch_function_max_num` instances, with the
dependencies between their tasks.

Takes the executor's per-call task records → a task DAG per window. Keeps PyPTO's runtime
semantics (compiler_runtime.md §5.3, §5.6):
- inside an instance, the call ops' own (compile-time) dependencies;
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
  reused only across windows, which run one after the other;
- a window closes at `stitch_function_max_num` instances, when its call-op count would pass
  `stitch_function_size`, before a loop marked `submit_before_loop`, and, with a workspace
  budget (`max_workspace_kb`, PyPTO's memory-driven stitch), before the instance that would
  overflow it (`runtime.workspace`).
Overlapping boxes are found on a grid (`box_grid.BoxGrid`), so linking a window costs about
linearly in its accesses.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from pypto.box_grid import BoxGrid
from pypto.gc_pause import gc_paused
from pypto.machine import compiled
from pypto.machine.result import SimTask
from pypto.machine.task_table import TaskTable, UnsupportedTasks, box_columns, csr
from pypto.ops.core import REGISTRY
from pypto.runtime.bulk_instances import Metered, Pending
from pypto.runtime.task_rows import TaskRows, Template
from pypto.runtime.workspace import WorkspaceMeter

Access = tuple[int, tuple[int, ...], tuple[int, ...]]


def _overlap(a: Access, b: Access) -> bool:
    (_, ao, ae), (_, bo, be) = a, b
    if len(ao) != len(bo):
        return True
    for x, xe, y, ye in zip(ao, ae, bo, be):
        if x >= y + ye or y >= x + xe:
            return False
    return True


@dataclass(frozen=True)
class SlotFacts:
    """What the stitcher needs to know about the storages of a compiled program."""

    # root name -> the temps only that root touches (its per-instance workspace)
    private: dict[str, frozenset[int]] = field(default_factory=dict)
    # temp storage id -> the roots whose instances create the value (a fresh copy each)
    creators: dict[int, frozenset[str]] = field(default_factory=dict)
    temps: frozenset[int] = frozenset()     # every op-result storage
    scratch: frozenset[int] = frozenset()   # every pypto.tensor storage


def slot_facts(roots: Iterable[Any]) -> SlotFacts:
    """The slot facts of the root functions of one compiled program.
    NOTE: the scan over every region of every tile op cost more than the rest of a small
    kernel's stitching: the execution plan computes it once (`ExecutionPlan.slot_facts`)."""
    roots = list(roots)
    touched: dict[int, set[str]] = defaultdict(set)
    creators: dict[int, set[str]] = defaultdict(set)
    scratch: set[int] = set()
    for root in roots:
        temps, made, local = _storages(root)
        for sid in temps:
            touched[sid].add(root.name)
        for sid in made:
            creators[sid].add(root.name)
        scratch |= local
    private: dict[str, set[int]] = defaultdict(set)
    for sid, names in touched.items():
        if len(names) == 1:
            private[next(iter(names))].add(sid)
    return SlotFacts({name: frozenset(ids) for name, ids in private.items()},
                     {sid: frozenset(names) for sid, names in creators.items()},
                     frozenset(touched), frozenset(scratch))


def _storages(root: Any) -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    """(temps the tile ops of `root` read or write, temps whose value `root` creates,
    pypto.tensor scratch it touches)."""
    temps, made, local = set(), set(), set()
    for op in root.graph.ops:
        for r in op.inputs + ([op.output] if op.output is not None else []):
            kind = r.value.storage.kind.value
            if kind == "temp":
                temps.add(r.value.storage.id)
            elif kind == "local":
                local.add(r.value.storage.id)
        if op.output is not None and _creates(op):
            made.add(op.output.value.storage.id)
    return frozenset(temps), frozenset(made), frozenset(local)


def _creates(op: Any) -> bool:
    """Whether tile op `op` writes part of a fresh value its tensor op creates (not an assemble
    into, or an alias of, an existing one)."""
    value, src = op.output.value, op.src
    return (value.storage.kind.value == "temp" and not REGISTRY[src.opcode].writes
            and any(v is value for v in src.outputs)
            and all(v.storage is not value.storage for v in src.inputs))


class Stitcher:
    """Collects tasks instance by instance and closes windows."""

    def __init__(self, max_instances: int, max_calls: int,
                 facts: SlotFacts | dict[str, frozenset[int]] | None = None,
                 workspace_budget: int | None = None, device_bytes: int | None = None,
                 as_rows: bool = False):
        """`facts`: the program's `slot_facts` (a bare private-storage dict is accepted);
        `workspace_budget` (bytes): memory-driven stitching, which lifts `max_instances`;
        `device_bytes`: the HBM no window's workspace may exceed; `as_rows`: keep the tasks as
        rows (`runtime.task_rows`) when the compiled core links them (the executor's tasks
        carry every layout; a bare SimTask need not)."""
        if not isinstance(facts, SlotFacts):
            facts = SlotFacts(private=dict(facts or {}))
        self.facts = facts
        self.private = facts.private
        self.max_instances = max_instances if not workspace_budget else 1 << 62
        self.max_calls = max_calls
        self.meter = WorkspaceMeter(facts.temps, facts.scratch, workspace_budget, device_bytes)
        self.window = 0
        self.instances_in_window = 0
        self.calls_in_window = 0
        self.total_instances = 0
        self.cross_edges = 0
        self._window_start = 0      # index into tasks of the window's first task
        self._instance_start = 0    # ... and of the current instance's first task
        self._instance_calls = 0
        self._instance_root = ""
        self._open = False          # an instance is being stitched
        # with the compiled core, windows are linked in batches, at `flush`: the ends of the
        # closed windows not linked yet, from `_linked` on; the tasks are rows (`rows`) when
        # asked, else objects, and then the table of the last batch when it covers every task
        self._batched = compiled.core() == "compiled"
        self.rows: TaskRows | None = TaskRows() if as_rows and self._batched else None
        self._objects: list[SimTask] = []
        self._unlinked: list[int] = []
        self._linked = 0
        self._table: TaskTable | None = None
        # root instances whose rows are made later, in bulk (`begin_deferred`)
        self._pending: list[Pending] = []
        self._pending_rows = 0
        self._pending_scratch: set = set()   # what the run's first window counted before it
        self._make_rows: Callable[[list[Pending]], Metered] | None = None

    @property
    def defers(self) -> bool:
        """Whether instances may be deferred (`begin_deferred`): the tasks are rows, and no
        workspace budget places instances by their bytes."""
        return self.rows is not None and self.meter.budget is None

    @property
    def tasks(self) -> Sequence[SimTask]:
        """Every task so far, as objects (made from the rows when the tasks are rows)."""
        if self.rows is None:
            return self._objects
        self.settle()
        table = self.table
        if table is None:   # (not all linked yet: the rows with their own predecessors)
            table = TaskTable(self.rows.columns(), details=self.rows.details)
        return table.tasks()

    @property
    def count(self) -> int:
        """How many tasks so far. (Not `__len__`: an empty stitcher is still a stitcher.)"""
        return len(self.rows) + self._pending_rows if self.rows is not None \
            else len(self._objects)

    @property
    def window_workspace(self) -> list[int]:
        """GM workspace bytes of every closed window, in window order."""
        return self.meter.windows

    def begin_instance(self, calls: int) -> int:
        """Start a root instance of `calls` call ops; returns its index inside the window."""
        self._end_instance()
        if self.instances_in_window and (
                self.instances_in_window >= self.max_instances
                or self.calls_in_window + calls > self.max_calls):
            self._close(self.count)
        self.instances_in_window += 1
        self.calls_in_window += calls
        self.total_instances += 1
        self._instance_start = self.count
        self._instance_calls = calls
        self._instance_root = ""
        self._open = True
        return self.instances_in_window - 1

    def begin_deferred(self, calls: int, plan: Any, values: tuple,
                       make_rows: Callable[[list[Pending]], Metered]) -> None:
        """Start an instance of root `plan` (a RootPlan; `values`: those of its windows'
        symbols) of `calls` call ops, one row each, whose rows are made later
        in bulk with the instances deferred after it (`runtime.bulk_instances`):
        `make_rows(pending)` appends them and says what the workspace meter counts of them.
        It runs before any other task is added, and before linking (`settle`). Only where
        `defers`."""
        instance = self.begin_instance(calls)
        if not self._pending:
            self._pending_scratch = self.meter.counted_scratch
        self._pending.append(Pending(plan, values, self.window, instance, self._instance_start))
        self._pending_rows += calls
        self._instance_root = plan.name
        self._make_rows = make_rows

    def settle(self) -> None:
        """Make the rows of the deferred instances, and count their workspace (raising the
        error of the first that fails)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        self._pending_rows = 0
        metered = self._make_rows(pending)
        windows = np.array([p.window for p in pending], np.int64)
        first = int(windows[0])
        sums = np.bincount(windows - first, metered.own, len(metered.inner_scratch)) \
            + metered.inner_scratch
        window_bytes = {first + w: int(b) for w, b in enumerate(sums) if b}
        scratch: dict[int, dict] = {}
        for w, box, nbytes in metered.scratch:
            scratch.setdefault(w, {}).setdefault(box, nbytes)
        self.meter.add_settled(first, window_bytes, scratch, self._pending_scratch)

    def add(self, task: SimTask, detail: int = -1) -> int:
        """Add a task made as an object (as rows: `detail` is its call op's detail code in
        `rows`); returns its id."""
        self.settle()
        task.id = self.count
        task.window = self.window
        if self.rows is not None:
            self.rows.add_task(task, detail)
        else:
            self._objects.append(task)
        self._instance_root = task.root
        self.meter.add(task)
        return task.id

    def add_row(self, instance: int, detail: int, template: Template, windows: list,
                preds: list[int]) -> int:
        """Add a task as a row (`TaskRows.add`); returns its id."""
        self.settle()
        rows = self.rows
        row = rows.add(self.window, instance, detail, template, windows, preds)
        self._instance_root = rows.details[detail].root
        for k, sid, itemsize in template.metered:
            at, i = template.writes[k]
            offs, valid = windows[at][i]
            self.meter.add_box((sid, offs, valid), itemsize)
        return row

    def flush(self) -> None:
        """Close the current window; the dependencies across the instances of every window
        are resolved by now."""
        self._end_instance()
        self._close(self.count)
        self.settle()
        if self._unlinked:
            with gc_paused():
                self._link_batch()

    @property
    def table(self) -> TaskTable | None:
        """The tasks as a table (`machine.task_table`), when they are rows, all linked, or
        objects the compiled core linked in one batch with no task after: the simulation
        takes it as it is."""
        if self.rows is None:
            table = self._table
            return table if table is not None and len(table) == len(self._objects) else None
        if self._pending or self._unlinked or self._linked != len(self.rows):
            return None
        if self._table is None or len(self._table) != len(self.rows):
            self._table = self.rows.table()
        return self._table

    def _end_instance(self) -> None:
        """Account the instance that just ended; under a workspace budget, move it to a new
        window when it does not fit in the current one."""
        if not self._open:
            return
        self._open = False
        if self.meter.end_instance(self._instance_root):
            return
        first = self._instance_start
        self.instances_in_window -= 1
        self.calls_in_window -= self._instance_calls
        self._close(first)
        self.instances_in_window, self.calls_in_window = 1, self._instance_calls
        if self.rows is not None:
            self.rows.move(first, self.window)
            for acc, itemsize in self.rows.write_boxes_from(first):
                self.meter.add_box(acc, itemsize)
        else:
            for t in self._objects[first:]:
                t.window, t.instance = self.window, 0
                self.meter.add(t)
        self.meter.end_instance(self._instance_root)

    def _close(self, end: int) -> None:
        if self.instances_in_window == 0:
            return
        if self._batched:   # linked with the other windows of its batch, at `flush`
            self._unlinked.append(end)
        else:
            with gc_paused():
                self._link(self._objects[self._window_start:end])
        self.meter.close_window(check=not self._pending)
        self.window += 1
        self.instances_in_window = 0
        self.calls_in_window = 0
        self._window_start = end

    def _link_batch(self) -> None:
        """Link the windows closed since the last batch: in one call of the compiled core
        when it takes their boxes, else window by window by `_link`."""
        start, ends = self._linked, self._unlinked
        self._linked, self._unlinked = ends[-1], []
        if self.rows is not None:
            self._link_rows(start, ends)
            return
        tasks = self._objects[start:ends[-1]]
        linked, table = self._link_compiled(tasks, [0] + [e - start for e in ends])
        if not linked:
            for a, b in zip([start] + ends, ends):
                self._link(self._objects[a:b])
        self._table = table if start == 0 else None

    def _link_rows(self, start: int, ends: list[int]) -> None:
        """`_link_compiled` on the columns of rows start..ends[-1]-1."""
        rows = self.rows
        columns = rows.columns(start, ends[-1])
        roots: dict[str, int] = {}
        root_of = np.array([roots.setdefault(d.root, len(roots)) for d in rows.details]
                           + [0], np.int64)
        out = self._link_columns(columns, root_of[columns["detail"]], roots,
                                 [0] + [e - start for e in ends])
        rows.linked(start, out["all_pred_ptr"], out["all_preds"], columns)

    def _link_compiled(self, tasks: list[SimTask], bounds: list[int] | None = None
                       ) -> tuple[bool, TaskTable | None]:
        """`_link` by the compiled core (`_simcore.link`) on the windows `tasks[bounds[w]:
        bounds[w + 1]]` (default: one): the same edges, held equal by
        tests/runtime/test_stitch_cores.py. Returns whether it linked them (not for boxes
        whose offsets and extents differ in rank), and the tasks' table with the
        predecessors after linking (None where the simulator's columns cannot be made)."""
        try:
            table = TaskTable.of(tasks)
            columns = table.columns
        except UnsupportedTasks:   # (no layouts, say): the boxes alone are enough to link
            table = None
            try:
                columns = {"n": len(tasks),
                           "id": np.fromiter((t.id for t in tasks), np.int64, len(tasks)),
                           "instance": np.fromiter((t.instance for t in tasks), np.int64,
                                                   len(tasks))}
                columns["pred_ptr"], columns["preds"] = csr([t.preds for t in tasks])
                for prefix, accesses in (("read", [t.reads for t in tasks]),
                                         ("write", [t.writes for t in tasks])):
                    columns.update(box_columns(prefix, accesses))
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

    def _link_columns(self, columns: dict, root: np.ndarray, roots: dict[str, int],
                      bounds: list[int]) -> dict:
        """`_simcore.link` on these columns (`root`: each row's root code, `roots` the codes)."""
        window = dict(columns)
        window["root"] = root
        window["bounds"] = bounds
        window["private"] = [(code, sid) for name, code in roots.items()
                             for sid in self.private.get(name, ())]
        window["creators"] = [(sid, roots[name]) for sid, names in self.facts.creators.items()
                              for name in names if name in roots]
        out = compiled.link(window)
        self.cross_edges += out["cross_edges"]
        return out

    def _link(self, tasks: list[SimTask]) -> None:
        """THE definition of the links between a window's instances (see the module
        docstring); `_link_compiled` is its compiled transcription (in batches of windows:
        nothing links across windows, which run one after another)."""
        reads: dict[tuple[int, int], _BoxIndex] = defaultdict(_BoxIndex)
        writes: dict[tuple[int, int], _BoxIndex] = defaultdict(_BoxIndex)
        creators = self.facts.creators
        generation: dict[int, int] = {}               # slot -> its current copy
        producer: dict[int, tuple[str, int]] = {}     # slot -> (root, instance) that made it
        for t in tasks:
            deps: set[int] = set()
            private = self.private.get(t.root, ())
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
