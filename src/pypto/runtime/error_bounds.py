"""Error bounds that follow each value's precision chain.

Takes one reference run of a program (every op with its inputs, attributes and stored results)
→ for every value, an array E ≥ 0 of its shape: how far, element by element, any *faithful*
execution of the same program on the same inputs may be from the reference's value. The
executors' cross-check (`runtime/differential.py`) accepts the tile executor's result where
|tile - reference| <= E.

A faithful execution runs the same tensor graph and differs from the reference only where
floating point lets it:
- sums and dot products (reductions, matmul, cumulative ops, accumulating writes) may add in
  any order, in FP32 (FP64 for FP64 data); where the compiled program keeps partial sums in a
  lower precision (split-K partials in the output's dtype), they are rounded there too;
- library functions (exp, log, tanh, sin, pow, ...) may be off by `rounding.LIBRARY_ULPS` ulps;
- every op rounds its result to its dtype as the reference does (low-precision floats computed
  in FP32 and rounded once), so exactly rounded ops (+ - * / sqrt, min/max, comparisons, casts)
  on identical inputs give identical bits, and data movement never changes a value.

Each op's rule turns the intervals [x - E, x + E] of its inputs into an interval [lo, hi] for
the other execution's result *before* rounding; rounding is monotone, so its stored result
lies in [R(lo), R(hi)] and E_out = max(|R(hi) - ref|, |R(lo) - ref|). That is how a BF16 cast
turns a one-ulp FP32 difference into a BF16-ulp one, but only for the elements whose interval
straddles a BF16 rounding boundary, and why an element whose inputs are exact and whose op is
exactly rounded must match bit for bit. The rules (runtime/error_rules.py, a table by opcode):
- moves (views, assembles, transposes, gathers, ...): the bounds move with the data;
- pointwise ops: f at the corners of the input box (exact for functions monotone in each
  argument, second-order for smooth ones), library slack, then rounding; an input interval
  that reaches a pole or a zero test (a divisor, a log's argument, a logical operand) has no
  bound (E = inf);
- sums (sum, mean, cumsum, accumulating writes): the monotone corners plus gamma_n * sum|x|
  (Higham's bound for n terms added in any order);
- matmul: |A| E_B + E_A |B| + E_A E_B + 2 gamma_K |A||B| (+ split-K roundings);
- orderings (argmax, topk, argsort): an index is exact unless the intervals of the values it
  chose between overlap, then any index is allowed (E = inf);
- reinterpretations of bits (bitcast, pack, unpack): exact or unbounded.

Worked example (the cancellation of issue 31): out = in2 + ((v9 - in2 - in2) - (v9 - in2)) with
v9 = x @ w, K = 41, |x||w| summing to about 10 per element. The matmul's bound is
2 gamma_41 * 10 ≈ 4.9e-5; each subtraction carries its operands' bounds plus the rounding of an
FP32 result of magnitude ~10 (one ulp ≈ 9.5e-7) where they are inexact, so `out` gets a bound
of about 2e-4 although its exact value is 0; tile = -2.4e-7 against reference = 2.4e-7 passes,
while a flipped tile (error ~10) does not.
"""
from __future__ import annotations

import numpy as np

from pypto.errors import PyptoRuntimeError
from pypto.ir.operation import Operation
from pypto.ops.core import REGISTRY
from pypto.runtime.call_state import CallState
from pypto.runtime.error_interval import INF, OpCall
from pypto.runtime.error_rules import RULES
from pypto.runtime.plan import ExecutionPlan
from pypto.runtime.reference import ReferenceExecutor
from pypto.runtime.write_rules import (ADDS_INTO, accumulate, accumulates, add_into,
                                       write_index_inputs)


