"""Tracing semantics of `pypto.frontend.jit`: control paths, loops, unrolling, loop-carried
state, the compile cache and symbolic shapes (api_surface.md §1.3/§5, compiler_runtime.md §2).

Every kernel here runs on the reference executor and is checked against a torch golden, and
the structure of the traced program (paths, variants, root-function instances) is asserted."""
from __future__ import annotations

import pypto
import pytest
import torch

from pypto.ir.program import Block, Loop

F32 = pypto.DT_FP32
I32 = pypto.DT_INT32
DYN = pypto.DYNAMIC


def loops_named(kernel, name: str) -> list[Loop]:
    return [lp for lp in kernel.last_program.loops() if lp.name == name]


def instances(kernel, prefix: str) -> int:
    """How many root-function instances ran whose block name starts with `prefix`."""
    counts = kernel.last_executor.block_instances
    return sum(n for name, n in counts.items() if name.startswith(prefix))


# --------------------------------------------------------------------------------------------
# Control paths

def test_if_elif_else_on_symbolic_conditions_traces_the_body_three_times():
    """A loop body with if/elif/else on symbolic conditions is traced once per control path
    (3), not once per iteration; each path is a root function picked at run time."""
    traced = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="L"):
            v = pypto.view(x, [16, 64], [i, 0], valid_shape=[(n - i).min(16), 64])
            traced.append("body")
            if i == 0:
                y[i:, :] = v * 2.0
            elif i == 16:
                y[i:, :] = v * 3.0
            else:
                y[i:, :] = v + 1.0

    x, y = torch.rand(50, 64), torch.zeros(50, 64)
    k(x, y)
    ref = x + 1
    ref[:16], ref[16:32] = x[:16] * 2, x[16:32] * 3
    assert torch.equal(y, ref)
    assert len(traced) == 3
    (lp,) = loops_named(k, "L")
    assert [len(v.paths) for v in lp.variants] == [3]
    assert [len(p.conds) for p in lp.variants[0].paths] == [1, 2, 2]
    assert k.last_executor.block_instances == {
        "TENSOR_L_Unroll1_PATH0_hiddenfunc0": 1, "TENSOR_L_Unroll1_PATH1_hiddenfunc0": 1,
        "TENSOR_L_Unroll1_PATH2_hiddenfunc0": 2}


def test_uneven_decision_tree_enumerates_every_path_once():
    """Branches nested in only one arm give a tree of uneven depth: if/if-else/else followed by
    another if has 2*2 + 2 = 6 paths, each recording only the conditions it met."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], F32), y: pypto.Tensor([8, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(8, name="L"):
            v = x[i:i + 1, :]
            if i < 4:
                if i % 2 == 0:
                    t = v * 2.0
                else:
                    t = v * 3.0
            else:
                t = v * 5.0
            if i >= 6:
                t = t + 100.0
            y[i:, :] = t

    x, y = torch.rand(8, 64), torch.zeros(8, 64)
    k(x, y)
    scale = torch.tensor([2.0, 3.0, 2.0, 3.0, 5.0, 5.0, 5.0, 5.0])[:, None]
    ref = x * scale
    ref[6:] += 100
    assert torch.equal(y, ref)
    (variant,) = loops_named(k, "L")[0].variants
    assert [[taken for _, taken in p.conds] for p in variant.paths] == [
        [True, True, True], [True, True, False], [True, False, True], [True, False, False],
        [False, True], [False, False]]
    assert sum(k.last_executor.block_instances.values()) == 8


def test_loop_body_without_condition_is_traced_once():
    """Without a runtime branch the body is traced once whatever the trip count; Python side
    effects never see concrete indices."""
    seen = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(x.shape[0], name="L"):
            seen.append(i)
            y[i:, :] = x[i:i + 1, :] * 2.0

    x, y = torch.rand(7, 64), torch.zeros(7, 64)
    k(x, y)
    assert torch.equal(y, x * 2)
    assert len(seen) == 1 and isinstance(seen[0], pypto.SymbolicScalar)
    assert instances(k, "TENSOR_L_") == 7


def test_nested_loops_and_conditions_at_both_levels():
    """Nested pypto.loops nest in the control tree; a branch outside any pypto.loop belongs to
    the implicit default loop, and an inner loop is traced again under every outer path."""
    traced = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        n = x.shape[0]
        if n > 32:
            traced.append("big")
            scale = 2.0
        else:
            traced.append("small")
            scale = 3.0
        for i in pypto.loop(0, n, 16, name="O"):
            bias = 1.0 if traced[-1] == "big" else 0.0   # trace-time Python, per top path
            for j in pypto.loop(2, name="I"):
                r = i + j * 8
                v = pypto.view(x, [8, 64], [r, 0], valid_shape=[(n - r).min(8), 64])
                if j == 1:
                    y[r:, :] = v * scale + bias
                else:
                    y[r:, :] = v * scale - bias

    for rows in (48, 24):
        x, y = torch.rand(rows, 64), torch.zeros(rows, 64)
        k(x, y)
        scale, bias = (2.0, 1.0) if rows > 32 else (3.0, 0.0)
        ref = x * scale
        for r in range(0, rows, 8):
            ref[r:r + 8] += bias if (r // 8) % 2 else -bias
        assert torch.equal(y, ref)
    assert traced == ["big", "small"] and k.compile_count == 1
    assert [len(v.paths) for v in k.last_program.root.variants] == [2]
    assert len(loops_named(k, "O")) == 2 and len(loops_named(k, "I")) == 2
    # 24 rows: O runs twice, I twice per O iteration, both I paths taken twice in total.
    assert instances(k, "TENSOR_I_Unroll1_PATH0") == 2
    assert instances(k, "TENSOR_I_Unroll1_PATH1") == 2


def test_root_function_names_are_unique_when_a_loop_is_traced_twice():
    """An inner loop traced under two outer paths yields distinct root functions, so
    block_instances counts each one separately."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(2, name="O"):
            if i == 0:
                scale = 2.0
            else:
                scale = 3.0
            for j in pypto.loop(2, name="I"):
                r = i * 2 + j
                y[r:, :] = x[r:r + 1, :] * scale

    x, y = torch.rand(4, 64), torch.zeros(4, 64)
    k(x, y)
    ref = x * 3
    ref[:2] = x[:2] * 2
    assert torch.equal(y, ref)
    names = [b.name for b in k.last_program.blocks()]
    assert len(names) == len(set(names)) == 2
    assert sorted(k.last_executor.block_instances.values()) == [2, 2]


