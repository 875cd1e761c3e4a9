"""The execution plan: everything the runtime derives once from a compiled program and keeps
for every run of it.

Takes a `CompiledProgram` (frozen: nothing here writes to it) -> per root function its steps,
batches, cost classes and one generated window function (`RootPlan`); per call op its facts
and operand hints; per tile op its window function and constant attributes; the extent checks
of each block, the stitcher's slot facts, expression functions, and the spare result buffers a
warm call computes in. The driver builds one plan per compiled program and keeps it next to it,
so a plan lives exactly as long as its program: nothing is cached at module level.

NOTE: entries are keyed by the id() of the program's objects, which the plan keeps alive
through `compiled`; they are filled when first needed (a run reaches only some of them).
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Callable

from pypto.ir.program import Block
from pypto.passes import CompiledProgram
from pypto.passes.functions import CallOp
from pypto.passes.tile_graph import TileOp
from pypto.passes.untiled import untiled, whole_label
from pypto.runtime import batching
from pypto.runtime.extent_checks import BlockChecks
from pypto.runtime.liveness import SpareBuffers
from pypto.runtime.slot_facts import SlotFacts, slot_facts
from pypto.runtime.task_cost import CallCost, operand_hints
from pypto.runtime.window_code import (op_windows, regions_of, root_window_arrays,
                                       root_windows, window_exprs)
from pypto.symbolic import Expr, expr_function, free_symbols


class ExecutionPlan:
    """The runtime's plan of one compiled program (see the module docstring)."""

    def __init__(self, compiled: CompiledProgram):
        self.compiled = compiled
        self.program = compiled.program
        # whole-value result buffers kept from one run to the next (liveness.SpareBuffers)
        self.spares = SpareBuffers()
        # Expr -> its generated function (CallState.ev)
        self.expr_functions: dict[Expr, Callable[..., int]] = {}
        self._static_attrs: dict[int, dict | None] = {}   # id(tile op) -> `static_attrs`
        # id(tile op) -> its window function (window_code.op_windows)
        self.op_window_functions: dict[int, Callable[..., tuple]] = {}
        self._roots: dict[str, RootPlan] = {}
        self._facts: dict[int, CallFacts] = {}
        self._operands: dict[int, tuple[list, list]] = {}
        self._checks: dict[int, BlockChecks] = {}
        self._slot_facts: SlotFacts | None = None

    def with_spec(self, spec: Any) -> ExecutionPlan:
        """This plan timed on machine `spec`: the same program and every memo shared (none
        depends on the machine), only `compiled.spec` differs, which the costs read
        (`JitKernel.retimed`: a calibration re-times one call on many machines)."""
        other = copy.copy(self)
        other.compiled = replace(self.compiled, spec=spec)
        other.spares = SpareBuffers()
        return other

    def expr_function(self, e: Expr) -> Callable[..., int]:
        fn = self.expr_functions[e] = expr_function(e)
        return fn

    def static_attrs(self, op: TileOp) -> dict | None:
        """The tile op's attributes (its tensor op's, then its own) when none is symbolic (the
        same for every run: a copy is the caller's to change), else None."""
        key = id(op)
        if key not in self._static_attrs:
            attrs = {**op.src.attrs, **op.attrs}
            self._static_attrs[key] = None if any(map(_has_expr, attrs.values())) else attrs
        found = self._static_attrs[key]
        return dict(found) if found is not None else None

    def op_windows(self, op: TileOp) -> Callable[..., tuple]:
        fn = self.op_window_functions[id(op)] = op_windows(op)
        return fn

    def root(self, name: str) -> RootPlan:
        plan = self._roots.get(name)
        if plan is None:
            plan = self._roots[name] = RootPlan(self.compiled.roots[name], self)
        return plan

    def facts(self, call: CallOp) -> CallFacts:
        facts = self._facts.get(id(call))
        if facts is None:
            facts = self._facts[id(call)] = CallFacts(call)
        return facts

    def checks(self, block: Block) -> BlockChecks:
        """The block's extent checks, compiled once."""
        found = self._checks.get(id(block))
        if found is None:
            found = self._checks[id(block)] = BlockChecks(block)
        return found

    @property
    def slot_facts(self) -> SlotFacts:
        """What the stitcher needs to know about the program's storages."""
        if self._slot_facts is None:
            self._slot_facts = slot_facts(self.compiled.roots.values())
        return self._slot_facts

    def operands(self, call: CallOp) -> tuple[list, list]:
        """PyPTO-style operand hints of a call op: the GM tensors it reads and writes
        ({id: {shape (-1 = dynamic), dtype, rawmagic}})."""
        found = self._operands.get(id(call))
        if found is None:
            found = self._operands[id(call)] = _operands(call)
        return found


class CallFacts:
    """What the executor derives from a call op once: its swimlane label and merge groups,
    the cube loads its tile ops may share (CallCost.sharing), the release points of its local
    values (`batching.deaths_of`), and whether it may run batched with its isomorphic
    siblings."""

    __slots__ = ("label", "merge", "sharing", "deaths", "batchable")

    def __init__(self, call: CallOp):
        untiled_op = next((op for op in call.ops if untiled(op)), None)
        self.label = whole_label(untiled_op) if untiled_op is not None else next(
            (op.src.label for op in call.ops if op.src.label), "")
        self.merge = {name: info.key for name, info in getattr(call, "merge_info", {}).items()}
        self.sharing = CallCost.sharing(call.ops)
        self.deaths = batching.deaths_of(call.ops)
        self.batchable = all(batching.batchable_op(op) for op in call.ops)


