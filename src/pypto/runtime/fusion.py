"""Chunked execution of row-local op chains for the reference executor (on its `TensorOps`).

Takes a Block's ops → `Chain`s (maximal runs of consecutive row-local ops, plus the assemble
that writes their result, if any) that `run_chain` executes chunk by chunk over one leading
axis. Keeps: results bit-identical to running the ops one by one, because every op runs the same
compute function on the same rows with the same dtype rounding: elementwise ops and casts work
per element, and a reduction only reduces axes after the chunked one, so each row is reduced
from the same contiguous data as before.

Why: op by op, softmax at 1024x4096 allocated a fresh 16 MiB array per op (page faults on each)
and streamed every intermediate through memory; that was over half its time. Chunk by chunk
the intermediates are cache-sized, and only values read outside the chain are materialised.

A chain only runs chunked when, with the real shapes: every result has the same extent N > 1
on the chunk axis (the first axis where some result is longer than 1, all earlier axes being
1) and the same valid extent there; every other input is either cut the same way or has
extent 1 on that axis (broadcast whole); no reduction touches the chunk axis or an earlier
one; and the chain is big enough for chunking to pay. Otherwise its ops run one by one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from pypto.dtypes import compute_dtype, is_low_precision, to_numpy
from pypto.errors import PyptoRuntimeError
from pypto.ir.operation import Operation
from pypto.ir.program import Block
from pypto.ir.tensor import StorageKind
from pypto.ops.core import REGISTRY
from pypto.ops.elementwise import POINTWISE
from pypto.ops.writes import write_region
from pypto.runtime.call_state import CallState
from pypto.runtime.liveness import compound
from pypto.runtime.tensor_ops import TensorOps
from pypto.symbolic import Expr, reads_elements

# Ops whose every output element depends only on input elements at the same index (broadcast
# extent-1 dims aside). NOTE: CEIL_DIV is left out: its range error names the worst value of
# the whole tensor, which a chunk cannot know.
ELEMENTWISE = POINTWISE | {"CAST", "ROUND", "LRELU", "WHERE", "CLIP"}
# Reductions along `dims`: row-local when the chunk axis comes before every reduced dim.
REDUCTIONS = frozenset({"REDUCE_SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "REDUCE_MEAN",
                        "REDUCE_VAR", "ARGMAX", "ARGMIN"})


@dataclass(eq=False)
class Chain:
    """Consecutive row-local ops of one block. `internal` holds the ids of results nothing
    outside the chain (or its sink) reads; `sink` is an assemble of the last result."""

    ops: list[Operation]
    internal: frozenset[int]
    sink: Operation | None = None


def plan_block(block: Block, users: dict[int, set[int]]) -> list[Operation | Chain]:
    """The block's ops in program order, with each run of row-local ops grouped as a Chain.
    `users` is runtime/liveness.py's `storage_users` of the program."""
    items: list[Operation | Chain] = []
    run: list[Operation] = []
    for op in block.ops + [None]:
        if op is not None and _row_local(op) and (not run or _rank(op) == _rank(run[0])):
            run.append(op)
            continue
        if run:
            sink = op if op is not None and _assembles(op, run) else None
            items.append(_chain(run, sink, users))
            run = []
            if sink is not None:
                continue
        if op is not None:
            if _row_local(op):
                run.append(op)
            else:
                items.append(op)
    return items


def _rank(op: Operation) -> int:
    return op.outputs[0].rank


def _row_local(op: Operation) -> bool:
    if op.opcode in REDUCTIONS:
        if not op.attrs.get("keepdim"):
            return False
    elif op.opcode not in ELEMENTWISE:
        return False
    if len(op.outputs) != 1 or op.outputs[0].storage.kind is not StorageKind.TEMP:
        return False
    rank = _rank(op)
    return not any(v.rank > rank for v in op.inputs) and not _reads_elements(op)


def _reads_elements(op: Operation) -> bool:
    """Whether an expression of `op` reads tensor elements: a chain evaluates them all before
    its first op runs, when such a read could see an earlier iteration's data."""
    exprs = [e for v in op.inputs + op.outputs for e in v.shape + v.valid_shape]
    exprs += list(_attr_exprs(op.attrs.values()))
    return any(reads_elements(e) for e in compound(exprs))


def _attr_exprs(values: Iterable[Any]) -> Iterable[Expr]:
    for a in values:
        if isinstance(a, Expr):
            yield a
        elif isinstance(a, (tuple, list)):
            yield from _attr_exprs(a)


