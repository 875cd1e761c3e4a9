"""Tile-op numerics: what one tile op computes, on the task's local buffers and GM.

Takes tile ops with the windows evaluated for this instance -> their results in the task's
local buffers (full-shape, zero outside what the task wrote) and, for values other tasks read,
in GM. A tile op reads an input region from the local buffer when every tile that produced it
ran in the same task, and from GM otherwise, so a missing dependency, a wrong region or a
forgotten copy-out gives a wrong answer, which the tests compare against the reference
executor.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.dtypes import compute_dtype, is_low_precision, to_numpy
from pypto.errors import PyptoRuntimeError
from pypto.ops.core import REGISTRY
from pypto.passes.tile_graph import Region, TileOp
from pypto.runtime.call_state import CallState
from pypto.runtime.plan import ExecutionPlan


# NOTE: whole-value result buffers outlive a run, up to this many bytes per compiled program:
# a warm call then computes its large results in them instead of page-faulting fresh memory
# (a third of a 1024x4096 softmax's run). They live in the execution plan (plan.spares).
_SPARE_BYTES = 64 << 20


class TileNumerics:
    """The numerics of tile ops on one call's state, with their buffers: a pool of zeroed
    local buffers and the plan's spare result buffers. The tile executor holds one.
    `fault` (pypto.testing.faults) sees every tile result and may spoil one, so the tests can
    prove the executors' cross-check catches that kind of bug."""

    def __init__(self, state: CallState, plan: ExecutionPlan, fault: Any = None):
        self.state, self.plan, self.fault = state, plan, fault
        # NOTE: local buffers are full-shape and zero outside what the task wrote. Allocating
        # them per task cost 0.5 ms each at 1024x4096 (np.zeros of 16 MB, 7 per softmax task);
        # instead each task takes them from a pool and zeroes only the windows it wrote.
        self._pool: dict[tuple, list[np.ndarray]] = {}
        # NOTE: whole-value results whose last reader ran: an op that accepts an output buffer
        # computes its next whole result of that shape in one (no page faults, see compute);
        # kept for the next run of the program too (see _SPARE_BYTES)
        self._spares = plan.spares
        # NOTE: per-run caches (shapes and layouts depend on the bindings): the static facts
        # of each tile op's numerics, and the numpy index of each window
        self._op_runs: dict[int, _OpRun] = {}
        self._cuts: dict[tuple, tuple] = {}
        self._boxes: dict[tuple, tuple] = {}

    def keep_spares(self) -> None:
        """Keep at most _SPARE_BYTES of spare result buffers for the next run."""
        self._spares.trim(_SPARE_BYTES)

    def run(self, ops: list, windows: list, escaping: set[int],
            deaths: list | None = None) -> None:
        """Run tile ops with one set of local buffers; `deaths[k]`: the local values nothing
        after op k reads, released right after it (their memory is then reused: a fresh
        16 MB buffer costs more in page faults than the arithmetic that fills it)."""
        local: dict[int, np.ndarray] = {}
        dirty: dict[int, list] = {}
        for k, (op, w) in enumerate(zip(ops, windows)):
            if op.kind == "copy_out":
                self.copy_out(op, local, w)
            else:
                self.compute(op, local, escaping, w, dirty)
            if deaths is not None and deaths[k]:
                self.release(local, dirty, deaths[k])
        self.release(local, dirty, list(local))

    def release(self, local: dict, dirty: dict, vids: list) -> None:
        """Give up local values `vids`: pooled buffers are zeroed where written and pooled."""
        for vid in vids:
            arr = local.pop(vid, None)
            if arr is None:
                continue
            windows = dirty.pop(vid, ())
            if windows is None:   # a whole result: the next one of its shape is computed in it
                self._spares.give(arr)
                continue
            for window in windows:
                arr[window] = 0
            self._pool.setdefault((arr.shape, arr.dtype), []).append(arr)

    def _cut(self, offs: tuple[int, ...], valid: tuple[int, ...],
             shape: tuple[int, ...]) -> tuple:
        """(numpy index of the window clipped to `shape`, whether nothing was clipped)."""
        key = (offs, valid, shape)
        cut = self._cuts.get(key)
        if cut is None:
            index = tuple(slice(min(o, n), min(o + v, n)) for o, v, n in zip(offs, valid, shape))
            cut = self._cuts[key] = (index, all(o + v <= n for o, v, n in
                                                zip(offs, valid, shape)))
        return cut

    def _box(self, offs: tuple[int, ...], extents: tuple[int, ...]) -> tuple:
        """The numpy index of a window (cached: tasks write the same few windows)."""
        key = (offs, extents)
        box = self._boxes.get(key)
        if box is None:
            box = self._boxes[key] = tuple(slice(o, o + n) for o, n in zip(offs, extents))
        return box

    def _read(self, region: Region, from_local: bool, local: dict, op: TileOp,
              offs: tuple[int, ...], valid: tuple[int, ...]) -> np.ndarray:
        arr = local[region.value.id] if from_local else \
            self.state.array_of(region.value, op.src)
        cut = self._cuts.get((offs, valid, arr.shape)) or self._cut(offs, valid, arr.shape)
        got = arr[cut[0]]
        if not cut[1]:  # a view reaching past the physical edge reads zeros
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
            shape, dtype = self.state.shape(v.shape), np.dtype(to_numpy(v.dtype))
            free = self._pool.get((shape, dtype))
            arr = free.pop() if free else np.zeros(shape, dtype=dtype)
            local[v.id] = arr
        return arr

    def attrs(self, op: TileOp) -> dict:
        """The tile op's attributes (its tensor op's, then its own) with expressions
        evaluated (the plan keeps them when none is symbolic)."""
        static = self.plan.static_attrs(op)
        if static is not None:
            return static
        attr = self.state.attr
        attrs = {k: attr(a) for k, a in op.src.attrs.items()}
        attrs.update({k: attr(a) for k, a in op.attrs.items()})
        return attrs

    def compute(self, op: TileOp, local: dict, escaping: set[int], windows: tuple,
                dirty: dict) -> None:
        """One compute tile op: its result into the task's local buffer (and GM when other
        tasks read it)."""
        run = self._op_runs.get(id(op))
        if run is None:
            run = self._op_runs[id(op)] = _OpRun(op)
        arrays = []
        for r, from_local, (offs, valid), widen in zip(op.inputs, op.local_inputs, windows,
                                                       run.widen):
            a = self._read(r, from_local, local, op, offs, valid)
            arrays.append(a.astype(widen) if widen is not None else a)
        out = op.output
        offs, out_valid = windows[-1]
        attrs = self.attrs(op)
        attrs["_in_valid"] = [a.shape for a in arrays]
        attrs["_out_valid"] = out_valid
        attrs["_loc"] = op.src.loc
        whole = out.value.id not in local and not any(offs) \
            and out_valid == self.state.shape(out.value.shape)
        result = self._result(op, run, arrays, attrs, whole)
        if self.fault is not None:
            result = self.fault.apply(op, arrays, attrs, result, offs,
                                      self.state.shape(out.value.shape), run.compute)
        self._keep(op, result, arrays, local, dirty, whole, offs, out_valid)
        if out.value.id in escaping:
            self.state.gm(out.value)[self._box(offs, out_valid)] = result

    def _result(self, op: TileOp, run: "_OpRun", arrays: list, attrs: dict,
                whole: bool) -> np.ndarray:
        """The tile op's result, of its valid extents and stored type."""
        out_valid = attrs["_out_valid"]
        spare = None
        if 0 in out_valid:
            result = np.zeros(out_valid, dtype=run.target)
        else:
            if whole and run.accepts_out:
                spare = self._spares.take(out_valid, run.target)
                if spare is not None:
                    attrs["_out"] = spare
            result = run.compute(arrays, attrs)
            if op.kind == "combine" and "mean_count" in attrs:
                result = np.asarray(result) / np.float32(attrs["mean_count"])
            if type(result) is not np.ndarray:
                result = np.asarray(result)
        if spare is not None and result is not spare:
            self._spares.give(spare)
        if result.shape != out_valid:
            raise PyptoRuntimeError(f"internal: tile {op.opcode} produced {list(result.shape)}"
                                    f", expected {list(out_valid)}", op.src.loc)
        if result.dtype != run.target:
            with np.errstate(all="ignore"):
                result = result.astype(run.target)
        return result

    def _keep(self, op: TileOp, result: np.ndarray, arrays: list, local: dict, dirty: dict,
              whole: bool, offs: tuple[int, ...], out_valid: tuple[int, ...]) -> None:
        """`result` into the task's local buffer of the op's output."""
        out, vid = op.output, op.output.value.id
        window = self._boxes.get((offs, out_valid)) or self._box(offs, out_valid)
        if whole and result.flags.owndata and result.flags.c_contiguous \
                and not any(np.may_share_memory(result, a) for a in arrays):
            # NOTE: a fresh result covering the whole value (a batch over all its tiles)
            # becomes the local buffer itself instead of being copied into a pooled one
            local[vid] = result
            dirty[vid] = None   # a spare once released (see release)
        else:
            target = local.get(vid)
            if target is None:
                target = self._target(out, local)
            target[window] = result
            written = dirty.setdefault(vid, [])
            if written is not None:
                written.append(window)

    def copy_out(self, op: TileOp, local: dict, windows: tuple) -> None:
        """A copy-out tile op: the task's local value assembled into its GM destination."""
        data = self._read(op.inputs[0], op.local_inputs[0], local, op, *windows[0])
        if is_low_precision(op.inputs[0].value.dtype) and data.dtype != to_numpy(
                op.inputs[0].value.dtype):
            data = data.astype(to_numpy(op.inputs[0].value.dtype))
        dst = self.state.destination(op.output.value, op.src)
        offsets = windows[1][0]
        REGISTRY["ASSEMBLE"].compute(dst, [data], {"offsets": offsets, "_loc": op.src.loc})
        self.state.written.add(op.output.value.storage.id)


class _OpRun:
    """The static facts of one tile op's numerics: its compute function (and whether it may
    compute into a given buffer), the type each input is widened to (None: as stored) and the
    type its result is stored in."""

    __slots__ = ("compute", "accepts_out", "widen", "target")

    def __init__(self, op: TileOp):
        opdef = REGISTRY[op.opcode]
        self.compute = opdef.compute
        self.accepts_out = opdef.accepts_out
        self.widen = tuple(compute_dtype(r.value.dtype)
                           if opdef.widen and is_low_precision(r.value.dtype) else None
                           for r in op.inputs)
        self.target = to_numpy(op.output.value.dtype)
