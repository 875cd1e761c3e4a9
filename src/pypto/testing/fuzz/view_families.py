"""Generator families that decide where elements go rather than what they become: slices and
views assembled into the output (with overwrites and read-backs), layout ops (transpose,
reshape, concat, unsqueeze), compositions of them (views of views, a transpose of a slice, a
local scratch tensor) and index-driven lookups (index_select, gather, argmax / argmin, topk).
Each takes a Builder and adds one kernel to it.

Their own module because they test regions, offsets and shapes (PyPTO's views folded into
regions, assembles, in-place reshapes), not arithmetic: elementwise work around them is only
a `chain`.

NOTE: every draw from `b.rng` happens in the order the kernels were first generated with: the
same seed must give the same kernels (tests/testing checks it).
"""
from __future__ import annotations

import math

from pypto.testing.fuzz.builder import (Builder, Val, dt_attr, make_input, pick_dtype,
                                        pick_shape)
from pypto.testing.fuzz.ops import binary, chain


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
        v = _transposed(b, dt)
    elif kind in ("reshape", "reshape_inplace"):
        v = _reshaped(b, dt, inplace=kind == "reshape_inplace")
    elif kind == "concat":
        v = _concatenated(b, dt)
    else:
        v = _unsqueezed(b, dt)
    b.vec_tile(v.shape, dt, force=True)
    v = chain(b, v, rng.randint(1, 2))
    if len(v.shape) >= 2 and rng.random() < 0.25:
        _store_through_inplace_reshape(b, v, dt)
        return
    out = b.param(v.shape, dt, "out")
    b.store(out, v)


def _transposed(b: Builder, dt: str) -> Val:
    """An input of rank 2 or 3, sometimes after elementwise work, with two dims swapped."""
    rng = b.rng
    shape = pick_shape(rng, rank=rng.randint(2, 3), max_elems=1024)
    x = make_input(b, shape, dt)
    d0, d1 = rng.sample(range(len(shape)), 2)
    tshape = list(shape)
    tshape[d0], tshape[d1] = tshape[d1], tshape[d0]
    b.vec_tile(shape, dt)
    v = chain(b, x, rng.randint(0, 1))
    b.vec_tile(tshape, dt, force=True)
    return b.op(f"pypto.transpose({v.name}, {d0}, {d1})", f"{v.name}.transpose({d0}, {d1})",
                v, shape=tuple(tshape), depth=v.depth)


def _reshaped(b: Builder, dt: str, inplace: bool) -> Val:
    """An input reshaped to 1 or 2 dims: in place (a view of the input itself), or after
    elementwise work."""
    rng = b.rng
    shape = pick_shape(rng, rank=rng.randint(1, 3))
    total = math.prod(shape)
    divs = [d for d in range(1, total + 1) if total % d == 0]
    a = rng.choice(divs)
    new = (a, total // a) if rng.random() < 0.7 else (total,)
    x = make_input(b, shape, dt)
    if inplace:
        return b.op(f"pypto.reshape({x.name}, {list(new)}, inplace=True)",
                    f"RS({x.name}, {list(new)})", x, shape=new, depth=0)
    b.vec_tile(shape, dt)
    v = chain(b, x, rng.randint(0, 1))
    return b.op(f"pypto.reshape({v.name}, {list(new)})", f"RS({v.name}, {list(new)})",
                v, shape=new, depth=v.depth)


def _concatenated(b: Builder, dt: str) -> Val:
    """Two or three inputs that differ in one dim, concatenated along it (those of the first
    one's shape after elementwise work)."""
    rng = b.rng
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
    return b.op(f"pypto.concat([{names}], dim={dim})", f"torch.cat([{names}], dim={dim})",
                parts[0], shape=tuple(cshape), depth=max(p.depth for p in parts),
                lo=min(p.lo for p in parts), hi=max(p.hi for p in parts))


def _unsqueezed(b: Builder, dt: str) -> Val:
    """An input with a size-1 dim inserted at a random place."""
    rng = b.rng
    shape = pick_shape(rng, rank=rng.randint(1, 3))
    x = make_input(b, shape, dt)
    d = rng.randint(0, len(shape))
    new = shape[:d] + (1,) + shape[d:]
    return b.op(f"pypto.unsqueeze({x.name}, {d})", f"{x.name}.unsqueeze({d})", x, shape=new,
                depth=0)


def _store_through_inplace_reshape(b: Builder, v: Val, dt: str) -> None:
    """The output declared flat and written through an in-place reshape of itself."""
    out = b.param((math.prod(v.shape),), dt, "out")
    b.emit(f"o = pypto.reshape({out.name}, {list(v.shape)}, inplace=True)",
           f"o = {out.name}.reshape({list(v.shape)})")
    b.store(Val("o", v.shape, dt), v)
    b.checks[out.name] = b.checks.pop("o")
    b.notes.append("output written through an in-place reshape")


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
