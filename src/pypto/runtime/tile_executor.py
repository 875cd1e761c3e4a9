"""The tile executor: runs each root-function instance call op by call op, tile op by tile op.

Same control walk as the reference executor; what differs is a block: its call ops run in
dependency order, each with its own local buffers. A tile op reads an input region from the
task's local buffer when every tile that produced that region ran in the same task, and from GM
otherwise; its output goes to the local buffer and, when another task (or block) reads it, to
GM as well. So a missing dependency, a wrong region or a forgotten copy-out gives a wrong
answer, which the tests compare against the reference executor.

Per-instance work is kept to what differs between instances: what every instance of a root
function shares (its steps, one generated function evaluating all its windows, the shapes of
its batches) lives in a `_RootPlan`, and tasks of equal valid extents share one `CallCost`.
"""
from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy as np

from pypto.dtypes import compute_dtype, is_low_precision, to_numpy
from pypto.errors import PyptoRuntimeError
from pypto.dtypes import bytes_of
from pypto.enums import CachePolicy
from pypto.ir.program import Block, Loop, Program
from pypto.machine.cost import CallCost, add_whole_op, operand_hints
from pypto.machine.result import SimTask
from pypto.ops.core import REGISTRY
from pypto.ops.elementwise import POINTWISE
from pypto.passes import CompiledProgram
from pypto.passes.functions import CallOp
from pypto.passes.tile_graph import Region, TileOp
from pypto.passes.untiled import untiled, whole_label
from pypto.runtime import blas
from pypto.gc_pause import gc_paused
from pypto.runtime.liveness import EXPRESSION_READER, storage_users
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.stitch import Stitcher
from pypto.runtime.window_code import compile_windows, regions_of, tuple_code
from pypto.symbolic import Const, Expr, _const_diff, _to_code, free_symbols, reads_elements


# Reductions a batch may run over many rows at once (never over the stacked dim).
_ROWWISE_REDUCE = frozenset({"REDUCE_SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD",
                             "REDUCE_MEAN"})
# Ops that are per element the same function of their input, like POINTWISE ones (a cast
# rounds each element on its own, whatever its mode).
_ELEMENTWISE = POINTWISE | {"CAST"}


# NOTE: whole-value result buffers outlive a run, up to this many bytes per compiled program:
# a warm call then computes its large results in them instead of page-faulting fresh memory
# (a third of a 1024x4096 softmax's run). They live on the compiled program (spare_buffers).
_SPARE_BYTES = 64 << 20


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