class ErrorBounds:
    """The reference executor's observer: keeps a bound array beside each storage."""

    def __init__(self, forward: bool = False, known: dict | None = None) -> None:
        # storage id -> float64, the storage's shape (inputs: zero unless `known` says)
        self.bounds: dict[int, np.ndarray] = dict(known or {})
        self.forward = forward

    # ---- the executor's hooks ----
    def after_value(self, state: CallState, op: Operation, xs: list, at: dict) -> None:
        """A value op has run and stored its results."""
        if not op.outputs or (op.opcode == "RESHAPE" and op.attrs.get("inplace")):
            return
        rule = RULES.get(op.opcode)
        if rule is None:   # a new op registered without one (a test keeps the table complete)
            raise PyptoRuntimeError(f"internal: op {op.opcode} has no error-bound rule "
                                    f"(runtime/error_rules.py RULES)", op.loc)
        refs = [self._valid_ref(state, v) for v in op.outputs]
        call = OpCall(op, xs, self._input_bounds(state, op, at), _clean(at), refs, self.forward)
        for v, e in zip(op.outputs, rule(call)):
            self._store(state, v, e)

    def before_write(self, state: CallState, op: Operation, dest: np.ndarray,
                     xs: list, at: dict) -> tuple:
        """What a write's rule needs from before it: its inputs' bounds, and the old values of
        what an accumulating write adds to (the region it touches, or the whole destination)."""
        es = self._input_bounds(state, op, at)
        if op.opcode in ADDS_INTO:
            key = ADDS_INTO[op.opcode](dest, xs, at)
            return es, key, np.array(dest[key], copy=True)
        if accumulates(op.opcode, at):
            return es, None, np.array(dest, copy=True)
        return es, None, None

    def after_write(self, state: CallState, op: Operation, dest: np.ndarray, xs: list,
                    at: dict, before: tuple) -> None:
        es, key, old = before
        e_dst = self._view(state, op.outputs[0], dest.shape)
        # the reference's new values, where a rule needs them (a move does not)
        after = [] if old is None else [np.asarray(dest if key is None else dest[key],
                                                   np.float64)]
        call = OpCall(op, xs, es, _clean(at), after, self.forward)
        if key is not None:
            e_dst[key] = add_into(call, old, e_dst[key])
            return
        index = write_index_inputs(call)
        if old is not None:
            e_dst[...] = accumulate(call, old, e_dst, index).reshape(e_dst.shape)
            return
        # a move: replay it on the bounds, in place (an index with an error: the bounds of
        # everything it writes are gone)
        wild = any(call.erroneous(i) for i in index)
        arrays = [xs[i] if i in index else (np.full(np.shape(es[i]), INF) if wild else es[i])
                  for i in range(len(xs))]
        zero = {k: (INF if wild else 0.0) for k in ("scalar",) if k in at}
        with np.errstate(all="ignore"):
            call.compute(e_dst, arrays, dict(call.at, **zero))

    # ---- storage of the bounds ----
    def _storage(self, state: CallState, sid: int) -> np.ndarray:
        e = self.bounds.get(sid)
        arr = state.arrays[sid]
        if e is None or e.size != arr.size:
            e = self.bounds[sid] = np.zeros(arr.shape)
        return e

    def _view(self, state: CallState, v, shape: tuple) -> np.ndarray:
        return self._storage(state, v.storage.id).reshape(shape)

    def _input_bounds(self, state: CallState, op: Operation, at: dict) -> list:
        full = REGISTRY[op.opcode].full_inputs
        out = []
        for v, valid in zip(op.inputs, at["_in_valid"]):
            e = self._view(state, v, state.shape(v.shape))
            out.append(e if full else e[tuple(slice(0, n) for n in valid)])
        return out

    def _valid_ref(self, state: CallState, v) -> np.ndarray:
        arr = state.array_of(v, None)
        valid = state.clip(state.shape(v.valid_shape), state.shape(v.shape))
        return np.asarray(arr[tuple(slice(0, n) for n in valid)], np.float64)

    def _store(self, state: CallState, v, e: np.ndarray) -> None:
        shape = state.shape(v.shape)
        valid = state.clip(state.shape(v.valid_shape), shape)
        full = np.zeros(shape)
        full[tuple(slice(0, n) for n in valid)] = np.reshape(e, valid)
        self.bounds[v.storage.id] = full

    def of(self, sid: int) -> np.ndarray | None:
        return self.bounds.get(sid)


def _clean(at: dict) -> dict:
    return {k: a for k, a in at.items() if k != "_out"}


def bound_run(plan: ExecutionPlan, symbols: dict[str, int],
              arrays: dict[int, np.ndarray], forward: bool = False,
              known: dict[int, np.ndarray] | None = None) -> ErrorBounds:
    """Run the reference on `arrays` (in place) with an observer; return the bounds: of any
    faithful execution from the reference, or (`forward`) of the exact result of the
    program's arithmetic from the reference (what a golden computed in higher precision
    without the program's own roundings is compared against). `known`: bounds the inputs
    already carry (storage id -> array of its shape), as an earlier kernel left them."""
    bounds = ErrorBounds(forward, known)
    ex = ReferenceExecutor(plan, dict(symbols), arrays)
    ex.fuse = False
    ex.observer = bounds
    ex.run()
    return bounds