def test_python_for_unrolls_into_one_block():
    """A Python `for` over a static range is unrolled into the current root function: one
    block holding every copy's ops, instantiated once."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], F32), y: pypto.Tensor([8, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for r in range(8):
            y[r:, :] = x[r:r + 1, :] + float(r)

    x, y = torch.rand(8, 64), torch.zeros(8, 64)
    k(x, y)
    assert torch.equal(y, x + torch.arange(8.0)[:, None])
    blocks = list(k.last_program.blocks())
    assert len(blocks) == 1 and len(blocks[0].ops) == 8 * 3   # view, adds, assemble per row
    assert k.last_executor.block_instances == {blocks[0].name: 1}


def test_code_outside_loops_is_the_implicit_default_loop():
    """The kernel body runs inside `loop(1, name="default_loop_1")`: top-level ops form its
    root functions, split around nested pypto.loops."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x * 2.0
        for i in pypto.loop(1, name="L"):
            y[:] = y + 1.0
        y[:] = y * 3.0

    x, y = torch.rand(4, 64), torch.zeros(4, 64)
    k(x, y)
    assert torch.equal(y, (x * 2 + 1) * 3)
    root = k.last_program.root
    assert root.name == "default_loop_1" and root.variants[0].factor == 1
    items = root.variants[0].paths[0].body.items
    assert [type(it).__name__ for it in items] == ["Block", "Loop", "Block"]
    assert [it.name for it in items if isinstance(it, Block)] == [
        "TENSOR_default_loop_1_Unroll1_PATH0_hiddenfunc0",
        "TENSOR_default_loop_1_Unroll1_PATH0_hiddenfunc1"]


def test_pypto_cond_and_loop_edges():
    """`pypto.cond(expr)` is a runtime branch like `if expr`; is_loop_begin/is_loop_end are true
    on the first/last iteration only (also when the last iteration is partial)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="L"):
            v = pypto.view(x, [16, 64], [i, 0], valid_shape=[(n - i).min(16), 64])
            if pypto.is_loop_begin(i):
                y[i:, :] = v * 2.0
            elif pypto.cond(pypto.is_loop_end(i)):
                y[i:, :] = v * 3.0
            else:
                y[i:, :] = v + 1.0

    for rows, last in ((50, 48), (64, 48), (16, 0)):
        x, y = torch.rand(rows, 64), torch.zeros(rows, 64)
        k(x, y)
        ref = x + 1
        ref[last:] = x[last:] * 3
        ref[:16] = x[:16] * 2
        assert torch.equal(y, ref), rows
    assert k.compile_count == 1


def test_loop_edge_tests_reject_a_non_index():
    """is_loop_begin/is_loop_end need the variable a pypto.loop yielded."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(4, name="L"):
            if pypto.is_loop_begin(i * 2):
                y[i:, :] = x[i:i + 1, :]

    with pytest.raises(pypto.PyptoError, match="not loop index"):
        k(torch.rand(4, 64), torch.zeros(4, 64))


