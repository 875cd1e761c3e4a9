"""The state of one call that both executors read and write: the symbols' values, each
storage's array, and the evaluation of shapes and attributes against them.

The reference executor (the golden) and the tile executor each hold one `CallState`; they
share it as a value, not through a class hierarchy, so the golden shares with what it checks
only this bookkeeping and the per-op compute functions of `ops/`. Reading a storage before it
exists, writing a read-only parameter or an in-place reshape whose element count changed at
run time are named errors here, once for both.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import to_numpy
from pypto.errors import PyptoRuntimeError
from pypto.ir.operation import Operation
from pypto.ir.tensor import Storage, StorageKind, TensorValue
from pypto.runtime.plan import ExecutionPlan
from pypto.symbolic import (Const, ElementRead, EvalEnv, Expr, free_symbols,
                            raise_evaluation_error, reads_elements)


class CallState:
    """Symbols, arrays and evaluation for one call of a compiled program. `bound`: the
    symbols fixed for the whole call (the bindings); shapes that depend on those only are
    evaluated once (None: only constant shapes are kept)."""

    def __init__(self, plan: ExecutionPlan, bindings: dict[str, int],
                 arg_arrays: dict[int, np.ndarray], bound: frozenset | None = None):
        self.plan = plan
        self.program = program = plan.program
        self._expr_functions = plan.expr_functions
        self.env = EvalEnv(bindings, self.read_element)
        self.arrays: dict[int, np.ndarray] = dict(arg_arrays)  # storage id -> array
        self.written: set[int] = set(arg_arrays)
        self._bound = bound
        self._shapes: dict[int, tuple[int, ...]] = {}
        self._storage_names = {p.value.storage.id: p.name for p in program.params}
        # runtime_debug_mode=4: the call's `runtime.gm_bounds.BoundsLog`, which the control
        # walk shows every block instance (None: no bounds check)
        self.bounds = None

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
        # NOTE: keyed by the tuple's identity: the program, which owns the tuples, outlives
        # the call; tasks ask for the same few shapes all along
        key = id(dims)
        found = self._shapes.get(key)
        if found is not None:
            return found
        found = tuple(self.ev(d) for d in dims)
        if self._keeps(dims):
            self._shapes[key] = found
        return found

    def _keeps(self, dims: tuple[Expr, ...]) -> bool:
        if self._bound is None:
            return all(isinstance(d, Const) for d in dims)
        return all(free_symbols(d) <= self._bound and not reads_elements(d) for d in dims)

    def attr(self, a: Any) -> Any:
        """An op attribute with its expressions evaluated (in lists and tuples too)."""
        if isinstance(a, Expr):
            return self.ev(a)
        if isinstance(a, tuple):
            return tuple(self.attr(x) for x in a)
        if isinstance(a, list):
            return [self.attr(x) for x in a]
        return a

    @staticmethod
    def clip(valid: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
        """Valid extents clipped to [0, shape]."""
        return tuple(max(0, min(v, s)) for v, s in zip(valid, shape))

    def valid(self, v: TensorValue) -> tuple[int, ...]:
        """`v`'s valid extents now, clipped to its shape."""
        return self.clip(self.shape(v.valid_shape), self.shape(v.shape))

    def read_element(self, e: ElementRead, index: tuple[int, ...]) -> int:
        arr = self.array_of(e.tensor, None)
        if len(index) != arr.ndim or any(not 0 <= i < n for i, n in zip(index, arr.shape)):
            raise PyptoRuntimeError(f"element read {e!r} at {list(index)} is outside the "
                                    f"tensor's shape {list(arr.shape)}")
        return int(arr[index])

    # ---- arrays ----
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

    def destination(self, v: TensorValue, op: Operation) -> np.ndarray:
        """The array an op writes `v` into (a local tensor's made, zeroed, on first write)."""
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

    def gm(self, v: TensorValue) -> np.ndarray:
        """`v`'s array in GM, made (zeroed) if nothing wrote its storage yet."""
        s = v.storage
        if s.id not in self.arrays:
            self.arrays[s.id] = np.zeros(self.shape(s.shape), dtype=to_numpy(s.dtype))
        return self.array_of(v, None)


def _storage_mismatch(v: TensorValue, arr: np.ndarray, shape: tuple, op: Operation | None):
    """An in-place reshape (a second shape over one storage) whose element count differs from
    the storage's at run time: the dynamic dim made it unknowable at trace time (issue 13)."""
    name = v.name or v.storage.name
    return PyptoRuntimeError(
        f"tensor '{name}' is a view of storage '{v.storage.name}' as {list(shape)} "
        f"({int(np.prod(shape, dtype=np.int64))} elements), but that storage holds "
        f"{list(arr.shape)} ({arr.size} elements) at run time; an in-place reshape must keep "
        f"the element count", op.loc if op else None)