def _assembles(op: Operation, run: list[Operation]) -> bool:
    """`op` copies the run's last result into a buffer none of the run's ops produce."""
    if op.opcode != "ASSEMBLE" or op.inputs[0] is not run[-1].outputs[0] \
            or _reads_elements(op):
        return False
    return all(r.outputs[0].storage is not op.outputs[0].storage for r in run)


def _chain(ops: list[Operation], sink: Operation | None,
           users: dict[int, set[int]]) -> Chain:
    inside = {op.id for op in ops} | ({sink.id} if sink is not None else set())
    internal = frozenset(op.outputs[0].id for op in ops
                         if users.get(op.outputs[0].storage.id, set()) <= inside)
    return Chain(ops, internal, sink)


# --------------------------------------------------------------------------------------------
# Running a chain

_CHAIN, _ROWS, _WHOLE = 0, 1, 2   # where an input comes from: a chain result, cut rows, as is


@dataclass(eq=False)
class _Step:
    """One op of a chunked chain, with everything that is the same for every chunk."""

    op: Operation
    compute: Any
    attrs: dict[str, Any]
    sources: list[tuple[int, Any]]    # (_CHAIN, value id) or (_ROWS / _WHOLE, array)
    widen: list[np.dtype | None] | None   # per input, the dtype to widen to (None: no widening)
    chunked_inputs: list[bool]
    in_valid: list[tuple[int, ...]]
    out_valid: tuple[int, ...]
    target: np.dtype
    use_out: bool                     # the op may compute into an array we give it
    full: np.ndarray | None = None    # the materialised result
    dests: list[np.ndarray] = field(default_factory=list)   # valid regions the rows land in
    into_dest: bool = False           # compute straight into dests[0] (its rows are contiguous)
    buffer: np.ndarray | None = None  # one chunk of an internal result, reused by every chunk
    _attrs_by_rows: dict[int, dict] = field(default_factory=dict)

    def attrs_for(self, n: int, axis: int) -> dict[str, Any]:
        """The attributes of a chunk of `n` rows (only the last chunk differs)."""
        attrs = self._attrs_by_rows.get(n)
        if attrs is None:
            attrs = self._attrs_by_rows[n] = dict(self.attrs)
            attrs["_in_valid"] = [_with(v, axis, n) if c else v
                                  for v, c in zip(self.in_valid, self.chunked_inputs)]
            attrs["_out_valid"] = _with(self.out_valid, axis, n)
        return attrs


@dataclass
class Chunking:
    """How chains are cut (the bytes of one chunk of the widest result, the smallest chain
    worth cutting), and how many ops ran as part of a chunked chain."""

    chunk_bytes: int
    chunk_min_bytes: int
    chunked_ops: int = 0


def run_chain(ops: TensorOps, chunking: Chunking, chain: Chain) -> bool:
    """Run `chain` (and its sink) chunk by chunk on `ops`' arrays; False if it does not
    qualify (nothing ran)."""
    plan = _plan(ops, chunking, chain)
    if plan is None:
        return False
    steps, axis, extent, rows_per_chunk, sink_fused = plan
    for start in range(0, extent, rows_per_chunk):
        _run_chunk(steps, axis, start, min(start + rows_per_chunk, extent))
    for step in steps:
        if step.full is not None:
            ops.state.arrays[step.op.outputs[0].storage.id] = step.full
    for buf in {id(s.buffer): s.buffer for s in steps if s.buffer is not None}.values():
        ops.pool.give(buf)
    if chain.sink is not None:
        if sink_fused:
            ops.state.written.add(chain.sink.outputs[0].storage.id)
        else:
            ops.run(chain.sink)
    return True