class TileExecutor(ReferenceExecutor):
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

    def __init__(self, compiled: CompiledProgram, bindings: dict[str, int],
                 arg_arrays: dict[int, np.ndarray], stitcher: Stitcher | None = None,
                 numerics: bool = True):
        super().__init__(compiled.program, bindings, arg_arrays)
        self.compiled = compiled
        self.numerics = numerics
        self.calls_run = 0
        self.calls_batched = 0   # calls whose numerics ran as part of a batch
        self.stitcher = stitcher
        self._root_index = {name: i for i, name in enumerate(compiled.roots)}
        self._uncached = frozenset(s for s, policies in compiled.program.cache_policies.items()
                                   if policies.get(int(CachePolicy.NONE_CACHEABLE)))
        # NOTE: local buffers are full-shape and zero outside what the task wrote. Allocating
        # them per task cost 0.5 ms each at 1024x4096 (np.zeros of 16 MB, 7 per softmax task);
        # instead each task takes them from a pool and zeroes only the windows it wrote.
        self._pool: dict[tuple, list[np.ndarray]] = {}
        # NOTE: whole-value results whose last reader ran: an op that accepts an output buffer
        # computes its next whole result of that shape in one (no page faults, see _numerics);
        # kept for the next run of the program too (see _SPARE_BYTES)
        self._spares: dict[tuple, list[np.ndarray]] = compiled.spare_buffers
        self._root_plans: dict[str, _RootPlan] = {}
        self._bound = frozenset(bindings)
        self._shapes: dict[int, tuple[int, ...]] = {}
        # NOTE: per-run caches (shapes and layouts depend on the bindings): what every task of
        # a call op with the same valid extents is charged, the static facts of each tile op's
        # numerics, and the numpy index of each window
        self._call_costs: dict[tuple, CallCost] = {}
        self._op_runs: dict[TileOp, _OpRun] = {}
        self._cuts: dict[tuple, tuple] = {}
        self._boxes: dict[tuple, tuple] = {}

    def shape(self, dims: tuple[Expr, ...]) -> tuple[int, ...]:
        # NOTE: dims that depend on the bindings only (a parameter's dynamic dims, as well as
        # constants; not loop indices or tensor elements) are evaluated once per run: tasks
        # ask for the same few shapes all along
        key = id(dims)
        found = self._shapes.get(key)
        if found is None:
            found = super().shape(dims)
            if all(free_symbols(d) <= self._bound and not reads_elements(d) for d in dims):
                self._shapes[key] = found
        return found

    def run(self) -> None:
        # NOTE: tile-sized matmuls run fastest on one BLAS thread (runtime/blas.py)
        try:
            with gc_paused(), blas.single_threaded():
                super().run()
        finally:
            self._keep_spares()

    def _keep_spares(self) -> None:
        """Keep at most _SPARE_BYTES of spare result buffers for the next run."""
        budget = _SPARE_BYTES
        for arrays in self._spares.values():
            kept = []
            for a in arrays:
                if a.nbytes <= budget:
                    kept.append(a)
                    budget -= a.nbytes
            arrays[:] = kept

    def run_loop(self, loop: Loop) -> None:
        if loop.submit_before_loop and self.stitcher is not None:
            self.stitcher.flush()  # the work so far is submitted before the loop starts
        super().run_loop(loop)

    def _run_block(self, block: Block) -> None:
        self.block_instances[block.name] += 1
        root = self.compiled.roots[block.name]
        plan = self._root_plans.get(block.name)
        if plan is None:
            plan = self._root_plans[block.name] = _root_plan(root)
        instance = self.stitcher.begin_instance(len(root.calls)) if self.stitcher else 0
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
            task = None
            if self.stitcher is not None:
                task = self._new_task(block.name, call, instance, ids, plan.facts[start])
            if windows is None or plan.has_whole[start]:
                self.run_call(call, escaping, task)
            else:
                if self.numerics:
                    self._numerics(call.ops, windows[start], escaping,
                                   plan.facts[start].deaths)
                if task is not None:
                    self._charge(task, call, windows[start], call_keys[start], escaping,
                                 plan, start)
            self._finish(call, task, ids)

    def _run_grid(self, root: str, call: CallOp, escaping: set[int], instance: int,
                  ids: dict, facts: _CallFacts) -> None:
        """A call on a run-time tile grid: one task per tile, each with its own windows (the
        grid's index symbols bound to the tile's position); what waits for the call waits
        for all of them."""
        grid = call.grid
        counts = [max(0, self.ev(c)) for c in grid.counts]
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
            self.stitcher.add(task)
            ids[call.index] = task.id
        self.calls_run += 1

    # ---- costs ----
    def _charge(self, task: SimTask, call: CallOp, windows: list, valid_key: tuple | None,
                escaping: set[int], plan: _RootPlan, index: int) -> None:
        """Charge `task` for `call` (call op `index` of `plan`'s root, no whole ops) with these
        windows. `valid_key`: the call's valid extents in short (_RootPlan.evaluate; None: take
        them from the windows). Calls of one cost class (_RootPlan.cost_class) share costs."""
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
        cost.apply(task, windows)

    # ---- batches of isomorphic, independent tasks ----
    def _run_group(self, plan: _RootPlan, start: int, group: list, windows: list,
                   vkey: tuple | None, call_keys: list, escaping: set[int], instance: int,
                   ids: dict[int, int]) -> None:
        tasks = []
        for i, (call, wins, valid_key) in enumerate(zip(group, windows, call_keys), start):
            task = None
            if self.stitcher is not None:
                task = self._new_task(plan.name, call, instance, ids, plan.facts[i])
                self._charge(task, call, wins, valid_key, escaping, plan, i)
            tasks.append(task)
        for first, end, ops, wins, deaths in (self._batch_runs(plan, start, group, windows,
                                                               vkey) if self.numerics else ()):
            self._numerics(ops, wins, escaping, deaths)
            if end - first > 1:
                self.calls_batched += end - first
        for call, task in zip(group, tasks):
            self._finish(call, task, ids)

    def _batch_runs(self, plan: _RootPlan, start: int, group: list, windows: list,
                    vkey: tuple | None) -> list:
        """(first, end, ops, windows, deaths) of each run of calls of `group` whose windows
        stack, as one batch.
        NOTE: when every offset of the group differs from its counterparts in the other calls
        by a constant (plan.rigid), which runs form and the extents of their unions depend on
        the valid extents only; they are worked out once per `vkey` and reused with this
        instance's offsets (the unions start where the run's first call does)."""
        key = (start, vkey) if vkey is not None and start in plan.rigid else None
        shape = plan.batches.get(key) if key is not None else None
        if shape is None:
            dims = [self._attrs(op).get("dims", ()) for op in group[0].ops]
            shape = _batch_shape(group, windows, dims)
            if key is not None:
                if len(plan.batches) >= _MAX_CACHED:
                    plan.batches.clear()
                plan.batches[key] = shape
        runs = []
        for first, end, batch in shape:
            if batch is None:
                runs.append((first, end, group[first].ops, windows[first],
                             plan.facts[start + first].deaths))
                continue
            batch_ops, unions, deaths = batch
            runs.append((first, end, batch_ops, unions(windows[first]), deaths))
        return runs

    def _numerics(self, ops: list, windows: list, escaping: set[int],
                  deaths: list | None = None) -> None:
        """Run tile ops with one set of local buffers; `deaths[k]`: the local values nothing
        after op k reads, released right after it (their memory is then reused: a fresh
        16 MB buffer costs more in page faults than the arithmetic that fills it)."""
        local: dict[int, np.ndarray] = {}
        dirty: dict[int, list] = {}
        for k, (op, w) in enumerate(zip(ops, windows)):
            if op.kind == "copy_out":
                self._copy_out(op, local, w)
            else:
                self._compute(op, local, escaping, w, dirty)
            if deaths is not None and deaths[k]:
                self._release(local, dirty, deaths[k])
        self._release(local, dirty, list(local))

    def _release(self, local: dict, dirty: dict, vids: list) -> None:
        """Give up local values `vids`: pooled buffers are zeroed where written and pooled."""
        for vid in vids:
            arr = local.pop(vid, None)
            if arr is None:
                continue
            windows = dirty.pop(vid, ())
            if windows is None:   # a whole result: the next one of its shape is computed in it
                self._spares.setdefault((arr.shape, arr.dtype), []).append(arr)
                continue
            for window in windows:
                arr[window] = 0
            self._pool.setdefault((arr.shape, arr.dtype), []).append(arr)

    def _new_task(self, root: str, call: CallOp, instance: int, ids: dict[int, int],
                  facts: _CallFacts) -> SimTask:
        inputs, outputs = _operands(call)
        # NOTE: like the operand hints, the merge ids are shared by the call op's tasks
        return SimTask(-1, -1, instance, root, self._root_index[root], call.index,
                       call.leaf.name, call.leaf.index, call.core, facts.label,
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
                    self.run_op(op.src)
                if task is not None:
                    self._charge_whole(task, op)
                continue
            windows = self._windows(op)
            if self.numerics and op.kind == "copy_out":
                self._copy_out(op, local, windows)
            elif self.numerics:
                self._compute(op, local, escaping, windows, dirty)
            if task is not None:
                CallCost([op], [windows], escaping, spec, self._value_shape,
                         shared).apply(task, [windows])
        self._release(local, dirty, list(local))

    def _value_shape(self, v) -> tuple[int, ...]:
        return self.shape(v.shape)

    def _charge_whole(self, task: SimTask, op: TileOp) -> None:
        if op.src.opcode == "RESHAPE" and op.src.attrs.get("inplace"):
            return  # the output aliases the input's storage: no data moves (an empty task)

        def access(v):
            shape = self.shape(v.shape)
            valid = self._clip(self.shape(v.valid_shape), shape)
            acc = (v.storage.id, tuple(0 for _ in valid), valid)
            return (acc, (shape, bytes_of(v.dtype))), float(np.prod(valid)) * bytes_of(v.dtype)
        reads = [access(v) for v in op.src.inputs]
        writes = [access(v) for v in op.src.outputs]
        add_whole_op(task, sum(b for _, b in reads), sum(b for _, b in writes),
                     self.compiled.spec, [a for a, _ in writes], [a for a, _ in reads])

    def _windows(self, op: TileOp) -> tuple:
        """(offsets, valid extents) of every input region, then of the output, evaluated for
        this root instance in one call of the op's compiled plan."""
        plan = op.plan
        if plan is None:
            plan = op.plan = _compile_plan(op)
        try:
            return plan(self.env.values, self.env.read_element)
        except (KeyError, ZeroDivisionError, TypeError):
            regions = list(op.inputs) + ([op.output] if op.output is not None else [])
            return tuple((tuple(self.ev(o) for o in r.offsets),
                          tuple(max(0, min(self.ev(v), n)) for v, n in zip(r.valid, r.shape)))
                         for r in regions)

    def _cut(self, offs: tuple[int, ...], valid: tuple[int, ...],
             shape: tuple[int, ...]) -> tuple:
        """(numpy index of the window clipped to `shape`, whether nothing was clipped)."""
        key = (offs, valid, shape)
        cut = self._cuts.get(key)
        if cut is None:
            index = tuple(slice(min(o, n), min(o + v, n)) for o, v, n in zip(offs, valid, shape))
            cut = self._cuts[key] = (index, all(o + v <= n for o, v, n in
                                                zip(offs, valid, shape)))
        return cut

    def _box(self, offs: tuple[int, ...], extents: tuple[int, ...]) -> tuple:
        """The numpy index of a window (cached: tasks write the same few windows)."""
        key = (offs, extents)
        box = self._boxes.get(key)
        if box is None:
            box = self._boxes[key] = tuple(slice(o, o + n) for o, n in zip(offs, extents))
        return box

    def _read(self, region: Region, from_local: bool, local: dict, op: TileOp,
              offs: tuple[int, ...], valid: tuple[int, ...]) -> np.ndarray:
        arr = local[region.value.id] if from_local else self.array_of(region.value, op.src)
        cut = self._cuts.get((offs, valid, arr.shape)) or self._cut(offs, valid, arr.shape)
        got = arr[cut[0]]
        if not cut[1]:  # a view reaching past the physical edge reads zeros
            padded = np.zeros(tuple(valid), dtype=arr.dtype)
            padded[tuple(slice(0, s) for s in got.shape)] = got
            got = padded
        if region.dims is not None:  # read through a squeeze/unsqueeze alias
            got = got.reshape(tuple(got.shape[d] if d >= 0 else 1 for d in region.dims))
        return got

    def _target(self, region: Region, local: dict) -> np.ndarray:
        v = region.value
        arr = local.get(v.id)
        if arr is None:
            shape, dtype = self.shape(v.shape), np.dtype(to_numpy(v.dtype))
            free = self._pool.get((shape, dtype))
            arr = free.pop() if free else np.zeros(shape, dtype=dtype)
            local[v.id] = arr
        return arr

    def _gm(self, region: Region) -> np.ndarray:
        v = region.value
        s = v.storage
        arr = self.arrays.get(s.id)
        if arr is None:
            arr = self.arrays[s.id] = np.zeros(self.shape(s.shape), dtype=to_numpy(s.dtype))
        return self.array_of(v, None)

    def _attrs(self, op: TileOp) -> dict:
        static = op.static_attrs
        if static is not None:
            return dict(static)
        attrs = {k: self._attr(a) for k, a in op.src.attrs.items()}
        attrs.update({k: self._attr(a) for k, a in op.attrs.items()})
        if not any(_has_expr(a) for a in list(op.src.attrs.values()) + list(op.attrs.values())):
            op.static_attrs = dict(attrs)
        return attrs

    def _op_run(self, op: TileOp) -> _OpRun:
        run = self._op_runs.get(op)
        if run is None:
            run = self._op_runs[op] = _OpRun(op)
        return run

    def _compute(self, op: TileOp, local: dict, escaping: set[int], windows: tuple,
                 dirty: dict) -> None:
        run = self._op_runs.get(op)
        if run is None:
            run = self._op_runs[op] = _OpRun(op)
        arrays = []
        for r, from_local, (offs, valid), widen in zip(op.inputs, op.local_inputs, windows,
                                                       run.widen):
            a = self._read(r, from_local, local, op, offs, valid)
            if widen is not None:
                a = a.astype(widen)
            arrays.append(a)
        out = op.output
        vid = out.value.id
        offs, out_valid = windows[-1]
        static = op.static_attrs
        attrs = dict(static) if static is not None else self._attrs(op)
        attrs["_in_valid"] = [a.shape for a in arrays]
        attrs["_out_valid"] = out_valid
        attrs["_loc"] = op.src.loc
        whole = vid not in local and not any(offs) and out_valid == self.shape(out.value.shape)
        spare = None
        if 0 in out_valid:
            result = np.zeros(out_valid, dtype=run.target)
        else:
            if whole and run.accepts_out:
                free = self._spares.get((out_valid, run.target))
                if free:
                    spare = attrs["_out"] = free.pop()
            result = run.compute(arrays, attrs)
            if op.kind == "combine" and "mean_count" in attrs:
                result = np.asarray(result) / np.float32(attrs["mean_count"])
            if type(result) is not np.ndarray:
                result = np.asarray(result)
        if spare is not None and result is not spare:
            self._spares[(out_valid, run.target)].append(spare)
        if result.shape != out_valid:
            raise PyptoRuntimeError(f"internal: tile {op.opcode} produced {list(result.shape)}"
                                    f", expected {list(out_valid)}", op.src.loc)
        if result.dtype != run.target:
            with np.errstate(all="ignore"):
                result = result.astype(run.target)
        window = self._boxes.get((offs, out_valid)) or self._box(offs, out_valid)
        if whole and result.flags.owndata and result.flags.c_contiguous \
                and not any(np.may_share_memory(result, a) for a in arrays):
            # NOTE: a fresh result covering the whole value (a batch over all its tiles)
            # becomes the local buffer itself instead of being copied into a pooled one
            local[vid] = result
            dirty[vid] = None   # a spare once released (see _release)
        else:
            target = local.get(vid)
            if target is None:
                target = self._target(out, local)
            target[window] = result
            written = dirty.setdefault(vid, [])
            if written is not None:
                written.append(window)
        if vid in escaping:
            self._gm(out)[window] = result

    def _copy_out(self, op: TileOp, local: dict, windows: tuple) -> None:
        data = self._read(op.inputs[0], op.local_inputs[0], local, op, *windows[0])
        if is_low_precision(op.inputs[0].value.dtype) and data.dtype != to_numpy(
                op.inputs[0].value.dtype):
            data = data.astype(to_numpy(op.inputs[0].value.dtype))
        dst = self._destination(op.output.value, op.src)
        offsets = windows[1][0]
        REGISTRY["ASSEMBLE"].compute(dst, [data], {"offsets": offsets, "_loc": op.src.loc})
        self.written.add(op.output.value.storage.id)


class _OpRun:
    """The static facts of one tile op's numerics: its compute function (and whether it may
    compute into a given buffer), the type each input is widened to (None: as stored) and the
    type its result is stored in."""

    __slots__ = ("compute", "accepts_out", "widen", "target")

    def __init__(self, op: TileOp):
        opdef = REGISTRY[op.opcode]
        self.compute = opdef.compute
        self.accepts_out = opdef.accepts_out
        self.widen = tuple(compute_dtype(r.value.dtype)
                           if opdef.widen and is_low_precision(r.value.dtype) else None
                           for r in op.inputs)
        self.target = to_numpy(op.output.value.dtype)


def _has_expr(x: object) -> bool:
    if isinstance(x, Expr):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_expr(v) for v in x)
    return False


