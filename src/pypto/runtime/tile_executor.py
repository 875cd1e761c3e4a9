"""The tile executor: runs each root-function instance call op by call op, tile op by tile op.

Same control walk as the reference executor (runtime/control_walk.py, over the call's
runtime/call_state.py), held, not inherited: what differs is a block. Its call ops run in
dependency order, each with its own local buffers (the numerics: runtime/tile_numerics.py; an
op with no tile rule runs as the tensor op, runtime/tensor_ops.py), and each makes a task for
the stitcher, charged by runtime/task_cost.py.

Per-instance work is kept to what differs between instances: what every instance of a root
function shares (its steps, one generated function evaluating all its windows, the shapes of
its batches) lives in the execution plan (runtime/plan.py), and tasks of equal valid extents
share one `CallCost`; runs of isomorphic independent calls compute as one batch
(runtime/batching.py).
"""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from pypto.dtypes import bytes_of
from pypto.enums import CachePolicy
from pypto.errors import PyptoRuntimeError
from pypto.gc_pause import gc_paused
from pypto.ir.program import Block, Loop, Program
from pypto.machine.result import SimTask
from pypto.machine.task_table import TaskDetail
from pypto.passes.functions import CallOp
from pypto.passes.tile_graph import TileOp
from pypto.runtime import blas, bulk_instances
from pypto.runtime.batching import batch_shape
from pypto.runtime.call_state import CallState
from pypto.runtime.control_walk import ControlWalk
from pypto.runtime.liveness import EXPRESSION_READER, BufferPool, storage_users
from pypto.runtime.plan import CallFacts, ExecutionPlan, RootPlan
from pypto.runtime.stitch import Stitcher
from pypto.runtime.task_cost import CallCost, add_whole_op
from pypto.runtime.tensor_ops import TensorOps
from pypto.runtime.tile_numerics import TileNumerics
from pypto.runtime.window_code import window_exprs
from pypto.symbolic import raise_evaluation_error


def _task_ids(ids: dict, calls: list[int]) -> list[int]:
    """The tasks of these call ops of the instance (a call on a run-time grid made several)."""
    out = []
    for p in calls:
        made = ids[p]
        if type(made) is int:
            out.append(made)
        else:
            out.extend(made)
    return out


def _detail_of(task: SimTask) -> TaskDetail:
    """The detail a task made as an object shares with its call op's other tasks."""
    return TaskDetail(task.root, task.root_index, task.call, task.leaf, task.leaf_index,
                      task.core, task.label, task.inputs, task.outputs, task.merge,
                      task.uncached)


def timing_only_possible(program: Program) -> str | None:
    """None if a timing-only run gives the same task graph as an exact one; else why not: an
    expression (loop bound, offset, valid shape, condition) reads elements of a value the
    kernel computes or writes, which only the arithmetic knows."""
    users = storage_users(program)
    written = {v.storage.id for block in program.blocks() for op in block.ops
               for v in op.outputs}
    for sid, readers in users.items():
        if EXPRESSION_READER in readers and sid in written:
            name = next((v.storage.name for block in program.blocks() for op in block.ops
                         for v in op.outputs if v.storage.id == sid), str(sid))
            return (f"the control flow or offsets read elements of '{name}', which the kernel "
                    f"computes")
    return None


