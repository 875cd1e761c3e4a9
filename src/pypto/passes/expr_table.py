"""Expression-table budget: warn when a TileShape is so small that a root function needs too many
runtime expressions (compiler_runtime.md §2.7).

Every tile of an op carries symbolic offsets and valid extents that the AICPU evaluates per root
instance. PyPTO's guidance is prod(ceil(S_i / T_i)) * (1 + #inputs) < 18000, where S is the
tensor the op is tiled over and T its TileShape. Takes a traced `Program` → one `PyptoWarning`
per op at or over the budget, attributed to the op's source line, with the count, the TileShape
and a bigger TileShape that fits. Nothing is changed; the kernel still compiles and runs.

Which tensor an op is tiled over: for a vector op the largest static input/output of the
TileShape's rank (the input of a reduction, the broadcast output of an elementwise op); for a
matmul the output, on its (mL1, nL1) blocks. Ops with no TileShape of their own (views,
reshapes, assembles: they fold into, or follow, their neighbours' tiles) are not counted, and
symbolic dims count as one tile.
"""
from __future__ import annotations

import warnings

from pypto.errors import PyptoWarning
from pypto.ir.operation import Operation
from pypto.ir.program import Program
from pypto.ir.tensor import TensorValue
from pypto.ops.core import CUBE, REGISTRY, VECTOR
from pypto.symbolic import Const

LIMIT = 18000


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _static_dims(v: TensorValue) -> tuple[int, ...]:
    """The shape with each symbolic dim as 0 (it counts as one tile)."""
    return tuple(d.value if isinstance(d, Const) else 0 for d in v.shape)


def _tiles(shape: tuple[int, ...], tile: tuple[int, ...]) -> int:
    n = 1
    for s, t in zip(shape, tile):
        n *= _ceil(s, t) if s > 0 else 1
    return n


def entries(op: Operation) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """(table entries, tensor shape, tile) of `op`, or None when the op has no own tiling."""
    kind = REGISTRY[op.opcode].core if op.opcode in REGISTRY else None
    if kind == CUBE and op.tile.cube is not None and op.outputs:
        shape = _static_dims(op.outputs[0])
        if len(shape) < 2:
            return None
        tile = (1,) * (len(shape) - 2) + (op.tile.cube.m[1], op.tile.cube.n[1])
    elif kind == VECTOR and op.tile.vec:
        tile = tuple(op.tile.vec)
        candidates = [_static_dims(v) for v in op.inputs + op.outputs if v.rank == len(tile)]
        if not candidates:
            return None
        shape = max(candidates, key=lambda s: _tiles(s, tile))
    else:
        return None
    return _tiles(shape, tile) * (1 + len(op.inputs)), shape, tile


def _bigger(shape: tuple[int, ...], tile: tuple[int, ...], n_inputs: int) -> list[int]:
    """Double tile dims, innermost first and never past the tensor, until the count fits."""
    t = list(tile)
    while _tiles(shape, tuple(t)) * (1 + n_inputs) >= LIMIT:
        for i in reversed(range(len(t))):
            if shape[i] > t[i]:
                t[i] = min(t[i] * 2, shape[i])
                break
        else:
            break
    return t


def _advice(op: Operation, shape: tuple[int, ...], tile: tuple[int, ...]) -> str:
    better = _bigger(shape, tile, len(op.inputs))
    if op.tile.cube is not None and REGISTRY[op.opcode].core == CUBE:
        cube = op.tile.cube
        return (f"cube TileShape m={list(cube.m)}, n={list(cube.n)}; try larger mL1/nL1 "
                f"(e.g. mL1={better[-2]}, nL1={better[-1]}) in set_cube_tile_shapes")
    return (f"TileShape {list(tile)}; try a bigger tile, e.g. "
            f"set_vec_tile_shapes({', '.join(map(str, better))})")


def check_expression_table(program: Program) -> None:
    """Warn once per op of `program` whose expression-table entries reach `LIMIT`."""
    for block in program.blocks():
        for op in block.ops:
            found = entries(op)
            if found is None or found[0] < LIMIT:
                continue
            count, shape, tile = found
            dims = [s if s else "?" for s in shape]
            msg = (f"{op.opcode.lower()}: {_tiles(shape, tile)} tiles of {dims} x (1 + "
                   f"{len(op.inputs)} inputs) = {count} expression-table entries, at or over "
                   f"the budget of {LIMIT} (slow compilation, runtime overhead); "
                   f"{_advice(op, shape, tile)}")
            if op.loc is not None:
                warnings.warn_explicit(f"{msg} [at {op.loc}]", PyptoWarning, op.loc.file,
                                       op.loc.line)
            else:
                warnings.warn(msg, PyptoWarning, stacklevel=2)