class _CallFacts:
    """What the executor derives from a call op once: its swimlane label and merge groups,
    the cube loads its tile ops may share (CallCost.sharing), the release points of its local
    values (`_deaths`), and whether it may run batched with its isomorphic siblings."""

    __slots__ = ("label", "merge", "sharing", "deaths", "batchable")

    def __init__(self, call: CallOp):
        untiled_op = next((op for op in call.ops if untiled(op)), None)
        self.label = whole_label(untiled_op) if untiled_op is not None else next(
            (op.src.label for op in call.ops if op.src.label), "")
        self.merge = {name: info.key for name, info in getattr(call, "merge_info", {}).items()}
        self.sharing = CallCost.sharing(call.ops)
        self.deaths = _deaths(call.ops)
        self.batchable = all(_batchable_op(op) for op in call.ops)


_FACTS: "weakref.WeakKeyDictionary[CallOp, _CallFacts]" = weakref.WeakKeyDictionary()


def _facts(call: CallOp) -> _CallFacts:
    facts = _FACTS.get(call)
    if facts is None:
        facts = _FACTS[call] = _CallFacts(call)
    return facts


def _group_end(calls: list, start: int) -> int:
    """End of the run of calls from `start` that may batch: same op structure (same source
    ops and tile attributes), batchable ops only, and none waits for another."""
    head = calls[start]
    if head.grid is not None or not _facts(head).batchable:
        return start + 1
    members = {head.index}
    end = start + 1
    while end < len(calls):
        c = calls[end]
        if len(c.ops) != len(head.ops) or any(p in members for p in c.preds):
            break
        if not all(a.src is b.src and a.kind == b.kind and a.opcode == b.opcode
                   and a.local_inputs == b.local_inputs
                   and (a.kind == "copy_out" or a.attrs == b.attrs)   # copy: offsets
                   for a, b in zip(c.ops, head.ops)) or not _facts(c).batchable:
            break
        members.add(c.index)
        end += 1
    return end


