"""Generator families that compute on whole tensors: elementwise chains (tensor, scalar and
reflected operands), broadcasts, casts, matmul, TileShape changes mid-kernel and large tensors
cut into many tiles. Each takes a Builder and adds one kernel to it.

The reductions are `reduce_families`; views, layout ops and index lookups `view_families`.
"""
from __future__ import annotations

import math

from pypto.testing.fuzz.builder import (Builder, Val, dt_attr, dynamic_calls, make_input,
                                        pick_dtype, pick_shape)
from pypto.testing.fuzz.ops import binary, chain, scalar_op, unary


def elementwise(b: Builder) -> None:
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng)
    dynamic = rng.random() < 0.25  # dim 0 DYNAMIC, called with several sizes
    n_in = rng.randint(1, 3)
    # one input: pypto.DYNAMIC; several: a named dim N, which tells PyPTO they agree
    shape_ann = (("N" if n_in > 1 else "DYN"),) + shape[1:] if dynamic else shape
    xs = [make_input(b, shape_ann, dt, divisor=i > 0) for i in range(n_in)]
    xs = [Val(x.name, shape, x.dt, x.lo, x.hi) for x in xs]
    out = b.param(shape_ann, dt, "out")
    extra = b.param(shape_ann, dt, "out") if rng.random() < 0.3 else None
    b.vec_tile(shape, dt)
    v = chain(b, xs[0], rng.randint(1, 3), xs[1:])
    if extra is not None:
        b.store(extra, v)
    v = chain(b, v, rng.randint(1, 3), xs[1:])
    b.store(out, v)
    if dynamic:
        dynamic_calls(b, sorted({shape[0], rng.randint(1, 40), rng.randint(1, 40)}))


def broadcast(b: Builder) -> None:
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng, rank=rng.randint(2, 4))
    if rng.random() < 0.5:  # some dims 1
        other = tuple(1 if rng.random() < 0.5 else d for d in shape)
    else:  # a suffix (lower rank)
        other = shape[rng.randint(1, len(shape) - 1):]
    x, y = make_input(b, shape, dt), make_input(b, other, dt, divisor=True)
    if rng.random() < 0.5:
        x, y = y, x  # the broadcasting operand on the left
    out = b.param(shape, dt, "out")
    b.vec_tile(shape, dt)
    v = binary(b, x, y, shape=shape)
    v = chain(b, v, rng.randint(0, 2))
    b.store(out, v)



# float -> int rounding: (extra argument of pypto.cast, golden); CAST_NONE truncates
CAST_MODES = [
    ("", "torch.trunc({x})"),
    (", pypto.CastMode.CAST_TRUNC", "torch.trunc({x})"),
    (", pypto.CastMode.CAST_RINT", "torch.round({x})"),
    (", pypto.CastMode.CAST_ROUND", "torch.sign({x}) * torch.floor(torch.abs({x}) + 0.5)"),
    (", pypto.CastMode.CAST_FLOOR", "torch.floor({x})"),
    (", pypto.CastMode.CAST_CEIL", "torch.ceil({x})"),
]


def cast(b: Builder) -> None:
    """Chains of casts between FP32, FP16, BF16 and INT32 (float -> int in every rounding
    mode), with elementwise ops between them."""
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng)
    x = make_input(b, shape, dt)
    b.vec_tile(shape, "fp16")  # 32-byte aligned for every dtype the casts go through
    v = x
    for _ in range(rng.randint(1, 3)):
        to = rng.choice([d for d in ("fp32", "fp16", "bf16", "int32") if d != v.dt])
        if to == "int32" and v.dt != "int32":
            if v.mag < 8:
                v = b.op(f"{v.name} * 8.0", f"{v.name} * 8.0", v, lo=v.lo * 8, hi=v.hi * 8)
            mode, gold = rng.choice(CAST_MODES)
            v = b.op(f"pypto.cast({v.name}, {dt_attr(to)}{mode})", gold.format(x=v.name), v,
                     dt=to, lo=math.floor(v.lo), hi=math.ceil(v.hi))
        else:
            v = b.op(f"pypto.cast({v.name}, {dt_attr(to)})", v.name, v, dt=to)
        if rng.random() < 0.5:
            v = chain(b, v, 1)
    out = b.param(shape, v.dt, "out")
    b.store(out, v)


