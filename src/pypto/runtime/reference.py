"""The reference executor: runs a traced `Program` with numpy, in program order.

It walks the control tree with the real input shapes and values (loop bounds, branch
conditions, offsets and valid shapes are evaluated when reached), instantiates each root
function once per loop iteration, and runs its ops through the registered op semantics.
Kernel parameters are the caller's buffers, so results land in place. Every value is a
full-shape array whose region outside the valid shape is zero. For speed at realistic sizes,
runs of row-local ops run chunk by chunk (runtime/fusion.py) and dead temporaries' buffers are
reused (runtime/liveness.py); the results are bit-identical to running every op on its own.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from pypto.dtypes import compute_dtype, is_low_precision, to_numpy
from pypto.errors import PyptoRuntimeError
from pypto.ir.operation import Operation
from pypto.ir.program import Block, If, Loop, Seq
from pypto.ir.tensor import Storage, StorageKind, TensorValue
from pypto.ops.core import REGISTRY
from pypto.runtime.fusion import Chain, plan_block, run_chain
from pypto.runtime.liveness import BufferPool, dying_after, storage_users
from pypto.runtime.plan import ExecutionPlan
from pypto.symbolic import Const, ElementRead, EvalEnv, Expr, raise_evaluation_error


class ReferenceExecutor:
    """Executes one call of a compiled kernel on concrete buffers.

    Runs of row-local ops run chunk by chunk (runtime/fusion.py) with bit-identical results,
    and the buffers of dead temporaries are reused (runtime/liveness.py); `fuse = False` runs
    every op on its own into fresh arrays (tests compare both)."""

    fuse = True
    # NOTE: an observer (runtime/error_bounds.ErrorBounds) sees every op as it runs; it needs
    # fuse = False, since chunked chains do not run op by op
    observer = None
    chunk_bytes = 1 << 20         # one chunk of the widest result (1024x4096 softmax: 64 rows)
    chunk_min_bytes = 1 << 20     # smaller chains stay in cache op by op anyway

    def __init__(self, plan: ExecutionPlan, bindings: dict[str, int],
                 arg_arrays: dict[int, np.ndarray]):
        """`plan`: the execution plan of the compiled program (it keeps the generated code
        across runs); `arg_arrays`: storage id -> the caller's array of each parameter."""
        self.plan = plan
        self.program = program = plan.program
        self._expr_functions = plan.expr_functions
        self.env = EvalEnv(bindings, self._read_element)
        self.arrays: dict[int, np.ndarray] = dict(arg_arrays)  # storage id -> array
        self.written: set[int] = set(arg_arrays)
        self.block_instances: Counter[str] = Counter()
        self._static_shapes: dict[int, tuple[int, ...]] = {}
        self._storage_names = {p.value.storage.id: p.name for p in program.params}
        self.chunked_ops = 0        # ops that ran as part of a chunked chain
        self.pool = BufferPool()
        self._plans: dict[int, tuple] = {}   # id(block) -> (items, storages dying after each)
        self._users: dict[int, set[int]] | None = None

    # ---- symbolic values ----
    def ev(self, e: Expr) -> int:
        if isinstance(e, Const):
            return e.value
        fn = self._expr_functions.get(e) or self.plan.expr_function(e)
        env = self.env
        try:
            return fn(env.values, env.read_element)
        except (KeyError, ZeroDivisionError, TypeError) as error:
            raise_evaluation_error((e,), env, error)

    def shape(self, dims: tuple[Expr, ...]) -> tuple[int, ...]:
        # NOTE: static shapes are evaluated once per run (keyed by the tuple's identity: the
        # program, which owns the tuples, outlives the executor)
        key = id(dims)
        cached = self._static_shapes.get(key)
        if cached is not None:
            return cached
        out = tuple(self.ev(d) for d in dims)
        if all(isinstance(d, Const) for d in dims):
            self._static_shapes[key] = out
        return out

    def _attr(self, a: Any) -> Any:
        if isinstance(a, Expr):
            return self.ev(a)
        if isinstance(a, tuple):
            return tuple(self._attr(x) for x in a)
        if isinstance(a, list):
            return [self._attr(x) for x in a]
        return a

    def _read_element(self, e: ElementRead, index: tuple[int, ...]) -> int:
        arr = self.array_of(e.tensor, None)
        if len(index) != arr.ndim or any(not 0 <= i < n for i, n in zip(index, arr.shape)):
            raise PyptoRuntimeError(f"element read {e!r} at {list(index)} is outside the "
                                    f"tensor's shape {list(arr.shape)}")
        return int(arr[index])

    # ---- buffers ----
    def storage_array(self, s: Storage, op: Operation | None) -> np.ndarray:
        arr = self.arrays.get(s.id)
        if arr is None:
            if s.kind is StorageKind.LOCAL:
                raise PyptoRuntimeError(
                    f"local tensor '{s.name}' is read before anything was written to it "
                    f"(pypto.tensor does not initialise memory)", op.loc if op else None)
            raise PyptoRuntimeError(f"tensor '{s.name}' is read before it was produced",
                                    op.loc if op else None)
        return arr

    def array_of(self, v: TensorValue, op: Operation | None) -> np.ndarray:
        arr = self.storage_array(v.storage, op)
        shape = self.shape(v.shape)
        if arr.shape != shape:
            if arr.size != int(np.prod(shape, dtype=np.int64)):
                raise _storage_mismatch(v, arr, shape, op)
            arr = arr.reshape(shape)
        return arr

    def _destination(self, v: TensorValue, op: Operation) -> np.ndarray:
        s = v.storage
        if s.id not in self.arrays:
            if s.kind is not StorageKind.LOCAL:
                raise PyptoRuntimeError(f"cannot write to '{s.name}' before it exists", op.loc)
            self.arrays[s.id] = np.zeros(self.shape(s.shape), dtype=to_numpy(s.dtype))
        arr = self.array_of(v, op)
        if not arr.flags.writeable:
            name = self._storage_names.get(s.id, s.name)
            raise PyptoRuntimeError(f"kernel parameter '{name}' is written by the kernel but "
                                    f"the array passed for it is read-only", op.loc)
        return arr

    # ---- ops ----
    def run_op(self, op: Operation) -> None:
        opdef = REGISTRY[op.opcode]
        attrs = {k: self._attr(a) for k, a in op.attrs.items()}
        in_valid = [self._clip(self.shape(v.valid_shape), self.shape(v.shape))
                    for v in op.inputs]
        attrs["_in_valid"] = in_valid
        attrs["_loc"] = op.loc
        if op.outputs:
            out = op.outputs[0]
            attrs["_out_valid"] = self._clip(self.shape(out.valid_shape), self.shape(out.shape))
        arrays = []
        for v, valid in zip(op.inputs, in_valid):
            arr = self.array_of(v, op)
            if not opdef.full_inputs:
                arr = arr[tuple(slice(0, n) for n in valid)]
            if opdef.widen and is_low_precision(v.dtype):
                arr = arr.astype(compute_dtype(v.dtype))
            arrays.append(arr)
        if opdef.writes:
            dest = self._destination(op.outputs[0], op)
            seen = self.observer and self.observer.before_write(self, op, dest, arrays, attrs)
            opdef.compute(dest, arrays, attrs)
            if self.observer:
                self.observer.after_write(self, op, dest, arrays, attrs, seen)
            self.written.add(op.outputs[0].storage.id)
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
            self.observer.after_value(self, op, arrays, attrs)

    def _out_buffer(self, opdef: Any, op: Operation, arrays: list,
                    valid: tuple[int, ...]) -> np.ndarray | None:
        """A reused buffer for the op to compute into, where it can (see ops/core.py)."""
        if not (self.fuse and opdef.accepts_out and len(op.outputs) == 1):
            return None
        v = op.outputs[0]
        target = np.dtype(to_numpy(v.dtype))
        if target.kind != "f" or valid != self.shape(v.shape) or \
                any(getattr(a, "dtype", None) != target for a in arrays):
            return None
        return self.pool.empty(valid, target)

    @staticmethod
    def _clip(valid: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(max(0, min(v, s)) for v, s in zip(valid, shape))

    def _store(self, op: Operation, v: TensorValue, r: Any, inputs: list) -> None:
        shape = self.shape(v.shape)
        valid = self._clip(self.shape(v.valid_shape), shape)
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
        self.arrays[v.storage.id] = full

    # ---- control tree ----
    def run(self) -> None:
        self.run_loop(self.program.root)

    def run_loop(self, loop: Loop) -> None:
        for variant in loop.variants:
            start, stop, step = self.ev(variant.start), self.ev(variant.stop), self.ev(variant.step)
            if step == 0:
                raise PyptoRuntimeError(f"loop '{loop.name}' has step 0 at run time", loop.loc)
            name = variant.index.name
            for i in range(start, stop, step):
                self.env.values[name] = i
                self.run_seq(self._select(variant.body))
            self.env.values.pop(name, None)

    def _select(self, node: If | Seq) -> Seq:
        while isinstance(node, If):
            node = node.then if self.ev(node.cond) else node.else_
        return node

    def run_seq(self, seq: Seq) -> None:
        for item in seq.items:
            if isinstance(item, Block):
                self.run_block(item)
            else:
                self.run_loop(item)

    def run_block(self, block: Block) -> None:
        checks = self.plan.checks(block)
        checks.before(self.env.values, self.env.read_element)
        self._run_block(block)
        checks.after(self.env.values, self.env.read_element)

    def _run_block(self, block: Block) -> None:
        self.block_instances[block.name] += 1
        if not self.fuse:
            for op in block.ops:
                self.run_op(op)
            return
        items, dying = self._plan(block)
        for i, item in enumerate(items):
            if isinstance(item, Chain):
                if not run_chain(self, item):
                    for op in _ops_of(item):
                        self.run_op(op)
            else:
                self.run_op(item)
            for sid in dying.get(i, ()):
                arr = self.arrays.pop(sid, None)
                if arr is not None:
                    self.pool.give(arr)

    def _plan(self, block: Block) -> tuple:
        plan = self._plans.get(id(block))
        if plan is None:
            if self._users is None:
                self._users = storage_users(self.program)
            items = plan_block(block, self._users)
            dying = dying_after([_ops_of(item) for item in items], self._users)
            plan = self._plans[id(block)] = (items, dying)
        return plan


def _ops_of(item: Operation | Chain) -> list[Operation]:
    if isinstance(item, Operation):
        return [item]
    return item.ops + ([item.sink] if item.sink is not None else [])


def _storage_mismatch(v: TensorValue, arr: np.ndarray, shape: tuple, op: Operation | None):
    """An in-place reshape (a second shape over one storage) whose element count differs from
    the storage's at run time: the dynamic dim made it unknowable at trace time (issue 13)."""
    name = v.name or v.storage.name
    return PyptoRuntimeError(
        f"tensor '{name}' is a view of storage '{v.storage.name}' as {list(shape)} "
        f"({int(np.prod(shape, dtype=np.int64))} elements), but that storage holds "
        f"{list(arr.shape)} ({arr.size} elements) at run time; an in-place reshape must keep "
        f"the element count", op.loc if op else None)