def _batchable_op(op: TileOp) -> bool:
    if op.kind == "copy_out":
        ok = op.opcode == "ASSEMBLE"
    elif op.kind in ("compute", "partial", "combine"):
        ok = op.opcode in _ELEMENTWISE or op.opcode in _ROWWISE_REDUCE
    else:
        return False
    if not ok or op.output is None:
        return False
    rank = len(op.output.shape)
    if any(r.dims is not None or len(r.shape) != rank for r in op.inputs):
        return False
    if op.plan is None:
        op.plan = _compile_plan(op)
    return not op.plan.reads_elements   # windows computed up front must not read data


def _extend(union: tuple | None, first: tuple, w: tuple, op: TileOp,
            reduce_dims: tuple) -> tuple | None:
    """Add one call's windows `w` of a tile op to the union of the earlier calls' (`first` =
    the first call's; `union` is None after one call). The windows must stack along one dim d
    (in call order, contiguous, equal elsewhere) that the op does not reduce; an input region
    the same in every call must be a broadcast (extent 1 along d) operand of a tensor-tensor
    pointwise op. A union is (d, windows); returns the new one, or None when `w` does not
    stack."""
    prev = union[1] if union is not None else first
    out_offs = prev[-1][0]
    o = w[-1][0]
    d = next((k for k in range(len(o)) if o[k] != out_offs[k]), None)
    if d is None or d in reduce_dims or (union is not None and union[0] != d):
        return None
    merged = []
    for r, ((uo, uv), (o, v), f) in enumerate(zip(prev, w, first)):
        if 0 in v:
            return None
        constant = union is not None and (uo, uv) == f   # stacked unions outgrow `f`
        if r < len(w) - 1 and (o, v) == f and (union is None or constant):
            if v[d] != 1 or op.opcode not in POINTWISE or len(op.inputs) != 2:
                return None
            merged.append(f)
            continue
        if constant:
            return None
        same_rest = (o[:d] + o[d + 1:], v[:d] + v[d + 1:]) == (uo[:d] + uo[d + 1:],
                                                                uv[:d] + uv[d + 1:])
        if o[d] != uo[d] + uv[d] or v[d] != w[-1][1][d] or not same_rest:
            return None
        merged.append((uo, uv[:d] + (uv[d] + v[d],) + uv[d + 1:]))
    return d, tuple(merged)


