"""Random kernels, written the way users write them: `@pypto.frontend.jit` with
`pypto.Tensor([...], dtype)` annotations, `set_vec_tile_shapes` / `set_cube_tile_shapes`,
`pypto.loop`, views, assembles and plain operators. One function per family; `generate(seed,
index)` picks the family and is deterministic in (seed, index).

Families: elementwise, broadcast, reduce, softmax, cast, matmul, view, layout, loop, cond, unroll,
nested, carried, tiles, attention, recurrence, triangle, scale, invalid. A small share of kernels is invalid on purpose (family
"invalid", and out-of-range slices or views elsewhere): they must raise a named pypto error.
"""
from __future__ import annotations

import math
import random

from pypto.testing.fuzz.builder import FLOATS, Builder, Val, dt_attr, pick_tile
from pypto.testing.fuzz.case import Case
from pypto.testing.fuzz.ops import binary, chain, scalar_op, unary

DIMS = [1, 2, 3, 4, 5, 7, 8, 11, 16, 24, 32, 33, 64]
DTYPE_WEIGHTS = [("fp32", 5), ("fp16", 2), ("bf16", 2), ("int32", 2)]


def pick_dtype(rng: random.Random, ints=True) -> str:
    pool = [(d, w) for d, w in DTYPE_WEIGHTS if ints or d != "int32"]
    return rng.choices([d for d, _ in pool], [w for _, w in pool])[0]


def pick_shape(rng: random.Random, rank=None, max_elems=2048) -> tuple:
    rank = rank or rng.choice([1, 2, 2, 2, 3, 3, 4])
    while True:
        shape = tuple(rng.choice(DIMS) for _ in range(rank))
        if math.prod(shape) <= max_elems:
            return shape


def _input(b: Builder, shape, dt, divisor=False) -> Val:
    if dt == "int32":
        low, high = ((1, 9) if b.rng.random() < 0.8 else (-3, 3)) if divisor else (-20, 20)
        return b.param(shape, dt, low=low, high=high)
    return b.param(shape, dt)


# ---- families --------------------------------------------------------------------------------

def elementwise(b: Builder) -> None:
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng)
    dynamic = rng.random() < 0.25  # dim 0 DYNAMIC, called with several sizes
    n_in = rng.randint(1, 3)
    # one input: pypto.DYNAMIC; several: a named dim N, which tells PyPTO they agree
    shape_ann = (("N" if n_in > 1 else "DYN"),) + shape[1:] if dynamic else shape
    xs = [_input(b, shape_ann, dt, divisor=i > 0) for i in range(n_in)]
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
        _dyn_calls(b, sorted({shape[0], rng.randint(1, 40), rng.randint(1, 40)}))


def broadcast(b: Builder) -> None:
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng, rank=rng.randint(2, 4))
    if rng.random() < 0.5:  # some dims 1
        other = tuple(1 if rng.random() < 0.5 else d for d in shape)
    else:  # a suffix (lower rank)
        other = shape[rng.randint(1, len(shape) - 1):]
    x, y = _input(b, shape, dt), _input(b, other, dt, divisor=True)
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
    x = _input(b, ("DYN",) + shape[1:] if dynamic else shape, dt)
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
                         f"{r.name}.reshape({list(squeezed)})", r, shape=squeezed,
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
        _dyn_calls(b, rows)


def softmax(b: Builder) -> None:
    """pypto.softmax along a random dim (FP32 inside, one rounding), then elementwise work."""
    rng = b.rng
    dt = pick_dtype(rng, ints=False)
    shape = pick_shape(rng, rank=rng.randint(1, 3))
    x = _input(b, shape, dt)
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


