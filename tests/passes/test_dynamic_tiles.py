"""Elementwise ops on DYNAMIC-shaped tensors are tiled on their TileShape over a run-time grid:
one task per tile with its own offsets and valid extents, chains of them fused per tile, the
same capacity checks as static tiles, and one compile for every size."""
import pytest
import torch

import pypto
from pypto.errors import PyptoError


def _chain():
    @pypto.frontend.jit
    def chain(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
              b: pypto.Tensor([1, 256], pypto.DT_FP32),
              y: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_BF16)):
        pypto.set_vec_tile_shapes(32, 256)
        y[:] = pypto.cast((pypto.exp(x) + b) * 2.0, pypto.DT_BF16)
    return chain


@pytest.mark.parametrize("rows", [100, 64, 1])
def test_a_chain_runs_one_fused_task_per_tile(rows):
    kernel = _chain()
    x, b = torch.randn(rows, 256), torch.randn(1, 256)
    y = torch.zeros(rows, 256, dtype=torch.bfloat16)
    kernel(x, b, y)
    torch.testing.assert_close(y, ((torch.exp(x) + b) * 2.0).bfloat16())
    root = next(iter(kernel.last_compiled.roots.values()))
    assert len(root.calls) == 1 and root.calls[0].grid is not None
    tasks = kernel.last_run.tasks
    assert len(tasks) == -(-rows // 32)
    x_id = kernel.last_program.params[0].value.storage.id
    boxes = sorted(acc[1:] for r in tasks for acc in r.task.reads if acc[0] == x_id)
    assert boxes == [((r0, 0), (min(32, rows - r0), 256)) for r0 in range(0, rows, 32)]


def test_every_size_uses_one_compile():
    kernel = _chain()
    for rows in (3, 40, 200):
        y = torch.zeros(rows, 256, dtype=torch.bfloat16)
        kernel(torch.randn(rows, 256), torch.zeros(1, 256), y)
        assert len(kernel.last_run.tasks) == -(-rows // 32)
    assert kernel.compile_count == 1


def test_two_dynamic_dims_tile_on_both():
    @pypto.frontend.jit
    def scale(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, 64], pypto.DT_FP32),
              y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16, 64)
        y[:] = pypto.sigmoid(x) * x
    x = torch.randn(3, 40, 64)
    y = torch.zeros_like(x)
    scale(x, y)
    torch.testing.assert_close(y, torch.sigmoid(x) * x)
    assert len(scale.last_run.tasks) == 3 * 3          # 3 x ceil(40 / 16)


def test_a_tile_too_large_for_ub_is_refused_as_for_static_shapes():
    @pypto.frontend.jit
    def big(x: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32),
            y: pypto.Tensor([pypto.DYNAMIC, 256], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4096, 256)                # 4 MiB
        y[:] = pypto.exp(x)
    with pytest.raises(PyptoError, match=r"exp: a tile needs 4194304 bytes but UB holds"):
        big(torch.randn(100, 256), torch.zeros(100, 256))


