"""Run-time element reads (`t[0, i]`) of two kernels in one process stay apart.

Value ids restart with every trace, so the reads of two kernels used to compare equal and
share one compiled evaluator, which then read the first kernel's tensor (issue 13, F3)."""
import pytest
import torch

import pypto


def _pick_rows(executor):
    @pypto.frontend.jit(runtime_options={"executor": executor})
    def pick_rows(x: pypto.Tensor([8, 16], pypto.DT_FP32),
                  idx: pypto.Tensor([1, 2], pypto.DT_INT32),
                  out: pypto.Tensor([2, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16)
        for i in pypto.loop(2, name="rows", idx_name="i"):
            r = idx[0, i]
            out[i:, :] = x[r:r + 1, :] * 2.0
    return pick_rows


def _repeat_rows(executor):
    @pypto.frontend.jit(runtime_options={"executor": executor})
    def repeat_rows(x: pypto.Tensor([8, 16], pypto.DT_FP32),
                    cnt: pypto.Tensor([1, 3], pypto.DT_INT32),
                    out: pypto.Tensor([3, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16)
        for i in pypto.loop(3, name="rows", idx_name="i"):
            c = cnt[0, i]
            for j in pypto.loop(c, name="inner", idx_name="j"):
                out[i:, :] = x[j:j + 1, :] * 2.0
    return repeat_rows


@pytest.mark.parametrize("executor", ["reference", "tile"])
def test_reads_of_two_kernels_do_not_share_an_evaluator(executor):
    x = torch.randn(8, 16)
    picked = torch.zeros(2, 16)
    _pick_rows(executor)(x, torch.tensor([[3, 1]], dtype=torch.int32), picked)
    assert torch.equal(picked, x[[3, 1]] * 2.0)

    repeated = torch.zeros(3, 16)
    _repeat_rows(executor)(x, torch.tensor([[2, 0, 3]], dtype=torch.int32), repeated)
    expected = torch.zeros(3, 16)
    expected[0] = x[1] * 2.0      # row 0 repeats twice: the last write is j = 1
    expected[2] = x[2] * 2.0      # row 2 repeats three times: j = 2
    assert torch.equal(repeated, expected)

