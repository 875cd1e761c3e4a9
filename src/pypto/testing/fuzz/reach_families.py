"""Generator families that raise the fuzzer's reach (issue 31): `loop_unroll` tiers with their
own TileShapes and tails, views whose valid extents are dynamic expressions, scatters and index
adds, in-place reshapes, long chains of BF16/FP16/FP32 casts around sums, untiled ops beside
many small tiles with assembles of slices, stitch windows with state carried between
instances, and two kernels over shared tensors."""
from __future__ import annotations

from pypto.testing.fuzz.builder import (Builder, Val, dt_attr, dynamic_calls, make_input,
                                        pick_dtype, pick_tile)
from pypto.testing.fuzz.ops import chain


def unroll_tiers(b: Builder) -> None:
    """loop_unroll(0, n, 1, unroll_list) whose tiers pick their own TileShape (`if p <= k`),
    each body a view with a valid extent for the ragged end, reduced per row."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp16", "bf16"])
    cols, block = rng.choice([16, 32]), rng.choice([1, 2, 4])
    factors = sorted(rng.sample([2, 4, 8, 16], rng.randint(1, 3)), reverse=True)
    x = make_input(b, ("DYN", cols), dt)
    out = b.param(("DYN", 1), dt, "out")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.emit(f"nb = pypto.ceildiv(n, {block})", f"nb = -(-n // {block})")
    small = factors[-1]
    with b.block(f"for b, p in pypto.loop_unroll(0, nb, 1, name='tiers', "
                 f"unroll_list={factors})", f"for b, p in UNROLL(0, nb, {factors})"):
        with b.block(f"if p <= {small}", "if True") as node:
            b.emit(f"pypto.set_vec_tile_shapes(p * {block}, {cols})")
        with b.orelse(node):
            b.emit(f"pypto.set_vec_tile_shapes({block * small}, {cols})")
        b.tile_rank = 2
        rows = block * max(factors)
        b.emit(f"r0 = b * {block}", f"r0 = b * {block}")
        blk = b.op(f"pypto.view({x.name}, [p * {block}, {cols}], [r0, 0], "
                   f"valid_shape=[(n - r0).min(p * {block}), {cols}])",
                   f"{x.name}[r0:min(n, r0 + p * {block}), :]", x, shape=(rows, cols), depth=0)
        v = chain(b, blk, rng.randint(0, 2))
        if v.dt == "int32":
            v = b.op(f"pypto.cast({v.name}, {dt_attr(dt)})", v.name, v, dt=dt)
        s = b.op(f"pypto.sum({v.name}, dim=-1, keepdim=True)",
                 f"torch.sum({v.name}, -1, keepdim=True)", v, shape=(rows, 1),
                 lo=-cols * v.mag, hi=cols * v.mag, acc=v.acc + cols)
        b.store(out, s, offsets=["r0", 0], style="slice")
    top = block * max(factors)
    dynamic_calls(b, sorted({rng.randint(1, top), top * 2 + rng.randint(1, block * small),
                             top + block * small + 1}))


def valid_extent(b: Builder) -> None:
    """Views whose valid extents are expressions of the dynamic size (min, max, differences)
    in both dims, reduced along either axis and written back through a second view."""
    rng = b.rng
    dt = pick_dtype(rng, ints=False)
    cols = rng.choice([16, 32, 64])
    x = make_input(b, ("DYN", cols), dt)
    out = b.param((8, cols), dt, "out")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    rows = rng.choice([4, 8])
    keep = rng.choice([cols // 2, cols - 3, cols])
    b.tile(pick_tile(rng, (rows, cols), dt))
    v = b.op(f"pypto.view({x.name}, [{rows}, {cols}], [0, 0], "
             f"valid_shape=[(n - 1).max(1).min({rows}), (n * 5).min({keep})])",
             f"{x.name}[0:min(max(n - 1, 1), {rows}), 0:min(n * 5, {keep})]", x,
             shape=(rows, cols), depth=0)
    v = chain(b, v, rng.randint(1, 2))
    axis = rng.randrange(2)
    if axis == 0:
        s = b.op(f"pypto.sum({v.name}, dim=0, keepdim=True)",
                 f"torch.sum({v.name}, 0, keepdim=True)", v, shape=(1, cols),
                 lo=-rows * v.mag, hi=rows * v.mag, acc=v.acc + rows)
    else:
        s = b.op(f"pypto.amax({v.name}, dim=-1, keepdim=True)",
                 f"torch.amax({v.name}, -1, keepdim=True)", v, shape=(rows, 1))
    b.store(out, s, offsets=[rng.randint(0, 8 - s.shape[0]), 0], style="assemble")
    dynamic_calls(b, sorted({1, 2, rng.randint(3, rows + 2), rows + 5}))


def scatter(b: Builder) -> None:
    """Scatters into a copy of the input (in place, or adding with repeated indices), index_add
    with repeated indices, and scatter_update of one slot of a paged cache."""
    rng = b.rng
    kind = rng.choice(["scatter_", "scatter_add", "index_add", "scatter_update"])
    b.notes.append(kind)
    dt = "fp32" if kind in ("scatter_add", "index_add") else pick_dtype(rng, ints=False)
    rows, cols = rng.choice([8, 16]), rng.choice([16, 32])
    x = make_input(b, (rows, cols), dt)
    out = b.param((rows, cols), dt, "out")
    m = rng.randint(1, rows)
    if kind == "index_add":
        idx = b.param((m,), "int32", low=0, high=rows - 1)
        src = make_input(b, (m, cols), dt)
        b.vec_tile((rows, cols), "fp16")
        v = b.op(f"pypto.index_add({x.name}, 0, {idx.name}, {src.name}, alpha=0.5)",
                 f"{x.name}.index_add(0, {idx.name}.long(), {src.name}, alpha=0.5)", x,
                 lo=-2.0 - m, hi=2.0 + m, acc=m + 1)
        b.store(out, v)
        return
    b.emit(f"{out.name}[:] = {x.name}", f"ASM({out.name}, {x.name}, [0, 0])")
    if kind == "scatter_update":   # one slot: repeated slots keep an unspecified one
        idx = b.param((1, 1), "int32", low=0, high=rows - 1)
        src = make_input(b, (1, cols), dt)
        b.vec_tile((1, cols), "fp16", force=True)
        b.emit(f"{out.name}.move(pypto.scatter_update({out.name}, -2, {idx.name}, "
               f"{src.name}))", f"{out.name}[{idx.name}[0].long()] = {src.name}")
        return
    b.vec_tile((rows, cols), "fp16")
    if kind == "scatter_add":
        idx = b.param((m, cols), "int32", low=0, high=rows - 1)
        src = make_input(b, (m, cols), dt)
        b.emit(f"pypto.scatter_({out.name}, 0, {idx.name}, {src.name}, reduce='add')",
               f"{out.name}.scatter_add_(0, {idx.name}.long(), {src.name})")
        b.checks[out.name] = (2, m + 1, 2.0 * (m + 1))
        return
    # one index row: each column is written once, so no order question arises
    idx = b.param((1, cols), "int32", low=0, high=rows - 1)
    src = make_input(b, (1, cols), dt)
    b.emit(f"pypto.scatter_({out.name}, 0, {idx.name}, {src.name})",
           f"{out.name}.scatter_(0, {idx.name}.long(), {src.name})")


def inplace_reshape(b: Builder) -> None:
    """A scratch tensor written through one shape and read through an in-place reshape of
    another (writes through either reach the same storage)."""
    rng = b.rng
    dt = pick_dtype(rng)
    a, c = rng.choice([(4, 8), (8, 4), (2, 16), (16, 2)])
    cols = rng.choice([8, 16])
    x = make_input(b, (a * c, cols), dt)
    out = b.param((a, c * cols), dt, "out")
    gold = "int64" if dt == "int32" else "float64"
    b.emit(f"t = pypto.tensor([{a * c}, {cols}], {dt_attr(dt)}, 't')",
           f"t = torch.zeros({a * c}, {cols}, dtype=torch.{gold})")
    b.tile(pick_tile(rng, (a * c, cols), dt))
    v = chain(b, b.op(f"{x.name} + 0", f"{x.name}", x, depth=0), rng.randint(1, 2))
    b.emit(f"t[:] = {v.name}", f"ASM(t, {v.name}, [0, 0])")
    b.emit(f"u = pypto.reshape(t, [{a}, {c * cols}], inplace=True)",
           f"u = t.reshape({a}, {c * cols})")
    b.tile(pick_tile(rng, (a, c * cols), dt))
    w = b.op("u * 2", "u * 2", Val("u", (a, c * cols), v.dt, v.lo, v.hi, v.depth, v.acc,
                                   v.scale), lo=2 * v.lo, hi=2 * v.hi)
    b.store(out, w)


def cast_mix(b: Builder) -> None:
    """Long chains through BF16, FP16 and FP32 with sums and products between the casts, so
    an FP32 sum's order error meets a BF16 rounding boundary now and then."""
    rng = b.rng
    rows, cols = rng.choice([4, 8, 16]), rng.choice([32, 64, 128])
    x = make_input(b, (rows, cols), "fp32")
    b.vec_tile((rows, cols), "fp16")
    v = x
    for _ in range(rng.randint(3, 6)):
        to = rng.choice([d for d in ("fp32", "fp16", "bf16") if d != v.dt])
        v = b.op(f"pypto.cast({v.name}, {dt_attr(to)})", v.name, v, dt=to)
        if rng.random() < 0.5:
            v = chain(b, v, 1)
    if v.dt != "fp32":
        v = b.op(f"pypto.cast({v.name}, pypto.DT_FP32)", v.name, v, dt="fp32")
    s = b.op(f"pypto.sum({v.name}, dim=-1, keepdim=True)",
             f"torch.sum({v.name}, -1, keepdim=True)", v, shape=(rows, 1),
             lo=-cols * v.mag, hi=cols * v.mag, acc=v.acc + cols)
    to = rng.choice(["bf16", "fp16"])
    p = b.op(f"pypto.cast({v.name} / (pypto.abs({s.name}) + 1.0), {dt_attr(to)})",
             f"R({v.name} / R(R(torch.abs({s.name}), 'fp32') + 1.0, 'fp32'), 'fp32')", v,
             dt=to, lo=-v.mag, hi=v.mag, depth=s.depth + 4, acc=s.acc)
    out = b.param((rows, cols), to, "out")
    b.store(out, p)