def _merge_siblings(ops: list, windows: list, dims: list) -> list[tuple[int, tuple]]:
    """Merge consecutive tile ops of one tensor op (e.g. the four column tiles of a SUB, or
    of the assemble writing its result out) whose batched windows stack too, so that one numpy
    call covers the whole value. Returns (index of the first op, merged windows) per op that
    runs.
    NOTE: one tensor op may expand to a chain of tile ops (rsqrt: SQRT into a scratch value,
    then DIVS from it, row by row). Merging SQRT row 1 into DIVS row 0 ran the division over
    rows no SQRT had written yet (issue 13: inf). So siblings must also share the opcode, and
    a tile op never joins a merge that writes a value it reads or reads a value it writes."""
    out = [(0, windows[0])]
    union = None
    reads: set[int] = set()
    writes: set[int] = set()
    for k, (op, w, rd) in enumerate(zip(ops[1:], windows[1:], dims[1:]), 1):
        prev = ops[out[-1][0]]
        if union is None:
            reads, writes = _values_read(prev), _values_written(prev)
        op_reads, op_writes = _values_read(op), _values_written(op)
        if _sibling_key(op) == _sibling_key(prev) and not (op_reads & writes) \
                and not (op_writes & reads):
            first = out[-1][1] if union is None else union[2]
            grown = _extend(union, first, w, op, rd)
            if grown is not None:
                union = (*grown, first)
                out[-1] = (out[-1][0], grown[1])
                reads |= op_reads
                writes |= op_writes
                continue
        union = None
        out.append((k, w))
    return out