def test_a_grid_result_feeds_a_whole_tensor_op():
    """A value made tile by tile on the grid is in GM for an op that reads it whole."""
    @pypto.frontend.jit
    def total(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
              y: pypto.Tensor([1, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        e = pypto.exp(x)
        y[:] = pypto.sum(e, dim=0, keepdim=True)
    x = torch.randn(50, 64)
    y = torch.zeros(1, 64)
    total(x, y)
    torch.testing.assert_close(y, torch.exp(x).sum(0, keepdim=True), rtol=1e-5, atol=1e-5)


def test_softmax_rows_of_a_dynamic_tensor_fuse_per_tile():
    """amax / sum over the static last axis run per tile on the same grid as the elementwise
    ops around them: one call op, one task per 16 rows."""
    @pypto.frontend.jit
    def softmax(x: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32),
                y: pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 128)
        e = pypto.exp(x - pypto.amax(x, -1, keepdim=True))
        y[:] = e / pypto.sum(e, -1, keepdim=True)
    x = torch.randn(70, 128)
    y = torch.zeros_like(x)
    softmax(x, y)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    root = next(iter(softmax.last_compiled.roots.values()))
    assert len(root.calls) == 1
    assert len(softmax.last_run.tasks) == 5


@pytest.mark.parametrize("a_trans", [False, True])
def test_a_matmul_with_dynamic_m_runs_one_cube_task_per_row_block(a_trans):
    @pypto.frontend.jit
    def project(x: pypto.Tensor([128, pypto.DYNAMIC] if a_trans else [pypto.DYNAMIC, 128],
                                pypto.DT_FP16),
                w: pypto.Tensor([128, 64], pypto.DT_FP16),
                y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([32, 32], [64, 128], [64, 64])
        pypto.set_vec_tile_shapes(32, 64)
        y[:] = pypto.matmul(x, w, pypto.DT_FP32, a_trans=a_trans)
    x = (torch.randn(128, 90) if a_trans else torch.randn(90, 128)).half() / 8
    w = (torch.randn(128, 64) / 8).half()
    y = torch.zeros(90, 64)
    project(x, w, y)
    torch.testing.assert_close(y, (x.t() if a_trans else x).float() @ w.float(),
                               rtol=1e-3, atol=1e-3)
    aic = [r for r in project.last_run.tasks if r.task.core == "AIC"]
    assert len(aic) == 3                                  # ceil(90 / 32) row blocks


def test_an_op_with_no_tile_rule_is_warned_about_listed_and_labelled(tmp_path):
    """concat has no tile rule: a warning at the user's line, the tile-graph dump lists it,
    and its task is labelled "whole concat" (so the advisor does not ask for a TileShape)."""
    import json
    import os
    import warnings

    @pypto.frontend.jit(debug_options={"compile_debug_mode": 1})
    def glue(a: pypto.Tensor([16, 64], pypto.DT_FP32), b: pypto.Tensor([16, 64], pypto.DT_FP32),
             y: pypto.Tensor([32, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = pypto.concat([a, b], 0)
    a, b = torch.randn(16, 64), torch.randn(16, 64)
    y = torch.zeros(32, 64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        glue(a, b, y)
    torch.testing.assert_close(y, torch.cat([a, b]))
    untiled = [w for w in caught if "runs untiled" in str(w.message)]
    assert len(untiled) == 1 and untiled[0].filename == __file__
    assert "concat runs untiled, as one task on whole tensors (no tile rule)" in \
        str(untiled[0].message)
    assert [r.task.label for r in glue.last_run.tasks].count("whole concat") == 1
    dump = next(p for p in (tmp_path / "output").rglob("Before_027_*.json"))
    listed = json.loads(dump.read_text())["untiled_ops"]
    assert [(u["op"], u["why"]) for u in listed] == [("concat", "no tile rule")]
    assert os.path.basename(listed[0]["at"].split(":")[0]) == os.path.basename(__file__)


def test_the_advisor_does_not_ask_for_a_tile_shape_that_cannot_split_an_untiled_op(tmp_path):
    """A long untiled op idles the vector cores: the advice names the op and a loop, not a
    smaller TileShape, which would not split it."""
    from pypto.toolkit.analyze import analyze
    from pypto.toolkit.trace import load

    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1})
    def glue(a: pypto.Tensor([2048, 512], pypto.DT_FP32),
             b: pypto.Tensor([2048, 512], pypto.DT_FP32),
             y: pypto.Tensor([4096, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(64, 512)
        y[:] = pypto.concat([a, b], 0)
    glue(torch.randn(2048, 512), torch.randn(2048, 512), torch.zeros(4096, 512))
    trace = next((tmp_path / "output").rglob("merged_swimlane.json"))
    advice = {a.rule: a for a in analyze(load(trace)).advice}["tile_shape"]
    assert advice.status == "advise" and advice.knob == "pypto.loop"
    assert "runs concat untiled" in advice.summary and "no TileShape splits it" in advice.summary


def test_a_transpose_of_a_dynamic_tensor_runs_one_task_per_input_tile():
    @pypto.frontend.jit
    def flip(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
             y: pypto.Tensor([64, pypto.DYNAMIC], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 64)
        t = pypto.transpose(x, 0, 1)
        pypto.set_vec_tile_shapes(64, 16)
        y[:] = t * 1.0
    x = torch.randn(40, 64)
    y = torch.zeros(64, 40)
    flip(x, y)
    torch.testing.assert_close(y, x.t())
    assert sum(r.task.label == "" for r in flip.last_run.tasks) == len(flip.last_run.tasks)
    assert len(flip.last_run.tasks) == 3 + 3           # transpose tiles, then scale tiles
