"""TileOp -> SimTask costing: what one task (one call op of one root instance) asks of its core's pipes.

Takes the call op's tile ops with the windows the executor evaluated for this instance →
fills a `SimTask`'s cost fields and GM accesses. Keeps: only valid extents cost (an empty tile
costs nothing but the task head); data a task keeps on chip costs nothing; GM traffic is what
crosses subgraphs, blocks or kernel boundaries (hw_model §3.4, §4).

Per tile op:
- AIV compute: vector cycles = issue + repeats(valid bytes) x cycles/repeat + sync per
  instruction (`_vector`: a broadcast operand adds an expand, a column reduction folds its rows
  pairwise); each input read from GM adds MTE2 bytes; an output other tasks read adds MTE3 bytes;
- copy-out (assemble / move): MTE3 bytes of the written region (plus MTE2 when its input is
  read from GM);
- cube (matmul block): MTE2 = A and B panels (shared L1 loads counted once), MTE1 = L1->L0
  bytes per K step (whole 16 x K0 fractals) at the effective L0A / L0B rates, cube cycles = a
  MAD head per L0 step + ceil(m/16)·ceil(k/K0)·ceil(n/16), fixpipe = per L0C tile, fixed +
  its rows x max(row floor, L0C row / rate);
- whole ops (no tile rule): their whole inputs in, a vector pass over the output, and out.
Every GM transfer also records the bytes it occupies by its shape (`transfer_shape`).
"""
from __future__ import annotations

from typing import Any

from pypto.dtypes import bytes_of
from pypto.ir.tensor import TileOpFormat
from pypto.machine.result import SimTask
from pypto.machine.spec import MachineSpec
from pypto.passes.tile_graph import AIC, Region, TileOp
from pypto.runtime.transfer_shape import Path, transfer_bytes

_OP_CLASS = {"EXP": "exp", "DIV": "div", "DIVS": "div", "SQRT": "div", "RECIPROCAL": "div",
             "REDUCE_SUM": "reduce_full_fp32_add", "REDUCE_MEAN": "reduce_full_fp32_add",
             "REDUCE_MAX": "reduce_full", "REDUCE_MIN": "reduce_full",
             "REDUCE_PROD": "reduce_full", "GATHER": "gather", "SCATTER": "gather"}


def _numel(extents: tuple[int, ...]) -> int:
    n = 1
    for e in extents:
        n *= e
    return n


def _vector_class(opcode: str, dtype_name: str) -> str:
    cls = _OP_CLASS.get(opcode, "binary")
    if cls == "exp":
        return "exp_fp32" if dtype_name == "DT_FP32" else "exp_fp16"
    return cls