def _values_read(op: TileOp) -> set[int]:
    return {r.value.id for r in op.inputs}


def _values_written(op: TileOp) -> set[int]:
    return {op.output.value.id} if op.output is not None else set()


def _batch_shape(group: list, windows: list, dims: list) -> list:
    """How `group`'s calls run: (first, end, None) for a call on its own, (first, end,
    (ops, unions, deaths)) for the calls first..end-1 as one batch: the tile ops it runs,
    a function of the first call's windows giving their union windows (a union starts where
    the first call's window of that op does), and the ops' release points (`_deaths`)."""
    ops = group[0].ops
    out = []
    start = 0
    while start < len(group):
        unions: list = [None] * len(ops)
        end = start + 1
        while end < len(group):
            grown = [_extend(u, f, w, op, rd) for u, f, w, op, rd in
                     zip(unions, windows[start], windows[end], ops, dims)]
            if any(g is None for g in grown):
                break
            unions = grown
            end += 1
        if end - start > 1:
            merged = _merge_siblings(ops, [u[1] for u in unions], dims)
            batch_ops = [ops[i] for i, _ in merged]
            out.append((start, end, (batch_ops, _union_builder(merged), _deaths(batch_ops))))
        else:
            out.append((start, end, None))
        start = end
    return out


def _union_builder(merged: list[tuple[int, tuple]]):
    """A function of a call's windows returning the windows of `merged` ((index of a tile op,
    its union windows) per op) moved to that call's offsets.
    NOTE: generated: it runs for every batch of every root instance."""
    ops = ", ".join(tuple_code([f"(w[{i}][{r}][0], {ext!r})" for r, (_, ext) in enumerate(wins)])
                    for i, wins in merged)
    return eval(f"lambda w: [{ops}]")


