"""Generator families on whole tensors: elementwise chains (tensor, scalar and reflected
operands), broadcasts, reductions, softmax, casts, matmul, views and assembles, layout ops
(transpose, reshape, concat, unsqueeze), TileShape changes mid-kernel and large tensors cut
into many tiles. Each takes a Builder and adds one kernel to it."""
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


def reduce(b: Builder) -> None:
    rng = b.rng
    dt = pick_dtype(rng)
    shape = pick_shape(rng)
    dynamic = len(shape) >= 2 and rng.random() < 0.25  # dim 0 DYNAMIC, several sizes
    x = make_input(b, ("DYN",) + shape[1:] if dynamic else shape, dt)
    x = Val(x.name, shape, x.dt, x.lo, x.hi)
    op = rng.choice(["sum", "amax", "amin"])
    dim = rng.randrange(len(shape))
    keep = len(shape) == 1 or rng.random() < 0.6
    b.vec_tile(shape, dt)
    v = chain(b, x, rng.randint(0, 2)) if rng.random() < 0.6 else x
    if v.mag > 4:
        v = chain(b, v, 0) if dt == "int32" else b.op(f"pypto.tanh({v.name})",
                                                       f"torch.tanh({v.name})", v, lo=-1, hi=1)
    dim_text = dim - len(shape) if rng.random() < 0.4 else dim
    rshape = tuple(1 if i == dim else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i != dim)
    n = shape[dim]
    lo, hi = (v.lo * n, v.hi * n) if op == "sum" else (v.lo, v.hi)
    gop = {"sum": "torch.sum({x}, {d}, keepdim={k})",
           "amax": "torch.amax({x}, {d}, keepdim={k})",
           "amin": "torch.amin({x}, {d}, keepdim={k})"}[op]
    r = b.op(f"pypto.{op}({v.name}, dim={dim_text}, keepdim={keep})",
             gop.format(x=v.name, d=dim_text, k=keep), v, shape=rshape, lo=lo, hi=hi,
             acc=v.acc + (n if op == "sum" else 0))
    back = keep and rng.random() < 0.5
    bshape = shape
    ones = [i for i, d in enumerate(rshape) if d == 1]
    if back and len(shape) >= 2 and ones and rng.random() < 0.35:
        # the reduced value reshaped (one size-1 dim dropped) and broadcast against v
        drop = rng.choice(ones)
        squeezed = tuple(d for i, d in enumerate(rshape) if i != drop)
        padded = (1,) * (len(shape) - len(squeezed)) + squeezed
        if all(a == c or 1 in (a, c) for a, c in zip(shape, padded)):
            bshape = tuple(max(a, c) for a, c in zip(shape, padded))
            if math.prod(bshape) <= 8192:
                r = b.op(f"pypto.reshape({r.name}, {list(squeezed)})",
                         f"RS({r.name}, {list(squeezed)})", r, shape=squeezed,
                         depth=r.depth)
            else:
                bshape = shape
    rows = sorted({shape[0], rng.randint(1, 40), rng.randint(1, 40)})

    def output(oshape):
        if dynamic and oshape and oshape[0] == shape[0] and (dim != 0 or back):
            return b.param(("DYN",) + tuple(oshape[1:]), dt, "out")
        return b.param(oshape, dt, "out")

    if dynamic:
        if dim == 0 and not back:
            # the reduced dim is the dynamic one: every output is static
            r.acc = v.acc + (max(rows) if op == "sum" else 0)
        b.notes.append("dynamic dim 0")
    if back:
        out = output(bshape)
        b.vec_tile(bshape, dt, force=rng.random() < 0.3 or bshape != shape)
        s = b.op(f"{v.name} - {r.name}" if op != "sum" else f"{r.name} + {v.name}",
                 f"{v.name} - {r.name}" if op != "sum" else f"{r.name} + {v.name}", v,
                 shape=bshape, lo=-abs(lo) - v.mag, hi=abs(hi) + v.mag,
                 depth=r.depth + 1, acc=r.acc)
        b.store(out, s)
    else:
        out = output(r.shape)
        b.vec_tile(r.shape, dt)
        b.store(out, r)
    if dynamic:
        dynamic_calls(b, rows)


