"""Cube tile structure and split-K (compiler_runtime.md §3.2, §6.3 S14-S16).

Each matmul tile op records the steps of its cube subgraph (COPY_IN per L1 chunk, L1->L0A/B per
kL0 step, A_MUL_B then A_MULACC_B, COPY_OUT) in `attrs["cube_plan"]`; with enable_split_k every
kL1 chunk of K is its own cube subgraph writing an FP32/INT32 partial, and vector add chains
(cut by the partition's latency bound) sum the partials into the output.
"""
from collections import Counter

import pytest
import torch

import pypto
from pypto.passes.cube import CubePlan, plan_of, step_counts

S16_CUBE = ([128, 128], [64, 256], [256, 256])


def _only(counts: dict) -> int:
    assert len(counts) == 1, counts
    return next(iter(counts.values()))


def _root(kernel):
    return next(iter(kernel.last_compiled.roots.values()))


def _mm_kernel(cube, split_k, vec=None, in_dt=pypto.DT_FP16, out_dt=pypto.DT_FP32, **mm_kw):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([], in_dt), b: pypto.Tensor([], in_dt), c: pypto.Tensor([], out_dt)):
        if vec is not None:
            pypto.set_vec_tile_shapes(*vec)
        pypto.set_cube_tile_shapes(*cube, enable_split_k=split_k)
        c[:] = pypto.matmul(a, b, out_dt, **mm_kw)
    return k


def _close(out, golden):
    """FP16 inputs, FP32 accumulation: 1e-3 relative to the result's magnitude."""
    scale = golden.abs().max().item() or 1.0
    torch.testing.assert_close(out, golden, rtol=1e-3, atol=1e-3 * scale)


def _run(shape_a, shape_b, cube, split_k, vec=None, seed=0, **mm_kw):
    g = torch.Generator().manual_seed(seed)
    a = (torch.rand(shape_a, generator=g) * 2 - 1).half()
    b = (torch.rand(shape_b, generator=g) * 2 - 1).half()
    at = a.float().transpose(-1, -2) if mm_kw.get("a_trans") else a.float()
    bt = b.float().transpose(-1, -2) if mm_kw.get("b_trans") else b.float()
    golden = torch.matmul(at, bt)
    c = torch.full(golden.shape, 7.0)
    k = _mm_kernel(cube, split_k, vec, **mm_kw)
    k(a, b, c)
    _close(c, golden)
    return k


def test_one_block_structure():
    """Tile 128x256x256 fp16 with kL0 = 64: COPY_IN of A and B, 4 L1_TO_L0A + 4 L1_TO_L0B,
    A_MUL_B then 3 A_MULACC_B accumulating in L0C, one COPY_OUT (the observed subgraph)."""
    k = _run((128, 256), (256, 256), S16_CUBE, False)
    root = _root(k)
    assert root.subgraph_count == 1 and len(root.leaves) == 1
    (mm,) = [op for op in root.calls[0].ops if op.opcode == "MATMUL"]
    plan = plan_of(mm)
    want = {"COPY_IN": 2, "L1_TO_L0A": 4, "L1_TO_L0B": 4, "A_MUL_B": 1, "A_MULACC_B": 3,
            "COPY_OUT": 1}
    assert plan.counts() == want and step_counts(plan.steps()) == want
    assert plan.leaf_op_count() == 15 == len(plan.steps())
    steps = plan.steps()
    assert [s.opcode for s in steps[:4]] == ["COPY_IN", "COPY_IN", "L1_TO_L0A", "L1_TO_L0B"]
    assert steps[0].shape == (128, 256) and steps[0].nbytes == 128 * 256 * 2
    assert steps[1].shape == (256, 256) and steps[1].nbytes == 256 * 256 * 2
    assert steps[2].shape == (128, 64) and steps[3].shape == (64, 256)
    mmads = [s for s in steps if s.pipe == "CUBE"]
    assert [s.shape for s in mmads] == [(128, 64, 256)] * 4
    assert sum(s.macs for s in mmads) == 128 * 256 * 256
    assert steps[-1].opcode == "COPY_OUT" and steps[-1].nbytes == 128 * 256 * 4
    # every step waits only for earlier ones; each MMAD after the first waits for the last one
    assert all(d < i for i, s in enumerate(steps) for d in s.deps)
    idx = [i for i, s in enumerate(steps) if s.pipe == "CUBE"]
    assert all(idx[j - 1] in steps[idx[j]].deps for j in range(1, len(idx)))


