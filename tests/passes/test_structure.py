"""Subgraph and leaf counts reproduce PyPTO 0.2.0 (compiler_runtime.md §6.3), and overflowing
tiles fail before anything runs with a named error."""
import pytest
import torch

import pypto


def _only(counts: dict) -> int:
    assert len(counts) == 1, counts
    return next(iter(counts.values()))


def test_s1_softmax_body_8_subgraphs_1_leaf():
    """S1: softmax over x[32,32,1,256] rows with tile (1,4,1,64): one subgraph per 4-row slab
    (the split reduce axis stays inside the slab), all isomorphic, 8 per loop iteration."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 32, 1, 256], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 32, 1, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 1, 64)
        for i in pypto.loop(x.shape[0], name="LOOP_B", idx_name="i"):
            row = x[i:i + 1, ...]
            e = pypto.exp(row - pypto.amax(row, dim=-1, keepdim=True))
            y[i:, ...] = e / pypto.sum(e, dim=-1, keepdim=True)

    x = torch.rand(32, 32, 1, 256)
    y = torch.zeros_like(x)
    k(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    assert k.last_compiled.subgraph_counts == {"TENSOR_LOOP_B_Unroll1_PATH0_hiddenfunc0": 8}
    assert _only(k.last_compiled.leaf_counts) == 1
    assert k.last_executor.calls_run == 256  # 8 call ops x 32 root instances


def _s2(tile):
    @pypto.frontend.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
          y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = pypto.exp(a + b) * b

    a, b = torch.rand(64, 4096), torch.rand(64, 4096)
    y = torch.zeros_like(a)
    k(a, b, y)
    torch.testing.assert_close(y, torch.exp(a + b) * b)
    return k.last_compiled


@pytest.mark.parametrize("tile", [(32, 512), (16, 1024)])
def test_s2_elementwise_chain_16_subgraphs(tile):
    """S2: exp(a+b)*b on (64,4096) with 64 KiB tiles: 16 one-to-one subgraphs, 1 leaf."""
    c = _s2(tile)
    assert _only(c.subgraph_counts) == 16 and _only(c.leaf_counts) == 1


@pytest.mark.parametrize("tile", [(64, 512), (32, 1024), (8, 4096)])
def test_s3_op_in_out_overflow(tile):
    """S3: 128 KiB FP32 tiles: ADD's two distinct buffers need 262144 > 196608 bytes of UB."""
    with pytest.raises(pypto.PyptoError) as e:
        _s2(tile)
    msg = str(e.value)
    assert "add:" in msg and "262144" in msg and "196608" in msg
    assert f"TileShape {list(tile)}" in msg and "test_structure.py:" in msg
    assert "set_vec_tile_shapes(" in msg


@pytest.mark.parametrize("tile,need", [((64, 1024), 262144), ((64, 4096), 1048576)])
def test_s4_alloc_overflow(tile, need):
    """S4: a single tile larger than UB fails the allocation check."""
    with pytest.raises(pypto.PyptoError) as e:
        _s2(tile)
    assert "a tile needs" in str(e.value) and str(need) in str(e.value)


@pytest.mark.parametrize("tile,subgraphs", [((8, 1024), 8), ((16, 1024), 4), ((8, 256), 8),
                                            ((8, 128), 8), ((32, 256), 2)])
def test_s8_rmsnorm_like(tile, subgraphs):
    """S8: x*rsqrt(mean(x^2)+eps) on (64,1024): one subgraph per row slab, also when the
    reduce axis is split (partials and combine stay in the slab)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = x * pypto.rsqrt(pypto.mean(x * x, -1, keepdim=True) + 1e-6)

    x = torch.rand(64, 1024)
    y = torch.zeros_like(x)
    k(x, y)
    torch.testing.assert_close(y, x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6))
    assert _only(k.last_compiled.subgraph_counts) == subgraphs
    assert _only(k.last_compiled.leaf_counts) == 1


@pytest.mark.parametrize("use_loop", [False, True])
def test_s9_python_for_vs_pypto_loop(use_loop):
    """S9: x[8,64,512], exp(x[i])+1 with tile (1,32,512): a Python for is 1 root with 16 call
    ops run once; pypto.loop(8) is 1 root with 2 call ops run 8 times."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 512)
        for i in (pypto.loop(8) if use_loop else range(8)):
            y[i:i + 1] = pypto.exp(x[i:i + 1]) + 1.0

    x = torch.rand(8, 64, 512)
    y = torch.zeros_like(x)
    k(x, y)
    torch.testing.assert_close(y, torch.exp(x) + 1)
    counts = k.last_compiled.subgraph_counts
    instances = k.last_executor.block_instances
    assert _only(counts) == (2 if use_loop else 16)
    assert sum(instances.values()) == (8 if use_loop else 1)


