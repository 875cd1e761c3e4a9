"""The tile executor evaluates all windows of a root instance in one generated function and
reuses per-shape work (task costs, batch shapes) across tasks and instances; the results, costs
and task DAG equal those of evaluating every tile op on its own."""
import pytest
import torch

import pypto
from pypto.runtime.plan import RootPlan
from pypto.runtime.tile_executor import TileExecutor


def _attention_loop():
    """Online softmax over KV blocks with a ragged last block, carried state in GM."""
    @pypto.frontend.jit
    def k(q: pypto.Tensor([pypto.DYNAMIC, 16, 32], pypto.DT_FP32),
          kv: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, 32], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 16, 1], pypto.DT_FP32)):
        pairs, n = q.shape[0], kv.shape[1]
        best = pypto.tensor([4, 16, 1], pypto.DT_FP32, "best")
        pypto.set_vec_tile_shapes(1, 8, 64)
        for b in pypto.loop(pairs, idx_name="b"):
            qb = q[b:b + 1, :, :]
            for j in pypto.loop(0, n, 64, idx_name="j"):
                kj = pypto.view(kv, [1, 64, 32], [b, j, 0],
                                valid_shape=[1, (n - j).min(64), 32])
                pypto.set_cube_tile_shapes([16, 16], [32, 32], [64, 64])
                s = pypto.matmul(qb, kj, pypto.DT_FP32, b_trans=True)
                m = pypto.amax(s, dim=-1, keepdim=True)
                if pypto.is_loop_begin(j):
                    best[b:, :, :] = m
                else:
                    best[b:, :, :] = pypto.maximum(best[b:b + 1, :, :], m)
                if pypto.is_loop_end(j):
                    out[b:, :, :] = best[b:b + 1, :, :] * 1.0
    q, kv = torch.randn(3, 16, 32), torch.randn(3, 150, 32)
    return k, (q, kv, torch.zeros(3, 16, 1))


def _l1_reuse_matmul():
    """Merged cube subgraphs that load the same A tile into L1 once."""
    @pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 4}})
    def k(a: pypto.Tensor([], pypto.DT_FP16), b: pypto.Tensor([], pypto.DT_FP16),
          c: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [64, 128], [64, 64])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)
    return k, (torch.rand(128, 128).half(), torch.rand(128, 256).half(), torch.zeros(128, 256))


def _run(kernel, args):
    args = [a.clone() for a in args]
    kernel(*args)
    tasks = kernel.last_executor.stitcher.tasks
    return args[-1], [(t.core, t.mte2_bytes, t.mte1_bytes, t.mte3_bytes, t.vector_cycles,
                       t.cube_cycles, t.empty, t.reads, t.writes, t.read_layouts,
                       t.write_layouts, t.preds) for t in tasks]


@pytest.mark.parametrize("batch", [True, False])
def test_root_windows_equal_tile_op_windows(batch, monkeypatch):
    kernel, args = _attention_loop()
    monkeypatch.setattr(TileExecutor, "batch", batch)
    fast_out, fast = _run(kernel, args)
    assert kernel.last_executor.calls_run == len(fast)
    # every tile op evaluates its own windows and is charged on its own
    monkeypatch.setattr(RootPlan, "evaluate", lambda self, values: None)
    slow_out, slow = _run(kernel, args)
    assert torch.equal(fast_out, slow_out)
    assert fast == slow
    best = torch.stack([(a @ b.transpose(-1, -2)).amax(-1, keepdim=True)
                        for a, b in zip(args[0], args[1])])
    torch.testing.assert_close(fast_out, best)


def test_shared_l1_loads_are_paid_once_either_way(monkeypatch):
    kernel, args = _l1_reuse_matmul()
    fast_out, fast = _run(kernel, args)
    calls = [c for root in kernel.last_compiled.roots.values() for c in root.calls]
    assert any(kernel.last_executor.plan.facts(c).sharing for c in calls)
    monkeypatch.setattr(RootPlan, "evaluate", lambda self, values: None)
    slow_out, slow = _run(kernel, args)
    assert torch.equal(fast_out, slow_out) and fast == slow


def test_warm_call_reuses_batch_shapes_with_equal_results():
    kernel, args = _attention_loop()
    first_out, first = _run(kernel, args)
    second_out, second = _run(kernel, args)     # batch shapes come from the root plans
    assert torch.equal(first_out, second_out) and first == second


def test_windows_that_read_tensor_elements_are_evaluated_op_by_op():
    """Valid extents read from a tensor: no root plan, every tile op evaluates its own."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16, 64], pypto.DT_FP32),
          lens: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
          y: pypto.Tensor([pypto.DYNAMIC, 16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 64)
        for i in pypto.loop(x.shape[0], idx_name="i"):
            v = pypto.view(x, [1, 16, 64], [i, 0, 0], valid_shape=[1, lens[i], 64])
            y[i:i + 1, :, :] = pypto.exp(v) * 2.0

    x, lens, y = torch.randn(3, 16, 64), torch.tensor([16, 5, 11], dtype=torch.int32), \
        torch.zeros(3, 16, 64)
    k(x, lens, y)
    assert all(k.last_executor.plan.root(name).evaluate({}) is None
               for name in k.last_compiled.roots)
    expect = torch.zeros_like(y)
    for i, n in enumerate(lens.tolist()):
        expect[i, :n] = torch.exp(x[i, :n]) * 2.0
    torch.testing.assert_close(y, expect)
    rows = [t.mte2_bytes / (64 * 4) for t in k.last_executor.stitcher.tasks]
    assert rows == [8, 8, 5, 0, 8, 3]
