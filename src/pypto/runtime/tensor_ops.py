"""One traced (tensor-level) op run on whole arrays: the reference executor's every op, and
the tile executor's "whole" ops (ops with no tile rule, run as the tensor op on GM).

Its inputs are read over their valid region (low-precision floats widened when the op asks),
attributes evaluated, and the op's registered compute function (`ops/core.py` REGISTRY) run;
the result is stored full-shape, zero outside its valid region. An op that writes into a
storage (assemble, move, scatter_) computes into the destination itself. With `fuse`, an op
that accepts an output buffer computes into a reused one from the pool (bit-identical).
An `observer` (runtime/error_bounds.ErrorBounds) sees every op as it runs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import compute_dtype, is_low_precision, to_numpy
from pypto.errors import PyptoRuntimeError
from pypto.ir.operation import Operation
from pypto.ir.tensor import TensorValue
from pypto.ops.core import REGISTRY
from pypto.runtime.call_state import CallState
from pypto.runtime.liveness import BufferPool


class TensorOps:
    """Runs tensor ops on `state`'s arrays, taking and giving buffers through `pool`."""

    def __init__(self, state: CallState, pool: BufferPool, fuse: bool = True,
                 observer: Any = None):
        self.state, self.pool, self.fuse, self.observer = state, pool, fuse, observer

    def run(self, op: Operation) -> None:
        state, opdef = self.state, REGISTRY[op.opcode]
        attrs = {k: state.attr(a) for k, a in op.attrs.items()}
        in_valid = [state.valid(v) for v in op.inputs]
        attrs["_in_valid"] = in_valid
        attrs["_loc"] = op.loc
        if op.outputs:
            attrs["_out_valid"] = state.valid(op.outputs[0])
        arrays = []
        for v, valid in zip(op.inputs, in_valid):
            arr = state.array_of(v, op)
            if not opdef.full_inputs:
                arr = arr[tuple(slice(0, n) for n in valid)]
            if opdef.widen and is_low_precision(v.dtype):
                arr = arr.astype(compute_dtype(v.dtype))
            arrays.append(arr)
        if opdef.writes:
            self._write(op, opdef, arrays, attrs)
            return
        if op.opcode == "RESHAPE" and op.attrs.get("inplace"):
            return  # the output aliases the input's storage
        out = self._out_buffer(opdef, op, arrays, attrs["_out_valid"]) if op.outputs else None
        if out is not None:
            attrs["_out"] = out
        result = opdef.compute(arrays, attrs)
        if out is not None and result is not out:
            self.pool.give(out)
        results = result if isinstance(result, tuple) else (result,)
        for v, r in zip(op.outputs, results):
            self._store(op, v, r, arrays)
        if self.observer:
            self.observer.after_value(state, op, arrays, attrs)

    def _write(self, op: Operation, opdef: Any, arrays: list, attrs: dict) -> None:
        """An op that writes into its destination's storage."""
        dest = self.state.destination(op.outputs[0], op)
        seen = self.observer and self.observer.before_write(self.state, op, dest, arrays, attrs)
        opdef.compute(dest, arrays, attrs)
        if self.observer:
            self.observer.after_write(self.state, op, dest, arrays, attrs, seen)
        self.state.written.add(op.outputs[0].storage.id)

    def _out_buffer(self, opdef: Any, op: Operation, arrays: list,
                    valid: tuple[int, ...]) -> np.ndarray | None:
        """A reused buffer for the op to compute into, where it can (see ops/core.py)."""
        if not (self.fuse and opdef.accepts_out and len(op.outputs) == 1):
            return None
        v = op.outputs[0]
        target = np.dtype(to_numpy(v.dtype))
        if target.kind != "f" or valid != self.state.shape(v.shape) or \
                any(getattr(a, "dtype", None) != target for a in arrays):
            return None
        return self.pool.empty(valid, target)

    def _store(self, op: Operation, v: TensorValue, r: Any, inputs: list) -> None:
        shape = self.state.shape(v.shape)
        valid = self.state.clip(self.state.shape(v.valid_shape), shape)
        target = to_numpy(v.dtype)
        r = np.asarray(r)
        if r.dtype != target:
            with np.errstate(all="ignore"):
                r = r.astype(target)
        if r.shape != valid:
            raise PyptoRuntimeError(f"internal: {op.opcode} produced shape {list(r.shape)} "
                                    f"but its valid shape is {list(valid)}", op.loc)
        if valid == shape:
            # Keep the result only if it is a fresh buffer: a compute function may hand back
            # (part of) an input, and a later in-place write to that input must not change it.
            fresh = r.flags.owndata and r.flags.c_contiguous and not any(
                np.may_share_memory(r, a) for a in inputs)
            full = r if fresh else np.array(r, order="C")
        else:
            full = self.pool.zeros(shape, target)
            full[tuple(slice(0, n) for n in valid)] = r
        self.state.arrays[v.storage.id] = full
