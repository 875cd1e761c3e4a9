"""Generator families with control flow: `pypto.loop` over row blocks with tails and
valid_shape, runtime conditions, `loop_unroll`, nested, triangular and strided loops,
loop-carried state and recurrences through outputs, and an attention core per row block.
Most take a DYNAMIC row count and are called with several sizes (one compile expected)."""
from __future__ import annotations

from pypto.testing.fuzz.builder import (Builder, Val, dt_attr, dynamic_calls, dynamic_rows,
                                        make_input, pick_dtype, pick_tile)
from pypto.testing.fuzz.ops import chain


def loop(b: Builder) -> None:
    """pypto.loop over row blocks of a dynamic (or static) row count, tails by valid_shape."""
    rng = b.rng
    dt = pick_dtype(rng)
    cols = rng.choice([8, 16, 32, 64])
    block = rng.choice([1, 2, 4, 8, 16])
    dynamic = rng.random() < 0.7
    static_rows = rng.choice([5, 16, 24, 33])
    rows = "DYN" if dynamic else static_rows
    x = make_input(b, (rows, cols), dt)
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
        dynamic_calls(b, dynamic_rows(b, block))


def cond(b: Builder) -> None:
    """Runtime branches on the loop index inside a row loop, or on the dynamic size itself
    outside any loop."""
    rng = b.rng
    dt = pick_dtype(rng)
    cols = rng.choice([8, 16, 32, 64])
    rows = rng.choice([3, 5, 8, 11])
    x = make_input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    if rng.random() < 0.3:
        whole = Val(x.name, (rows, cols), dt, x.lo, x.hi)
        b.tile(pick_tile(rng, (rows, cols), dt))
        with b.block(f"if n > {rows}", f"if n > {rows}") as node:
            b.store(out, chain(b, whole, rng.randint(1, 2)))
        with b.orelse(node):
            b.store(out, chain(b, whole, rng.randint(1, 2)))
        b.notes.append("runtime branch on a dynamic size")
        dynamic_calls(b, sorted({rows, rows + rng.randint(1, 5), rng.randint(1, rows)}))
        return
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
    dynamic_calls(b, sorted({rows, rng.randint(1, rows), rows + rng.randint(1, 4)}))


def unroll(b: Builder) -> None:
    """pypto.loop_unroll over a dynamic row count: the body handles p rows at once."""
    rng = b.rng
    dt = pick_dtype(rng)
    cols = rng.choice([16, 32])
    factors = sorted(rng.sample([2, 4, 8], rng.randint(1, 2)), reverse=True)
    x = make_input(b, ("DYN", cols), dt)
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
    dynamic_calls(b, sorted({rng.randint(1, 20), rng.randint(1, 20), max(factors) * 2 + 1}))


def nested(b: Builder) -> None:
    """Two nested pypto.loops over row and column blocks of a static tensor."""
    rng = b.rng
    dt = pick_dtype(rng)
    rows, cols = rng.choice([8, 12, 16, 24]), rng.choice([16, 32, 64])
    br = rng.choice([d for d in (2, 4, 8) if rows % d == 0])
    bc = rng.choice([d for d in (8, 16, 32) if cols % d == 0])
    x = make_input(b, (rows, cols), dt)
    y = make_input(b, (rows, cols), dt, divisor=True) if rng.random() < 0.5 else None
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
    x = make_input(b, ("DYN", cols), dt)
    acc = b.param((1, cols), dt, "out")
    prefix = b.param(("DYN", cols), dt, "out") if rng.random() < 0.5 else None
    scratch = rng.random() < 0.4
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    state = acc.name
    if scratch:
        state, gold = "state", "int64" if dt == "int32" else "float64"
        b.emit(f"state = pypto.tensor([1, {cols}], {dt_attr(dt)}, 'state')",
               f"state = torch.zeros(1, {cols}, dtype=torch.{gold})")
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
    dynamic_calls(b, sorted({rows, rng.randint(1, rows), rows + 3}))


def attention(b: Builder) -> None:
    """Row blocks of a dynamic query through matmul, scale, softmax, matmul (an attention
    core), with the last block's valid rows given by valid_shape."""
    rng = b.rng
    dt = rng.choice(["fp16", "bf16", "fp32"])
    d, s_len, block = rng.choice([16, 32]), rng.choice([16, 32, 48]), rng.choice([8, 16])
    q = make_input(b, ("DYN", d), dt)
    k = make_input(b, (s_len, d), dt)
    v = make_input(b, (s_len, d), dt)
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
    dynamic_calls(b, dynamic_rows(b, block))


