"""The tile executor: runs each root-function instance call op by call op, tile op by tile op.

Same control walk as the reference executor; what differs is a block: its call ops run in
dependency order, each with its own local buffers. A tile op reads an input region from the
task's local buffer when every tile that produced that region ran in the same task, and from GM
otherwise; its output goes to the local buffer and, when another task (or block) reads it, to
GM as well. So a missing dependency, a wrong region or a forgotten copy-out gives a wrong
answer, which the tests compare against the reference executor.
"""
from __future__ import annotations

import numpy as np

from pypto.dtypes import compute_dtype, is_low_precision, to_numpy
from pypto.errors import PyptoRuntimeError
from pypto.dtypes import bytes_of
from pypto.enums import CachePolicy
from pypto.ir.program import Block, Loop
from pypto.machine.cost import add_tile_op, add_whole_op, operand_hints
from pypto.machine.result import SimTask
from pypto.ops.core import REGISTRY
from pypto.ops.elementwise import POINTWISE
from pypto.passes import CompiledProgram
from pypto.passes.functions import CallOp
from pypto.passes.tile_graph import Region, TileOp
from pypto.runtime import blas
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.stitch import Stitcher
from pypto.symbolic import Const, Expr, _to_code


# Reductions a batch may run over many rows at once (never over the stacked dim).
_ROWWISE_REDUCE = frozenset({"REDUCE_SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD",
                             "REDUCE_MEAN"})


class TileExecutor(ReferenceExecutor):
    """Executes a compiled program at tile level (the default executor).

    NOTE: consecutive call ops of one leaf function with no dependency between them (e.g. the
    256 row strips of a layer norm) run as a batch: each task still evaluates its own windows
    and is charged tile op by tile op, but the numerics of tile op #j of all of them run as one
    numpy call over the union of their windows, when those windows stack along one dim and the
    op is pointwise or reduces along another dim (per element the same arithmetic, so the
    results are bit-identical; `batch = False` turns it off, tests compare both)."""

    batch = True

    def __init__(self, compiled: CompiledProgram, bindings: dict[str, int],
                 arg_arrays: dict[int, np.ndarray], stitcher: Stitcher | None = None):
        super().__init__(compiled.program, bindings, arg_arrays)
        self.compiled = compiled
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

    def run(self) -> None:
        # NOTE: tile-sized matmuls run fastest on one BLAS thread (runtime/blas.py)
        with blas.single_threaded():
            super().run()

    def run_loop(self, loop: Loop) -> None:
        if loop.submit_before_loop and self.stitcher is not None:
            self.stitcher.flush()  # the work so far is submitted before the loop starts
        super().run_loop(loop)

    def run_block(self, block: Block) -> None:
        self.block_instances[block.name] += 1
        root = self.compiled.roots[block.name]
        instance = self.stitcher.begin_instance(len(root.calls)) if self.stitcher else 0
        ids: dict[int, int] = {}
        calls = root.calls
        escaping = root.graph.escaping
        i = 0
        while i < len(calls):
            end = self._group_end(calls, i) if self.batch else i + 1
            if end - i > 1:
                self._run_group(block.name, calls[i:end], escaping, instance, ids)
                i = end
                continue
            call = calls[i]
            task = None
            if self.stitcher is not None:
                task = self._new_task(block.name, call, instance, ids)
            self.run_call(call, escaping, task)
            self._finish(call, task, ids)
            i += 1

    def _finish(self, call: CallOp, task: SimTask | None, ids: dict[int, int]) -> None:
        if task is not None:
            task.empty = not (task.mte2_bytes or task.mte3_bytes or task.vector_cycles
                              or task.cube_cycles)
            self.stitcher.add(task)
            ids[call.index] = task.id
        self.calls_run += 1

    # ---- batches of isomorphic, independent tasks ----
    def _group_end(self, calls: list, start: int) -> int:
        """End of the run of calls from `start` that may batch: same op structure (same source
        ops and tile attributes), batchable ops only, and none waits for another."""
        head = calls[start]
        if not _batchable(head):
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
                       for a, b in zip(c.ops, head.ops)) or not _batchable(c):
                break
            members.add(c.index)
            end += 1
        return end

    def _run_group(self, root: str, group: list, escaping: set[int], instance: int,
                   ids: dict[int, int]) -> None:
        spec = self.compiled.spec
        tasks, windows = [], []
        for call in group:
            wins = [self._windows(op) for op in call.ops]
            task = None
            if self.stitcher is not None:
                task = self._new_task(root, call, instance, ids)
                shared: set = set()
                for op, w in zip(call.ops, wins):
                    add_tile_op(task, op, w, escaping, spec, shared, self._value_shape)
            tasks.append(task)
            windows.append(wins)
        # numerics: runs of calls whose windows stack, each as one batch
        ops = group[0].ops
        dims = [self._attrs(op).get("dims", ()) for op in ops]
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
                self._numerics(*_merge_siblings(ops, [u[1] for u in unions], dims), escaping)
                self.calls_batched += end - start
            else:
                self._numerics(group[start].ops, windows[start], escaping)
            start = end
        for call, task in zip(group, tasks):
            self._finish(call, task, ids)

    def _numerics(self, ops: list, windows: list, escaping: set[int]) -> None:
        local: dict[int, np.ndarray] = {}
        dirty: dict[int, list] = {}
        for op, w in zip(ops, windows):
            if op.kind == "copy_out":
                self._copy_out(op, local, w)
            else:
                self._compute(op, local, escaping, w, dirty)
        self._release(local, dirty)

    def _release(self, local: dict, dirty: dict) -> None:
        for vid, arr in local.items():
            windows = dirty.get(vid, ())
            if windows is None:
                continue
            for window in windows:
                arr[window] = 0
            self._pool.setdefault((arr.shape, arr.dtype), []).append(arr)

    def _new_task(self, root: str, call: CallOp, instance: int, ids: dict[int, int]) -> SimTask:
        label = next((op.src.label for op in call.ops if op.src.label), "")
        merge = {name: info.key for name, info in getattr(call, "merge_info", {}).items()}
        inputs, outputs = _operands(call)
        return SimTask(-1, -1, instance, root, self._root_index[root], call.index,
                       call.leaf.name, call.leaf.index, call.core, label,
                       preds=[ids[p] for p in call.preds], merge=merge,
                       uncached=self._uncached, inputs=inputs, outputs=outputs)

    # ---- one task ----
    def run_call(self, call: CallOp, escaping: set[int], task: SimTask | None = None) -> None:
        local: dict[int, np.ndarray] = {}
        dirty: dict[int, list] = {}     # local value id -> windows written
        shared: set = set()
        spec = self.compiled.spec
        for op in call.ops:
            if op.kind == "whole":
                self.run_op(op.src)
                if task is not None:
                    self._charge_whole(task, op)
                continue
            windows = self._windows(op)
            if op.kind == "copy_out":
                self._copy_out(op, local, windows)
            else:
                self._compute(op, local, escaping, windows, dirty)
            if task is not None:
                add_tile_op(task, op, windows, escaping, spec, shared, self._value_shape)
        self._release(local, dirty)

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

    def _read(self, region: Region, from_local: bool, local: dict, op: TileOp,
              offs: tuple[int, ...], valid: tuple[int, ...]) -> np.ndarray:
        arr = local[region.value.id] if from_local else self.array_of(region.value, op.src)
        window = tuple(slice(min(o, n), min(o + v, n)) for o, v, n in zip(offs, valid, arr.shape))
        got = arr[window]
        if got.shape != tuple(valid):  # a view reaching past the physical edge reads zeros
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

    def _compute(self, op: TileOp, local: dict, escaping: set[int], windows: tuple,
                 dirty: dict) -> None:
        src = op.src
        opdef = REGISTRY[op.opcode]
        arrays = []
        for r, from_local, (offs, valid) in zip(op.inputs, op.local_inputs, windows):
            a = self._read(r, from_local, local, op, offs, valid)
            if opdef.widen and is_low_precision(r.value.dtype):
                a = a.astype(compute_dtype(r.value.dtype))
            arrays.append(a)
        out = op.output
        offs, out_valid = windows[-1]
        attrs = self._attrs(op)
        attrs["_in_valid"] = [a.shape for a in arrays]
        attrs["_out_valid"] = out_valid
        attrs["_loc"] = src.loc
        if any(n == 0 for n in out_valid):
            result = np.zeros(out_valid, dtype=to_numpy(out.value.dtype))
        else:
            result = opdef.compute(arrays, attrs)
            if op.kind == "combine" and "mean_count" in attrs:
                result = np.asarray(result) / np.float32(attrs["mean_count"])
        result = np.asarray(result)
        if result.shape != out_valid:
            raise PyptoRuntimeError(f"internal: tile {op.opcode} produced {list(result.shape)}"
                                    f", expected {list(out_valid)}", src.loc)
        target = to_numpy(out.value.dtype)
        if result.dtype != target:
            with np.errstate(all="ignore"):
                result = result.astype(target)
        window = tuple(slice(o, o + n) for o, n in zip(offs, out_valid))
        if out.value.id not in local and result.flags.owndata and result.flags.c_contiguous \
                and result.shape == self.shape(out.value.shape) and not any(offs) \
                and not any(np.may_share_memory(result, a) for a in arrays):
            # NOTE: a fresh result covering the whole value (a batch over all its tiles)
            # becomes the local buffer itself instead of being copied into a pooled one
            local[out.value.id] = result
            dirty[out.value.id] = None   # not from the pool: never returned to it
        else:
            self._target(out, local)[window] = result
            written = dirty.setdefault(out.value.id, [])
            if written is not None:
                written.append(window)
        if out.value.id in escaping:
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