def _run_chunk(steps: list[_Step], axis: int, start: int, stop: int) -> None:
    n = stop - start
    rows = (slice(None),) * axis + (slice(start, stop),)
    values: dict[int, np.ndarray] = {}
    for step in steps:
        arrays = [values[src] if kind == _CHAIN else src[rows] if kind == _ROWS else src
                  for kind, src in step.sources]
        if step.widen is not None:
            arrays = [a if w is None else a.astype(w) for a, w in zip(arrays, step.widen)]
        attrs = step.attrs_for(n, axis)
        dests = [d[rows] for d in step.dests]
        out = None
        if step.use_out:
            out = dests[0] if step.into_dest else step.buffer[rows[:axis] + (slice(0, n),)]
            attrs["_out"] = out
        r = np.asarray(step.compute(arrays, attrs))
        if r is not out and any(np.may_share_memory(r, a) for a in arrays):
            r = r.copy()   # an input handed back: its buffer may be reused by a later step
        if r.dtype != step.target:
            with np.errstate(all="ignore"):
                r = r.astype(step.target)
        if r.shape != attrs["_out_valid"]:
            raise PyptoRuntimeError(f"internal: {step.op.opcode} produced shape "
                                    f"{list(r.shape)} but its valid shape is "
                                    f"{list(attrs['_out_valid'])}", step.op.loc)
        values[step.op.outputs[0].id] = r
        for d in dests:
            if r is not d:   # not already computed into it
                d[...] = r


