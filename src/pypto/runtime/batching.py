"""Batches of isomorphic tasks: consecutive call ops of one root whose tile ops may run as one
numpy call each over the union of their windows.

Takes a root's call ops and their evaluated windows -> runs of calls (`batch_shape`): a call
on its own, or calls first..end-1 whose windows stack along one dim, with the tile ops the batch
runs and a function moving the union windows to an instance's offsets. Keeps the results
bit-identical: only ops that are per element the same arithmetic (pointwise, casts) or reduce
along another dim batch (see TileExecutor).
"""
from __future__ import annotations

from pypto.ops.elementwise import POINTWISE
from pypto.passes.tile_graph import TileOp
from pypto.runtime.window_code import regions_of, window_exprs
from pypto.symbolic import Const, const_diff, reads_elements


# Reductions a batch may run over many rows at once (never over the stacked dim).
_ROWWISE_REDUCE = frozenset({"REDUCE_SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD",
                             "REDUCE_MEAN"})
# Ops that are per element the same function of their input, like POINTWISE ones (a cast
# rounds each element on its own, whatever its mode).
_ELEMENTWISE = POINTWISE | {"CAST"}

MAX_CACHED = 4096   # batch shapes kept per root function (one per distinct valid extents)


def group_end(calls: list, start: int, batchable: list[bool]) -> int:
    """End of the run of calls from `start` that may batch: same op structure (same source
    ops and tile attributes), batchable ops only (`batchable[i]`: call i's), and none waits
    for another."""
    head = calls[start]
    if head.grid is not None or not batchable[start]:
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
                   for a, b in zip(c.ops, head.ops)) or not batchable[end]:
            break
        members.add(c.index)
        end += 1
    return end


def batchable_op(op: TileOp) -> bool:
    """Whether a tile op may run batched: pointwise, a cast, a row-wise reduction or an
    assemble, on regions of its output's rank, with windows that read no tensor element."""
    if op.kind == "copy_out":
        ok = op.opcode == "ASSEMBLE"
    elif op.kind in ("compute", "partial", "combine"):
        ok = op.opcode in _ELEMENTWISE or op.opcode in _ROWWISE_REDUCE
    else:
        return False
    if not ok or op.output is None:
        return False
    rank = len(op.output.shape)
    if any(r.dims is not None or len(r.shape) != rank for r in op.inputs):
        return False
    # windows computed up front must not read data
    return not any(type(e) is not Const and reads_elements(e) for e in window_exprs(op))


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


def _merge_siblings(ops: list, windows: list, dims: list) -> list[tuple[int, tuple]]:
    """Merge consecutive tile ops of one tensor op (e.g. the four column tiles of a SUB, or
    of the assemble writing its result out) whose batched windows stack too, so that one numpy
    call covers the whole value. Returns (index of the first op, merged windows) per op that
    runs.
    NOTE: one tensor op may expand to a chain of tile ops (rsqrt: SQRT into a scratch value,
    then DIVS from it, row by row). Merging SQRT row 1 into DIVS row 0 ran the division over
    rows no SQRT had written yet (issue 13: inf). So siblings must also share the opcode, and
    a tile op never joins a merge that writes a value it reads or reads a value it writes."""
    out = [(0, windows[0])]
    union = None
    reads: set[int] = set()
    writes: set[int] = set()
    for k, (op, w, rd) in enumerate(zip(ops[1:], windows[1:], dims[1:]), 1):
        prev = ops[out[-1][0]]
        if union is None:
            reads, writes = _values_read(prev), _values_written(prev)
        op_reads, op_writes = _values_read(op), _values_written(op)
        if _sibling_key(op) == _sibling_key(prev) and not (op_reads & writes) \
                and not (op_writes & reads):
            first = out[-1][1] if union is None else union[2]
            grown = _extend(union, first, w, op, rd)
            if grown is not None:
                union = (*grown, first)
                out[-1] = (out[-1][0], grown[1])
                reads |= op_reads
                writes |= op_writes
                continue
        union = None
        out.append((k, w))
    return out


def _values_read(op: TileOp) -> set[int]:
    return {r.value.id for r in op.inputs}


def _values_written(op: TileOp) -> set[int]:
    return {op.output.value.id} if op.output is not None else set()


def batch_shape(group: list, windows: list, dims: list) -> list:
    """How `group`'s calls run: (first, end, None) for a call on its own, (first, end,
    (ops, unions, deaths)) for the calls first..end-1 as one batch: the tile ops it runs,
    a function of the first call's windows giving their union windows (a union starts where
    the first call's window of that op does), and the ops' release points (`deaths_of`)."""
    ops = group[0].ops
    out = []
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
            merged = _merge_siblings(ops, [u[1] for u in unions], dims)
            batch_ops = [ops[i] for i, _ in merged]
            out.append((start, end, (batch_ops, _mover(merged), deaths_of(batch_ops))))
        else:
            out.append((start, end, None))
        start = end
    return out


def _mover(merged: list[tuple[int, tuple]]):
    """A function of a call's windows returning the windows of `merged` ((index of a tile op,
    its union windows) per op) moved to that call's offsets."""
    extents = [(i, tuple(ext for _, ext in wins)) for i, wins in merged]

    def unions(w: list) -> list:
        return [tuple((w[i][r][0], ext) for r, ext in enumerate(exts)) for i, exts in extents]
    return unions


def deaths_of(ops: list) -> list[list[int]]:
    """Per tile op: the local values that op is the last one to read or write."""
    last: dict[int, int] = {}
    for k, op in enumerate(ops):
        for r, local in zip(op.inputs, op.local_inputs):
            if local:
                last[r.value.id] = k
        if op.output is not None and op.kind != "copy_out":
            last[op.output.value.id] = k
    out: list[list[int]] = [[] for _ in ops]
    for vid, k in last.items():
        out[k].append(vid)
    return out


def rigid(calls: list) -> bool:
    """Every offset in `calls` differs by a constant from its counterpart in the first call's
    first tile op that `_merge_siblings` may merge it with: then which windows stack
    (`_extend`) is decided by the valid extents alone."""
    head = calls[0].ops
    first = {}
    for j, op in enumerate(head):
        first.setdefault(_sibling_key(op), j)
    for call in calls:
        for j, op in enumerate(call.ops):
            ref = head[first[_sibling_key(head[j])]]
            for r, rr in zip(regions_of(op), regions_of(ref)):
                if len(r.offsets) != len(rr.offsets):
                    return False
                for a, b in zip(r.offsets, rr.offsets):
                    if a is not b and a != b and (type(a) is not Const or type(b) is not Const) \
                            and const_diff(a, b) is None:
                        return False
    return True


def _sibling_key(op: TileOp) -> tuple:
    """Tile ops `_merge_siblings` may merge share this: same tensor op, kind, opcode and
    local inputs."""
    return id(op.src), op.kind, op.opcode, tuple(op.local_inputs)
