"""On-chip capacity checks, made before anything runs.

Takes a `TileGraph` → raises a `pypto` error for the first tile op that cannot fit, naming the
op, its source line, its TileShape, the bytes needed against the buffer size, and a smaller
TileShape that fits. Vector tiles live in UB: every tile must fit (the "Alloc" check) and one
op's distinct buffers must fit together (the "op in/out" check; an output may reuse an input
of the same size, so a binary op needs two buffers). Cube tiles must satisfy the L0A/L0B/L0C/L1
limits of the cube TileShape (compiler_runtime 3.2). The limits are those of the TileShape, not
of the (possibly clipped) block: a split-K chunk op holds at most min(kAL1, kBL1) of K in L1,
within the checked kAL1/kBL1 sizes, and its partial-sum adds are vector ops checked against UB.
"""
from __future__ import annotations

from pypto.dtypes import bytes_of
from pypto.errors import PyptoRuntimeError
from pypto.machine.spec import MachineSpec
from pypto.passes.kinds import AIC, COPY_OUT, WHOLE
from pypto.passes.tile_graph import TileGraph, TileOp


def _op_bytes(op: TileOp) -> tuple[int, int]:
    """(largest single buffer, distinct buffers of the op together) in bytes."""
    sizes = [r.nbytes for r in op.inputs]
    out = op.output.nbytes if op.output is not None and op.kind is not COPY_OUT else 0
    largest = max(sizes + [out]) if sizes or out else 0
    total = sum(sizes)
    if out and out not in sizes:
        total += out
    return largest, total


def _suggest(tile: tuple[int, ...], scale: float, dtype_bytes: float) -> list[int]:
    """Halve dims (leading dims first, keeping the last dim 32-byte aligned) until the tile
    shrinks by `scale`."""
    t = list(tile)
    align = max(1, int(32 // dtype_bytes)) if dtype_bytes else 1
    need = scale
    while need > 1.0:
        for i in range(len(t)):
            if i < len(t) - 1 and t[i] > 1:
                t[i] = max(1, t[i] // 2)
                break
            if i == len(t) - 1 and t[i] // 2 >= align:
                t[i] //= 2
                break
        else:
            break
        need /= 2
    return t


def _buffers(op: TileOp) -> tuple:
    """What `_op_bytes` depends on: the shape and dtype of each buffer of the op."""
    out = op.output
    return (tuple((r.shape, r.value.dtype) for r in op.inputs),
            (out.shape, out.value.dtype) if out is not None and op.kind is not COPY_OUT else None)


def check_capacity(graph: TileGraph, spec: MachineSpec) -> None:
    fitting: set[tuple] = set()   # vector buffer layouts found to fit (tiles repeat them)
    for op in graph.ops:
        if op.kind is WHOLE or op.kind is COPY_OUT:
            continue
        if op.core is AIC:
            _check_cube(op, spec)
            continue
        layout = _buffers(op)
        if layout in fitting:
            continue
        largest, total = _op_bytes(op)
        ub = spec.ub
        if largest > ub or total > ub:
            what = "a tile needs" if largest > ub else "the op's input/output tiles together need"
            need = largest if largest > ub else total
            tile = op.src.tile.vec or ()
            dtype = op.inputs[0].value.dtype if op.inputs else op.output.value.dtype
            suggestion = _suggest(tuple(tile), need / ub, bytes_of(dtype))
            raise PyptoRuntimeError(
                f"{op.src.opcode.lower()}: {what} {need} bytes but UB holds {ub} "
                f"(TileShape {list(tile)}); try set_vec_tile_shapes"
                f"({', '.join(map(str, suggestion))})", op.src.loc)
        fitting.add(layout)


def _ca(x: int, a: int) -> int:
    return -(-x // a) * a


def _check_cube(op: TileOp, spec: MachineSpec) -> None:
    cube = op.src.tile.cube
    a, b = op.src.inputs[0].dtype, op.src.inputs[1].dtype
    out = op.src.outputs[0].dtype
    align = 32 if bytes_of(a) == 1 else 16
    sa, sb = bytes_of(a), bytes_of(b)
    sc = 4  # fp32 / int32 accumulators
    (m0, m1), (k0, k1, k1b), (n0, n1) = cube.m, cube.k, cube.n
    checks = [
        ("L0A", _ca(m0, align) * _ca(k0, align) * sa, spec.l0a, "mL0 x kL0"),
        ("L0B", _ca(n0, align) * _ca(k0, align) * sb, spec.l0b, "nL0 x kL0"),
        ("L0C", _ca(m0, align) * _ca(n0, align) * sc, spec.l0c, "mL0 x nL0"),
        ("L1", _ca(m1, align) * _ca(k1, align) * sa + _ca(n1, align) * _ca(k1b, align) * sb,
         spec.l1, "mL1 x kL1 + nL1 x kL1"),
    ]
    for level, need, cap, what in checks:
        if need > cap:
            raise PyptoRuntimeError(
                f"matmul: cube tile {what} needs {need} bytes of {level} but it holds {cap} "
                f"(cube TileShape m={list(cube.m)}, k={list(cube.k)}, n={list(cube.n)}, "
                f"{a.name} -> {out.name}); try set_cube_tile_shapes([128, 128], [64, 256], "
                f"[256, 256]) or smaller", op.src.loc)
