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
from pypto.passes import CompiledProgram
from pypto.passes.functions import CallOp
from pypto.passes.tile_graph import Region, TileOp
from pypto.runtime import blas
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.stitch import Stitcher
from pypto.symbolic import Const, Expr, _to_code


class TileExecutor(ReferenceExecutor):
    """Executes a compiled program at tile level (the default executor)."""

    def __init__(self, compiled: CompiledProgram, bindings: dict[str, int],
                 arg_arrays: dict[int, np.ndarray], stitcher: Stitcher | None = None):
        super().__init__(compiled.program, bindings, arg_arrays)
        self.compiled = compiled
        self.calls_run = 0
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
        for call in root.calls:
            task = None
            if self.stitcher is not None:
                task = self._new_task(block.name, call, instance, ids)
            self.run_call(call, root.graph.escaping, task)
            if task is not None:
                task.empty = not (task.mte2_bytes or task.mte3_bytes or task.vector_cycles
                                  or task.cube_cycles)
                self.stitcher.add(task)
                ids[call.index] = task.id
            self.calls_run += 1

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
        for vid, arr in local.items():
            for window in dirty.get(vid, ()):
                arr[window] = 0
            self._pool.setdefault((arr.shape, arr.dtype), []).append(arr)

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
        self._target(out, local)[window] = result
        dirty.setdefault(out.value.id, []).append(window)
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
        return lambda V, R: windows
    for r in regions:
        offs = ", ".join(_to_code(o, reads) for o in r.offsets)
        valid = ", ".join(f"_max(0, _min({_to_code(v, reads)}, {n}))"
                          for v, n in zip(r.valid, r.shape))
        parts.append(f"(({offs}{',' if r.offsets else ''}), ({valid}{',' if r.valid else ''}))")
    code = f"lambda V, R: ({', '.join(parts)}{',' if parts else ''})"
    return eval(code, {"E": tuple(reads), "_min": min, "_max": max})


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
