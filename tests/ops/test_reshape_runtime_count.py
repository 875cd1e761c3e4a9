"""A reshape whose element count depends on a dynamic dim is checked when the kernel runs:
a mismatch is a named error at the user's line, never numpy's bare ValueError (issue 13, F4)."""
import pytest
import torch

import pypto
from pypto.errors import PyptoRuntimeError


def test_copying_reshape_of_a_dynamic_tensor(executor):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 11], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 11], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16)
        row_max = pypto.amax(x, dim=1, keepdim=True)       # [n, 1]
        flat = pypto.reshape(row_max, [1])                  # legal only when n == 1
        out[:] = x - flat

    x = torch.randn(1, 11)
    out = torch.zeros(1, 11)
    k(x, out)
    assert torch.allclose(out, x - x.amax(dim=1, keepdim=True))

    with pytest.raises(PyptoRuntimeError) as info:
        k(torch.randn(8, 11), torch.zeros(8, 11))
    msg = str(info.value)
    assert "reshape" in msg and "[8, 1]" in msg and "[1]" in msg
    assert f"{__file__}:" in msg and msg.rstrip("]").endswith(str(info.value.loc.line))
    assert info.value.loc.file == __file__


def test_inplace_reshape_of_a_dynamic_tensor(executor):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16)
        pair = pypto.reshape(x, [2, 16], inplace=True)     # legal only when n == 2
        out[0:2, :] = pair * 2.0

    x = torch.randn(2, 16)
    out = torch.zeros(2, 16)
    k(x, out)
    assert torch.equal(out, x * 2.0)

    with pytest.raises(PyptoRuntimeError) as info:
        k(torch.randn(8, 16), torch.zeros(8, 16))
    msg = str(info.value)
    assert "in-place reshape" in msg and "[2, 16]" in msg and "[8, 16]" in msg
    assert info.value.loc is not None and info.value.loc.file == __file__