def test_s16_long_k_one_subgraph():
    """S16, split-K off: M=128, K=8192, N=256 is one cube subgraph (its assemble joins it although
    the cube op alone is past the latency bound) holding 64 COPY_IN (32 chunks of A and of B),
    128 L1_TO_L0A + 128 L1_TO_L0B and A_MUL_B + 127 A_MULACC_B."""
    k = _run((128, 8192), (8192, 256), S16_CUBE, False, vec=(128, 128))
    c = k.last_compiled
    assert _only(c.subgraph_counts) == 1 and _only(c.leaf_counts) == 1
    (mm,) = [op for op in _root(k).calls[0].ops if op.opcode == "MATMUL"]
    plan = plan_of(mm)
    assert plan.counts() == {"COPY_IN": 64, "L1_TO_L0A": 128, "L1_TO_L0B": 128, "A_MUL_B": 1,
                             "A_MULACC_B": 127, "COPY_OUT": 1}
    assert plan.leaf_op_count() == len(plan.steps()) == 449
    assert mm.attrs["k_chunks"] == 32


def test_s16_split_k_32_cube_4_vector_3_leaves():
    """S16, split-K on: 32 cube subgraphs (one per kL1 = 256 chunk, all one leaf) and, with vec
    tile (128,128), two output tiles x add chains cut 18 + 13 by the latency bound: 36 call ops,
    3 leaves. The FP32 reduction matches torch."""
    k = _run((128, 8192), (8192, 256), S16_CUBE, True, vec=(128, 128))
    c = k.last_compiled
    assert _only(c.subgraph_counts) == 36 and _only(c.leaf_counts) == 3
    root = _root(k)
    cores = Counter(call.core for call in root.calls)
    assert cores == {"AIC": 32, "AIV": 4}
    adds = [sum(1 for op in call.ops if op.opcode == "ADD") for call in root.calls]
    assert adds == [0] * 32 + [18, 18, 13, 13]
    chunk_plans = {plan_of(op) for call in root.calls[:32] for op in call.ops}
    assert len(chunk_plans) == 1
    plan = chunk_plans.pop()
    assert plan.k == 256 and plan.counts() == {"COPY_IN": 2, "L1_TO_L0A": 4, "L1_TO_L0B": 4,
                                               "A_MUL_B": 1, "A_MULACC_B": 3, "COPY_OUT": 1}
    assert k.last_executor.calls_run == 36


def test_resident_operand_loaded_once():
    """kAL1 = K keeps A resident in L1 (one COPY_IN) while B comes in kBL1 chunks; the guide's
    M=96 example shape."""
    k = _run((96, 1536), (1536, 256), ([96, 96], [64, 1536, 256], [256, 256]), False)
    (mm,) = [op for op in _root(k).calls[0].ops if op.opcode == "MATMUL"]
    steps = plan_of(mm).steps()
    copies = [s for s in steps if s.opcode == "COPY_IN"]
    assert [(s.operand, s.shape) for s in copies] == [("A", (96, 1536))] + [("B", (256, 256))] * 6
    assert step_counts(steps)["L1_TO_L0A"] == 1536 // 64


def test_l0_sub_blocks_count_rule():
    """mL0 < mL1 and nL0 < nL1: each (mL0, nL0) sub-block accumulates in its own L0C tile and
    is copied out once; L0A/L0B moves are per row / column block and k step."""
    plan = CubePlan(m=128, n=200, k=300, m_l0=64, n_l0=128, k_l0=64, k_a_l1=128, k_b_l1=256,
                    a_bytes=2, b_bytes=2, out_bytes=4)
    # S = 5 k steps (the last one 44 wide), P = 2, Q = 2 (the last one 72 wide)
    want = {"COPY_IN": 3 + 2, "L1_TO_L0A": 10, "L1_TO_L0B": 10, "A_MUL_B": 4,
            "A_MULACC_B": 16, "COPY_OUT": 4}
    steps = plan.steps()
    assert plan.counts() == want == step_counts(steps)
    assert plan.leaf_op_count() == len(steps) == 49
    assert sum(s.macs for s in steps) == 128 * 200 * 300
    assert {s.shape for s in steps if s.opcode == "COPY_OUT"} == {(64, 128), (64, 72)}
    assert [s.shape for s in steps if s.opcode == "COPY_IN"] == [
        (128, 128), (256, 200), (128, 128), (128, 44), (44, 200)]
    assert all(d < i for i, s in enumerate(steps) for d in s.deps)


