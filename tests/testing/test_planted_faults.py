"""The cross-check's bounds leave room for floating point and not for bugs: every wrong result
that a planted tile fault makes is flagged (pypto.testing.faults, fuzz/plant.py)."""
import pytest
import torch

import pypto
from pypto.testing.faults import KINDS, Fault, planted
from pypto.testing.fuzz import run_batch


def _kernel():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([64, 96], pypto.DT_FP32), y: pypto.Tensor([64, 1], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        y[:] = pypto.sum(pypto.exp(x) * 0.5, dim=-1, keepdim=True)
    return k


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_fault_is_caught_by_the_check(kind):
    """A split-axis sum of an elementwise chain: every kind finds a tile, and the check names
    the kernel and the output."""
    x = torch.randn(64, 96)
    with planted(Fault(kind)) as fault:
        with pytest.raises(pypto.PyptoError, match="disagree on 'y' of kernel 'k'"):
            _kernel()(x, torch.zeros(64, 1))
    assert fault.applied.startswith(kind)


def test_a_fuzz_batch_with_every_fault_planted_misses_none():
    """150 random kernels, each fault kind planted in each: nothing missed, and each kind was
    caught often enough to mean something."""
    summary = run_batch(31, 150, jobs=2, timeout=30.0, plant=True)
    assert summary.outcomes["mismatch"] == 0, summary.failures
    assert summary.outcomes["internal_error"] == 0, summary.failures
    for kind in KINDS:
        counts = summary.planted[kind]
        assert counts.get("missed", 0) == 0
    least = {"flipped_sign": 100, "offset": 80, "reduce_axis": 5, "dropped_tail": 40}
    caught = {kind: summary.planted[kind].get("caught", 0) for kind in KINDS}
    assert all(caught[k] >= n for k, n in least.items()), caught