class CallCost:
    """What one call op's tile ops charge its task, for one set of valid extents.

    NOTE: the cost rules depend on the offsets of a window only through which GM boxes it
    touches, so the totals and the list of accessed regions are built once per (call op, valid
    extents) and every task with those extents copies them, filling in its own offsets. The
    totals are summed in the same order as charging op by op from a fresh task would, so they
    are bit-identical. L1 loads shared by cube ops depend on offsets too: `sharing` says which
    loads could coincide, and whether they do belongs in the key the caller caches under."""

    __slots__ = ("totals", "reads", "writes")

    def __init__(self, ops: list[TileOp], windows: list[tuple], escaping: set[int],
                 spec: MachineSpec, shape_of: Any, shared_loads: set | None = None):
        """`windows[i]` are op i's (offsets, valid extents) per input region, then output;
        `shape_of(value)` gives a tensor's concrete shape; `shared_loads`: the L1 loads the
        task already paid for (when its ops are charged in several parts)."""
        totals = self.totals = SimTask(-1, -1, -1, "", -1, -1, "", -1, "")
        # (storage id, op index, region index, layout) of each GM read / write, in order
        self.reads: list[tuple[int, int, int, tuple]] = []
        self.writes: list[tuple[int, int, int, tuple]] = []
        if shared_loads is None:
            shared_loads = set()
        for at, (op, w) in enumerate(zip(ops, windows)):
            self._charge(at, op, w, escaping, spec, shared_loads, shape_of)

    def _charge(self, at: int, op: TileOp, windows: tuple, escaping: set[int], spec: MachineSpec,
                shared_loads: set, shape_of: Any) -> None:
        totals = self.totals
        for i, (r, (offs, valid)) in enumerate(zip(op.inputs, windows)):
            if op.local_inputs and op.local_inputs[i]:
                continue
            nbytes = _numel(valid) * bytes_of(r.value.dtype)
            key = (r.value.storage.id, offs, valid)
            if op.core == AIC and key in shared_loads:
                continue  # an L1 load merged subgraphs share is paid once
            if op.core == AIC:
                shared_loads.add(key)
            totals.mte2_bytes += nbytes
            if nbytes:
                layout = (shape_of(r.value), bytes_of(r.value.dtype))
                self.reads.append((r.value.storage.id, at, i, layout))
                totals.mte2_moved += _moved(op, r.value, valid, layout, spec, load=True)
        if op.output is None:
            return
        last = len(op.inputs)
        out_valid = windows[last][1]
        out_bytes = _numel(out_valid) * bytes_of(op.output.value.dtype)
        layout = (shape_of(op.output.value), bytes_of(op.output.value.dtype)) if out_bytes \
            else None
        if op.kind == "copy_out":
            totals.mte3_bytes += out_bytes
            if out_bytes:
                self.writes.append((op.output.value.storage.id, at, last, layout))
                totals.mte3_moved += _moved(op, op.output.value, out_valid, layout, spec,
                                            load=False)
            return
        if op.core == AIC and op.opcode == "MATMUL":
            _cube(totals, op, windows, spec)
        else:
            totals.vector_cycles += _vector(op, windows, out_valid, out_bytes, spec)
        if op.output.value.id in escaping and out_bytes:
            totals.mte3_bytes += out_bytes
            self.writes.append((op.output.value.storage.id, at, last, layout))
            totals.mte3_moved += _moved(op, op.output.value, out_valid, layout, spec, load=False)

    @staticmethod
    def sharing(ops: list[TileOp]) -> tuple[tuple[tuple[int, int], tuple[int, int]], ...]:
        """Pairs of cube-op GM input regions ((op, region), (op, region)) of one storage: the
        loads that are paid once when their windows are equal."""
        loads = [((at, i), r.value.storage.id) for at, op in enumerate(ops) if op.core == AIC
                 for i, r in enumerate(op.inputs)
                 if not (op.local_inputs and op.local_inputs[i])]
        return tuple((a, b) for n, (a, sa) in enumerate(loads) for b, sb in loads[n + 1:]
                     if sa == sb)

    def apply(self, task: SimTask, windows: list[tuple]) -> None:
        """Charge a task with these extents; `windows` are its own (the offsets differ)."""
        t = self.totals
        task.mte2_bytes += t.mte2_bytes
        task.mte1_bytes += t.mte1_bytes
        task.vector_cycles += t.vector_cycles
        task.cube_cycles += t.cube_cycles
        task.mte3_bytes += t.mte3_bytes
        task.mte2_moved += t.mte2_moved
        task.mte3_moved += t.mte3_moved
        task.mte1_cycles += t.mte1_cycles
        task.fix_cycles += t.fix_cycles
        for sid, at, i, layout in self.reads:
            offs, valid = windows[at][i]
            task.reads.append((sid, offs, valid))
            task.read_layouts.append(layout)
        for sid, at, i, layout in self.writes:
            offs, valid = windows[at][i]
            task.writes.append((sid, offs, valid))
            task.write_layouts.append(layout)