@pytest.mark.parametrize("add_tile,scope,subgraphs,leaves", [
    ((32, 512), False, 8, 1), ((64, 256), False, 16, 2), ((64, 256), True, 4, 1)])
def test_s17_tile_alignment_and_scope(add_tile, scope, subgraphs, leaves):
    """S17: exp with tile (32,512) then +1: matched tiles fuse (8/1); mismatched tiles make
    many-to-many dependencies through GM (16/2); sg_set_scope forces one subgraph per connected
    64x512 region (4/1)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        if scope:
            pypto.set_pass_options(sg_set_scope=1)
        pypto.set_vec_tile_shapes(32, 512)
        e = pypto.exp(x)
        pypto.set_vec_tile_shapes(*add_tile)
        y[:] = e + 1.0

    x = torch.rand(128, 1024)
    y = torch.zeros_like(x)
    k(x, y)
    torch.testing.assert_close(y, torch.exp(x) + 1)
    assert _only(k.last_compiled.subgraph_counts) == subgraphs
    assert _only(k.last_compiled.leaf_counts) == leaves


def test_latency_bound_cuts_long_chains():
    """A chain of 31 adds of 128x128 FP32 tiles (545 cycles each) is cut where the estimate
    passes pg_upper_bound (10000): 18 adds, then 13 (the split-K reduction shape of S16)."""
    @pypto.frontend.jit
    def k(parts: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(128, 128)
        acc = parts[0] + parts[1]
        for j in range(2, 32):
            acc = acc + parts[j]
        y[:] = acc

    parts = torch.rand(32, 128, 128)
    y = torch.zeros(128, 128)
    k(parts, y)
    torch.testing.assert_close(y, parts.sum(0), rtol=1e-5, atol=1e-5)
    root = next(iter(k.last_compiled.roots.values()))
    adds = [sum(1 for op in c.ops if op.opcode == "ADD") for c in root.calls]
    assert adds == [18, 13]


def test_cube_capacity_error_names_the_limit():
    """A cube TileShape whose L0B use exceeds 64 KiB fails at compile time with the formula."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([], pypto.DT_FP32), b: pypto.Tensor([], pypto.DT_FP32),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [256, 256], [128, 128])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    with pytest.raises(pypto.PyptoError) as e:
        k(torch.rand(64, 256), torch.rand(256, 128), torch.zeros(64, 128))
    msg = str(e.value)
    assert "L0B" in msg and "131072" in msg and "65536" in msg and "test_structure.py:" in msg


def test_in_place_writes_into_op_results():
    """Writes into an op's result (assemble into it, an in-place op on it) are ordered with
    its producers and its readers, across tasks: the result equals the reference."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32),
          o: pypto.Tensor([], pypto.DT_FP32), o2: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        t = pypto.clone(y)
        t.axpy_(x, 2.0)
        o[:] = t + 1.0
        u = x * 2.0
        u[0:8, :] = x[8:16, :]
        o2[:] = u + 1.0

    x, y = torch.rand(16, 64), torch.rand(16, 64)
    o, o2 = torch.zeros(16, 64), torch.zeros(16, 64)
    k(x, y, o, o2)
    torch.testing.assert_close(o, y + 2 * x + 1)
    ref = x * 2
    ref[0:8] = x[8:16]
    torch.testing.assert_close(o2, ref + 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rsqrt_decomposes_into_sqrt_and_div(dtype):
    """rsqrt becomes SQRT + DIV tile ops (as PyPTO decomposes it) in one subgraph, with the
    square root kept in FP32 so the result still rounds once."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32 if dtype == torch.float32 else pypto.DT_BF16),
          y: pypto.Tensor([], pypto.DT_FP32 if dtype == torch.float32 else pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.rsqrt(x)

    x = (torch.rand(32, 64) + 0.1).to(dtype)
    y = torch.zeros_like(x)
    k(x, y)
    torch.testing.assert_close(y, torch.rsqrt(x.float()).to(dtype), rtol=0, atol=0)
    root = next(iter(k.last_compiled.roots.values()))
    assert [op.opcode for op in root.calls[0].ops] == ["SQRT", "DIVS", "ASSEMBLE"]
    assert root.subgraph_count == 2