def cast(b: Builder) -> None:
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng)
    x = _input(b, shape, dt)
    b.vec_tile(shape, "fp16")  # 32-byte aligned for every dtype the casts go through
    v = x
    for _ in range(rng.randint(1, 3)):
        to = rng.choice([d for d in ("fp32", "fp16", "bf16", "int32") if d != v.dt])
        if to == "int32" and v.dt != "int32":
            if v.mag < 8:
                v = b.op(f"{v.name} * 8.0", f"{v.name} * 8.0", v, lo=v.lo * 8, hi=v.hi * 8)
            v = b.op(f"pypto.cast({v.name}, {dt_attr(to)})", f"torch.trunc({v.name})", v,
                     dt=to, lo=math.trunc(v.lo), hi=math.trunc(v.hi))
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
        x = b.op(f"pypto.reshape({x.name}, [1, {k}])", f"{x.name}.reshape([1, {k}])", x,
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
    x = _input(b, shape, dt)
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
        x = _input(b, shape, dt)
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
        x = _input(b, shape, dt)
        if kind == "reshape_inplace":
            v = b.op(f"pypto.reshape({x.name}, {list(new)}, inplace=True)",
                     f"{x.name}.reshape({list(new)})", x, shape=new, depth=0)
        else:
            b.vec_tile(shape, dt)
            v = chain(b, x, rng.randint(0, 1))
            v = b.op(f"pypto.reshape({v.name}, {list(new)})", f"{v.name}.reshape({list(new)})",
                     v, shape=new, depth=v.depth)
    elif kind == "concat":
        rank = rng.randint(1, 3)
        base = list(pick_shape(rng, rank=rank, max_elems=512))
        dim = rng.randrange(rank)
        parts = []
        for _ in range(rng.randint(2, 3)):
            s = list(base)
            s[dim] = rng.choice([1, 2, 3, 8, 16])
            parts.append(_input(b, s, dt))
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
        x = _input(b, shape, dt)
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


def _dynamic_rows(b: Builder, block: int) -> list[int]:
    """Row counts for several calls of one dynamic kernel: multiples of the block, tails, and
    fewer rows than one block."""
    rng = b.rng
    sizes = {block * rng.randint(1, 3), block * rng.randint(1, 2) + rng.randint(1, block),
             rng.randint(1, block)}
    return sorted(sizes)


def _dyn_calls(b: Builder, rows: list[int]) -> None:
    b.calls = [{p.name: [r if d in ("DYN", "N") else d for d in p.shape] for p in b.params}
               for r in rows]


def loop(b: Builder) -> None:
    """pypto.loop over row blocks of a dynamic (or static) row count, tails by valid_shape."""
    rng = b.rng
    dt = pick_dtype(rng)
    cols = rng.choice([8, 16, 32, 64])
    block = rng.choice([1, 2, 4, 8, 16])
    dynamic = rng.random() < 0.7
    static_rows = rng.choice([5, 16, 24, 33])
    rows = "DYN" if dynamic else static_rows
    x = _input(b, (rows, cols), dt)
    out = b.param((rows, cols), dt, "out")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (block, cols), dt))
    negative = rng.random() < 0.04
    stop = "pypto.ceildiv(n, %d) + 1" % block if negative else f"pypto.ceildiv(n, {block})"
    gstop = f"-(-n // {block})" + (" + 1" if negative else "")
    if negative:
        b.notes.append("a valid extent goes negative")
    with b.block(f"for i in pypto.loop({stop}, name='rows', idx_name='i')",
                 f"for i in range({gstop})"):
        b.emit(f"off = i * {block}", f"off = i * {block}")
        valid, gvalid = f"(n - off).min({block})", f"min(n - off, {block})"
        blk = b.op(f"pypto.view({x.name}, [{block}, {cols}], [off, 0], "
                   f"valid_shape=[{valid}, {cols}])",
                   f"VIEW({x.name}, [{block}, {cols}], [off, 0], [{gvalid}, {cols}])", x,
                   shape=(block, cols), depth=0)
        v = chain(b, blk, rng.randint(1, 3))
        if rng.random() < 0.3 and v.dt != "int32":
            s = b.op(f"pypto.sum({v.name}, dim=-1, keepdim=True)",
                     f"torch.sum({v.name}, -1, keepdim=True)", v, shape=(block, 1),
                     lo=-cols * v.mag, hi=cols * v.mag, acc=v.acc + cols)
            v = b.op(f"{v.name} / (pypto.abs({s.name}) + 1.0)",
                     f"{v.name} / R(R(torch.abs({s.name}), '{dt}') + 1.0, '{dt}')", v,
                     lo=-v.mag, hi=v.mag, depth=s.depth + 3, acc=s.acc)
        b.store(out, v, offsets=["off", 0], style="slice")
    if dynamic:
        _dyn_calls(b, _dynamic_rows(b, block))


