"""`bounds.before_scheduling` on the stitched tasks' columns (`machine.task_table.TaskTable`):
the same number, without a Python object per task or per box.

The tuner bounds every setting before simulating it; at model size the object form took as
long as the call (glm attention, 8,192 tasks: ~170 ms). `bounds.py` stays the definition;
tests/profiling/test_table_bounds.py holds the two equal on kernels and random tables:
- the roofline's cube and vector terms are masked sums;
- the compulsory bytes cut every distinct GM box into its contiguous runs of elements (dims k.. of a
  box are one run, k its first dim from the right not covered whole, as `bounds.union_bytes`)
  with one mixed-radix count over all boxes of a rank, put each storage's runs in an address
  range of its own, and take the union of all runs in one sort;
- the heaviest path walks the rows once: the stitcher lists every task after its
  predecessors.
"""
from __future__ import annotations

import numpy as np

from pypto.machine.memory import l2_kept
from pypto.machine.spec import MachineSpec
from pypto.machine.task_table import TaskTable
from pypto.profiling import bounds
from pypto.profiling.bounds import HBM_SHARE


def before_scheduling(table: TaskTable, spec: MachineSpec) -> float:
    """`bounds.before_scheduling` of the table's tasks (microseconds)."""
    c = table.columns
    aic = c["kind"] == 0
    # (Python's sum, in row order: the object form's rounding)
    cube = sum(c["cube_cycles"][aic].tolist())
    vector = sum(c["vector_cycles"][~aic].tolist())
    nbytes = compulsory_bytes(c, l2_kept(spec.memory))
    try:
        chain = heaviest_path(c, np.maximum(c["cube_cycles"], c["vector_cycles"]))
    except ValueError:   # rows out of dependency order: the object form sorts them
        return bounds.before_scheduling(table.tasks(), spec)
    cycles = max(cube / spec.aic, vector / spec.aiv, chain,
                 HBM_SHARE * nbytes / spec.memory["hbm_bytes_per_cycle"])
    return cycles / spec.clock_mhz


def compulsory_bytes(c: dict, l2_capacity: float) -> float:
    """`bounds.tasks_compulsory_bytes` of the columns."""
    read_sids = np.unique(c["read_storage"])
    write_sids = np.unique(c["write_storage"])
    inputs = _union_bytes(c, "read", np.setdiff1d(read_sids, write_sids))
    outputs = _union_bytes(c, "write", np.setdiff1d(write_sids, read_sids))
    return inputs + max(0.0, outputs - l2_capacity)


def _union_bytes(c: dict, prefix: str, storages: np.ndarray) -> float:
    """Bytes of the union of the `prefix` boxes of each of `storages`, summed."""
    sid = c[f"{prefix}_storage"]
    dim_ptr = c[f"{prefix}_dim_ptr"]
    rank = np.diff(dim_ptr)
    keep = np.isin(sid, storages)
    starts, lengths, sizes = [], [], []
    base = _address_ranges(c, prefix)
    for r in np.unique(rank[keep]):
        boxes = np.flatnonzero(keep & (rank == r))
        if r == 0:
            continue
        dims = dim_ptr[boxes][:, None] + np.arange(r)
        offs, ext = c[f"{prefix}_offs"][dims], c[f"{prefix}_ext"][dims]
        shape = c[f"{prefix}_shape"][dims]
        # each distinct box once (a loop's instances touch the same few boxes over and over)
        rows = np.ascontiguousarray(np.column_stack([sid[boxes], offs, ext, shape]))
        _, first = np.unique(rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))),
                             return_index=True)
        keep_box = np.zeros(len(boxes), bool)
        keep_box[first] = True
        keep_box &= (ext > 0).all(axis=1)
        offs, ext, shape, boxes = offs[keep_box], ext[keep_box], shape[keep_box], boxes[keep_box]
        s, n, size = _runs(offs, ext, shape)
        owner = np.repeat(np.arange(len(boxes)), size)
        starts.append(s + base[boxes][owner])
        lengths.append(n[owner])
        sizes.append(c[f"{prefix}_itemsize"][boxes][owner])
    if not starts:
        return 0.0
    s, e = np.concatenate(starts), np.concatenate(starts) + np.concatenate(lengths)
    size = np.concatenate(sizes)
    order = np.argsort(s, kind="stable")
    s, e, size = s[order], e[order], size[order]
    covered_to = np.maximum.accumulate(e)
    before = np.concatenate(([s[0]], covered_to[:-1]))
    return float((np.maximum(0, e - np.maximum(s, before)) * size).sum())