def matmul(b: Builder) -> None:
    rng = b.rng
    dt = rng.choice(["fp32", "fp16", "bf16", "fp16"])
    m, k, n = (rng.choice([1, 7, 16, 24, 32, 48, 64]) for _ in range(3))
    k = max(k, 8)
    a_trans, b_trans = rng.random() < 0.25, rng.random() < 0.25
    batch = rng.choice([None, None, None, 2, 3])
    out_dt = "fp32" if dt == "fp32" or rng.random() < 0.6 else dt
    split_k = out_dt == "fp32" and batch is None and rng.random() < 0.25
    pre = (batch,) if batch else ()
    a_shape = pre + ((k, m) if a_trans else (m, k))
    b_pre = pre if not batch or rng.random() < 0.7 else (1,)
    b_shape = b_pre + ((n, k) if b_trans else (k, n))
    rank1 = not batch and not a_trans and m == 1 and rng.random() < 0.5
    x = b.param((k,) if rank1 else a_shape, dt)
    w = b.param(b_shape, dt)
    out = b.param(pre + (m, n), out_dt, "out")
    ml0 = rng.choice([16, 32])
    kl0 = rng.choice([16, 32, 64])
    nl0 = rng.choice([16, 32])
    cube = ([ml0, ml0 * rng.choice([1, 2])], [kl0, kl0 * rng.choice([1, 2])],
            [nl0, nl0 * rng.choice([1, 2])])
    b.emit(f"pypto.set_cube_tile_shapes({list(cube[0])}, {list(cube[1])}, {list(cube[2])}"
           + (", enable_split_k=True)" if split_k else ")"))
    if rank1:
        x = b.op(f"pypto.reshape({x.name}, [1, {k}])", f"RS({x.name}, [1, {k}])", x,
                 shape=(1, k), depth=0)
    a_g = f"{x.name}.transpose(-1, -2)" if a_trans else x.name
    b_g = f"{w.name}.transpose(-1, -2)" if b_trans else w.name
    flags = (", a_trans=True" if a_trans else "") + (", b_trans=True" if b_trans else "")
    v = b.op(f"pypto.matmul({x.name}, {w.name}, {dt_attr(out_dt)}{flags})",
             f"torch.matmul({a_g}, {b_g})", x, shape=pre + (m, n), dt=out_dt,
             lo=-4.0 * k, hi=4.0 * k, depth=1, acc=k)
    if split_k:
        b.notes.append("split-K")
    if rng.random() < 0.5:
        b.vec_tile(v.shape, out_dt)
        v = chain(b, b.op(f"{v.name} * {1 / k}", f"{v.name} * {1 / k}", v, lo=-4, hi=4),
                  rng.randint(0, 2))
    b.store(out, v)



def tiles(b: Builder) -> None:
    """An elementwise chain whose vector TileShape changes between ops."""
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng, rank=rng.randint(2, 3))
    x = make_input(b, shape, dt)
    out = b.param(shape, dt, "out")
    v = x
    for _ in range(rng.randint(2, 4)):
        b.vec_tile(shape, dt, force=True)
        if v.dt != "int32" and rng.random() < 0.3:
            v = b.op(f"pypto.rsqrt(pypto.abs({v.name}) + 0.5)",
                     f"torch.rsqrt(R(torch.abs({v.name}), '{dt}') + 0.5)", v, lo=0.0,
                     hi=1.5, depth=v.depth + 2)
        else:
            v = unary(b, v) if rng.random() < 0.5 else scalar_op(b, v)
    b.store(out, v)


def scale(b: Builder) -> None:
    """Larger tensors cut into hundreds of small tiles (and sometimes written as two
    assembled halves): compile, dependency analysis and stitching must stay near-linear."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp16"])
    while True:
        shape = tuple(rng.randint(5, 80) for _ in range(rng.randint(3, 4)))
        if 8000 <= math.prod(shape) <= 60000:
            break
    x, y = make_input(b, shape, dt), make_input(b, shape, dt)
    out = b.param(shape, dt, "out")
    align = 32 // (4 if dt == "fp32" else 2)
    while True:
        tile = [rng.randint(1, max(1, d // 3)) for d in shape[:-1]] + [align * rng.randint(1, 3)]
        tiles = math.prod(-(-d // t) for d, t in zip(shape, tile))
        if 150 <= tiles <= 1500 or tile[:-1] == [1] * (len(shape) - 1):
            break
    b.tile(tile)
    b.tile_rank = len(shape)
    if rng.random() < 0.5:
        b.store(out, binary(b, x, y))
        return
    half = shape[0] // 2
    for lo, hi in ((0, half), (half, shape[0])):
        rest = ", ".join(":" for _ in shape[1:])
        idx = ", ".join(["0"] * (len(shape) - 1))
        px = b.op(f"{x.name}[{lo}:{hi}, {rest}]", f"{x.name}[{lo}:{hi}]", x,
                  shape=(hi - lo,) + shape[1:], depth=0)
        py = b.op(f"{y.name}[{lo}:{hi}, {rest}]", f"{y.name}[{lo}:{hi}]", y,
                  shape=(hi - lo,) + shape[1:], depth=0)
        b.store(out, binary(b, px, py), offsets=[lo] + [0] * (len(shape) - 1))
    b.notes.append("written as two assembled halves")