def concat_tiles(b: Builder) -> None:
    """An untiled concat beside many small tiles of the same values, and assembles of slices
    of them (issue 31's compile-time case, at fuzz sizes)."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp16"])
    d0, d1 = rng.choice([3, 5, 9]), rng.choice([4, 6])
    cols = 16
    x = make_input(b, (d0, d1, cols), dt)
    o0 = b.param((d0, 2 * d1, cols), dt, "out")
    o1 = b.param((d0, d1, cols), dt, "out")
    b.tile([1, rng.choice([1, 2]), 16])
    v = b.op(f"pypto.abs({x.name})", f"torch.abs({x.name})", x, lo=0.0)
    c = b.op(f"pypto.concat([{x.name}, {v.name}], dim=1)", f"torch.cat([{x.name}, {v.name}], 1)",
             v, shape=(d0, 2 * d1, cols), lo=x.lo, depth=v.depth)
    b.store(o0, c)
    cut = rng.randint(1, d0 - 1)
    head = b.op(f"{v.name}[0:{cut}, :, :]", f"{v.name}[0:{cut}, :, :]", v,
                shape=(cut, d1, cols), depth=v.depth)
    tail = b.op(f"pypto.neg({v.name}[{cut}:{d0}, :, :])", f"-{v.name}[{cut}:{d0}, :, :]", v,
                shape=(d0 - cut, d1, cols), lo=-v.hi, hi=0.0)
    b.store(o1, head, offsets=[0, 0, 0], style="assemble")
    b.store(o1, tail, offsets=[cut, 0, 0], style="assemble")


def stitch_state(b: Builder) -> None:
    """A recurrence through an output across loop iterations (row i reads row i - 1), with
    few instances per stitch window: the state crosses windows and instances in them."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp32", "int32", "bf16"])
    cols = rng.choice([8, 16, 32])
    x = make_input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    b.runtime = {"stitch_function_max_num": rng.choice([1, 2, 3, 5])}
    b.notes.append(f"stitch_function_max_num {b.runtime['stitch_function_max_num']}")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    half, ghalf = ("// 2", "// 2") if dt == "int32" else ("* 0.5", "* 0.5")
    with b.block("for i in pypto.loop(n, name='rows', idx_name='i')", "for i in range(n)"):
        with b.block("if pypto.is_loop_begin(i)", "if i == 0") as node:
            b.emit(f"{out.name}[0:1, :] = {x.name}[0:1, :]",
                   f"ASM({out.name}, {x.name}[0:1, :], [0, 0])")
        with b.orelse(node):
            prev, row = f"{out.name}[i - 1:i, :]", f"{x.name}[i:i + 1, :]"
            gold = (f"FDIV({prev}, 2) + {row}" if dt == "int32"
                    else f"R(R({prev} {ghalf}, '{dt}') + {row}, '{dt}')")
            b.emit(f"{out.name}[i:, :] = {prev} {half} + {row}",
                   f"ASM({out.name}, R({gold}, '{dt}'), [i, 0])")
    rows = rng.randint(3, 12)
    b.checks[out.name] = (2 * rows, 0, 4.0)
    dynamic_calls(b, sorted({rows, rng.randint(1, rows), rows + 4}))


