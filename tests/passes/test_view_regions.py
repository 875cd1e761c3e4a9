"""A view that another root function reads is copied region by region: only the view's box of
its (possibly DYNAMIC-shaped) parent is read, on the view's TileShape."""
import torch

import pypto


def _kernel():
    @pypto.frontend.jit
    def per_row_block(q: pypto.Tensor([pypto.DYNAMIC, 24, 128], pypto.DT_FP32),
                      out: pypto.Tensor([pypto.DYNAMIC, 24, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 128)
        for b in pypto.loop(q.shape[0], name="LOOP_B", idx_name="b"):
            qb = q[b:b + 1, :, :]                      # made here, read in the inner loop
            for j in pypto.loop(2, name="LOOP_J", idx_name="j"):
                out[b:, :, :] = qb * 2.0 + j
    return per_row_block


def test_a_slice_crossing_roots_reads_only_its_box():
    kernel = _kernel()
    q = torch.randn(16, 24, 128)
    out = torch.zeros_like(q)
    kernel(q, out)
    torch.testing.assert_close(out, q * 2.0 + 1.0)
    q_storage = kernel.last_program.params[0].value.storage.id
    boxes = [(offs, ext) for r in kernel.last_run.tasks for sid, offs, ext in r.task.reads
             if sid == q_storage]
    # 16 rows x 3 tiles of [1, 8, 128] (the TileShape), each at its own offsets
    assert len(boxes) == 16 * 3
    assert {ext for _, ext in boxes} == {(1, 8, 128)}
    assert sorted(offs for offs, _ in boxes) == sorted(
        (b, r, 0) for b in range(16) for r in (0, 8, 16))