def _vector(op: TileOp, windows: tuple, out_valid: tuple[int, ...], out_bytes: int,
            spec: MachineSpec) -> float:
    """Vector cycles of one tile op: the instructions it lowers to, each paying its issue,
    its repeats and the inter-op sync (hw_model §3.3-3.4; hw_costs §4: ~22-24 cycles of
    overhead per instruction, measured). A tile op is one instruction, except:
    - a broadcast operand (valid extent 1 on an axis where the output's is larger) is first
      expanded to the output's shape by an instruction of its own (PTO tile ops take operands
      of equal shape; the expand is a brcb / copy at 1 cycle per repeat, hw_model §3.3);
    - a reduction over a non-tail axis (a column sum over rows) has no instruction of its own:
      the vector unit reduces within a repeat (vcadd / vcmax), i.e. along the tail, so the
      rows are folded pairwise, one binary instruction per halving (ceil(log2 rows) of them,
      over half the remaining rows each)."""
    in_bytes = max((_numel(w[1]) * bytes_of(r.value.dtype)
                    for r, w in zip(op.inputs, windows)), default=0)
    work = max(in_bytes, out_bytes)
    if not work:
        return 0.0
    cls = _vector_class(op.opcode, op.output.value.dtype.name)
    cycles = 0.0
    if op.opcode in _REDUCE and op.inputs:
        rows = _rows_folded(op, windows[0][1])
        if rows:
            # pairwise folding of the reduced rows: binary instructions on the halves
            rest = _numel(windows[0][1]) // rows
            itemsize = bytes_of(op.inputs[0].value.dtype)
            while rows > 1:
                half = rows // 2
                cycles += spec.vector_cycles("binary", half * rest * itemsize)
                rows -= half
            return cycles
    cycles += spec.vector_cycles(cls, work)
    n_out = _numel(out_valid)
    for r, (_, valid) in zip(op.inputs, windows):
        if len(valid) == len(out_valid) and _numel(valid) < n_out and \
                any(v == 1 and o > 1 for v, o in zip(valid, out_valid)):
            cycles += spec.vector_cycles("unary", n_out * bytes_of(r.value.dtype))
    return cycles