def _deaths(ops: list) -> list[list[int]]:
    """Per tile op: the local values that op is the last one to read or write."""
    last: dict[int, int] = {}
    for k, op in enumerate(ops):
        for r, local in zip(op.inputs, op.local_inputs):
            if local:
                last[r.value.id] = k
        if op.output is not None and op.kind != "copy_out":
            last[op.output.value.id] = k
    out: list[list[int]] = [[] for _ in ops]
    for vid, k in last.items():
        out[k].append(vid)
    return out


_MAX_CACHED = 4096   # batch shapes kept per root function (one per distinct valid extents)


class _RootPlan:
    """What every instance of one root function shares: its steps (a call on its own, or a run
    of isomorphic independent calls that may batch) and one generated function evaluating all
    its windows.

    NOTE: evaluating each tile op's windows on its own walked the same few subexpressions
    (a loop index, a clamped tail extent) dozens of times per instance; the generated function
    computes each distinct one once. It returns (vkey, valid key per call, windows per call
    per tile op): vkey holds the values of the instance's distinct symbolic valid extents, so
    instances of equal vkey have equal valid extents everywhere; a call's valid key stands
    for its own valid extents (calls of equal valid key and cost class cost the same)."""

    def __init__(self, root):
        self.name = root.name
        calls = root.calls
        self.singles = [(i, i + 1) for i in range(len(calls))]
        self.steps = []
        i = 0
        while i < len(calls):
            end = _group_end(calls, i)
            self.steps.append((i, end))
            i = end
        # groups whose batch shape depends on the valid extents only (see _rigid)
        self.rigid = {s for s, e in self.steps if e - s > 1 and _rigid(calls[s:e])}
        # calls whose tile ops evaluate their own windows when they run: whole ops, and tile
        # ops on a run-time grid (one task per tile)
        self.has_whole = [c.grid is not None or any(op.kind == "whole" for op in c.ops)
                          for c in calls]
        self.facts = [_facts(c) for c in calls]
        # the first call op charged like each one for equal valid extents (same regions of
        # the same values, same kinds of tile op): isomorphic calls share their CallCost
        first: dict[tuple, CallOp] = {}
        self.cost_class = [first.setdefault(_cost_signature(c), c) for c in calls]
        # batch shapes of rigid groups, by (first call, vkey): valid for any bindings
        self.batches: dict[tuple, list] = {}
        self._windows = compile_windows(calls)

    def evaluate(self, values: dict) -> tuple | None:
        """(vkey, valid keys, windows) for the symbol `values`, or None: some window reads a tensor
        element or cannot be evaluated (the tile ops then evaluate their own, in order)."""
        if self._windows is None:
            return None
        try:
            return self._windows(values)
        except (KeyError, ZeroDivisionError, TypeError):
            return None