# --------------------------------------------------------------------------------------------
# Unrolling

def _rows_kernel(unroll_list, with_cond: bool = False):
    traced = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="L", unroll_list=unroll_list):
            traced.append(i)
            v = pypto.view(x, [16, 64], [i, 0], valid_shape=[(n - i).min(16), 64])
            if with_cond:
                if i == 0:
                    y[i:, :] = v * 2.0
                else:
                    y[i:, :] = v + 1.0
            else:
                y[i:, :] = v + 1.0
    return k, traced


def test_one_condition_unrolled_four_times_gives_sixteen_paths():
    """Paths multiply with unrolling: one cond in a body unrolled 4x gives 2^4 = 16 paths of
    4 copies each, and the result is still exact."""
    k, traced = _rows_kernel([4], with_cond=True)
    x, y = torch.rand(23 * 16, 64), torch.zeros(23 * 16, 64)
    k(x, y)
    ref = x + 1
    ref[:16] = x[:16] * 2
    assert torch.equal(y, ref)
    (variant,) = loops_named(k, "L")[0].variants
    assert variant.factor == 4 and len(variant.paths) == 16
    assert len(traced) == 16 * 4


def test_single_unroll_factor_steps_by_k_and_tail_copies_are_empty():
    """With one factor the loop steps by step*k over the whole range; copies past the end get
    a zero valid shape and write nothing (23 blocks of 16 rows -> 6 instances)."""
    k, traced = _rows_kernel([4])
    x, y = torch.rand(23 * 16, 64), torch.full((23 * 16, 64), -7.0)
    k(x, y)
    assert torch.equal(y, x + 1)
    (variant,) = loops_named(k, "L")[0].variants
    assert variant.factor == 4 and len(variant.paths) == 1
    assert len(variant.paths[0].body.items[0].ops) == 4 * 3
    assert k.last_executor.block_instances == {"TENSOR_L_Unroll4_PATH0_hiddenfunc0": 6}
    # the copies see consecutive indices of the user's loop
    assert [repr(t - traced[0]) for t in traced] == ["0", "16", "32", "48"]


def test_several_unroll_factors_split_the_range():
    """Factors [8, 2, 1] split 23 iterations into 2x8 + 3x2 + 1x1 instances, each index handled
    once; a different dynamic size reuses the program."""
    k, _ = _rows_kernel([8, 2, 1])
    x, y = torch.rand(23 * 16, 64), torch.zeros(23 * 16, 64)
    k(x, y)
    assert torch.equal(y, x + 1)
    counts = k.last_executor.block_instances
    assert counts == {"TENSOR_L_Unroll8_PATH0_hiddenfunc0": 2,
                      "TENSOR_L_Unroll2_PATH0_hiddenfunc0": 3,
                      "TENSOR_L_Unroll1_PATH0_hiddenfunc0": 1}
    x, y = torch.rand(9 * 16 - 3, 64), torch.zeros(9 * 16 - 3, 64)   # 9 iterations: 1x8 + 1x1
    k(x, y)
    assert torch.equal(y, x + 1) and k.compile_count == 1
    assert instances(k, "TENSOR_L_Unroll8") == 1 and instances(k, "TENSOR_L_Unroll2") == 0
    assert instances(k, "TENSOR_L_Unroll1") == 1


def test_unroll_list_with_several_factors_needs_one():
    """Several factors without 1 cannot cover every remainder."""
    k, _ = _rows_kernel([8, 2])
    with pytest.raises(pypto.PyptoError, match="must contain 1"):
        k(torch.rand(32, 64), torch.zeros(32, 64))


