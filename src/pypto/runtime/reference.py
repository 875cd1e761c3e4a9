"""The reference executor: runs a traced `Program` with numpy, in program order.

It walks the control tree with the real input shapes and values (loop bounds, branch
conditions, offsets and valid shapes are evaluated when reached), instantiates each root
function once per loop iteration, and runs its ops through the registered op semantics.
Kernel parameters are the caller's buffers, so results land in place. Every value is a
full-shape array whose region outside the valid shape is zero. For speed at realistic sizes,
runs of row-local ops run chunk by chunk (runtime/fusion.py) and dead temporaries' buffers are
reused (runtime/liveness.py); the results are bit-identical to running every op on its own.

It shares with the tile executor, which it checks, only the call's state
(runtime/call_state.py), the control walk (runtime/control_walk.py) and the per-op compute
functions (`ops/`, run on whole arrays by runtime/tensor_ops.py): no class hierarchy.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from pypto.ir.operation import Operation
from pypto.ir.program import Block
from pypto.runtime.call_state import CallState
from pypto.runtime.control_walk import ControlWalk
from pypto.runtime.fusion import Chain, Chunking, plan_block, run_chain
from pypto.runtime.liveness import BufferPool, dying_after, storage_users
from pypto.runtime.plan import ExecutionPlan
from pypto.runtime.tensor_ops import TensorOps


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
        self.program = plan.program
        self.state = CallState(plan, bindings, arg_arrays)
        self.env = self.state.env
        self.block_instances: Counter[str] = Counter()
        self.pool = BufferPool()
        self.chunking = Chunking(self.chunk_bytes, self.chunk_min_bytes)
        self._plans: dict[int, tuple] = {}   # id(block) -> (items, storages dying after each)
        self._users: dict[int, set[int]] | None = None

    @property
    def arrays(self) -> dict[int, np.ndarray]:
        """Storage id -> its array (the caller's for the parameters)."""
        return self.state.arrays

    @property
    def chunked_ops(self) -> int:
        """Ops that ran as part of a chunked chain."""
        return self.chunking.chunked_ops

    def run(self) -> None:
        self.ops = TensorOps(self.state, self.pool, self.fuse, self.observer)
        ControlWalk(self.state, self._run_block).run()

    def _run_block(self, block: Block) -> None:
        self.block_instances[block.name] += 1
        run_op = self.ops.run
        if not self.fuse:
            for op in block.ops:
                run_op(op)
            return
        items, dying = self._plan(block)
        for i, item in enumerate(items):
            if isinstance(item, Chain):
                if not run_chain(self.ops, self.chunking, item):
                    for op in _ops_of(item):
                        run_op(op)
            else:
                run_op(item)
            for sid in dying.get(i, ()):
                arr = self.state.arrays.pop(sid, None)
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
