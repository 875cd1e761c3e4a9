"""An in-place reshape aliases its input's storage: like the reference executor (which copies
nothing for it), the timed task moves no bytes, while a copying reshape reads and writes the
whole tensor through GM."""
import torch

import pypto


def _run(inplace):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([256, 1024], pypto.DT_FP32),
          y: pypto.Tensor([512, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 1024)
        t = x * 2.0
        r = pypto.reshape(t, [512, 512], inplace=inplace)
        pypto.set_vec_tile_shapes(64, 512)
        y[:] = r + 1.0
    x = torch.rand(256, 1024)
    y = torch.zeros(512, 512)
    k(x, y)
    torch.testing.assert_close(y, (x * 2 + 1).reshape(512, 512))
    return k.last_run.stats


def test_inplace_reshape_moves_no_data():
    copy, alias = _run(False), _run(True)
    tensor = 256 * 1024 * 4
    assert copy["gm_read_bytes"] - alias["gm_read_bytes"] == tensor
    assert copy["gm_write_bytes"] - alias["gm_write_bytes"] == tensor
    assert alias["empty_tasks"] == copy["empty_tasks"] + 1
    assert alias["kernel_cycles"] < copy["kernel_cycles"]