def _unroll_kernel(unroll_list, tiers):
    """y[r] = x[r] + y[r] + 1 for every row: a row handled twice would be off by one."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        for b, p in pypto.loop_unroll(x.shape[0], unroll_list=unroll_list, name="U"):
            tiers.append(p)
            if p <= 16:
                pypto.set_vec_tile_shapes(p, 64)
            else:
                pypto.set_vec_tile_shapes(16, 64)
            y[b:, :] = pypto.view(x, [p, 64], [b, 0]) + y[b:b + p, :] + 1.0
    return k


def test_loop_unroll_decomposes_greedily_and_processes_each_index_once():
    """loop_unroll(37, [64, 16, 4]) runs 0x64, 2x16, 1x4, 1x1; k is a Python int usable in
    static shapes and per-tier TileShapes (`if k <= 16:`)."""
    tiers = []
    k = _unroll_kernel([64, 16, 4], tiers)
    x, y = torch.rand(37, 64), torch.zeros(37, 64)
    k(x, y)
    assert torch.equal(y, x + 1)
    assert tiers == [64, 16, 4, 1]
    assert k.last_executor.block_instances == {
        "TENSOR_U_LoopUnroll16_Unroll1_PATH0_hiddenfunc0": 2,
        "TENSOR_U_LoopUnroll4_Unroll1_PATH0_hiddenfunc0": 1,
        "TENSOR_U_LoopUnroll1_Unroll1_PATH0_hiddenfunc0": 1}
    tiers_only = [lp for lp in k.last_program.loops() if lp.name != "default_loop_1"]
    tiles = {lp.name: {op.tile.vec for b in lp.variants[0].paths[0].body.items
                       for op in b.ops} for lp in tiers_only}
    assert tiles == {"U_LoopUnroll64": {(16, 64)}, "U_LoopUnroll16": {(16, 64)},
                     "U_LoopUnroll4": {(4, 64)}, "U_LoopUnroll1": {(1, 64)}}


def test_loop_unroll_with_non_dividing_factors_does_not_double_process():
    """[3, 2] with N=5 runs 1x3 + 1x2 (PyPTO's remainder quirk would process index 4 twice)."""
    k = _unroll_kernel([3, 2], [])
    x, y = torch.rand(5, 64), torch.zeros(5, 64)
    k(x, y)
    assert torch.equal(y, x + 1)
    assert k.last_executor.block_instances == {
        "TENSOR_U_LoopUnroll3_Unroll1_PATH0_hiddenfunc0": 1,
        "TENSOR_U_LoopUnroll2_Unroll1_PATH0_hiddenfunc0": 1}


def test_loop_unroll_last_tier_covers_a_partial_step():
    """With step 3 over 10 rows the indices are 0, 3, 6, 9: the factor-1 tier runs to the end
    of the range, so index 9 is not dropped."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for b, p in pypto.loop_unroll(0, x.shape[0], 3, unroll_list=[2], name="U"):
            for c in range(p):
                y[b + 3 * c:, :] = x[b + 3 * c:b + 3 * c + 1, :] + 1.0

    for rows in (10, 9, 2):
        x, y = torch.rand(rows, 64), torch.zeros(rows, 64)
        k(x, y)
        ref = torch.zeros(rows, 64)
        ref[::3] = x[::3] + 1
        assert torch.equal(y, ref), rows


# --------------------------------------------------------------------------------------------
# Loop-carried state

def test_loop_carried_state_through_a_local_tensor_online_softmax():
    """A `pypto.tensor` created outside the loop and updated with `t[:] = ...` carries state
    across iterations in order: an online softmax over column blocks equals torch.softmax."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, DYN], F32), y: pypto.Tensor([8, DYN], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        n = x.shape[1]
        m = pypto.tensor([8, 1], F32, "m")
        s = pypto.tensor([8, 1], F32, "s")
        for j in pypto.loop(0, n, 16, name="S"):
            blk = pypto.view(x, [8, 16], [0, j])
            bmax = pypto.amax(blk, dim=-1, keepdim=True)
            if pypto.is_loop_begin(j):
                m[:] = bmax
                s[:] = pypto.sum(pypto.exp(blk - bmax), dim=-1, keepdim=True)
            else:
                m_new = pypto.maximum(m, bmax)
                s[:] = s * pypto.exp(m - m_new) + pypto.sum(pypto.exp(blk - m_new), dim=-1,
                                                             keepdim=True)
                m[:] = m_new
        for j in pypto.loop(0, n, 16, name="W"):
            blk = pypto.view(x, [8, 16], [0, j])
            y[:, j:] = pypto.exp(blk - m) / s

    x, y = torch.randn(8, 64), torch.zeros(8, 64)
    k(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-6, atol=1e-7)
    assert instances(k, "TENSOR_S_Unroll1_PATH0") == 1
    assert instances(k, "TENSOR_S_Unroll1_PATH1") == 3


def test_loop_carried_accumulation_is_in_iteration_order():
    """acc = acc * 0.5 + x_i is order-sensitive: the executor applies updates in order."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        acc = pypto.tensor([16, 64], F32, "acc")
        acc[:] = pypto.full([16, 64], 0.0, F32)
        for i in pypto.loop(0, x.shape[0], 16, name="L"):
            acc[:] = acc * 0.5 + x[i:i + 16, :]
        out[:] = acc

    x, out = torch.rand(64, 64), torch.zeros(16, 64)
    k(x, out)
    ref = torch.zeros(16, 64)
    for i in range(0, 64, 16):
        ref = ref * 0.5 + x[i:i + 16]
    assert torch.equal(out, ref)


def test_local_tensor_with_a_dynamic_size():
    """`pypto.tensor([x.shape[0], 64], ...)` in a body is a local of runtime size, not an
    annotation with a named dynamic dim."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        acc = pypto.tensor([x.shape[0], 64], F32, "acc")
        acc[:] = x * 2.0
        y[:] = acc + 1.0

    for rows in (16, 5):
        x, y = torch.rand(rows, 64), torch.zeros(rows, 64)
        k(x, y)
        assert torch.equal(y, x * 2 + 1)
    assert [s.name for s in k.last_program.locals] == ["acc"] and k.compile_count == 1


# --------------------------------------------------------------------------------------------
# Compile cache

def test_dynamic_sizes_reuse_the_program_and_static_changes_recompile():
    """Dynamic dims never recompile; a new static shape (`...` dims) or a new non-tensor
    argument value does, and a repeated one hits the cache."""
    traces = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, ...], F32), y: pypto.Tensor([DYN, ...], F32), scale=2.0):
        traces.append(scale)
        w = x.shape[1]
        pypto.set_vec_tile_shapes(1, w)
        for i in pypto.loop(x.shape[0], name="L"):
            y[i:, :] = x[i:i + 1, :] * scale

    def call(rows, cols, *extra):
        x, y = torch.rand(rows, cols), torch.zeros(rows, cols)
        k(x, y, *extra)
        assert torch.equal(y, x * (extra[0] if extra else 2.0))

    call(5, 64)
    call(17, 64)
    call(1, 64)
    assert k.compile_count == 1
    call(5, 32)
    assert k.compile_count == 2
    call(5, 64, 3.0)
    call(9, 64, 3.0)
    assert k.compile_count == 3
    call(5, 64)
    assert k.compile_count == 3 and traces == [2.0, 2.0, 3.0]