_REDUCE = frozenset({"REDUCE_SUM", "REDUCE_MEAN", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"})


def _rows_folded(op: TileOp, valid: tuple[int, ...]) -> int:
    """How many rows a reduction over non-tail axes folds (their valid extents' product);
    0 when it reduces the tail axis (one vcadd-type instruction does that)."""
    dims = op.attrs.get("dims", op.src.attrs.get("dims"))
    if dims is None:
        return 0
    rank = len(valid)
    axes = {d % rank for d in (dims if isinstance(dims, (list, tuple)) else (dims,))}
    if not axes or rank - 1 in axes:
        return 0
    rows = 1
    for d in axes:
        rows *= valid[d]
    return rows


def _as_read(region: Region, valid: tuple[int, ...]) -> tuple[int, ...]:
    """The valid extents of a region as its reader sees them: windows are in the coordinates
    of the tensor actually read, which has another rank when the reader sees it through a
    squeeze/unsqueeze alias (`Region.dims`)."""
    if region.dims is None:
        return valid
    return tuple(valid[d] if d >= 0 else 1 for d in region.dims)


def _fractal_extent(x: int, x_l0: int) -> int:
    """Rows (or columns) an L1 -> L0 load moves for `x` valid ones in blocks of `x_l0`: the
    load instructions move whole 16-row fractals (hw_costs §3: cube_m = cube_n = 16), so each
    block's valid extent rounds up to 16, not to the block."""
    full, tail = divmod(x, x_l0)
    return full * -(-x_l0 // 16) * 16 + -(-tail // 16) * 16


def _l0_single_buffered(plan, k0: int, a_bytes: float, b_bytes: float,
                        spec: MachineSpec) -> bool:
    """Whether one K step's A or B tile in L0 (whole 16 x K0 fractals) takes more than half of
    L0A / L0B, leaving no room for the next step's."""
    k_l0 = -(-min(plan.k_l0, plan.k) // k0) * k0
    a_tile = -(-plan.m_l0 // 16) * 16 * k_l0 * a_bytes
    b_tile = -(-plan.n_l0 // 16) * 16 * k_l0 * b_bytes
    return 2 * a_tile > spec.l0a or 2 * b_tile > spec.l0b


def _cube(task: SimTask, op: TileOp, windows: tuple, spec: MachineSpec) -> None:
    a_valid = _as_read(op.inputs[0], windows[0][1])
    b_valid = _as_read(op.inputs[1], windows[1][1])
    plan = op.attrs.get("cube_plan")
    a_t, b_t = op.src.attrs.get("a_trans"), op.src.attrs.get("b_trans")
    m = a_valid[-1] if a_t else a_valid[-2]
    k = a_valid[-2] if a_t else a_valid[-1]
    n = b_valid[-2] if b_t else b_valid[-1]
    if not (m and n and k):
        return
    k0 = spec.cube["k0"].get(op.src.inputs[0].dtype.name[3:].lower(), 16)
    # one MAD per L0 step (an mL0 x nL0 block over a kL0 slice of K), each with its head
    mads = (-(-m // plan.m_l0) * -(-n // plan.n_l0) * -(-k // plan.k_l0)) if plan else 1
    # a 16 x 16 x 16 fractal step per cycle is 4096 MACs: a calibrated (slower) cube rate
    # stretches the steps, the MAD heads stay
    mad_cycles = spec.cube["mad_head_cycles"] * mads + -(-m // 16) * -(-k // k0) * -(-n // 16) \
        * (4096 / spec.cube["mac_per_cycle_fp16"])
    task.cube_cycles += mad_cycles
    a_bytes = bytes_of(op.src.inputs[0].dtype)
    b_bytes = bytes_of(op.src.inputs[1].dtype)
    # every K step moves each mL0 row block of A into L0A and each nL0 column block of B into
    # L0B, as whole fractals: valid rows / columns rounded up to 16, K up to K0 (hw_costs §3)
    k_moved = -(-k // k0) * k0
    if plan is not None:
        a_l0 = k_moved * _fractal_extent(m, plan.m_l0) * a_bytes
        b_l0 = k_moved * _fractal_extent(n, plan.n_l0) * b_bytes
    else:
        a_l0 = k_moved * -(-m // 16) * 16 * a_bytes
        b_l0 = k_moved * -(-n // 16) * 16 * b_bytes
    dma = spec.dma
    task.mte1_bytes += a_l0 + b_l0
    task.mte1_cycles += a_l0 / dma["l1_to_l0a"]["bw"] + b_l0 / dma["l1_to_l0b"]["bw"]
    if plan is not None and _l0_single_buffered(plan, k0, a_bytes, b_bytes, spec):
        # a K step's L0 tile fills more than half of L0A or L0B: it cannot be double
        # buffered (compiler_runtime §3.5: 32 KiB per operand is what enables MTE1 double
        # buffering), so each load waits for the previous step's MADs to free the buffer:
        # the L1 -> L0 pipe is held for the MADs too, and loads and MADs run in turn
        task.mte1_cycles += mad_cycles
    # the L0C drain: one fixpipe pass per mL0 x nL0 accumulator tile (the plan's COPY_OUTs),
    # each its fixed cost plus its FP32 / INT32 rows (hw_costs §1.4: per tile)
    fix = dma["fixpipe"]
    if plan is not None:
        p, (q, tail) = -(-m // plan.m_l0), divmod(n, plan.n_l0)
        rows = q * max(fix["row"], 4 * plan.n_l0 / fix["bw"])
        if tail:
            rows += max(fix["row"], 4 * tail / fix["bw"])
        task.fix_cycles += p * (q + (tail > 0)) * fix["fixed"] + m * rows
    else:
        task.fix_cycles += fix["fixed"] + m * max(fix["row"], 4 * n / fix["bw"])


def _moved(op: TileOp, value, valid: tuple[int, ...], layout: tuple, spec: MachineSpec,
           load: bool) -> float:
    """Bytes a GM transfer of `value`'s box occupies, by the path its core moves it on."""
    if op.core != AIC:
        path = Path.CONTIGUOUS
    elif value.format is TileOpFormat.TILEOP_NZ:
        path = Path.FRACTAL
    else:
        path = Path.ND2NZ if load else Path.NZ2ND
    shape, itemsize = layout
    return transfer_bytes(valid, shape, itemsize, path, spec.dma["shape"])


def add_whole_op(task: SimTask, in_bytes: float, out_bytes: float, spec: MachineSpec,
                 writes: list, reads: list) -> None:
    """A whole op: every input in from GM, one vector pass, the output out to GM (whole
    tensors: long bursts, so they occupy what they carry). `reads` and `writes` hold
    (access, layout) pairs."""
    task.mte2_bytes += in_bytes
    task.mte3_bytes += out_bytes
    task.mte2_moved += in_bytes
    task.mte3_moved += out_bytes
    if out_bytes or in_bytes:
        task.vector_cycles += spec.vector_cycles("binary", max(in_bytes, out_bytes))
    for acc, layout in reads:
        task.reads.append(acc)
        task.read_layouts.append(layout)
    for acc, layout in writes:
        task.writes.append(acc)
        task.write_layouts.append(layout)


def operand_hints(op_values: list[Any]) -> list[dict[str, Any]]:
    """PyPTO-style operand hints: {magic: {shape, dtype, rawmagic}} per tensor."""
    out = []
    for v in op_values:
        shape = [d.value if hasattr(d, "value") else -1 for d in v.shape]
        out.append({v.id: {"shape": shape, "dtype": int(v.dtype), "rawmagic": v.storage.id}})
    return out