@pytest.mark.parametrize("trans", [(False, False), (True, True)], ids=["nn", "tt"])
def test_split_k_with_m_n_k_tails(trans):
    """M=200, N=300, K=1000 with blocks 128x256 and kL1 = 256: tail blocks in M and N and a
    232-wide last K chunk. 4 blocks x 4 chunks cube subgraphs; vec tile (64,128) gives 12
    output tiles, each summed by one chain of 3 adds."""
    at, bt = trans
    shape_a = (1000, 200) if at else (200, 1000)
    shape_b = (300, 1000) if bt else (1000, 300)
    k = _run(shape_a, shape_b, ([64, 128], [64, 256], [128, 256]), True, vec=(64, 128),
             a_trans=at, b_trans=bt)
    root = _root(k)
    cores = Counter(call.core for call in root.calls)
    assert cores == {"AIC": 16, "AIV": 12}
    assert [sum(1 for op in c.ops if op.opcode == "ADD") for c in root.calls if
            c.core == "AIV"] == [3] * 12
    ks = sorted({plan_of(op).k for c in root.calls if c.core == "AIC" for op in c.ops})
    assert ks == [232, 256]


def test_split_k_int8_exact():
    """INT8 inputs, INT32 partials and adds: exact."""
    g = torch.Generator().manual_seed(1)
    a = torch.randint(-128, 128, (64, 512), generator=g, dtype=torch.int8)
    b = torch.randint(-128, 128, (512, 64), generator=g, dtype=torch.int8)
    c = torch.zeros(64, 64, dtype=torch.int32)
    k = _mm_kernel(([32, 64], [64, 128], [32, 64]), True, in_dt=pypto.DT_INT8,
                   out_dt=pypto.DT_INT32)
    k(a, b, c)
    torch.testing.assert_close(c, (a.long() @ b.long()).int(), rtol=0, atol=0)
    assert Counter(call.core for call in _root(k).calls) == {"AIC": 4, "AIV": 1}


@pytest.mark.parametrize("shapes,vec,vec_calls", [
    (((2, 64, 512), (2, 512, 96)), None, 2),           # default [128,128] on the last two dims
    (((1, 64, 512), (3, 512, 96)), (1, 32, 96), 6),    # A broadcasts; rank-3 vec tile
    (((3, 64, 512), (1, 512, 96)), (64, 48), 6),       # B broadcasts; rank-2 vec tile
], ids=["3d", "3d_bcast_a", "3d_bcast_b"])
def test_split_k_batched(shapes, vec, vec_calls):
    """Batch (3-D) matmuls split per batch index, block and K chunk; the adds are tiled with
    the vec TileShape (rank 3, or rank 2 on the last two dims) or [128, 128]."""
    k = _run(*shapes, ([64, 64], [64, 128], [96, 96]), True, vec=vec)
    batch = max(shapes[0][0], shapes[1][0])
    cores = Counter(call.core for call in _root(k).calls)
    assert cores == {"AIC": batch * 4, "AIV": vec_calls}


def test_split_k_dynamic_rows():
    """A DYNAMIC-row input viewed 16 rows at a time with a tail valid shape: every K chunk and
    every add works on the valid rows only."""
    g = torch.Generator().manual_seed(2)
    a = (torch.rand(37, 256, generator=g) - 0.5).half()
    b = (torch.rand(256, 32, generator=g) - 0.5).half()

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP16),
          w: pypto.Tensor([], pypto.DT_FP16),
          out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 64], [32, 32], enable_split_k=True)
        n = x.shape[0]
        for i in pypto.loop(0, n, 16, name="m", idx_name="i"):
            xv = pypto.view(x, [16, 256], [i, 0], valid_shape=[(n - i).min(16), 256])
            out[i:, :] = pypto.matmul(xv, w, pypto.DT_FP32)

    out = torch.full((37, 32), 7.0)
    k(a, b, out)
    _close(out, a.float() @ b.float())
    assert Counter(call.core for call in _root(k).calls) == {"AIC": 4, "AIV": 1}


def test_split_k_capacity_errors():
    """Split-K chunks are checked against the cube limits like any cube tile, and the vector
    adds against UB: (128, 256) FP32 add tiles need 262144 bytes."""
    with pytest.raises(pypto.PyptoError, match=r"L0C.*131072"):
        _run((256, 512), (512, 512), ([256, 256], [64, 128], [256, 256]), True)
    with pytest.raises(pypto.PyptoError, match=r"matmul:.*262144 bytes but UB holds 196608"):
        _run((128, 512), (512, 256), S16_CUBE, True, vec=(128, 256))


def test_s14_blocks():
    """S14 (M=2048): one cube subgraph per (mL1, nL1) output block, all one leaf."""
    k = _run((2048, 256), (256, 256), S16_CUBE, False)
    assert _only(k.last_compiled.subgraph_counts) == 16
    assert _only(k.last_compiled.leaf_counts) == 1