def softmax(b: Builder) -> None:
    """pypto.softmax along a random dim (FP32 inside, one rounding), then elementwise work."""
    rng = b.rng
    dt = pick_dtype(rng, ints=False)
    shape = pick_shape(rng, rank=rng.randint(1, 3))
    x = make_input(b, shape, dt)
    dim = rng.randrange(len(shape)) - (len(shape) if rng.random() < 0.5 else 0)
    b.vec_tile(shape, dt)
    v = chain(b, x, rng.randint(0, 1))
    if v.mag > 8:
        v = b.op(f"pypto.tanh({v.name})", f"torch.tanh({v.name})", v, lo=-1, hi=1)
    v = b.op(f"pypto.softmax({v.name}, {dim})", f"torch.softmax({v.name}, {dim})", v,
             lo=0.0, hi=1.0, acc=v.acc + shape[dim], depth=v.depth + 2)
    v = chain(b, v, rng.randint(0, 2))
    out = b.param(shape, dt, "out")
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


def _region(x: Val, starts, stops, form: str) -> tuple[str, str]:
    """Kernel and golden text of the region [starts, stops) of 2-D `x`: a slice or a view."""
    if form == "slice":
        idx = ", ".join(f"{a}:{c}" for a, c in zip(starts, stops))
        kernel = f"{x.name}[{idx}]"
    else:
        shape = [c - a for a, c in zip(starts, stops)]
        kernel = f"pypto.view({x.name}, {shape}, {list(starts)})"
    return kernel, f"SL({x.name}, {list(starts)}, {list(stops)})"


def view(b: Builder) -> None:
    """Slices and views of an input (along rows or columns), computed on and assembled into
    the output; sometimes a block is overwritten later (write order) or an output is read
    back after it was written."""
    rng = b.rng
    dt = pick_dtype(rng)
    rows, cols = rng.choice([4, 8, 16, 24, 33]), rng.choice([16, 32, 64])
    shape = (rows, cols)
    x = make_input(b, shape, dt)
    out = b.param(shape, dt, "out")
    axis = 0 if rng.random() < 0.7 else 1
    size = shape[axis]
    step = 1 if axis == 0 else 16  # column pieces stay 32-byte aligned
    cuts = sorted({0, size} | {rng.randrange(step, size, step) for _ in range(rng.randint(0, 2))
                               if size > step})
    b.vec_tile(shape, dt)
    for lo, hi in zip(cuts, cuts[1:]):
        starts, stops = [0, 0], list(shape)
        starts[axis], stops[axis] = lo, hi
        pshape = tuple(c - a for a, c in zip(starts, stops))
        form = rng.choice(["slice", "view"])
        if form == "slice" and rng.random() < 0.05:
            # out of range on purpose: torch would clamp the slice, PyPTO must name it
            stops = list(stops)
            stops[axis] += size
            b.notes.append("slice past the end")
        kernel, golden = _region(x, starts, stops, form)
        piece = b.op(kernel, golden, x, shape=pshape, depth=0)
        if rng.random() < 0.3:
            b.vec_tile(pshape, dt, force=True)
        v = chain(b, piece, rng.randint(1, 2))
        b.store(out, v, offsets=starts)
    if rng.random() < 0.3:  # overwrite an inner block: the later write must win
        r0 = rng.randrange(rows)
        r1 = rng.randint(r0 + 1, rows)
        kernel, golden = _region(x, [r0, 0], [r1, 16], rng.choice(["slice", "view"]))
        piece = b.op(kernel, golden, x, shape=(r1 - r0, 16), depth=0)
        b.vec_tile(piece.shape, dt, force=True)
        b.store(out, chain(b, piece, 1), offsets=[r0, 0])
    if rng.random() < 0.25:  # read the output back after the writes
        back = Val(out.name, shape, dt, -9.0, 9.0, b.checks[out.name][0], 0,
                   b.checks[out.name][2])
        out2 = b.param(shape, dt, "out")
        b.vec_tile(shape, dt, force=True)
        b.store(out2, chain(b, back, 1))


