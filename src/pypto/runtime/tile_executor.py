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
from pypto.ir.program import Block
from pypto.ops.core import REGISTRY
from pypto.passes import CompiledProgram
from pypto.passes.functions import CallOp
from pypto.passes.tile_graph import Region, TileOp
from pypto.runtime.reference import ReferenceExecutor


class TileExecutor(ReferenceExecutor):
    """Executes a compiled program at tile level (the default executor)."""

    def __init__(self, compiled: CompiledProgram, bindings: dict[str, int],
                 arg_arrays: dict[int, np.ndarray]):
        super().__init__(compiled.program, bindings, arg_arrays)
        self.compiled = compiled
        self.calls_run = 0

    def run_block(self, block: Block) -> None:
        self.block_instances[block.name] += 1
        root = self.compiled.roots[block.name]
        for call in root.calls:
            self.run_call(call, root.graph.escaping)
            self.calls_run += 1

    # ---- one task ----
    def run_call(self, call: CallOp, escaping: set[int]) -> None:
        local: dict[int, np.ndarray] = {}
        for op in call.ops:
            if op.kind == "whole":
                self.run_op(op.src)
            elif op.kind == "copy_out":
                self._copy_out(op, local)
            else:
                self._compute(op, local, escaping)

    def _read(self, region: Region, from_local: bool, local: dict, op: TileOp) -> np.ndarray:
        arr = local[region.value.id] if from_local else self.array_of(region.value, op.src)
        offs = [self.ev(o) for o in region.offsets]
        valid = [max(0, min(self.ev(v), s)) for v, s in zip(region.valid, region.shape)]
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
            arr = local[v.id] = np.zeros(self.shape(v.shape), dtype=to_numpy(v.dtype))
        return arr

    def _gm(self, region: Region) -> np.ndarray:
        v = region.value
        s = v.storage
        arr = self.arrays.get(s.id)
        if arr is None:
            arr = self.arrays[s.id] = np.zeros(self.shape(s.shape), dtype=to_numpy(s.dtype))
        return self.array_of(v, None)

    def _compute(self, op: TileOp, local: dict, escaping: set[int]) -> None:
        src = op.src
        opdef = REGISTRY[op.opcode]
        arrays = []
        for r, from_local in zip(op.inputs, op.local_inputs):
            a = self._read(r, from_local, local, op)
            if opdef.widen and is_low_precision(r.value.dtype):
                a = a.astype(compute_dtype(r.value.dtype))
            arrays.append(a)
        out = op.output
        out_valid = tuple(max(0, min(self.ev(v), s)) for v, s in zip(out.valid, out.shape))
        attrs = {k: self._attr(a) for k, a in src.attrs.items()}
        attrs.update({k: self._attr(a) for k, a in op.attrs.items()})
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
        offs = [self.ev(o) for o in out.offsets]
        window = tuple(slice(o, o + n) for o, n in zip(offs, out_valid))
        self._target(out, local)[window] = result
        if out.value.id in escaping:
            self._gm(out)[window] = result

    def _copy_out(self, op: TileOp, local: dict) -> None:
        data = self._read(op.inputs[0], op.local_inputs[0], local, op)
        if is_low_precision(op.inputs[0].value.dtype) and data.dtype != to_numpy(
                op.inputs[0].value.dtype):
            data = data.astype(to_numpy(op.inputs[0].value.dtype))
        dst = self._destination(op.output.value, op.src)
        offsets = [self.ev(o) for o in op.output.offsets]
        REGISTRY["ASSEMBLE"].compute(dst, [data], {"offsets": offsets, "_loc": op.src.loc})
        self.written.add(op.output.value.storage.id)