def _has_expr(x: object) -> bool:
    if isinstance(x, Expr):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_expr(v) for v in x)
    return False


def _batchable(call: CallOp) -> bool:
    """Every tile op of `call` may run batched with its isomorphic siblings (cached)."""
    ok = getattr(call, "_batchable", None)
    if ok is None:
        ok = all(_batchable_op(op) for op in call.ops)
        call._batchable = ok
    return ok


def _batchable_op(op: TileOp) -> bool:
    if op.kind == "copy_out":
        ok = op.opcode == "ASSEMBLE"
    elif op.kind in ("compute", "partial", "combine"):
        ok = op.opcode in POINTWISE or op.opcode in _ROWWISE_REDUCE
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


def _merge_siblings(ops: list, windows: list, dims: list) -> tuple[list, list]:
    """Merge consecutive tile ops of one tensor op (e.g. the four column tiles of a SUB) whose
    batched windows stack too, so that one numpy call covers the whole value. Tiles of one
    tensor op never read each other's results, so running them together changes nothing."""
    out_ops, out_windows = [ops[0]], [windows[0]]
    union = None
    for op, w, rd in zip(ops[1:], windows[1:], dims[1:]):
        prev = out_ops[-1]
        if op.src is prev.src and op.kind == prev.kind and op.kind != "copy_out" and \
                op.local_inputs == prev.local_inputs:
            grown = _extend(union, out_windows[-1] if union is None else union[2], w, op, rd)
            if grown is not None:
                first = out_windows[-1] if union is None else union[2]
                union = (*grown, first)
                out_windows[-1] = grown[1]
                continue
        union = None
        out_ops.append(op)
        out_windows.append(w)
    return out_ops, out_windows


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
