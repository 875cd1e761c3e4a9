"""What every op family shares: the op registry, `emit`, and shape/broadcast/dim helpers.

An op family module defines, per op, the public function (argument checks, shape and dtype
inference, then `emit`) and the numpy semantics (`@register("OPCODE")`). The tracer records what
`emit` is given; the reference and tile executors call the registered compute function, so
tracing and numerics share one definition of every op.

Compute functions receive the *valid* region of each input (sliced by its valid shape, low-
precision floats already widened to FP32) and the op's attributes with every symbolic value
evaluated to an int; they return the valid region of each output. Write ops (assemble, move,
scatter_) receive the destination array and mutate it. An op registered with
`accepts_out=True` may also be given `at["_out"]`, a C-contiguous array of its result's valid
shape whose dtype is that of its (widened) float inputs; it may compute into it and return it
(the same values as without it), so an executor can reuse buffers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from pypto.dtypes import DataType, bytes_of
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError, user_location
from pypto.frontend.tensor import Tensor
from pypto.frontend.tracer import current_tracer, require_tracer
from pypto.ir.tensor import TensorValue
from pypto.symbolic import Const, Expr, SymbolicScalar, as_expr, binary

VECTOR, CUBE, NONE = "vector", "cube", "none"


@dataclass(frozen=True, slots=True)
class OpDef:
    """How to execute one opcode."""

    opcode: str
    compute: Callable[..., Any]
    core: str = VECTOR          # which TileShape the op needs: vector, cube or none
    writes: bool = False        # mutates its destination instead of producing a value
    full_inputs: bool = False   # gets whole input arrays (plus "_valid" attrs), not valid slices
    widen: bool = True          # widen BF16/FP16/FP8 inputs to FP32 before computing
    accepts_out: bool = False   # may compute into at["_out"] (see the module docstring)


REGISTRY: dict[str, OpDef] = {}


def register(opcode: str, *, core: str = VECTOR, writes: bool = False,
             full_inputs: bool = False, widen: bool = True, crop: bool = False,
             accepts_out: bool = False) -> Callable:
    """Register the numpy semantics of `opcode`.

    `crop=True` (elementwise ops with broadcasting) first cuts every input to the output's valid
    extent, dims aligned from the right: operands of one shape may carry different valid
    extents, and the result is computed on the smallest (extent-1 broadcast dims stay 1)."""
    def deco(fn: Callable) -> Callable:
        if opcode in REGISTRY:
            raise RuntimeError(f"opcode {opcode} registered twice")
        compute = _cropping(fn) if crop else fn
        REGISTRY[opcode] = OpDef(opcode, compute, core, writes, full_inputs, widen,
                                 accepts_out)
        return fn
    return deco


def crop_inputs(xs: Sequence[Any], valid: Sequence[int]) -> list[Any]:
    """Cut each array to `valid` (aligned from the right), leaving broadcast (extent-1) dims."""
    out = []
    for x in xs:
        if not isinstance(x, np.ndarray) or x.ndim == 0:
            out.append(x)
            continue
        tail = valid[len(valid) - x.ndim:] if x.ndim <= len(valid) else valid
        key = tuple(slice(0, v) if n != 1 else slice(None) for n, v in zip(x.shape, tail))
        out.append(x[key] if any(n != 1 and n > v for n, v in zip(x.shape, tail)) else x)
    return out


def _cropping(fn: Callable) -> Callable:
    def compute(xs: list, at: dict) -> Any:
        return fn(crop_inputs(xs, at["_out_valid"]), at)
    compute.__name__ = getattr(fn, "__name__", "compute")
    return compute


# --------------------------------------------------------------------------------------------
# Argument helpers

def value_of(t: Any, op: str, what: str = "input") -> TensorValue:
    if isinstance(t, Tensor):
        return t.value
    kind = type(t)
    name = kind.__name__ if kind.__module__ == "builtins" else \
        f"{kind.__module__.split('.')[0]}.{kind.__name__}"
    if current_tracer() is None and hasattr(t, "shape") and hasattr(t, "dtype"):
        raise PyptoTypeError(
            f"pypto.{op} was called on a {name} outside any kernel; pypto ops work on the "
            f"tensors of a @pypto.frontend.jit kernel body while it is traced: pass the "
            f"{name} to a kernel and call pypto.{op} on its parameter there (or use the "
            f"{name.split('.')[0]} function on host data)")
    raise PyptoTypeError(f"{op}: {what} must be a pypto.Tensor, got {name}")


def norm_dim(dim: Any, rank: int, op: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise PyptoTypeError(f"{op}: dim must be an int, got {dim!r}")
    if not -rank <= dim < rank:
        raise PyptoValueError(f"{op}: dim {dim} is out of range for a rank-{rank} tensor")
    return dim % rank


def broadcast_shapes(op: str, *shapes: tuple[Expr, ...]) -> tuple[Expr, ...]:
    """numpy broadcasting, ranks aligned from the right; symbolic dims must match exactly."""
    rank = max(len(s) for s in shapes)
    out: list[Expr] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        big = [d for d in dims if d != Const(1)]
        if not big:
            out.append(Const(1))
            continue
        first = big[0]
        for d in big[1:]:
            if d != first:
                pretty = " and ".join(str([repr(x) for x in s]) for s in shapes)
                raise PyptoValueError(f"{op}: shapes {pretty} cannot be broadcast "
                                      f"(dim {i - rank}: {first!r} vs {d!r})")
        out.append(first)
    return tuple(out)


def broadcast_valid(values: Sequence[TensorValue], shape: tuple[Expr, ...]) -> tuple[Expr, ...]:
    """Valid extent of a broadcast result: the smallest valid extent over the inputs that are
    not broadcast along that dim."""
    rank = len(shape)
    out: list[Expr] = []
    for i in range(rank):
        valid: Expr | None = None
        for v in values:
            j = v.rank - rank + i
            if j < 0 or (v.shape[j] == Const(1) and shape[i] != Const(1)):
                continue
            valid = v.valid_shape[j] if valid is None else binary("min", valid, v.valid_shape[j])
        out.append(valid if valid is not None else shape[i])
    return tuple(out)


def shape_exprs(shape: Any, op: str, what: str = "shape") -> tuple[Expr, ...]:
    if isinstance(shape, (int, SymbolicScalar)):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise PyptoTypeError(f"{op}: {what} must be a list of ints, got {shape!r}")
    out = []
    for d in shape:
        if isinstance(d, (float, bool)) or not isinstance(d, (int, SymbolicScalar, Expr)):
            raise PyptoTypeError(f"{op}: {what} entries must be ints, got {d!r} in {list(shape)}")
        out.append(as_expr(d))
    return tuple(out)


def static_dims(shape: Any, op: str, what: str = "shape") -> tuple[int, ...]:
    dims = shape_exprs(shape, op, what)
    for d in dims:
        if not isinstance(d, Const):
            raise PyptoValueError(f"{op}: {what} must be static ints, got symbolic {d!r} "
                                  f"(pass it as valid_shape instead)")
    return tuple(d.value for d in dims)


# --------------------------------------------------------------------------------------------
# Tile-shape checks (made when the op is recorded, so the error points at the user's line)

def _primary_dtype(inputs: Sequence[TensorValue], outs: Sequence[DataType]) -> DataType:
    for v in inputs:
        if v.dtype is not DataType.DT_BOOL:
            return v.dtype
    return outs[0] if outs else DataType.DT_FP32


def check_vec_tile(op: str, rank: int, dtype: DataType, tile: tuple[int, ...] | None) -> None:
    """`tile` (the vector TileShape in force, `Tracer.tile().vec`) fits an op of `rank`."""
    if tile is None:
        raise PyptoRuntimeError(
            f"{op}: no vector TileShape is set; call pypto.set_vec_tile_shapes(...) with "
            f"{rank} sizes before this op")
    if len(tile) != rank:
        raise PyptoRuntimeError(
            f"{op}: the vector TileShape {list(tile)} has rank {len(tile)} but the op's "
            f"tensors have rank {rank}; call pypto.set_vec_tile_shapes with {rank} sizes")
    size = bytes_of(dtype)
    if (tile[-1] * size) % 32:
        align = int(32 // size) if size <= 32 else 1
        legal = max(align, (tile[-1] // align) * align)
        raise PyptoRuntimeError(
            f"{op}: the last tile dim {tile[-1]} x {size} B ({dtype.name}) is not a multiple of "
            f"32 B; the tileShape of the last axis must be 32-byte aligned (e.g. {legal})")


def check_cube_tile(op: str, tile: Any) -> None:
    """A cube TileShape (`Tracer.tile().cube`) is set."""
    if tile is None:
        raise PyptoRuntimeError(
            f"{op}: no cube TileShape is set; call pypto.set_cube_tile_shapes([mL0, mL1], "
            f"[kL0, kL1], [nL0, nL1]) before matmul (e.g. [128,128],[64,256],[256,256])")


# --------------------------------------------------------------------------------------------
# Emitting

OutSpec = tuple[tuple[Expr, ...], DataType, tuple[Expr, ...]]


def emit(opcode: str, inputs: Sequence[TensorValue], outs: Sequence[OutSpec],
         attrs: dict[str, Any] | None = None, *, tile_rank: int | None = None,
         name: str = "", op: str | None = None) -> list[Tensor]:
    """Record `opcode` in the current block and return the new result tensors. `op` is the
    public op name used in error messages (default: the opcode in lower case)."""
    op = op or opcode.lower()
    tracer = require_tracer(op)
    opdef = REGISTRY[opcode]
    loc = user_location()
    in_vals = tuple(inputs)
    tile = tracer.tile()
    if opdef.core == VECTOR:
        rank = tile_rank if tile_rank is not None else (
            in_vals[0].rank if in_vals else len(outs[0][0]))
        check_vec_tile(op, rank, _primary_dtype(in_vals, [o[1] for o in outs]), tile.vec)
    elif opdef.core == CUBE:
        check_cube_tile(op, tile.cube)
    op_id = tracer.next_id()
    results = tuple(tracer.new_value(shape, dtype, valid, name=name, producer=op_id)
                    for shape, dtype, valid in outs)
    tracer.record(opcode, in_vals, results, dict(attrs or {}), loc, tile)
    return [Tensor._wrap(v) for v in results]


def emit1(opcode: str, inputs: Sequence[TensorValue], shape: tuple[Expr, ...], dtype: DataType,
          valid: tuple[Expr, ...], attrs: dict[str, Any] | None = None, **kw: Any) -> Tensor:
    return emit(opcode, inputs, [(shape, dtype, valid)], attrs, **kw)[0]


def emit_write(opcode: str, dst: TensorValue, inputs: Sequence[TensorValue],
               attrs: dict[str, Any] | None = None, *, tile_rank: int | None = None,
               op: str | None = None) -> None:
    """Record a write into `dst`'s storage (assemble, move, scatter_)."""
    op = op or opcode.lower()
    tracer = require_tracer(op)
    opdef = REGISTRY[opcode]
    loc = user_location()
    tile = tracer.tile()
    if opdef.core == VECTOR:
        rank = tile_rank if tile_rank is not None else dst.rank
        check_vec_tile(op, rank, dst.dtype, tile.vec)
    tracer.record(opcode, tuple(inputs), (dst,), dict(attrs or {}), loc, tile)
