"""Writes into an existing tensor's storage: assemble (a region of `dst` takes `src`), move
(`dst[:] = src`), atomic_add (a region of `dst` accumulates `src`) and set_element (`t[i, j] = v`),
plus `write_region`, the run-time bounds check of a region written at symbolic offsets.

Its own module because these ops mutate their destination in program order (registered with
`writes=True`) where every other shape op produces a new value; the executors share
`write_region` to place their own writes the same way.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pypto.dtypes import DataType
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from pypto.ir.tensor import TensorValue
from pypto.ops.core import NONE, emit_write, register, shape_exprs, value_of
from pypto.ops.shape import check_window
from pypto.symbolic import Const, Expr, SymbolicScalar


def write_region(what: str, src: np.ndarray, dst: np.ndarray, at: dict) -> tuple:
    """The slices of `dst` that `src` lands on at `at["offsets"]`; a region reaching outside
    the destination is an error naming the dim."""
    region = []
    for d, (o, n, size) in enumerate(zip(at["offsets"], src.shape, dst.shape)):
        if n and (o < 0 or o + n > size):
            raise PyptoRuntimeError(f"{what} [{o}, {o + n}) of dim {d}, outside the "
                                    f"destination (size {size})", at.get("_loc"))
        region.append(slice(o, o + n))
    return tuple(region)


@register("ASSEMBLE", core=NONE, writes=True, widen=False)
def _assemble_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    src = xs[0]
    dst[write_region("assemble writes", src, dst, at)] = src


def assemble(src: Any, offsets: Any = None, dst: Any = None, parallel: bool = False) -> None:
    """Copy `src` (its valid region) into `dst` at `offsets`. Also `assemble([(src, offs),
    ...], dst)`. Returns None."""
    if isinstance(src, (list, tuple)) and dst is None:
        pairs, dst = src, offsets
        for item in pairs:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise PyptoTypeError("assemble: expected a list of (src, offsets) pairs")
            assemble(item[0], item[1], dst, parallel)
        return None
    s, d = value_of(src, "assemble", "src"), value_of(dst, "assemble", "dst")
    offs = shape_exprs(offsets, "assemble", "offsets")
    if s.rank != d.rank or len(offs) != d.rank:
        raise PyptoValueError(f"assemble: src rank {s.rank}, dst rank {d.rank} and "
                              f"{len(offs)} offsets must all match")
    if s.dtype != d.dtype:
        raise PyptoTypeError(f"assemble: src dtype {s.dtype.name} != dst dtype {d.dtype.name}")
    # The written extent is src's valid region; a symbolic one is checked when the op runs.
    sizes = [x.value if isinstance(x, Const) else 0 for x in s.valid_shape]
    check_window("assemble", d, offs, sizes)
    emit_write("ASSEMBLE", d, [s], {"offsets": offs, "parallel": bool(parallel)})
    return None


def move(dst: Any, src: Any) -> None:
    """`dst[:] = src` / `dst.move(src)`: `dst` takes `src`'s data (same shape and dtype)."""
    d, s = value_of(dst, "move", "destination"), value_of(src, "move", "source")
    if s.dtype != d.dtype:
        raise PyptoTypeError(f"move: source dtype {s.dtype.name} != destination dtype "
                             f"{d.dtype.name}; cast it first")
    if s.rank != d.rank or any(isinstance(a, Const) and isinstance(b, Const) and a != b
                               for a, b in zip(s.shape, d.shape)):
        raise PyptoValueError(f"move: source shape {[repr(x) for x in s.shape]} does not "
                              f"match destination shape {[repr(x) for x in d.shape]} "
                              f"(t[:] = v replaces the whole tensor; it does not broadcast)")
    emit_write("ASSEMBLE", d, [s], {"offsets": tuple(Const(0) for _ in d.shape), "move": True})


@register("ATOMIC_ADD", core=NONE, writes=True)
def _atomic_add_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    src = xs[0]
    key = write_region("atomic_add adds into", src, dst, at)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.issubdtype(dst.dtype, np.integer):
            dst[key] = (dst[key].astype(np.int64) + src.astype(np.int64)).astype(dst.dtype)
        else:
            dst[key] = (dst[key].astype(np.float32) + src.astype(np.float32)).astype(dst.dtype)


_ATOMIC_ADD_DTYPES = (DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16, DataType.DT_INT8,
                      DataType.DT_INT16, DataType.DT_INT32)


def atomic_add(src: Any, offsets: Any, dst: Any) -> None:
    """dst[offsets[0]:offsets[0] + n0, ...] += src, in `dst`'s storage. Returns None.

    Like `assemble`, the region is `src`'s valid region placed at `offsets` (ints or
    SymbolicScalars, one per dim); `src` and `dst` have the same rank and dtype (DT_FP32,
    DT_FP16, DT_BF16, DT_INT8, DT_INT16 or DT_INT32). Floats are added in FP32 and rounded once
    to `dst`'s dtype; integers wrap on overflow. The region must lie inside `dst`: statically
    known offsets are checked while tracing, symbolic ones when the op runs. The caller keeps
    `dst`'s valid shape right, and the region of `dst` must hold data before the add. Additions
    run in program order, so overlapping adds from several loop iterations all accumulate."""
    op = "atomic_add"
    s, d = value_of(src, op, "src"), value_of(dst, op, "dst")
    offs = shape_exprs(offsets, op, "offsets")
    if s.rank != d.rank or len(offs) != d.rank:
        raise PyptoValueError(f"{op}: src rank {s.rank}, dst rank {d.rank} and {len(offs)} "
                              f"offsets must all match")
    if s.dtype != d.dtype:
        raise PyptoTypeError(f"{op}: src dtype {s.dtype.name} != dst dtype {d.dtype.name}")
    if d.dtype not in _ATOMIC_ADD_DTYPES:
        raise PyptoTypeError(f"{op}: dst dtype {d.dtype.name} is not supported (DT_FP32, DT_FP16, "
                             f"DT_BF16, DT_INT8, DT_INT16 or DT_INT32)")
    sizes = [x.value if isinstance(x, Const) else 0 for x in s.valid_shape]
    check_window(op, d, offs, sizes)
    emit_write("ATOMIC_ADD", d, [s], {"offsets": offs}, op=op)
    return None


@register("SET_ELEMENT", core=NONE, writes=True, widen=False)
def _set_element_compute(dst: np.ndarray, xs: list, at: dict) -> None:
    index = tuple(int(i) for i in at["index"])
    if any(not 0 <= i < n for i, n in zip(index, dst.shape)):
        # a symbolic index is known only now; numpy would wrap a negative one
        raise PyptoRuntimeError(f"t[i, j] = v: index {list(index)} is outside the tensor's "
                                f"shape {list(dst.shape)}", at.get("_loc"))
    dst[index] = at["scalar"]


def set_element(t: TensorValue, index: Sequence[Expr], value: Any) -> None:
    if isinstance(value, SymbolicScalar):
        value = value.expr
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PyptoTypeError(f"t[i, j] = v needs a scalar v, got {type(value).__name__}")
    emit_write("SET_ELEMENT", t, [], {"index": tuple(index), "scalar": value})