def test_dataclass_config_is_a_trace_time_constant():
    """A dataclass passed as a non-tensor argument is read at trace time (usable in static
    shapes) and keys the cache by value."""
    from dataclasses import dataclass

    @dataclass
    class Cfg:
        rows: int
        bias: float

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32), cfg: Cfg):
        pypto.set_vec_tile_shapes(cfg.rows, 64)
        for i in pypto.loop(0, x.shape[0], cfg.rows, name="L"):
            y[i:, :] = x[i:i + cfg.rows, :] + cfg.bias

    x, y = torch.rand(16, 64), torch.zeros(16, 64)
    k(x, y, Cfg(4, 1.0))
    assert torch.equal(y, x + 1)
    k(x, y, Cfg(4, 1.0))
    assert k.compile_count == 1 and k.last_executor.block_instances == {
        "TENSOR_L_Unroll1_PATH0_hiddenfunc0": 4}
    k(x, y, cfg=Cfg(8, 2.0))
    assert torch.equal(y, x + 2) and k.compile_count == 2
    assert k.last_executor.block_instances == {"TENSOR_L_Unroll1_PATH0_hiddenfunc0": 2}


def test_runtime_options_dict_is_held_by_reference(capsys, monkeypatch):
    """A change to the runtime_options dict after decoration takes effect on the next call
    without recompiling (run_mode NPU prints its notice; a bad value is rejected)."""
    from pypto import driver as kernel_mod
    monkeypatch.setattr(kernel_mod, "_NPU_NOTICE_SHOWN", False)
    rt = {"run_mode": pypto.RunMode.SIM}

    @pypto.frontend.jit(runtime_options=rt)
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x + 1.0

    x, y = torch.rand(4, 64), torch.zeros(4, 64)
    k(x, y)
    assert "no NPU" not in capsys.readouterr().err
    rt["run_mode"] = pypto.RunMode.NPU
    k(x, y)
    assert "no NPU is present" in capsys.readouterr().err
    assert torch.equal(y, x + 1) and k.compile_count == 1
    rt["stitch_function_max_num"] = 4096
    with pytest.raises(pypto.PyptoError, match="stitch_function_max_num"):
        k(x, y)