def two_kernels(b: Builder) -> None:
    """Two kernels over shared tensors: the first writes an output the second reads (or
    updates in place) beside its own output."""
    rng = b.rng
    dt = pick_dtype(rng)
    shape = rng.choice([(8, 16), (16, 32), (4, 64)])
    x = make_input(b, shape, dt)
    y = make_input(b, shape, dt)
    mid = b.param(shape, dt, "out")
    out = b.param(shape, dt, "out")
    b.vec_tile(shape, dt)
    v = chain(b, b.op(f"{x.name} + 0", f"{x.name}", x, depth=0), rng.randint(1, 2))
    b.store(mid, v)
    with b.second_kernel([mid.name, y.name, out.name]):
        b.tile(pick_tile(rng, shape, dt))
        m = Val(mid.name, shape, dt, v.lo, v.hi, v.depth, v.acc, v.scale)
        w = chain(b, b.op(f"{m.name} + {y.name}", f"{m.name} + {y.name}", m,
                          lo=m.lo - 2, hi=m.hi + 2), rng.randint(0, 2))
        b.store(out, w)
        if rng.random() < 0.5:   # the second kernel also updates the shared tensor
            u = b.op(f"{m.name} * 2", f"{m.name} * 2", m, lo=2 * m.lo, hi=2 * m.hi)
            b.store(mid, u)
    b.notes.append("two kernels")
