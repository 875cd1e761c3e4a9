"""Stitching: root-function instances, in the order the control walk creates them, batched
into windows (device tasks) of at most `stitch_function_max_num` instances, with the
dependencies between their tasks.

Takes the executor's per-call task records → a task DAG per window. A window closes at
`stitch_function_max_num` instances (at most 1024, the device's hard cap, which the option's
range enforces), when its call-op count would pass `stitch_function_size`, before a loop
marked `submit_before_loop`, and, with a workspace budget (`max_workspace_kb`, PyPTO's
memory-driven stitch), before the instance that would overflow it (`runtime.workspace`); why
each window closed is kept (`closed_by`) for its build event. What sharing a window means for the tasks — the cross-instance GM
dependencies — is `runtime.instance_links`, from the program's `runtime.slot_facts`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pypto.gc_pause import gc_paused
from pypto.machine import compiled
from pypto.machine.result import SimTask
from pypto.machine.task_table import TaskTable
from pypto.runtime.bulk_instances import Metered, Pending
from pypto.runtime.instance_links import InstanceLinker
from pypto.runtime.slot_facts import SlotFacts
from pypto.runtime.task_rows import TaskRows, Template
from pypto.runtime.workspace import WorkspaceMeter


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
        self.linker = InstanceLinker(facts)
        self.max_instances = max_instances if not workspace_budget else 1 << 62
        self.max_calls = max_calls
        self.meter = WorkspaceMeter(facts.temps, facts.scratch, workspace_budget, device_bytes)
        self.window = 0
        # why each closed window closed: "instances" (stitch_function_max_num), "calls"
        # (stitch_function_size), "workspace" (max_workspace_kb), "loop" (before a loop marked
        # submit_before_loop), "end"; the simulator reports it on the window's build event
        self.closed_by: list[str] = []
        self.instances_in_window = 0
        self.calls_in_window = 0
        self.total_instances = 0
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
    def cross_edges(self) -> int:
        """How many cross-instance edges the links added so far."""
        return self.linker.cross_edges

    @property
    def window_workspace(self) -> list[int]:
        """GM workspace bytes of every closed window, in window order."""
        return self.meter.windows

    def begin_instance(self, calls: int) -> int:
        """Start a root instance of `calls` call ops; returns its index inside the window."""
        self._end_instance()
        if self.instances_in_window and self.instances_in_window >= self.max_instances:
            self._close(self.count, "instances")
        elif self.instances_in_window and self.calls_in_window + calls > self.max_calls:
            self._close(self.count, "calls")
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

    def flush(self, reason: str = "end") -> None:
        """Close the current window (`reason`: "end" of the run, or "loop" before a loop
        marked submit_before_loop); the dependencies across the instances of every window
        are resolved by now."""
        self._end_instance()
        self._close(self.count, reason)
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
        self._close(first, "workspace")
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

    def _close(self, end: int, reason: str) -> None:
        if self.instances_in_window == 0:
            return
        self.closed_by.append(reason)
        if self._batched:   # linked with the other windows of its batch, at `flush`
            self._unlinked.append(end)
        else:
            with gc_paused():
                self.linker.link(self._objects[self._window_start:end])
        self.meter.close_window(check=not self._pending)
        self.window += 1
        self.instances_in_window = 0
        self.calls_in_window = 0
        self._window_start = end

    def _link_batch(self) -> None:
        """Link the windows closed since the last batch: in one call of the compiled core
        when it takes their boxes, else window by window by the definition."""
        start, ends = self._linked, self._unlinked
        self._linked, self._unlinked = ends[-1], []
        if self.rows is not None:
            self.linker.link_rows(self.rows, start, ends)
            return
        tasks = self._objects[start:ends[-1]]
        linked, table = self.linker.link_compiled(tasks, [0] + [e - start for e in ends])
        if not linked:
            for a, b in zip([start] + ends, ends):
                self.linker.link(self._objects[a:b])
        self._table = table if start == 0 else None
