"""runtime_options numerics="timing_only": the same tasks, windows and simulated timeline as an
exact run, with no arithmetic (outputs untouched); refused where control flow or offsets read a
value the kernel computes, or where results are compared."""
import pytest
import torch

import pypto
from pypto.errors import PyptoValueError


def _timeline(run):
    return ([(r.task.id, r.task.window, r.task.instance, r.task.leaf, r.core_index, r.start,
              r.end, tuple(r.task.preds)) for r in run.tasks],
            sorted((k, v) for k, v in run.stats.items()))


def _softmax_rows(numerics):
    @pypto.frontend.jit(runtime_options={"numerics": numerics, "stitch_function_max_num": 4})
    def softmax_rows(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
                     w: pypto.Tensor([256, 64], pypto.DT_FP16),
                     y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 256)
        pypto.set_cube_tile_shapes([16, 16], [256, 256], [64, 64])
        for i in pypto.loop(0, x.shape[0], 16, name="ROWS", idx_name="i"):
            b = pypto.view(x, [16, 256], [i, 0], valid_shape=[(x.shape[0] - i).min(16), 256])
            e = pypto.exp(b - pypto.amax(b, -1, keepdim=True))
            p = pypto.cast(e / pypto.sum(e, -1, keepdim=True), pypto.DT_FP16)
            pypto.set_vec_tile_shapes(16, 64)
            y[i:, :] = pypto.matmul(p, w, pypto.DT_FP32)
            pypto.set_vec_tile_shapes(16, 256)
    return softmax_rows


def test_same_timeline_as_exact_and_outputs_untouched():
    x, w = torch.randn(90, 256), (torch.randn(256, 64) / 16).half()
    exact, timing = _softmax_rows("exact"), _softmax_rows("timing_only")
    y_exact, y_timing = torch.zeros(90, 64), torch.full((90, 64), 7.0)
    exact(x, w, y_exact)
    timing(x, w, y_timing)
    assert _timeline(timing.last_run) == _timeline(exact.last_run)
    assert timing.last_run.stats["windows"] == 2 and timing.last_run.stats["tasks"] > 6
    assert torch.equal(y_timing, torch.full((90, 64), 7.0))          # nothing computed
    torch.testing.assert_close(y_exact, torch.softmax(x, -1).half().float() @ w.float(),
                               rtol=2e-2, atol=2e-3)


def _rows_by_count(numerics, computed):
    @pypto.frontend.jit(runtime_options={"numerics": numerics})
    def rows_by_count(x: pypto.Tensor([8, 16], pypto.DT_FP32),
                      cnt: pypto.Tensor([1, 8], pypto.DT_INT32),
                      out: pypto.Tensor([2, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8)
        counts = cnt + 1 if computed else cnt       # a computed value drives the loop
        pypto.set_vec_tile_shapes(1, 16)
        for i in pypto.loop(2, name="rows", idx_name="i"):
            for j in pypto.loop(counts[0, i], name="inner", idx_name="j"):
                out[i:, :] = x[j:j + 1, :] * 2.0
    return rows_by_count


def test_loops_driven_by_an_input_tensor_are_fine():
    x, cnt = torch.randn(8, 16), torch.tensor([[2, 3, 0, 0, 0, 0, 0, 0]], dtype=torch.int32)
    exact, timing = _rows_by_count("exact", False), _rows_by_count("timing_only", False)
    exact(x, cnt, torch.zeros(2, 16))
    timing(x, cnt, torch.zeros(2, 16))
    assert _timeline(timing.last_run) == _timeline(exact.last_run)
    assert timing.last_run.stats["tasks"] == 5


def test_loops_driven_by_a_computed_value_are_refused():
    kernel = _rows_by_count("timing_only", True)
    with pytest.raises(PyptoValueError, match=r"numerics='timing_only' would change the run: "
                                              r"the control flow or offsets read elements of"):
        kernel(torch.randn(8, 16), torch.tensor([[1, 2, 0, 0, 0, 0, 0, 0]], dtype=torch.int32),
               torch.zeros(2, 16))


@pytest.mark.parametrize("options, culprit", [
    ({"verify_options": {"enable_pass_verify": True}}, "enable_pass_verify"),
    ({"runtime_options": {"executor": "reference"}}, "executor='reference'"),
])
def test_refused_where_results_are_compared_or_only_results_exist(options, culprit):
    kernel = _softmax_rows("timing_only")
    with pytest.raises(PyptoValueError, match=culprit), pypto.options(**options):
        kernel(torch.randn(16, 256), torch.randn(256, 64).half(), torch.zeros(16, 64))