class TileExecutor:
    """Executes a compiled program at tile level (the default executor).

    NOTE: consecutive call ops of one leaf function with no dependency between them (e.g. the
    256 row strips of a layer norm) run as a batch: each task still evaluates its own windows
    and is charged tile op by tile op, but the numerics of tile op #j of all of them run as one
    numpy call over the union of their windows, when those windows stack along one dim and the
    op is pointwise or reduces along another dim (per element the same arithmetic, so the
    results are bit-identical; `batch = False` turns it off, tests compare both).
    With `numerics=False` (runtime_options numerics="timing_only") the tasks, their windows
    and costs are made as always but no tile op computes: the outputs stay as they were.
    Only for programs whose control flow and offsets read no computed value
    (`timing_only_possible`)."""

    batch = True
    bulk = True   # timing-only instances made in bulk (runtime/bulk_instances.py); tests: False

    batch = True
    bulk = True   # timing-only instances made in bulk (runtime/bulk_instances.py); tests: False
    # a planted fault (pypto.testing.faults): sees every tile result and may spoil one
    fault = None

    def __init__(self, plan: ExecutionPlan, bindings: dict[str, int],
                 arg_arrays: dict[int, np.ndarray], stitcher: Stitcher | None = None,
                 numerics: bool = True):
        self.plan = plan
        self.program = plan.program
        compiled = self.compiled = plan.compiled
        # NOTE: shapes that depend on the bindings only (a parameter's dynamic dims, and
        # constants; not loop indices or tensor elements) are evaluated once per run
        self.state = CallState(plan, bindings, arg_arrays, bound=frozenset(bindings))
        self.env = self.state.env
        self.tiles = TileNumerics(self.state, plan, self.fault)
        self.ops = TensorOps(self.state, BufferPool())   # whole ops, as the tensor op
        self.block_instances: Counter[str] = Counter()
        self.numerics = numerics
        self.calls_run = 0
        self.calls_batched = 0   # calls whose numerics ran as part of a batch
        self.stitcher = stitcher
        self._root_index = {name: i for i, name in enumerate(compiled.roots)}
        self._uncached = frozenset(s for s, policies in compiled.program.cache_policies.items()
                                   if policies.get(int(CachePolicy.NONE_CACHEABLE)))
        self._op_windows = plan.op_window_functions
        # NOTE: per run (shapes and layouts depend on the bindings): what every task of a call
        # op with the same valid extents is charged
        self._call_costs: dict[tuple, CallCost] = {}
        self._defers = bulk_instances.Charges(self._bulk_cost, self._bulk_detail,
                                              self._bulk_template, self._explain) \
            if self.bulk and not numerics and stitcher is not None and stitcher.defers else None

    @property
    def arrays(self) -> dict[int, np.ndarray]:
        """Storage id -> its array (the caller's for the parameters)."""
        return self.state.arrays

    def run(self) -> None:
        # NOTE: tile-sized matmuls run fastest on one BLAS thread (runtime/blas.py)
        try:
            with gc_paused(), blas.single_threaded():
                ControlWalk(self.state, self._run_block, self._before_loop).run()
        except PyptoRuntimeError:
            if self._defers is not None:   # an error of a deferred instance came first
                self.stitcher.settle()
            raise
        finally:
            self.tiles.keep_spares()

    def _before_loop(self, loop: Loop) -> None:
        if loop.submit_before_loop and self.stitcher is not None:
            self.stitcher.flush("loop")  # the work so far is submitted before the loop starts

    def _run_block(self, block: Block) -> None:
        self.block_instances[block.name] += 1
        root = self.compiled.roots[block.name]
        plan = self.plan.root(block.name)
        if self._defers is not None and plan.bulkable:
            values = plan.bulk_values(self.env.values)
            if values is not None:
                self.stitcher.begin_deferred(len(root.calls), plan, values, self._make_rows)
                self.calls_run += len(root.calls)
                return
        instance = 0
        if self.stitcher is not None:
            instance = self.stitcher.begin_instance(len(root.calls))
            self.stitcher.settle()   # (the deferred instances' details and templates first)
        evaluated = plan.evaluate(self.env.values)
        vkey, call_keys, windows = evaluated if evaluated is not None else (None, None, None)
        ids: dict[int, int] = {}
        calls = root.calls
        escaping = root.graph.escaping
        for start, end in (plan.steps if self.batch else plan.singles):
            if end - start > 1:
                wins = windows[start:end] if windows is not None else \
                    [[self._windows(op) for op in call.ops] for call in calls[start:end]]
                keys = call_keys[start:end] if call_keys is not None else [None] * (end - start)
                self._run_group(plan, start, calls[start:end], wins, vkey, keys, escaping,
                                instance, ids)
                continue
            call = calls[start]
            if call.grid is not None:
                self._run_grid(block.name, call, escaping, instance, ids, plan.facts[start])
                continue
            if windows is None or plan.has_whole[start]:
                task = self._new_task(block.name, call, instance, ids, plan.facts[start]) \
                    if self.stitcher is not None else None
                self.run_call(call, escaping, task)
                self._finish(call, task, ids)
                continue
            if self.numerics:
                self.tiles.run(call.ops, windows[start], escaping, plan.facts[start].deaths)
            if self.stitcher is not None and self.stitcher.rows is not None:
                self._add_row(plan, start, call, windows[start], call_keys[start], escaping,
                              instance, ids)
                continue
            task = None
            if self.stitcher is not None:
                task = self._new_task(block.name, call, instance, ids, plan.facts[start])
                self._charge(task, call, windows[start], call_keys[start], escaping, plan,
                             start)
            self._finish(call, task, ids)

    def _run_grid(self, root: str, call: CallOp, escaping: set[int], instance: int,
                  ids: dict, facts: CallFacts) -> None:
        """A call on a run-time tile grid: one task per tile, each with its own windows (the
        grid's index symbols bound to the tile's position); what waits for the call waits
        for all of them."""
        grid = call.grid
        counts = [max(0, self.state.ev(c)) for c in grid.counts]
        values = self.env.values
        made = []
        for index in itertools.product(*(range(n) for n in counts)):
            for sym, i in zip(grid.syms, index):
                values[sym.name] = i
            task = self._new_task(root, call, instance, ids, facts) \
                if self.stitcher is not None else None
            self.run_call(call, escaping, task)
            if task is not None:
                self._finish(call, task, ids)
                made.append(task.id)
            else:
                self.calls_run += 1
        for sym in grid.syms:
            values.pop(sym.name, None)
        ids[call.index] = made

    def _finish(self, call: CallOp, task: SimTask | None, ids: dict[int, int]) -> None:
        if task is not None:
            task.empty = not (task.mte2_bytes or task.mte3_bytes or task.vector_cycles
                              or task.cube_cycles)
            rows = self.stitcher.rows
            detail = rows.detail_code(call, lambda: _detail_of(task)) if rows is not None \
                else -1
            ids[call.index] = self.stitcher.add(task, detail)
        self.calls_run += 1

    def _add_row(self, plan: RootPlan, index: int, call: CallOp, windows: list,
                 valid_key: tuple | None, escaping: set[int], instance: int,
                 ids: dict) -> None:
        """Call op `index` of `plan`'s root as a row of the stitcher's tasks
        (`runtime.task_rows`): the object path's task, with no object."""
        stitcher = self.stitcher
        rows = stitcher.rows
        cost = self._cost(call, windows, valid_key, escaping, plan, index)
        detail = rows.detail_code(call, lambda: self._detail(plan.name, call, plan.facts[index]))
        template = rows.template(cost, self._uncached, stitcher.meter.metered)
        ids[call.index] = stitcher.add_row(instance, detail, template, windows,
                                           _task_ids(ids, call.preds))
        self.calls_run += 1

    # ---- instances made in bulk (runtime/bulk_instances.py) ----
    def _make_rows(self, pending: list) -> bulk_instances.Metered:
        stitcher = self.stitcher
        return bulk_instances.make_rows(pending, stitcher.rows, self._defers,
                                        stitcher.meter.temps)

    def _bulk_cost(self, plan: RootPlan, index: int, windows: list, valid_key: tuple
                   ) -> CallCost:
        escaping = self.compiled.roots[plan.name].graph.escaping
        return self._cost(plan.calls[index], windows, valid_key, escaping, plan, index)

    def _bulk_detail(self, plan: RootPlan, index: int) -> int:
        call = plan.calls[index]
        return self.stitcher.rows.detail_code(
            call, lambda: self._detail(plan.name, call, plan.facts[index]))

    def _bulk_template(self, cost: CallCost):
        return self.stitcher.rows.template(cost, self._uncached, self.stitcher.meter.metered)

    def _explain(self, plan: RootPlan, values: tuple) -> None:
        """Raise the error of the instance of `plan` with these values, as the instance made
        on its own raises it (its first tile op whose window fails)."""
        env = self.env.values
        saved = dict(env)
        env.update(zip(plan.bulk_names, values))
        try:
            for call in plan.calls:
                for op in call.ops:
                    self._windows(op)
        finally:
            env.clear()
            env.update(saved)
        raise AssertionError(f"internal: the windows of root function '{plan.name}' fail "
                             f"together but not one by one")

    def _detail(self, root: str, call: CallOp, facts: CallFacts) -> TaskDetail:
        inputs, outputs = self.plan.operands(call)
        return TaskDetail(root, self._root_index[root], call.index, call.leaf.name,
                          call.leaf.index, str(call.core), facts.label, inputs, outputs,
                          facts.merge, self._uncached)

    # ---- costs ----
    def _charge(self, task: SimTask, call: CallOp, windows: list, valid_key: tuple | None,
                escaping: set[int], plan: RootPlan, index: int) -> None:
        """Charge `task` for `call` (call op `index` of `plan`'s root, no whole ops) with these
        windows (`_cost`)."""
        self._cost(call, windows, valid_key, escaping, plan, index).apply(task, windows)

    def _cost(self, call: CallOp, windows: list, valid_key: tuple | None, escaping: set[int],
              plan: RootPlan, index: int) -> CallCost:
        """What `call` (call op `index` of `plan`'s root, no whole ops) costs with these
        windows. `valid_key`: the call's valid extents in short (RootPlan.evaluate; None: take
        them from the windows). Calls of one cost class (RootPlan.cost_class) share costs."""
        pairs = plan.facts[index].sharing
        shared = tuple(windows[a][i] == windows[b][j] for (a, i), (b, j) in pairs) \
            if pairs else ()
        if valid_key is None:
            valid_key = tuple(w[1] for op_windows in windows for w in op_windows)
        key = (plan.cost_class[index], valid_key, shared)
        cost = self._call_costs.get(key)
        if cost is None:
            cost = self._call_costs[key] = CallCost(call.ops, windows, escaping,
                                                    self.compiled.spec, self._value_shape)
        return cost

    # ---- batches of isomorphic, independent tasks ----
    def _run_group(self, plan: RootPlan, start: int, group: list, windows: list,
                   vkey: tuple | None, call_keys: list, escaping: set[int], instance: int,
                   ids: dict[int, int]) -> None:
        tasks = []
        as_rows = self.stitcher is not None and self.stitcher.rows is not None
        for i, (call, wins, valid_key) in enumerate(zip(group, windows, call_keys), start):
            task = None
            if as_rows:
                self._add_row(plan, i, call, wins, valid_key, escaping, instance, ids)
            elif self.stitcher is not None:
                task = self._new_task(plan.name, call, instance, ids, plan.facts[i])
                self._charge(task, call, wins, valid_key, escaping, plan, i)
            tasks.append(task)
        for first, end, ops, wins, deaths in (self._batch_runs(plan, start, group, windows,
                                                               vkey) if self.numerics else ()):
            self.tiles.run(ops, wins, escaping, deaths)
            if end - first > 1:
                self.calls_batched += end - first
        if not as_rows:
            for call, task in zip(group, tasks):
                self._finish(call, task, ids)

    def _batch_runs(self, plan: RootPlan, start: int, group: list, windows: list,
                    vkey: tuple | None) -> list:
        """(first, end, ops, windows, deaths) of each run of calls of `group` whose windows
        stack, as one batch.
        NOTE: when every offset of the group differs from its counterparts in the other calls
        by a constant (plan.rigid), which runs form and the extents of their unions depend on
        the valid extents only; they are worked out once per `vkey` and reused with this
        instance's offsets (the unions start where the run's first call does)."""
        key = (start, vkey) if vkey is not None and start in plan.rigid else None
        shape = plan.batch_shape(key, lambda: batch_shape(
            group, windows, [self.tiles.attrs(op).get("dims", ()) for op in group[0].ops]))
        runs = []
        for first, end, batch in shape:
            if batch is None:
                runs.append((first, end, group[first].ops, windows[first],
                             plan.facts[start + first].deaths))
                continue
            batch_ops, unions, deaths = batch
            runs.append((first, end, batch_ops, unions(windows[first]), deaths))
        return runs

    def _new_task(self, root: str, call: CallOp, instance: int, ids: dict[int, int],
                  facts: CallFacts) -> SimTask:
        inputs, outputs = self.plan.operands(call)
        # NOTE: like the operand hints, the merge ids are shared by the call op's tasks; the
        # core goes to the machine as its plain name (the compiler's `Core` is an enum)
        return SimTask(-1, -1, instance, root, self._root_index[root], call.index,
                       call.leaf.name, call.leaf.index, str(call.core), facts.label,
                       preds=_task_ids(ids, call.preds), merge=facts.merge,
                       uncached=self._uncached, inputs=inputs, outputs=outputs)

    # ---- one task, op by op (whole ops, or windows that read tensor elements) ----
    def run_call(self, call: CallOp, escaping: set[int], task: SimTask | None = None) -> None:
        local: dict[int, np.ndarray] = {}
        dirty: dict[int, list] = {}     # local value id -> windows written
        spec = self.compiled.spec
        shared: set = set()             # L1 loads the task paid for
        for op in call.ops:
            if op.kind == "whole":
                if self.numerics:
                    self.ops.run(op.src)
                if task is not None:
                    self._charge_whole(task, op)
                continue
            windows = self._windows(op)
            if self.numerics and op.kind == "copy_out":
                self.tiles.copy_out(op, local, windows)
            elif self.numerics:
                self.tiles.compute(op, local, escaping, windows, dirty)
            if task is not None:
                CallCost([op], [windows], escaping, spec, self._value_shape,
                         shared).apply(task, [windows])
        self.tiles.release(local, dirty, list(local))

    def _value_shape(self, v) -> tuple[int, ...]:
        return self.state.shape(v.shape)

    def _charge_whole(self, task: SimTask, op: TileOp) -> None:
        if op.src.opcode == "RESHAPE" and op.src.attrs.get("inplace"):
            return  # the output aliases the input's storage: no data moves (an empty task)

        def access(v):
            shape = self.state.shape(v.shape)
            valid = self.state.clip(self.state.shape(v.valid_shape), shape)
            acc = (v.storage.id, tuple(0 for _ in valid), valid)
            return (acc, (shape, bytes_of(v.dtype))), float(np.prod(valid)) * bytes_of(v.dtype)
        reads = [access(v) for v in op.src.inputs]
        writes = [access(v) for v in op.src.outputs]
        add_whole_op(task, sum(b for _, b in reads), sum(b for _, b in writes),
                     self.compiled.spec, [a for a, _ in writes], [a for a, _ in reads])

    def _windows(self, op: TileOp) -> tuple:
        """(offsets, valid extents) of every input region, then of the output, evaluated for
        this root instance in one call of the op's generated window function; where it fails,
        `evaluate`'s error names the unbound symbol or the division by zero."""
        fn = self._op_windows.get(id(op)) or self.plan.op_windows(op)
        env = self.env
        try:
            return fn(env.values, env.read_element)
        except (KeyError, ZeroDivisionError, TypeError) as error:
            raise_evaluation_error(window_exprs(op), env, error)