def cond(b: Builder) -> None:
    """Runtime branches on the loop index inside a row loop."""
    rng = b.rng
    dt = pick_dtype(rng)
    cols = rng.choice([8, 16, 32, 64])
    rows = rng.choice([3, 5, 8, 11])
    x = _input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    conds = [("i < {k}", "i < {k}"), ("i % 2 == 0", "i % 2 == 0"),
             ("pypto.is_loop_begin(i)", "i == 0"), ("pypto.is_loop_end(i)", "i == n - 1"),
             ("i >= {k}", "i >= {k}")]
    with b.block("for i in pypto.loop(n, name='rows', idx_name='i')", "for i in range(n)"):
        row = b.op(f"{x.name}[i:i + 1, :]", f"{x.name}[i:i + 1, :]", x, shape=(1, cols),
                   depth=0)

        def branch(depth):
            kc, gc = rng.choice(conds)
            k = rng.randint(1, rows)
            blk = b.block(f"if {kc.format(k=k)}", f"if {gc.format(k=k)}")
            with blk as node:
                b.store(out, chain(b, row, rng.randint(1, 2)), offsets=["i", 0], style="slice")
            with b.orelse(node):
                if depth < 1 and rng.random() < 0.5:
                    branch(depth + 1)
                else:
                    b.store(out, chain(b, row, rng.randint(1, 2)), offsets=["i", 0],
                            style="slice")
        branch(0)
    _dyn_calls(b, sorted({rows, rng.randint(1, rows), rows + rng.randint(1, 4)}))


def unroll(b: Builder) -> None:
    """pypto.loop_unroll over a dynamic row count: the body handles p rows at once."""
    rng = b.rng
    dt = pick_dtype(rng)
    cols = rng.choice([16, 32])
    factors = sorted(rng.sample([2, 4, 8], rng.randint(1, 2)), reverse=True)
    x = _input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    with b.block(f"for i, p in pypto.loop_unroll(n, unroll_list={factors}, name='rows')",
                 f"for i, p in UNROLL(0, n, {factors})"):
        b.emit(f"pypto.set_vec_tile_shapes(p, {cols})")
        b.tile_rank = 2
        blk = b.op(f"pypto.view({x.name}, [p, {cols}], [i, 0])", f"{x.name}[i:i + p, :]", x,
                   shape=(max(factors), cols), depth=0)
        v = chain(b, blk, rng.randint(1, 3))
        b.store(out, v, offsets=["i", 0], style="slice")
    _dyn_calls(b, sorted({rng.randint(1, 20), rng.randint(1, 20), max(factors) * 2 + 1}))


def nested(b: Builder) -> None:
    """Two nested pypto.loops over row and column blocks of a static tensor."""
    rng = b.rng
    dt = pick_dtype(rng)
    rows, cols = rng.choice([8, 12, 16, 24]), rng.choice([16, 32, 64])
    br = rng.choice([d for d in (2, 4, 8) if rows % d == 0])
    bc = rng.choice([d for d in (8, 16, 32) if cols % d == 0])
    x = _input(b, (rows, cols), dt)
    y = _input(b, (rows, cols), dt, divisor=True) if rng.random() < 0.5 else None
    out = b.param((rows, cols), dt, "out")
    b.tile(pick_tile(rng, (br, bc), dt))
    with b.block(f"for i in pypto.loop({rows // br}, name='ri', idx_name='i')",
                 f"for i in range({rows // br})"):
        with b.block(f"for j in pypto.loop({cols // bc}, name='cj', idx_name='j')",
                     f"for j in range({cols // bc})"):
            tx = b.op(f"pypto.view({x.name}, [{br}, {bc}], [i * {br}, j * {bc}])",
                      f"{x.name}[i * {br}:(i + 1) * {br}, j * {bc}:(j + 1) * {bc}]", x,
                      shape=(br, bc), depth=0)
            others = []
            if y is not None:
                others.append(b.op(
                    f"pypto.view({y.name}, [{br}, {bc}], [i * {br}, j * {bc}])",
                    f"{y.name}[i * {br}:(i + 1) * {br}, j * {bc}:(j + 1) * {bc}]", y,
                    shape=(br, bc), depth=0))
            v = chain(b, tx, rng.randint(1, 3), others)
            b.store(out, v, offsets=[f"i * {br}", f"j * {bc}"])