def _with(t: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    return t[:axis] + (n,) + t[axis + 1:]


def _plan(ops: TensorOps, chunking: Chunking, chain: Chain) -> tuple | None:
    outs = [op.outputs[0] for op in chain.ops]
    shapes = [ops.state.shape(v.shape) for v in outs]
    axis = next((d for d in range(len(shapes[0])) if any(s[d] > 1 for s in shapes)), None)
    if axis is None:
        return None
    extent = max(s[axis] for s in shapes)
    row_bytes = max(_row_elements(s, axis) for s in shapes) * 4   # as FP32 (the compute type)
    if extent * row_bytes < chunking.chunk_min_bytes:
        return None
    hoisted = _hoisted(chain.ops, shapes, axis)
    if chain.ops[-1] in hoisted:
        return None
    chunked_ops = [op for op in chain.ops if op not in hoisted]
    produced = {op.outputs[0].id for op in chunked_ops}
    checked = _check(ops.state, chunked_ops, produced, axis, extent)
    if checked is None:
        return None
    valid_extent, valids = checked
    for op in chain.ops:
        if op in hoisted:
            ops.run(op)   # computed whole; the chunks read it as a broadcast input
    steps: list[_Step] = []
    externals: list[np.ndarray] = []
    for op, (out_valid, in_valids) in zip(chunked_ops, valids):
        out = op.outputs[0]
        shape = ops.state.shape(out.shape)
        opdef = REGISTRY[op.opcode]
        attrs = {k: ops.state.attr(a) for k, a in op.attrs.items()}
        attrs["_loc"] = op.loc
        sources, chunked = [], []
        widen = [compute_dtype(v.dtype) if opdef.widen and is_low_precision(v.dtype) else None
                 for v in op.inputs]
        for v, valid in zip(op.inputs, in_valids):
            if v.id in produced:
                sources.append((_CHAIN, v.id))
                chunked.append(True)
                continue
            arr = ops.state.array_of(v, op)[tuple(slice(0, n) for n in valid)]
            cut = v.rank == len(shape) and ops.state.shape(v.shape)[axis] != 1
            sources.append((_ROWS if cut else _WHOLE, arr))
            chunked.append(cut)
            externals.append(arr)
        target = np.dtype(to_numpy(out.dtype))
        # NOTE: out= only where the result dtype is the inputs' (no extra rounding step)
        use_out = opdef.accepts_out and all(
            (w if w is not None else np.dtype(to_numpy(v.dtype))) == target
            for w, v in zip(widen, op.inputs))
        step = _Step(op, opdef.compute, attrs, sources,
                     widen if any(w is not None for w in widen) else None, chunked, in_valids,
                     out_valid, target, use_out)
        if out.id not in chain.internal:
            _materialise(ops, step, shape)
        steps.append(step)
    sink_fused = chain.sink is not None and _fuse_sink(ops, chain.sink, steps[-1], externals)
    rows = max(1, chunking.chunk_bytes // row_bytes)
    _assign_buffers(ops, steps, axis, min(rows, valid_extent))
    chunking.chunked_ops += len(chunked_ops)
    return steps, axis, valid_extent, rows, sink_fused


def _assign_buffers(ops: TensorOps, steps: list[_Step], axis: int, rows: int) -> None:
    """Give each step that can compute into an array its destination rows (when contiguous)
    or a chunk buffer. A buffer whose value was last read by an earlier step, or by this one
    (elementwise ops compute in place exactly), is handed on: fewer buffers stay in cache."""
    last_read: dict[int, int] = {}
    for j, step in enumerate(steps):
        for kind, src in step.sources:
            if kind == _CHAIN:
                last_read[src] = j
    holder: dict[int, np.ndarray] = {}   # value id -> the buffer it was computed into
    free: dict[tuple, list[np.ndarray]] = {}
    first = (slice(None),) * axis + (slice(0, rows),)
    for j, step in enumerate(steps):
        for kind, src in step.sources:
            if kind == _CHAIN and last_read[src] == j and src in holder:
                buf = holder.pop(src)
                free.setdefault((buf.shape, buf.dtype), []).append(buf)
        if not step.use_out:
            continue
        step.into_dest = bool(step.dests) and step.dests[0][first].flags.c_contiguous
        if step.into_dest:
            continue
        shape = _with(step.out_valid, axis, rows)
        spare = free.get((shape, step.target))
        step.buffer = spare.pop() if spare else ops.pool.empty(shape, step.target)
        value = step.op.outputs[0].id
        if value in last_read:
            holder[value] = step.buffer
        else:
            free.setdefault((shape, step.target), []).append(step.buffer)


def _hoisted(ops: list[Operation], shapes: list[tuple[int, ...]], axis: int) -> set:
    """The ops to run whole before the chunks: results of extent 1 on the chunk axis (e.g. a
    cast of a [1, D] weight) computed from inputs the chain does not cut."""
    hoisted: set[Operation] = set()
    cut: set[int] = set()   # ids of results computed chunk by chunk
    for op, shape in zip(ops, shapes):
        if shape[axis] == 1 and not any(v.id in cut for v in op.inputs):
            hoisted.add(op)
        else:
            cut.add(op.outputs[0].id)
    return hoisted


def _check(state: CallState, ops: list[Operation], produced: set[int], axis: int,
           extent: int) -> tuple | None:
    """(valid extent on the chunk axis, per op (output valid, input valids)) if every op can
    run chunk by chunk, else None."""
    valid_extent = None
    valids = []
    for op in ops:
        out = op.outputs[0]
        shape = state.shape(out.shape)
        out_valid = state.clip(state.shape(out.valid_shape), shape)
        if shape[axis] != extent or 0 in out_valid:
            return None
        if valid_extent is None:
            valid_extent = out_valid[axis]
        if out_valid[axis] != valid_extent:
            return None
        if op.opcode in REDUCTIONS and min(state.attr(op.attrs["dims"])) <= axis:
            return None
        in_valids = []
        for v in op.inputs:
            v_shape = state.shape(v.shape)
            valid = state.clip(state.shape(v.valid_shape), v_shape)
            in_valids.append(valid)
            if v.id in produced:
                continue
            d = axis - (len(shape) - len(v_shape))   # v's dim aligned with the chunk axis
            if d >= 0 and any(s != 1 for s in v_shape[:d]):
                return None
            if d >= 0 and v_shape[d] != 1 and (d != axis or v_shape[d] != extent
                                                 or valid[d] != valid_extent):
                return None   # only inputs of the chain's rank are cut, all alike
        valids.append((out_valid, in_valids))
    return valid_extent, valids


def _row_elements(shape: tuple[int, ...], axis: int) -> int:
    n = 1
    for s in shape[axis + 1:]:
        n *= s
    return n


def _materialise(ops: TensorOps, step: _Step, shape: tuple[int, ...]) -> None:
    """Give the step a whole-tensor result (zero outside the valid region) to fill."""
    pool = ops.pool
    step.full = (pool.empty if step.out_valid == shape else pool.zeros)(shape, step.target)
    step.dests.append(step.full[tuple(slice(0, n) for n in step.out_valid)])


def _fuse_sink(ops: TensorOps, sink: Operation, last: _Step,
               externals: list[np.ndarray]) -> bool:
    """Point the last step at the assemble's destination region, unless that region may
    overlap an input of the chain (then the assemble runs afterwards, on the whole result)."""
    dst = ops.state.destination(sink.outputs[0], sink)
    if any(np.may_share_memory(dst, a) for a in externals):
        if last.full is None:
            _materialise(ops, last, ops.state.shape(last.op.outputs[0].shape))
        return False
    attrs = {k: ops.state.attr(a) for k, a in sink.attrs.items()}
    attrs["_loc"] = sink.loc
    src = np.broadcast_to(np.zeros((), last.target), last.out_valid)
    # the destination first: computing straight into it saves a copy
    last.dests.insert(0, dst[write_region("assemble writes", src, dst, attrs)])
    return True