def _address_ranges(c: dict, prefix: str) -> np.ndarray:
    """Per box, the start of its storage's address range: storages laid end to end, each as
    long as the largest tensor any of its boxes names, so no two storages' runs overlap."""
    sid = c[f"{prefix}_storage"]
    dim_ptr = c[f"{prefix}_dim_ptr"]
    shape = c[f"{prefix}_shape"]
    # elements of each box's tensor: the product of its shape's dims
    numel = np.ones(len(sid), np.int64)
    if len(shape):
        np.multiply.at(numel, np.repeat(np.arange(len(sid)), np.diff(dim_ptr)), shape)
    ids, inverse = np.unique(sid, return_inverse=True)
    span = np.zeros(len(ids), np.int64)
    np.maximum.at(span, inverse, numel)
    start = np.concatenate(([0], np.cumsum(span)[:-1]))
    return start[inverse]


def _runs(offs: np.ndarray, ext: np.ndarray, shape: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per box (rows of one rank): its contiguous runs' starts (all boxes' runs, in box order),
    each box's run length and how many runs it has (elements, row-major in its tensor)."""
    nb, r = ext.shape
    strides = np.ones((nb, r), np.int64)
    for d in range(r - 2, -1, -1):
        strides[:, d] = strides[:, d + 1] * shape[:, d + 1]
    partial = ext != shape
    # k: the last dim not covered whole (0 when every dim is), as bounds.union_bytes
    k = np.where(partial.any(axis=1), r - 1 - np.argmax(partial[:, ::-1], axis=1), 0)
    rows = np.arange(nb)
    length = ext[rows, k] * strides[rows, k]
    radix = np.where(np.arange(r)[None, :] < k[:, None], ext, 1)
    count = radix.prod(axis=1)
    first = (offs * strides).sum(axis=1)
    owner = np.repeat(rows, count)
    local = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    start = first[owner]
    for d in range(r - 1, -1, -1):
        digit = local % radix[owner, d]
        local //= radix[owner, d]
        start += digit * strides[owner, d]
    return start, length, count


def heaviest_path(c: dict, weight: np.ndarray) -> float:
    """`bounds.longest_path`'s weight: per window the heaviest dependency path (predecessors
    in the same window only), summed over windows. Rows are in dependency order (checked:
    a table that is not raises ValueError)."""
    ptr_a, preds_a = c["pred_ptr"], c["preds"]
    rows = np.repeat(np.arange(len(weight)), np.diff(ptr_a))
    if not (c["id"] == np.arange(len(weight))).all() or (preds_a >= rows).any():
        raise ValueError("the table's rows are not its task ids in dependency order")
    ptr, preds = c["pred_ptr"].tolist(), c["preds"].tolist()
    window = c["window"].tolist()
    w = weight.tolist()
    best = [0.0] * len(w)
    per_window: dict[int, float] = {}
    for i in range(len(w)):
        before = 0.0
        here_window = window[i]
        for p in preds[ptr[i]:ptr[i + 1]]:
            if window[p] == here_window and best[p] > before:
                before = best[p]
        best[i] = here = before + w[i]
        if here > per_window.get(here_window, 0.0):
            per_window[here_window] = here
    return sum(per_window.values())
