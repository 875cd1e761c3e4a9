"""Breadth merges (passes/merge.py): vec NBuffer, cube L1 reuse, cube NBuffer reproduce the
subgraph counts of compiler_runtime.md §6.3 S5-S7 and S14-S15, and merged tasks compute the same
values as unmerged ones."""
import pytest
import torch

import pypto
from pypto.passes.functions import Signatures
from pypto.passes.merge import auto_vec_factor
from pypto.passes.merge_settings import GroupInfo


def _root(kernel):
    roots = kernel.last_compiled.roots
    assert len(roots) == 1, roots
    return next(iter(roots.values()))


def _ew(tile, setting=None, shape=(64, 4096)):
    """S5-S7: exp(a+b)*b with one vec_nbuffer_setting; returns (root, y)."""
    po = {} if setting is None else {"vec_nbuffer_setting": setting}

    @pypto.frontend.jit(pass_options=po)
    def k(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
          y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = pypto.exp(a + b) * b

    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(*shape, generator=g), torch.rand(*shape, generator=g)
    y = torch.zeros_like(a)
    k(a, b, y)
    torch.testing.assert_close(y, torch.exp(a + b) * b)
    return _root(k), y


@pytest.mark.parametrize("setting", [None, {}, {-1: 1}, {-2: 0}])
def test_s5_no_merge(setting):
    """S5: 64 input-to-output subgraphs: auto finds no shared neighbour, {-1: 1} is off, and
    {-2: 0} (auto on the whole group) gives n = 1 for S = 64 <= 48 * 2."""
    root, _ = _ew((8, 512), setting)
    assert root.subgraph_count == 64 and len(root.leaves) == 1
    assert all(c.merge_info["vec_nbuffer"] == GroupInfo(0, "func0_0", 64, 1) for c in root.calls)


@pytest.mark.parametrize("n,subgraphs", [(2, 32), (4, 16), (8, 8), (64, 1)])
@pytest.mark.parametrize("with_minus2", [False, True])
def test_s6_manual_factor(n, subgraphs, with_minus2):
    """S6: {-1: N} (with or without 0.2.0's {-2: 1}) merges runs of N: 64/N subgraphs, one
    leaf holding N times the ops, and the values do not change."""
    setting = {-2: 1, -1: n} if with_minus2 else {-1: n}
    root, y = _ew((8, 512), setting)
    assert root.subgraph_count == subgraphs and len(root.leaves) == 1
    assert root.leaves[0].op_count == 4 * n  # add, exp, mul, copy-out per member
    assert all(c.merge_info["vec_nbuffer"] == GroupInfo(0, "func0_0", 64, n) for c in root.calls)
    _, y1 = _ew((8, 512), {-1: 1})
    assert torch.equal(y, y1)


@pytest.mark.parametrize("setting", [None, {-1: 4}])
def test_leaf_signature_of_merged_subgraphs_is_fresh(setting):
    """The merges hand their cached subgraph signatures to build_root; a merged subgraph's
    leaf signature is that of its merged ops, not of a member's."""
    root, _ = _ew((8, 512), setting)
    preds = root.graph.preds()
    assert all(c.leaf.signature == Signatures().of(c.ops, preds) for c in root.calls)


def test_s6_group_key_and_ops_in_program_order():
    """{0: 4} targets group 0; a merged subgraph keeps its tile ops in program order."""
    root, _ = _ew((8, 512), {0: 4})
    assert root.subgraph_count == 16
    ops = root.calls[0].ops
    assert [o.opcode for o in ops] == ["ADD"] * 4 + ["EXP"] * 4 + ["MUL"] * 4 + ["ASSEMBLE"] * 4
    assert [o.id for o in ops] == sorted(o.id for o in ops)


@pytest.mark.parametrize("setting,subgraphs,leaves", [(None, 256, 1), ({-2: 0}, 52, 2)])
def test_s7_auto_multi_in_out(setting, subgraphs, leaves):
    """S7: tile (4,256) gives 256 subgraphs; {} leaves them (no shared neighbour), {-2: 0}
    applies the auto formula to the whole group: n = 5, 51 runs of 5 and one of 1."""
    root, _ = _ew((4, 256), setting)
    assert root.subgraph_count == subgraphs and len(root.leaves) == leaves


@pytest.mark.parametrize("size,factor", [(1, 1), (48, 1), (64, 1), (96, 2), (105, 2), (256, 5),
                                         (1000, 21)])
def test_auto_vec_factor(size, factor):
    """The largest n <= ceil(S/48) that still leaves >= 48 subgraphs (1 when S <= 48)."""
    assert auto_vec_factor(size, 48) == factor
    if factor > 1:
        assert -(-size // factor) >= 48 > -(-size // (factor + 1))


def _broadcast_kernel(setting):
    @pypto.frontend.jit(pass_options={"vec_nbuffer_setting": setting})
    def k(x: pypto.Tensor([], pypto.DT_FP32), a: pypto.Tensor([], pypto.DT_FP32),
          y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4096)
        w = pypto.exp(x)
        pypto.set_vec_tile_shapes(4, 256)
        y[:] = a + w

    g = torch.Generator().manual_seed(2)
    x, a = torch.rand(1, 4096, generator=g), torch.rand(64, 4096, generator=g)
    y = torch.zeros(64, 4096)
    k(x, a, y)
    torch.testing.assert_close(y, a + torch.exp(x))
    return _root(k), y


def test_auto_merges_members_sharing_a_producer():
    """Auto merges a group whose members all read the same producer subgraph (the exp of the
    broadcast row): a group of S > 48 becomes ceil(S/n) subgraphs, n by the auto formula."""
    off, y_off = _broadcast_kernel({-1: 1})
    sizes = [c.merge_info["vec_nbuffer"].size for c in off.calls]
    big = max(sizes)
    assert big > 48
    auto, y_auto = _broadcast_kernel({})
    n = auto_vec_factor(big, 48)
    assert n > 1
    assert auto.subgraph_count == off.subgraph_count - big + -(-big // n)
    assert torch.equal(y_auto, y_off)


def test_merge_never_makes_a_cycle():
    """Members 3 and 4 of the exp group depend on members 1 and 2 through the add subgraphs:
    {-1: 4} merges 1+2, 3+4 (and the two adds), never all four."""
    def run(setting):
        @pypto.frontend.jit(pass_options={"vec_nbuffer_setting": setting})
        def k(x: pypto.Tensor([], pypto.DT_FP32), y1: pypto.Tensor([], pypto.DT_FP32),
              y2: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 512)
            t1 = pypto.exp(x)
            y1[:] = t1
            pypto.set_vec_tile_shapes(4, 1024)   # mismatched tiles: an M:N dependency
            t2 = t1 + 1.0
            pypto.set_vec_tile_shapes(8, 512)
            y2[:] = pypto.exp(t2)

        x = torch.rand(8, 1024)
        y1, y2 = torch.zeros(8, 1024), torch.zeros(8, 1024)
        k(x, y1, y2)
        torch.testing.assert_close(y1, torch.exp(x))
        torch.testing.assert_close(y2, torch.exp(torch.exp(x) + 1))
        return _root(k)

    assert run({-1: 1}).subgraph_count == 6
    root = run({-1: 4})
    assert root.subgraph_count == 3
    assert [c.merge_info["vec_nbuffer"][:2] for c in root.calls] == [(0, "func0_0"),
                                                                     (1, "func0_1"),
                                                                     (0, "func0_0")]
    assert [c.preds for c in root.calls] == [(), (0,), (1,)]


def test_setting_inside_a_loop_applies_to_that_loop_only():
    """Each op keeps the merge options current when it was recorded: a set_pass_options inside
    one loop body merges that loop's root function only."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32),
          z: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 512)
        for i in pypto.loop(2, name="L1", idx_name="i"):
            pypto.set_pass_options(vec_nbuffer_setting={-1: 4})
            y[i:i + 1] = pypto.exp(x[i:i + 1]) + 1.0
        for j in pypto.loop(2, name="L2", idx_name="j"):
            z[j:j + 1] = pypto.exp(x[j:j + 1]) + 1.0

    x = torch.rand(2, 64, 512)
    y, z = torch.zeros_like(x), torch.zeros_like(x)
    k(x, y, z)
    torch.testing.assert_close(y, torch.exp(x) + 1)
    torch.testing.assert_close(z, torch.exp(x) + 1)
    assert k.last_compiled.subgraph_counts == {"TENSOR_L1_Unroll1_PATH0_hiddenfunc0": 2,
                                               "TENSOR_L2_Unroll1_PATH0_hiddenfunc0": 8}


def test_string_keys_labels_and_func_keys():
    """HEAD keys: a semantic label sets its group's factor, "func{magic}_{group}" one group."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32),
          z: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 512)
        pypto.set_pass_options(vec_nbuffer_setting={"big": 4, "func0_1": 2, "DEFAULT": 1})
        pypto.set_semantic_label("big")
        y[:] = pypto.exp(x) + 1.0
        pypto.set_semantic_label("other")
        z[:] = pypto.exp(x) * 2.0

    x = torch.rand(64, 512)
    y, z = torch.zeros_like(x), torch.zeros_like(x)
    k(x, y, z)
    torch.testing.assert_close(y, torch.exp(x) + 1)
    torch.testing.assert_close(z, torch.exp(x) * 2)
    root = _root(k)
    assert root.subgraph_count == 2 + 4
    groups = [c.merge_info["vec_nbuffer"] for c in root.calls]
    assert groups.count(GroupInfo(0, "func0_0", 8, 4)) == 2
    assert groups.count(GroupInfo(1, "func0_1", 8, 2)) == 4


# ---- cube ----

def _mm(m, l1=None, nbuffer=None, run=False, **extra):
    """S14/S15: (M,256)x(256,256) fp16 with cube tiles [128,128],[64,256],[256,256]. Only
    compiled (host_options.compile_stage = EXECUTE_GRAPH) unless `run`; returns (root, c)."""
    po = dict(extra)
    if l1 is not None:
        po["cube_l1_reuse_setting"] = l1
    if nbuffer is not None:
        po["cube_nbuffer_setting"] = nbuffer
    host = {} if run else {"compile_stage": pypto.CompStage.EXECUTE_GRAPH}

    @pypto.frontend.jit(pass_options=po, host_options=host)
    def k(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    g = torch.Generator().manual_seed(1)
    a = torch.rand(m, 256, generator=g).half()
    b = torch.rand(256, 256, generator=g).half()
    c = torch.zeros(m, 256)
    k(a, b, c)
    if run:
        torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-2)
    return _root(k), c


@pytest.mark.parametrize("m,subgraphs", [(2048, 16), (8192, 64), (16384, 64)])
def test_s14_auto_l1_reuse(m, subgraphs):
    """S14: auto factor floor(S/48): 16 and 64 blocks do not merge, 128 blocks merge by 2."""
    root, _ = _mm(m)
    assert root.subgraph_count == subgraphs and len(root.leaves) == 1


@pytest.mark.parametrize("n,subgraphs", [(1, 64), (2, 32), (4, 16), (8, 8)])
def test_s15_l1_reuse_factor(n, subgraphs):
    """S15: {-1: N} merges N output blocks sharing the B column panel; the merged call loads
    that panel once (shared_loads) and the values do not change."""
    root, _ = _mm(8192, {-1: n})
    assert root.subgraph_count == subgraphs and len(root.leaves) == 1
    assert root.leaves[0].op_count == 2 * n  # one matmul and one copy-out per output block
    for call in root.calls:
        assert call.merge_info["cube_l1_reuse"] == GroupInfo(0, "func0_0", 64, n)
        if n > 1:
            assert [(r.value.name, r.shape) for r in call.shared_loads] == [("b", (256, 256))]
        else:
            assert call.shared_loads == ()


def test_merged_cube_tasks_compute_the_same_values():
    """L1 reuse by 8 then cube NBuffer by 2 (4 tasks of 16 blocks): the tile executor runs each
    merged subgraph as one task; the result equals the unmerged run bit for bit."""
    root, c = _mm(4096, {-1: 8}, {-1: 2}, run=True)
    assert root.subgraph_count == 2
    _, c1 = _mm(4096, {-1: 1}, run=True)
    assert torch.equal(c, c1)


@pytest.mark.parametrize("side,subgraphs", [("left", 64), ("right", 16), ("auto", 16)])
def test_l1_reuse_side(side, subgraphs):
    """(N, side): "left" shares A row panels only (each block has its own: no merge)."""
    root, _ = _mm(8192, {-1: (4, side)})
    assert root.subgraph_count == subgraphs


def test_l1_reuse_copyin_bound():
    """mg_copyin_upper_bound caps the deduplicated L1 load bytes of a merged subgraph: one B
    panel (128 KiB) plus two A panels (64 KiB each) fit in 256 KiB, a third A panel does not."""
    root, _ = _mm(8192, {-1: 4}, mg_copyin_upper_bound=256 * 1024)
    assert root.subgraph_count == 32


@pytest.mark.parametrize("k,subgraphs", [(1024, 4), (4096, 16)])
def test_l1_reuse_shares_only_a_load_that_fits_l1(k, subgraphs):
    """compiler_runtime §4.4: the shared panel must fit L1 whole. (2048, K) x (K, 256) with
    [128, 128] / [256, 256] tiles: the 16 blocks share one K x 256 B panel, 512 KiB at K = 1024
    (fits the 512 KiB L1: merged by 4), 2 MiB at K = 4096 (does not: no merge)."""
    @pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 4}})
    def kern(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
             c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([128, 128], [64, 256], [256, 256])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    kern.runtime_options["numerics"] = "timing_only"
    kern(torch.zeros(2048, k).half(), torch.zeros(k, 256).half(), torch.zeros(2048, 256))
    assert _root(kern).subgraph_count == subgraphs


@pytest.mark.parametrize("l1,nbuffer,subgraphs,leaves", [
    ({-1: 1}, None, 64, 1),         # default {-1: 1}: off
    ({-1: 1}, {-1: 4}, 16, 1),
    ({-1: 2}, {-1: 2}, 16, 1),      # after L1 reuse: 32 pairs, then runs of 2
    ({-1: 1}, {}, 48, 2),           # auto: 64 spread over 2 x 24 AIC = 16 pairs + 32 singles
])
def test_cube_nbuffer(l1, nbuffer, subgraphs, leaves):
    root, _ = _mm(8192, l1, nbuffer)
    assert root.subgraph_count == subgraphs and len(root.leaves) == leaves
    assert all(call.merge_info["cube_nbuffer"].group == 0 for call in root.calls)
