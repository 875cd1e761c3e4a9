"""With OPENPTO_CHECK_EXECUTORS=1 (set for the whole suite) every kernel call also runs the
reference executor, and a tile-level result that differs is an error naming the tensor."""
import pytest
import torch

import pypto
from pypto.runtime import differential
from pypto.runtime.tile_numerics import TileNumerics


def _kernel():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = pypto.exp(x) * 2.0 + 1.0
    return k


def test_suite_runs_with_the_check_enabled():
    assert differential.enabled()


def test_elementwise_chain_is_bitwise_equal_to_reference():
    """Same op order per element, so the tile result equals the reference bit for bit."""
    x = torch.rand(32, 64)
    y_tile, y_ref = torch.zeros_like(x), torch.zeros_like(x)
    _kernel()(x, y_tile)
    k = _kernel()
    with pypto.options(runtime_options={"executor": "reference"}):
        k(x, y_ref)
    assert torch.equal(y_tile, y_ref)


def test_a_wrong_tile_result_is_reported(monkeypatch):
    """A tile executor that loses a copy-out is caught, naming the kernel and the tensor."""
    monkeypatch.setattr(TileNumerics, "copy_out", lambda self, op, local, windows: None)
    x = torch.rand(16, 64)
    with pytest.raises(pypto.PyptoError, match="disagree on 'y' of kernel 'k'"):
        _kernel()(x, torch.zeros_like(x))


def test_enable_pass_verify_checks_even_without_the_environment(monkeypatch):
    """verify_options={"enable_pass_verify": True} turns the check on for one kernel, with
    pass_verify_error_tol as its tolerance."""
    monkeypatch.setenv("OPENPTO_CHECK_EXECUTORS", "0")
    monkeypatch.setattr(TileNumerics, "copy_out", lambda self, op, local, windows: None)

    @pypto.frontend.jit(verify_options={"enable_pass_verify": True,
                                        "pass_verify_error_tol": [1e-3, 1e-3]})
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        y[:] = x + 1.0

    x = torch.rand(16, 64)
    with pytest.raises(pypto.PyptoError, match="disagree on 'y'"):
        k(x, torch.zeros_like(x))