def layout(b: Builder) -> None:
    """transpose, reshape (also in place), concat and unsqueeze, then elementwise work."""
    rng = b.rng
    dt = pick_dtype(rng)
    kind = rng.choice(["transpose", "reshape", "reshape_inplace", "concat", "unsqueeze"])
    b.notes.append(kind)
    if kind == "transpose":
        shape = pick_shape(rng, rank=rng.randint(2, 3), max_elems=1024)
        x = make_input(b, shape, dt)
        d0, d1 = rng.sample(range(len(shape)), 2)
        tshape = list(shape)
        tshape[d0], tshape[d1] = tshape[d1], tshape[d0]
        b.vec_tile(shape, dt)
        v = chain(b, x, rng.randint(0, 1))
        b.vec_tile(tshape, dt, force=True)
        v = b.op(f"pypto.transpose({v.name}, {d0}, {d1})", f"{v.name}.transpose({d0}, {d1})",
                 v, shape=tuple(tshape), depth=v.depth)
    elif kind in ("reshape", "reshape_inplace"):
        shape = pick_shape(rng, rank=rng.randint(1, 3))
        total = math.prod(shape)
        divs = [d for d in range(1, total + 1) if total % d == 0]
        a = rng.choice(divs)
        new = (a, total // a) if rng.random() < 0.7 else (total,)
        x = make_input(b, shape, dt)
        if kind == "reshape_inplace":
            v = b.op(f"pypto.reshape({x.name}, {list(new)}, inplace=True)",
                     f"RS({x.name}, {list(new)})", x, shape=new, depth=0)
        else:
            b.vec_tile(shape, dt)
            v = chain(b, x, rng.randint(0, 1))
            v = b.op(f"pypto.reshape({v.name}, {list(new)})", f"RS({v.name}, {list(new)})",
                     v, shape=new, depth=v.depth)
    elif kind == "concat":
        rank = rng.randint(1, 3)
        base = list(pick_shape(rng, rank=rank, max_elems=512))
        dim = rng.randrange(rank)
        parts = []
        for _ in range(rng.randint(2, 3)):
            s = list(base)
            s[dim] = rng.choice([1, 2, 3, 8, 16])
            parts.append(make_input(b, s, dt))
        b.vec_tile(parts[0].shape, dt)
        parts = [chain(b, p, rng.randint(0, 1)) if p.shape == parts[0].shape else p
                 for p in parts]
        cshape = list(base)
        cshape[dim] = sum(p.shape[dim] for p in parts)
        names = ", ".join(p.name for p in parts)
        v = b.op(f"pypto.concat([{names}], dim={dim})", f"torch.cat([{names}], dim={dim})",
                 parts[0], shape=tuple(cshape), depth=max(p.depth for p in parts),
                 lo=min(p.lo for p in parts), hi=max(p.hi for p in parts))
    else:
        shape = pick_shape(rng, rank=rng.randint(1, 3))
        x = make_input(b, shape, dt)
        d = rng.randint(0, len(shape))
        new = shape[:d] + (1,) + shape[d:]
        v = b.op(f"pypto.unsqueeze({x.name}, {d})", f"{x.name}.unsqueeze({d})", x, shape=new,
                 depth=0)
    b.vec_tile(v.shape, dt, force=True)
    v = chain(b, v, rng.randint(1, 2))
    if len(v.shape) >= 2 and rng.random() < 0.25:
        # the output is declared flat and written through an in-place reshape of itself
        out = b.param((math.prod(v.shape),), dt, "out")
        b.emit(f"o = pypto.reshape({out.name}, {list(v.shape)}, inplace=True)",
               f"o = {out.name}.reshape({list(v.shape)})")
        b.store(Val("o", v.shape, dt), v)
        b.checks[out.name] = b.checks.pop("o")
        b.notes.append("output written through an in-place reshape")
        return
    out = b.param(v.shape, dt, "out")
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


# (kernel body lines, golden error) of deliberately invalid kernels; each names a rule


def stats(b: Builder) -> None:
    """mean, var (Bessel), prod and cumsum along a random dim."""
    rng = b.rng
    dt = pick_dtype(rng, ints=False)
    shape = pick_shape(rng, rank=rng.randint(1, 3), max_elems=1024)
    x = make_input(b, shape, dt)
    kind = rng.choice(["mean", "var", "prod", "cumsum"])
    dims = [i for i, d in enumerate(shape) if d >= 2 or kind != "var"]
    if not dims:  # a variance of one element divides by zero
        kind, dims = "mean", list(range(len(shape)))
    dim = rng.choice(dims)
    n = shape[dim]
    keep = len(shape) == 1 or rng.random() < 0.5
    b.vec_tile(shape, dt)
    b.notes.append(kind)
    rshape = (tuple(1 if i == dim else d for i, d in enumerate(shape)) if keep else
              tuple(d for i, d in enumerate(shape) if i != dim))
    if kind == "mean":
        v = b.op(f"pypto.mean({x.name}, dim={dim}, keepdim={keep})",
                 f"torch.mean({x.name}, {dim}, keepdim={keep})", x, shape=rshape, acc=n)
    elif kind == "var":
        v = b.op(f"pypto.var({x.name}, dim={dim}, keepdim={keep})",
                 f"torch.var({x.name}, {dim}, correction=1, keepdim={keep})", x, shape=rshape,
                 lo=0.0, hi=4.0 * n / (n - 1), acc=2 * n, depth=3)
    elif kind == "prod":
        x = b.op(f"pypto.sigmoid({x.name}) + 0.5", f"R(torch.sigmoid({x.name}), '{dt}') + 0.5",
                 x, lo=0.5, hi=1.5, depth=2)
        v = b.op(f"pypto.prod({x.name}, dim={dim}, keepdim={keep})",
                 f"torch.prod({x.name}, {dim}, keepdim={keep})", x, shape=rshape,
                 lo=0.5 ** n, hi=1.5 ** n, acc=n, depth=x.depth + n)
    else:
        v = b.op(f"pypto.cumsum({x.name}, {dim})", f"torch.cumsum({x.name}, {dim})", x,
                 lo=-2.0 * n, hi=2.0 * n, acc=n)
    if len(v.shape) == 0:
        return
    b.vec_tile(v.shape, dt)
    out = b.param(v.shape, dt, "out")
    b.store(out, v)


def compose(b: Builder) -> None:
    """Views of views, a transpose or reshape of a slice, a broadcast of both operands
    ([a, 1] op [1, b]), and a local scratch tensor assembled and read back."""
    rng = b.rng
    dt = pick_dtype(rng)
    kind = rng.choice(["view_of_view", "transpose_slice", "reshape_slice", "outer",
                       "scratch"])
    b.notes.append(kind)
    rows, cols = rng.choice([8, 16, 24]), rng.choice([16, 32, 48])
    if kind == "outer":
        x, y = make_input(b, (rows, 1), dt), make_input(b, (1, cols), dt, divisor=True)
        out = b.param((rows, cols), dt, "out")
        b.vec_tile((rows, cols), dt)
        b.store(out, chain(b, binary(b, x, y, shape=(rows, cols)), rng.randint(0, 2)))
        return
    x = make_input(b, (rows, cols), dt)
    r0 = rng.randrange(rows // 2)
    r1 = rng.randint(r0 + 1, rows)
    c0 = 16 * rng.randrange(cols // 16)
    c1 = min(cols, c0 + 16 * rng.randint(1, 2))
    if kind == "view_of_view":
        a = b.op(f"{x.name}[{r0}:{r1}, :]", f"SL({x.name}, [{r0}, 0], [{r1}, {cols}])", x,
                 shape=(r1 - r0, cols), depth=0)
        h = r1 - r0
        s0 = rng.randrange(h)
        v = b.op(f"pypto.view({a.name}, [{h - s0}, {c1 - c0}], [{s0}, {c0}])",
                 f"SL({a.name}, [{s0}, {c0}], [{h}, {c1}])", a, shape=(h - s0, c1 - c0),
                 depth=0)
    elif kind == "transpose_slice":
        a = b.op(f"{x.name}[{r0}:{r1}, {c0}:{c1}]",
                 f"SL({x.name}, [{r0}, {c0}], [{r1}, {c1}])", x, shape=(r1 - r0, c1 - c0),
                 depth=0)
        b.vec_tile((c1 - c0, r1 - r0), "fp16", force=True)
        v = b.op(f"pypto.transpose({a.name}, 0, 1)", f"{a.name}.transpose(0, 1)", a,
                 shape=(c1 - c0, r1 - r0), depth=0)
    elif kind == "reshape_slice":
        a = b.op(f"{x.name}[{r0}:{r1}, :]", f"SL({x.name}, [{r0}, 0], [{r1}, {cols}])", x,
                 shape=(r1 - r0, cols), depth=0)
        new = ((r1 - r0) * 2, cols // 2) if cols % 32 == 0 else ((r1 - r0) * cols,)
        v = b.op(f"pypto.reshape({a.name}, {list(new)})", f"RS({a.name}, {list(new)})",
                 a, shape=new, depth=0)
    else:  # scratch: pieces assembled into a local tensor, then read as a whole
        b.vec_tile((rows, cols), dt)
        gold = "int64" if dt == "int32" else "float64"
        b.emit(f"t = pypto.tensor([{rows}, {cols}], {dt_attr(dt)}, 't')",
               f"t = torch.zeros({rows}, {cols}, dtype=torch.{gold})")
        t = Val("t", (rows, cols), dt)
        for lo, hi in ((0, r1), (r1, rows)) if r1 < rows else ((0, rows),):
            p = b.op(f"{x.name}[{lo}:{hi}, :]", f"SL({x.name}, [{lo}, 0], [{hi}, {cols}])",
                     x, shape=(hi - lo, cols), depth=0)
            b.store(t, chain(b, p, 1), offsets=[lo, 0])
        depth = b.checks.pop("t")[0]
        v = Val("t", (rows, cols), dt, -40.0, 40.0, depth, 0, 40.0)
    b.vec_tile(v.shape, dt, force=True)
    v = chain(b, v, rng.randint(1, 2))
    out = b.param(v.shape, v.dt, "out")
    b.store(out, v)


def index(b: Builder) -> None:
    """index_select, gather, argmax / argmin and topk with INT32 indices."""
    rng = b.rng
    kind = rng.choice(["index_select", "gather", "argmax", "topk"])
    b.notes.append(kind)
    dt = pick_dtype(rng, ints=False) if kind != "topk" else "fp32"  # topk: no ties
    rows, cols = rng.choice([4, 8, 16, 24]), rng.choice([16, 32, 64])
    x = make_input(b, (rows, cols), dt)
    if kind == "index_select":
        dim = rng.randrange(2)
        m = rng.choice([1, 3, 8, 16])
        idx = b.param((m,), "int32", low=0, high=(rows, cols)[dim] - 1)
        shape = (m, cols) if dim == 0 else (rows, m)
        b.vec_tile(shape, "fp16")
        v = b.op(f"pypto.index_select({x.name}, {dim}, {idx.name})",
                 f"torch.index_select({x.name}, {dim}, {idx.name})", x, shape=shape, depth=0)
    elif kind == "gather":
        dim = rng.randrange(2)
        shape = (rng.randint(1, rows), rng.choice([16, cols])) if dim == 0 else \
            (rows, rng.choice([16, 32]))
        idx = b.param(shape, "int32", low=0, high=(rows, cols)[dim] - 1)
        b.vec_tile(shape, "fp16")
        v = b.op(f"pypto.gather({x.name}, {dim}, {idx.name})",
                 f"torch.gather({x.name}, {dim}, {idx.name})", x, shape=shape, depth=0)
    elif kind == "argmax":
        op, dim, keep = rng.choice(["argmax", "argmin"]), rng.randrange(2), rng.random() < 0.5
        shape = ((1, cols) if dim == 0 else (rows, 1)) if keep else ((cols,) if dim == 0
                                                                     else (rows,))
        b.vec_tile((rows, cols), "fp16")
        v = b.op(f"pypto.{op}({x.name}, dim={dim}, keepdim={keep})",
                 f"torch.{op}({x.name}, {dim}, keepdim={keep})", x, shape=shape, dt="int32",
                 lo=0, hi=max(rows, cols), depth=0)
    else:
        k = rng.choice([1, 2, 5, 8])
        largest = rng.random() < 0.7
        b.vec_tile((rows, cols), "fp16")
        b.emit(f"vals, idxs = pypto.topk({x.name}, {k}, -1, largest={largest})",
               f"vals, idxs = torch.topk({x.name}, {k}, -1, largest={largest})")
        out_i = b.param((rows, k), "int32", "out")
        b.emit(f"{out_i.name}[:] = idxs", f"ASM({out_i.name}, idxs, [0, 0])")
        v = Val("vals", (rows, k), dt, x.lo, x.hi)
    out = b.param(v.shape, v.dt, "out")
    b.store(out, v)