def carried(b: Builder) -> None:
    """Loop-carried state through an output (or a scratch tensor) updated in iteration order."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp32", "int32", "bf16"])
    cols = rng.choice([8, 16, 32])
    x = _input(b, ("DYN", cols), dt)
    acc = b.param((1, cols), dt, "out")
    prefix = b.param(("DYN", cols), dt, "out") if rng.random() < 0.5 else None
    scratch = rng.random() < 0.4
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    state = acc.name
    if scratch:
        state = "state"
        b.emit(f"state = pypto.tensor([1, {cols}], {dt_attr(dt)}, 'state')",
               f"state = torch.zeros(1, {cols}, dtype=torch.float64)")
    combine = rng.choice(["add", "maximum"]) if dt != "bf16" else "maximum"
    rows = rng.randint(2, 9)
    with b.block("for i in pypto.loop(n, name='rows', idx_name='i')", "for i in range(n)"):
        row = b.op(f"{x.name}[i:i + 1, :]", f"{x.name}[i:i + 1, :]", x, shape=(1, cols),
                   depth=0)
        if dt != "int32":
            row = b.op(f"pypto.tanh({row.name})", f"torch.tanh({row.name})", row, lo=-1, hi=1)
        with b.block("if pypto.is_loop_begin(i)", "if i == 0") as node:
            b.emit(f"{state}[:] = {row.name}", f"ASM({state}, {row.name}, [0, 0])")
        with b.orelse(node):
            expr = (f"{state} + {row.name}" if combine == "add"
                    else f"pypto.maximum({state}, {row.name})")
            gexpr = (f"{state} + {row.name}" if combine == "add"
                     else f"torch.maximum({state}, {row.name})")
            b.emit(f"{state}[:] = {expr}", f"ASM({state}, R({gexpr}, '{dt}'), [0, 0])")
        if prefix is not None:
            b.emit(f"{prefix.name}[i:, :] = {state}", f"ASM({prefix.name}, {state}, [i, 0])")
        if scratch:
            with b.block("if pypto.is_loop_end(i)", "if i == n - 1"):
                b.emit(f"{acc.name}[:] = {state}", f"ASM({acc.name}, {state}, [0, 0])")
    depth = 2 + (rows + 4 if combine == "add" else 0)
    b.checks[acc.name] = (depth, rows + 4, rows + 4.0)
    if prefix is not None:
        b.checks[prefix.name] = (depth, rows + 4, rows + 4.0)
    _dyn_calls(b, sorted({rows, rng.randint(1, rows), rows + 3}))


def tiles(b: Builder) -> None:
    """An elementwise chain whose vector TileShape changes between ops."""
    rng = b.rng
    dt, shape = pick_dtype(rng), pick_shape(rng, rank=rng.randint(2, 3))
    x = _input(b, shape, dt)
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


def attention(b: Builder) -> None:
    """Row blocks of a dynamic query through matmul, scale, softmax, matmul (an attention
    core), with the last block's valid rows given by valid_shape."""
    rng = b.rng
    dt = rng.choice(["fp16", "bf16", "fp32"])
    d, s_len, block = rng.choice([16, 32]), rng.choice([16, 32, 48]), rng.choice([8, 16])
    q = _input(b, ("DYN", d), dt)
    k = _input(b, (s_len, d), dt)
    v = _input(b, (s_len, d), dt)
    out = b.param(("DYN", d), dt, "out")
    b.emit("n = %s.shape[0]" % q.name, "n = %s.shape[0]" % q.name)
    b.emit(f"pypto.set_cube_tile_shapes([16, 16], [16, {rng.choice([16, 32])}], [16, 16])")
    b.tile([block, -(-s_len // 16) * 16])
    with b.block(f"for i in pypto.loop(pypto.ceildiv(n, {block}), name='q', idx_name='i')",
                 f"for i in range(-(-n // {block}))"):
        b.emit(f"off = i * {block}", f"off = i * {block}")
        qb = b.op(f"pypto.view({q.name}, [{block}, {d}], [off, 0], "
                  f"valid_shape=[(n - off).min({block}), {d}])",
                  f"VIEW({q.name}, [{block}, {d}], [off, 0], [min(n - off, {block}), {d}])", q,
                  shape=(block, d), depth=0)
        sc = b.op(f"pypto.matmul({qb.name}, {k.name}, pypto.DT_FP32, b_trans=True)",
                  f"torch.matmul({qb.name}, {k.name}.transpose(-1, -2))", qb, dt="fp32",
                  shape=(block, s_len), lo=-4.0 * d, hi=4.0 * d, depth=1, acc=d)
        sc = b.op(f"{sc.name} * 0.125", f"{sc.name} * 0.125", sc, lo=-d / 2, hi=d / 2)
        pr = b.op(f"pypto.softmax({sc.name}, -1)", f"torch.softmax({sc.name}, -1)", sc,
                  lo=0.0, hi=1.0, depth=sc.depth + 2, acc=d + s_len)
        if dt != "fp32":
            pr = b.op(f"pypto.cast({pr.name}, {dt_attr(dt)})", pr.name, pr, dt=dt)
        o = b.op(f"pypto.matmul({pr.name}, {v.name}, pypto.DT_FP32)",
                 f"torch.matmul({pr.name}, {v.name})", pr, dt="fp32", shape=(block, d),
                 lo=-2.0, hi=2.0, depth=pr.depth + 1, acc=d + s_len)
        if dt != "fp32":
            o = b.op(f"pypto.cast({o.name}, {dt_attr(dt)})", o.name, o, dt=dt)
        b.store(out, o, offsets=["off", 0], style="slice")
    _dyn_calls(b, _dynamic_rows(b, block))


def recurrence(b: Builder) -> None:
    """Each row reads the output row written by the previous iteration: the loop's
    iterations must run in order and see each other's writes."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp32", "bf16", "int32"])
    cols = rng.choice([16, 32])
    x = _input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    rows = rng.randint(2, 9)
    with b.block("for i in pypto.loop(n, name='rows', idx_name='i')", "for i in range(n)"):
        row = b.op(f"{x.name}[i:i + 1, :]", f"{x.name}[i:i + 1, :]", x, shape=(1, cols),
                   depth=0)
        with b.block("if pypto.is_loop_begin(i)", "if i == 0") as node:
            b.store(out, row, offsets=["i", 0], style="slice")
        with b.orelse(node):
            prev = b.op(f"{out.name}[i - 1:i, :]", f"{out.name}[i - 1:i, :]", row, depth=0)
            if dt == "int32":
                nxt = b.op(f"pypto.maximum({prev.name}, {row.name}) - 1",
                           f"torch.maximum({prev.name}, {row.name}) - 1", row)
            else:
                half = b.op(f"{prev.name} * 0.5", f"{prev.name} * 0.5", prev)
                nxt = b.op(f"{half.name} + {row.name}", f"{half.name} + {row.name}", half)
            b.store(out, nxt, offsets=["i", 0], style="slice")
    b.checks[out.name] = (2 * (rows + 4), 0, 4.0)
    _dyn_calls(b, sorted({rows, rng.randint(1, rows), rows + 3}))


def triangle(b: Builder) -> None:
    """Nested loops whose inner bound is the outer index (lower-triangular blocks), or a
    strided loop `pypto.loop(start, stop, step)`."""
    rng = b.rng
    dt = pick_dtype(rng)
    if rng.random() < 0.5:
        g, br, bc = rng.randint(2, 4), rng.choice([2, 4]), 16
        x = _input(b, (g * br, g * bc), dt)
        out = b.param((g * br, g * bc), dt, "out")
        b.tile(pick_tile(rng, (br, bc), dt))
        with b.block(f"for i in pypto.loop({g}, name='ri', idx_name='i')", f"for i in range({g})"):
            with b.block("for j in pypto.loop(i + 1, name='cj', idx_name='j')",
                         "for j in range(i + 1)"):
                blk = b.op(f"pypto.view({x.name}, [{br}, {bc}], [i * {br}, j * {bc}])",
                           f"{x.name}[i * {br}:(i + 1) * {br}, j * {bc}:(j + 1) * {bc}]", x,
                           shape=(br, bc), depth=0)
                b.store(out, chain(b, blk, rng.randint(1, 2)), offsets=[f"i * {br}", f"j * {bc}"])
        return
    cols = rng.choice([16, 32])
    x = _input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    start, step = rng.randint(0, 2), rng.randint(1, 3)
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    with b.block(f"for i in pypto.loop({start}, n, {step}, name='rows', idx_name='i')",
                 f"for i in range({start}, n, {step})"):
        row = b.op(f"{x.name}[i:i + 1, :]", f"{x.name}[i:i + 1, :]", x, shape=(1, cols),
                   depth=0)
        b.store(out, chain(b, row, rng.randint(1, 2)), offsets=["i", 0], style="slice")
    _dyn_calls(b, sorted({rng.randint(1, 12), rng.randint(1, 12), 7}))


def scale(b: Builder) -> None:
    """Larger tensors cut into hundreds of small tiles (and sometimes written as two
    assembled halves): compile, dependency analysis and stitching must stay near-linear."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp16"])
    while True:
        shape = tuple(rng.randint(5, 80) for _ in range(rng.randint(3, 4)))
        if 8000 <= math.prod(shape) <= 60000:
            break
    x, y = _input(b, shape, dt), _input(b, shape, dt)
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
INVALID = [
    ("tile rank", "x0: [8, 16]", ["pypto.set_vec_tile_shapes(8)", "out0[:] = x0 + 1.0"]),
    ("shape mismatch", "x0: [8, 16]; x1: [8, 8]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = x0 + x1"]),
    ("matmul inner dims", "x0: [16, 32]; x1: [16, 16]",
     ["pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])",
      "out0[:] = pypto.matmul(x0, x1, pypto.DT_FP32)"]),
    ("no cube tile", "x0: [16, 32]; x1: [32, 16]",
     ["out0[:] = pypto.matmul(x0, x1, pypto.DT_FP32)"]),
    ("reshape size", "x0: [8, 16]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = pypto.reshape(x0, [8, 15])"]),
    ("slice past the end", "x0: [16, 16]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = x0[8:24, :] * 2.0"]),
    ("out shape", "x0: [8, 16]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = pypto.sum(x0, dim=0, keepdim=True)"]),
    ("concat dims", "x0: [8, 16]; x1: [8, 8]",
     ["pypto.set_vec_tile_shapes(8, 16)", "out0[:] = pypto.concat([x0, x1], dim=0)"]),
    ("zero tile", "x0: [8, 16]", ["pypto.set_vec_tile_shapes(0, 16)", "out0[:] = x0 * 2.0"]),
]


