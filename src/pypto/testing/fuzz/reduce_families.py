"""Generator families that reduce along one dim: sum / amax / amin (kept or dropped, sometimes
broadcast back against their input, sometimes over a DYNAMIC dim 0), softmax, and mean, var,
prod and cumsum. Each takes a Builder and adds one kernel to it.

Their own module because a reduction is where a value's bounds and accumulated error grow with
a dim's size (`acc`, the sum's range), and where the output shape depends on `keepdim`: what
these families share, and what the elementwise families never need.

NOTE: every draw from `b.rng` happens in the order the kernels were first generated with: the
same seed must give the same kernels (tests/testing checks it).
"""
from __future__ import annotations

import math

from pypto.testing.fuzz.builder import (Builder, Val, dynamic_calls, make_input, pick_dtype,
                                        pick_shape)
from pypto.testing.fuzz.ops import chain


def reduce(b: Builder) -> None:
    """sum, amax or amin along a random dim, stored as is or broadcast back against its
    input; with a DYNAMIC dim 0, called with several sizes."""
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
    v = _reduction_input(b, x, dt)
    r = _reduced(b, v, op, dim, keep)
    back = keep and rng.random() < 0.5
    r, bshape = _squeezed_for_broadcast(b, r, shape) if back else (r, shape)
    rows = sorted({shape[0], rng.randint(1, 40), rng.randint(1, 40)})
    # outputs as long as the input in dim 0 are DYNAMIC there too
    dynamic_rows = shape[0] if dynamic and (dim != 0 or back) else None
    if dynamic:
        if dim == 0 and not back:
            # the reduced dim is the dynamic one: every output is static
            r.acc = v.acc + (max(rows) if op == "sum" else 0)
        b.notes.append("dynamic dim 0")
    if back:
        out = _output(b, bshape, dt, dynamic_rows)
        b.vec_tile(bshape, dt, force=rng.random() < 0.3 or bshape != shape)
        b.store(out, _broadcast_back(b, v, r, op, bshape))
    else:
        out = _output(b, r.shape, dt, dynamic_rows)
        b.vec_tile(r.shape, dt)
        b.store(out, r)
    if dynamic:
        dynamic_calls(b, rows)


def _reduction_input(b: Builder, x: Val, dt: str) -> Val:
    """`x`, sometimes after an elementwise chain; a float value beyond [-4, 4] squashed by
    tanh, so that a sum of many stays small (an INT32 one is kept: a chain of no steps)."""
    rng = b.rng
    v = chain(b, x, rng.randint(0, 2)) if rng.random() < 0.6 else x
    if v.mag > 4:
        v = chain(b, v, 0) if dt == "int32" else b.op(f"pypto.tanh({v.name})",
                                                       f"torch.tanh({v.name})", v, lo=-1, hi=1)
    return v


def _reduced(b: Builder, v: Val, op: str, dim: int, keep: bool) -> Val:
    """`pypto.<op>(v, dim, keepdim)`, the dim written from the end at random."""
    shape = v.shape
    dim_text = dim - len(shape) if b.rng.random() < 0.4 else dim
    rshape = tuple(1 if i == dim else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i != dim)
    n = shape[dim]
    lo, hi = (v.lo * n, v.hi * n) if op == "sum" else (v.lo, v.hi)  # a sum's range grows
    return b.op(f"pypto.{op}({v.name}, dim={dim_text}, keepdim={keep})",
                f"torch.{op}({v.name}, {dim_text}, keepdim={keep})", v, shape=rshape, lo=lo,
                hi=hi, acc=v.acc + (n if op == "sum" else 0))


def _squeezed_for_broadcast(b: Builder, r: Val, shape: tuple) -> tuple[Val, tuple]:
    """Sometimes the kept reduction `r` reshaped (one size-1 dim dropped) so that it broadcasts
    against `shape` from the right; returns it and the broadcast shape."""
    rng = b.rng
    rshape = r.shape
    ones = [i for i, d in enumerate(rshape) if d == 1]
    if not (len(shape) >= 2 and ones and rng.random() < 0.35):
        return r, shape
    drop = rng.choice(ones)
    squeezed = tuple(d for i, d in enumerate(rshape) if i != drop)
    padded = (1,) * (len(shape) - len(squeezed)) + squeezed
    if not all(a == c or 1 in (a, c) for a, c in zip(shape, padded)):
        return r, shape
    bshape = tuple(max(a, c) for a, c in zip(shape, padded))
    if math.prod(bshape) > 8192:
        return r, shape
    return b.op(f"pypto.reshape({r.name}, {list(squeezed)})", f"RS({r.name}, {list(squeezed)})",
                r, shape=squeezed, depth=r.depth), bshape


def _broadcast_back(b: Builder, v: Val, r: Val, op: str, bshape: tuple) -> Val:
    """The reduction `r` combined with its input `v` again, broadcast to `bshape`: `v - r` for
    a max / min, `r + v` for a sum."""
    expr = f"{r.name} + {v.name}" if op == "sum" else f"{v.name} - {r.name}"
    return b.op(expr, expr, v, shape=bshape, lo=-abs(r.lo) - v.mag, hi=abs(r.hi) + v.mag,
                depth=r.depth + 1, acc=r.acc)


def _output(b: Builder, oshape: tuple, dt: str, dynamic_rows: int | None) -> Val:
    """The output of shape `oshape`; DYNAMIC in dim 0 when that is `dynamic_rows` long."""
    if dynamic_rows is not None and oshape and oshape[0] == dynamic_rows:
        return b.param(("DYN",) + tuple(oshape[1:]), dt, "out")
    return b.param(oshape, dt, "out")


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