# --------------------------------------------------------------------------------------------
# Symbolic shapes and runtime scalars

def test_symbolic_slice_lengths_simplify():
    """x[i*T:(i+1)*T] has length (i+1)*T - i*T, which simplifies to the int T."""
    lengths = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        for i in pypto.loop(x.shape[0] // 8, name="L"):
            lengths.append((i + 1) * 8 - i * 8)
            y[i * 8:(i + 1) * 8, :] = x[i * 8:(i + 1) * 8, :] * 2.0

    x, y = torch.rand(40, 64), torch.zeros(40, 64)
    k(x, y)
    assert torch.equal(y, x * 2)
    assert lengths == [8] and type(lengths[0]) is pypto.SymbolicScalar
    assert lengths[0].concrete() == 8


def test_int32_element_reads_drive_offsets_valid_shapes_and_loop_bounds():
    """`t[b]` on an INT32 tensor is a runtime scalar: usable in a view offset, a valid shape,
    a loop bound and a branch condition, evaluated with the real data."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), lens: pypto.Tensor([4], I32),
          starts: pypto.Tensor([4], I32), y: pypto.Tensor([4, 64], F32),
          z: pypto.Tensor([4, 8, 64], F32)):
        for b in pypto.loop(4, name="B"):
            pypto.set_vec_tile_shapes(1, 64)
            acc = pypto.tensor([1, 64], F32, "acc")
            acc[:] = pypto.full([1, 64], 0.0, F32)
            for j in pypto.loop(lens[b], name="J"):
                acc[:] = acc + pypto.view(x, [1, 64], [starts[b] + j, 0])
            if lens[b] > 2:
                y[b:, :] = acc
            else:
                y[b:, :] = acc - 100.0
            pypto.set_vec_tile_shapes(8, 64)
            w = pypto.view(x, [8, 64], [starts[b], 0], valid_shape=[lens[b], 64])
            padded = pypto.fillpad(w, value=0.0)
            pypto.set_vec_tile_shapes(1, 8, 64)
            z[b:, :, :] = pypto.reshape(padded, [1, 8, 64])

    lens = torch.tensor([3, 1, 0, 5], dtype=torch.int32)
    starts = torch.tensor([0, 3, 4, 4], dtype=torch.int32)
    x = torch.rand(9, 64)
    y, z = torch.full((4, 64), -1.0), torch.full((4, 8, 64), -1.0)
    k(x, lens, starts, y, z)
    ref_y, ref_z = torch.zeros(4, 64), torch.zeros(4, 8, 64)
    for b, (s, n) in enumerate(zip(starts.tolist(), lens.tolist())):
        acc = torch.zeros(64)
        for j in range(n):
            acc = acc + x[s + j]
        ref_y[b] = acc if n > 2 else acc - 100.0
        ref_z[b, :n] = x[s:s + n]
    assert torch.equal(y, ref_y) and torch.equal(z, ref_z)
    assert instances(k, "TENSOR_J_") == 9


def test_break_inside_pypto_loop_is_a_clear_error():
    """`break` would silently drop iterations from the trace; it is rejected and the error
    points at the loop."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for i in pypto.loop(0, x.shape[0], 16, name="L"):
            y[i:, :] = x[i:i + 16, :] * 2.0
            if i == 16:
                break

    with pytest.raises(pypto.PyptoError, match=r"pypto\.loop 'L'.*break") as info:
        k(torch.rand(64, 64), torch.zeros(64, 64))
    assert f"test_tracing.py:{k.func.__code__.co_firstlineno + 3}" in str(info.value)


def test_a_failed_trace_leaves_the_option_scopes_clean():
    """An exception inside a pypto.loop body (even one collected later) must not leave the
    kernel's option scopes behind."""
    import gc

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        for i in pypto.loop(2, name="O"):
            for j in pypto.loop(2, name="I"):
                pypto.set_vec_tile_shapes(1, 64)
                raise KeyError("boom")

    for _ in range(2):
        with pytest.raises(KeyError):
            k(torch.rand(4, 64), torch.zeros(4, 64))
        gc.collect()
        assert pypto.get_current_scope() == "global"
        assert pypto.get_vec_tile_shapes() == []