def recurrence(b: Builder) -> None:
    """Each row reads the output row written by the previous iteration: the loop's
    iterations must run in order and see each other's writes."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp32", "bf16", "int32"])
    cols = rng.choice([16, 32])
    x = make_input(b, ("DYN", cols), dt)
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
    dynamic_calls(b, sorted({rows, rng.randint(1, rows), rows + 3}))


def triangle(b: Builder) -> None:
    """Nested loops whose inner bound is the outer index (lower-triangular blocks), or a
    strided loop `pypto.loop(start, stop, step)`."""
    rng = b.rng
    dt = pick_dtype(rng)
    if rng.random() < 0.5:
        g, br, bc = rng.randint(2, 4), rng.choice([2, 4]), 16
        x = make_input(b, (g * br, g * bc), dt)
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
    x = make_input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    start, step = rng.randint(0, 2), rng.randint(1, 3)
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (1, cols), dt))
    with b.block(f"for i in pypto.loop({start}, n, {step}, name='rows', idx_name='i')",
                 f"for i in range({start}, n, {step})"):
        row = b.op(f"{x.name}[i:i + 1, :]", f"{x.name}[i:i + 1, :]", x, shape=(1, cols),
                   depth=0)
        b.store(out, chain(b, row, rng.randint(1, 2)), offsets=["i", 0], style="slice")
    dynamic_calls(b, sorted({rng.randint(1, 12), rng.randint(1, 12), 7}))


def sequence(b: Builder) -> None:
    """Two pypto.loops in a row over one output: the second reads (and may rewrite in place)
    what the first wrote, so the order between root functions matters."""
    rng = b.rng
    dt = pick_dtype(rng)
    cols, block = rng.choice([16, 32]), rng.choice([1, 2, 4])
    x = make_input(b, ("DYN", cols), dt)
    out = b.param(("DYN", cols), dt, "out")
    out2 = b.param(("DYN", cols), dt, "out") if rng.random() < 0.5 else out
    b.emit(f"n = {x.name}.shape[0]", f"n = {x.name}.shape[0]")
    b.tile(pick_tile(rng, (block, cols), dt))
    for step, (src, dst) in enumerate(((x, out), (out, out2))):
        with b.block(f"for i in pypto.loop(pypto.ceildiv(n, {block}), name='pass{step}', "
                     f"idx_name='i')", f"for i in range(-(-n // {block}))"):
            b.emit(f"off = i * {block}", f"off = i * {block}")
            blk = b.op(f"pypto.view({src.name}, [{block}, {cols}], [off, 0], "
                       f"valid_shape=[(n - off).min({block}), {cols}])",
                       f"VIEW({src.name}, [{block}, {cols}], [off, 0], "
                       f"[min(n - off, {block}), {cols}])", src, shape=(block, cols),
                       depth=b.checks.get(src.name, (0,))[0], lo=-9.0, hi=9.0)
            b.store(dst, chain(b, blk, rng.randint(1, 2)), offsets=["off", 0], style="slice")
    dynamic_calls(b, dynamic_rows(b, block))


def lookup(b: Builder) -> None:
    """Values read from an INT32 tensor (`idx[0, i]`, a scalar) drive the kernel: the row a
    view starts at, or the trip count of an inner loop (0 included)."""
    rng = b.rng
    dt = rng.choice(["fp32", "fp16", "bf16"])
    rows, cols, m = rng.choice([4, 8, 16]), rng.choice([16, 32]), rng.randint(1, 6)
    x = make_input(b, (rows, cols), dt)
    b.tile(pick_tile(rng, (1, cols), dt))
    if rng.random() < 0.5:
        idx = b.param((1, m), "int32", low=0, high=rows - 1)
        out = b.param((m, cols), dt, "out")
        with b.block(f"for i in pypto.loop({m}, name='rows', idx_name='i')",
                     f"for i in range({m})"):
            b.emit(f"r = {idx.name}[0, i]", f"r = int({idx.name}[0, i])")
            row = b.op(f"{x.name}[r:r + 1, :]", f"{x.name}[r:r + 1, :]", x, shape=(1, cols),
                       depth=0)
            b.store(out, chain(b, row, rng.randint(1, 2)), offsets=["i", 0], style="slice")
        b.notes.append("rows picked by scalar reads")
        return
    cnt = b.param((1, m), "int32", low=0, high=min(rows, 4))
    out = b.param((m, cols), dt, "out")
    with b.block(f"for i in pypto.loop({m}, name='outer', idx_name='i')",
                 f"for i in range({m})"):
        b.emit(f"c = {cnt.name}[0, i]", f"c = int({cnt.name}[0, i])")
        with b.block("for j in pypto.loop(c, name='inner', idx_name='j')",
                     "for j in range(c)"):
            prev = b.op(f"{out.name}[i:i + 1, :]", f"{out.name}[i:i + 1, :]", x,
                        shape=(1, cols), depth=0, lo=-9.0, hi=9.0)
            row = b.op(f"{x.name}[j:j + 1, :]", f"{x.name}[j:j + 1, :]", x, shape=(1, cols),
                       depth=0)
            half = b.op(f"{prev.name} * 0.5", f"{prev.name} * 0.5", prev)
            nxt = b.op(f"{half.name} + {row.name}", f"{half.name} + {row.name}", half)
            b.store(out, nxt, offsets=["i", 0], style="slice")
    b.checks[out.name] = (12, 0, 9.0)
    b.notes.append("inner trip counts read from a tensor")