class RootPlan:
    """What every instance of one root function shares: its steps (a call on its own, or a run
    of isomorphic independent calls that may batch) and one generated function evaluating all
    its windows.

    NOTE: evaluating each tile op's windows on its own walked the same few subexpressions
    (a loop index, a clamped tail extent) dozens of times per instance; the generated function
    computes each distinct one once. It returns (vkey, valid key per call, windows per call
    per tile op): vkey holds the values of the instance's distinct symbolic valid extents, so
    instances of equal vkey have equal valid extents everywhere; a call's valid key stands
    for its own valid extents (calls of equal valid key and cost class cost the same)."""

    def __init__(self, root: Any, plan: ExecutionPlan):
        self.name = root.name
        calls = self.calls = root.calls
        self.facts = [plan.facts(c) for c in calls]
        batchable = [f.batchable for f in self.facts]
        self.singles = [(i, i + 1) for i in range(len(calls))]
        self.steps = []
        i = 0
        while i < len(calls):
            end = batching.group_end(calls, i, batchable)
            self.steps.append((i, end))
            i = end
        # groups whose batch shape depends on the valid extents only (batching.rigid)
        self.rigid = {s for s, e in self.steps if e - s > 1 and batching.rigid(calls[s:e])}
        # calls whose tile ops evaluate their own windows when they run: whole ops, and tile
        # ops on a run-time grid (one task per tile)
        self.has_whole = [c.grid is not None or any(op.kind == "whole" for op in c.ops)
                          for c in calls]
        # the first call op charged like each one for equal valid extents (same regions of
        # the same values, same kinds of tile op): isomorphic calls share their CallCost
        first: dict[tuple, CallOp] = {}
        self.cost_class = [first.setdefault(_cost_signature(c), c) for c in calls]
        # batch shapes of rigid groups, by (first call, vkey): valid for any bindings
        self._batches: dict[tuple, list] = {}
        self._windows = root_windows(calls)
        # whether instances can be made in bulk (runtime.bulk_instances): every call op one
        # row, call op i at place i
        self.bulkable = self._windows is not None and not any(self.has_whole) and all(
            c.index == i for i, c in enumerate(calls))
        self._bulk_names: tuple[str, ...] | None = None
        self._window_arrays = None

    def batch_shape(self, key: tuple | None, make: Callable[[], list]) -> list:
        """The batch shape of a rigid group by `key` ((first call, vkey); None: not kept),
        made by `make` on first need (runtime/batching.py)."""
        shape = self._batches.get(key) if key is not None else None
        if shape is None:
            shape = make()
            if key is not None:
                if len(self._batches) >= batching.MAX_CACHED:
                    self._batches.clear()
                self._batches[key] = shape
        return shape

    @property
    def bulk_names(self) -> tuple[str, ...]:
        """The symbols the windows read (made when an instance is first deferred: an exact run
        never asks)."""
        if self._bulk_names is None:
            self._bulk_names = tuple(sorted({name for c in self.calls for op in c.ops
                                             for e in window_exprs(op)
                                             for name in free_symbols(e)}))
        return self._bulk_names

    def bulk_values(self, values: dict) -> tuple | None:
        """The values of `bulk_names` in `values`, or None when one is unbound (the instance
        is then made on its own, where the error is raised)."""
        try:
            return tuple([values[name] for name in self.bulk_names])
        except KeyError:
            return None

    def window_arrays(self, values: dict) -> tuple:
        """`evaluate` for many instances at once: numpy arrays in `values` for the symbols
        that differ (`window_code.root_window_arrays`); raises where `evaluate` gives None."""
        if self._window_arrays is None:
            self._window_arrays = root_window_arrays(self.calls)
        return self._window_arrays(values)

    def evaluate(self, values: dict) -> tuple | None:
        """(vkey, valid keys, windows) for the symbol `values`, or None: the tile ops then
        evaluate their own windows as they run. None when a window reads a tensor element
        (written in the block, maybe); and when the function fails (an unbound symbol, a
        division by zero): the tile op whose window fails then raises `evaluate`'s error, at
        the point of the run where it did when every op evaluated its own."""
        if self._windows is None:
            return None
        try:
            return self._windows(values)
        except (KeyError, ZeroDivisionError, TypeError):
            return None


def _cost_signature(call: CallOp) -> tuple:
    """What CallCost reads from a call op besides its windows."""
    return tuple((id(op.src), op.kind, op.opcode, op.core, tuple(op.local_inputs),
                  tuple(r.value.id for r in regions_of(op)), id(op.attrs.get("cube_plan")))
                 for op in call.ops)


def _operands(call: CallOp) -> tuple[list, list]:
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
    return operand_hints(ins), operand_hints(outs)


def _has_expr(x: object) -> bool:
    """Whether an attribute is, or holds in lists and tuples, a symbolic expression."""
    return isinstance(x, Expr) or (isinstance(x, (list, tuple)) and any(map(_has_expr, x)))