def invalid(b: Builder) -> None:
    """A kernel that breaks one rule on purpose: it must raise a named pypto error."""
    label, params, lines = b.rng.choice(INVALID)
    for spec in params.split("; "):
        name, shape = spec.split(": ")
        b.param(eval(shape), "fp32", name=name)
    out_shape = [8, 16] if "matmul" not in label and "no cube" not in label else [16, 16]
    if label == "slice past the end":
        out_shape = [16, 16]
    b.param(out_shape, "fp32", "out", name="out0")
    for line in lines:
        b.emit(line, "")
    b.expect = "PyptoError"
    b.notes.append(f"invalid on purpose: {label}")


FAMILIES = {
    "elementwise": (elementwise, 10), "broadcast": (broadcast, 6), "reduce": (reduce, 7),
    "cast": (cast, 4), "softmax": (softmax, 2), "matmul": (matmul, 7), "view": (view, 5), "layout": (layout, 7),
    "loop": (loop, 7), "cond": (cond, 4), "unroll": (unroll, 3), "nested": (nested, 3),
    "carried": (carried, 3), "tiles": (tiles, 5), "attention": (attention, 3),
    "recurrence": (recurrence, 2), "triangle": (triangle, 2), "scale": (scale, 2),
    "invalid": (invalid, 2),
}


def generate(seed: int, index: int, families=None) -> Case:
    """Kernel `index` of the batch with `seed`: the same pair always gives the same case."""
    rng = random.Random(seed * 1_000_003 + index)
    names = [n for n in FAMILIES if not families or n in families]
    family = rng.choices(names, [FAMILIES[n][1] for n in names])[0]
    b = Builder(rng, seed, index, family)
    FAMILIES[family][0](b)
    return b.case()