_ROOT_PLANS: "weakref.WeakKeyDictionary[Any, _RootPlan]" = weakref.WeakKeyDictionary()


def _root_plan(root) -> _RootPlan:
    plan = _ROOT_PLANS.get(root)
    if plan is None:
        plan = _ROOT_PLANS[root] = _RootPlan(root)
    return plan


def _cost_signature(call: CallOp) -> tuple:
    """What CallCost reads from a call op besides its windows."""
    return tuple((id(op.src), op.kind, op.opcode, op.core, tuple(op.local_inputs),
                  tuple(r.value.id for r in regions_of(op)), id(op.attrs.get("cube_plan")))
                 for op in call.ops)


def _rigid(calls: list) -> bool:
    """Every offset in `calls` differs by a constant from its counterpart in the first call's
    first tile op that `_merge_siblings` may merge it with: then which windows stack
    (`_extend`) is decided by the valid extents alone."""
    head = calls[0].ops
    first = {}
    for j, op in enumerate(head):
        first.setdefault(_sibling_key(op), j)
    for call in calls:
        for j, op in enumerate(call.ops):
            ref = head[first[_sibling_key(head[j])]]
            for r, rr in zip(regions_of(op), regions_of(ref)):
                if len(r.offsets) != len(rr.offsets):
                    return False
                for a, b in zip(r.offsets, rr.offsets):
                    if a is not b and a != b and (type(a) is not Const or type(b) is not Const) \
                            and _const_diff(a, b) is None:
                        return False
    return True


def _sibling_key(op: TileOp) -> tuple:
    """Tile ops `_merge_siblings` may merge share this: same tensor op, kind, opcode and
    local inputs."""
    return id(op.src), op.kind, op.opcode, tuple(op.local_inputs)


def _compile_plan(op: TileOp):
    """One Python function returning ((offsets, clipped valid) per input region, then output).

    NOTE: built once per tile op and kept on it; it turns ~10 symbolic tree walks per tile op
    and root instance into one call."""
    reads: list = []
    parts = []
    regions = list(op.inputs) + ([op.output] if op.output is not None else [])
    if all(isinstance(e, Const) for r in regions for e in r.offsets + r.valid):
        windows = tuple((tuple(o.value for o in r.offsets),
                         tuple(max(0, min(v.value, n)) for v, n in zip(r.valid, r.shape)))
                        for r in regions)
        def constant(V, R):
            return windows
        constant.reads_elements = False
        return constant
    for r in regions:
        offs = ", ".join(_to_code(o, reads) for o in r.offsets)
        valid = ", ".join(f"_max(0, _min({_to_code(v, reads)}, {n}))"
                          for v, n in zip(r.valid, r.shape))
        parts.append(f"(({offs}{',' if r.offsets else ''}), ({valid}{',' if r.valid else ''}))")
    code = f"lambda V, R: ({', '.join(parts)}{',' if parts else ''})"
    plan = eval(code, {"E": tuple(reads), "_min": min, "_max": max})
    plan.reads_elements = bool(reads)
    return plan


def _operands(call: CallOp) -> tuple[list, list]:
    """PyPTO-style operand hints of a call op: the GM tensors it reads and writes
    ({id: {shape (-1 = dynamic), dtype, rawmagic}}), computed once per call op."""
    if call.operand_hints is not None:
        return call.operand_hints
    seen_in, seen_out, ins, outs = set(), set(), [], []
    for op in call.ops:
        for r, local in zip(op.inputs, op.local_inputs or [False] * len(op.inputs)):
            if not local and r.value.id not in seen_in:
                seen_in.add(r.value.id)
                ins.append(r.value)
        if op.output is not None and op.output.value.id not in seen_out and (
                op.kind in ("copy_out", "whole")):
            seen_out.add(op.output.value.id)
            outs.append(op.output.value)
    hints = (operand_hints(ins), operand_hints(outs))
    call.operand_hints = hints
    return hints
