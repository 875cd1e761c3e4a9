"""The two lower bounds of a simulated run (`profiling.bounds`): hand-built runs with known
answers, and a real kernel whose kernel time is at least both."""
import dataclasses

import pytest
import torch

import pypto
from pypto.errors import PyptoValueError
from pypto.machine.result import SimResult, SimTask, TaskRun
from pypto.machine.spec import load
from pypto.profiling.bounds import (before_scheduling, compulsory_bytes, longest_chain,
                                    lower_bounds, union_bytes)

# a small machine: 2 AIC + 4 AIV at 1000 MHz (1 us = 1000 cycles), 100 B/cycle of HBM, 1 KiB L2
SPEC = dataclasses.replace(load("a2a3"), name="toy", clock_mhz=1000, aic=2, aiv=4,
                           memory={**load("a2a3").memory, "hbm_bytes_per_cycle": 100,
                                   "l2_capacity": 1024})
FP16 = 2


def _task(i, core="AIV", window=0, preds=(), reads=(), writes=(), **cost):
    """reads / writes: (storage, offsets, extents, tensor shape) in FP16."""
    return SimTask(id=i, window=window, instance=0, root="r", root_index=0, call=i, leaf="l",
                   leaf_index=0, core=core, preds=list(preds),
                   reads=[(s, o, e) for s, o, e, _ in reads],
                   read_layouts=[(shape, FP16) for *_, shape in reads],
                   writes=[(s, o, e) for s, o, e, _ in writes],
                   write_layouts=[(shape, FP16) for *_, shape in writes], **cost)


def _result(runs, kernel_cycles):
    return SimResult("toy", 1000, 2, 4, runs, [], [], {"kernel_cycles": kernel_cycles})


def test_union_of_overlapping_and_strided_boxes():
    shape = (4, 8)
    # rows 0-1 and rows 1-2: 3 rows of 8 elements
    assert union_bytes([((0, 0), (2, 8), (shape, FP16)),
                        ((1, 0), (2, 8), (shape, FP16))]) == 3 * 8 * FP16
    # columns 2-4 of every row: 4 runs of 3; with rows 0-1 whole, 2 more runs of 3
    cols = ((0, 2), (4, 3), (shape, FP16))
    assert union_bytes([cols]) == 12 * FP16
    assert union_bytes([cols, ((0, 0), (2, 8), (shape, FP16))]) == (16 + 6) * FP16
    # a 3-D box over whole trailing dims is one run per leading index
    assert union_bytes([((1, 0, 0), (2, 3, 5), ((4, 3, 5), FP16))]) == 30 * FP16
    assert union_bytes([]) == 0.0


def test_compulsory_bytes_count_inputs_once_and_outputs_beyond_l2():
    big = (64, 16)   # 2 KiB in FP16
    runs = [
        # storage 1 (an input) read twice over the same half: 1 KiB once
        TaskRun(_task(0, reads=[(1, (0, 0), (32, 16), big)],
                      writes=[(2, (0, 0), (32, 16), big)]), 0, 0, 10),
        TaskRun(_task(1, reads=[(1, (0, 0), (32, 16), big), (2, (0, 0), (32, 16), big)],
                      writes=[(3, (0, 0), (64, 16), big)]), 1, 10, 20),
    ]
    # storage 2 is workspace (written, then read): not compulsory; storage 3 is the output,
    # 2 KiB of which 1 KiB fits the L2
    assert compulsory_bytes(_result(runs, 20), l2_capacity=1024) == 1024 + 1024
    assert compulsory_bytes(_result(runs, 20), l2_capacity=4096) == 1024


def test_roofline_terms_and_ratio():
    runs = [TaskRun(_task(0, "AIC", cube_cycles=3000), 0, 0, 4000),
            TaskRun(_task(1, "AIC", cube_cycles=1000), 1, 0, 2000),
            TaskRun(_task(2, "AIV", vector_cycles=800,
                          reads=[(1, (0, 0), (100, 100), (100, 100))]), 0, 0, 1000)]
    b = lower_bounds(_result(runs, 8000), SPEC)
    assert b.cube_us == pytest.approx(2.0)          # 4000 cube cycles over 2 AIC cores
    assert b.vector_us == pytest.approx(0.2)        # 800 over 4 AIV cores
    assert b.compulsory_bytes == 20000 and b.hbm_us == pytest.approx(0.2)
    assert (b.roofline_us, b.roofline_term) == (pytest.approx(2.0), "cube")
    assert b.chain_us == pytest.approx(4.0) and b.chain_tasks == 1
    assert (b.larger, b.bound_us, b.ratio) == ("chain", pytest.approx(4.0), pytest.approx(2.0))
    assert "2.00x the larger bound (chain)" in b.summary()


def test_chain_runs_windows_in_sequence():
    # window 0: a (10) -> b (20), c (5) alone; window 1: d (5) -> e (5), d also after c
    runs = [TaskRun(_task(0), 0, 0, 10), TaskRun(_task(1, preds=[0]), 0, 10, 30),
            TaskRun(_task(2), 1, 0, 5),
            TaskRun(_task(3, window=1, preds=[2]), 0, 40, 45),
            TaskRun(_task(4, window=1, preds=[3]), 0, 45, 50)]
    assert longest_chain(_result(runs, 50)) == (40.0, 4)
    # the same in another order, predecessors listed after their successors
    assert longest_chain(_result(runs[::-1], 50)) == (40.0, 4)


def test_bad_input_is_named():
    runs = [TaskRun(_task(0, preds=[1]), 0, 0, 1), TaskRun(_task(1, preds=[0]), 0, 1, 2)]
    with pytest.raises(PyptoValueError, match="cycle"):
        longest_chain(_result(runs, 2))
    with pytest.raises(PyptoValueError, match="'a2a3' has 24 AIC \\+ 48 AIV.*'toy'"):
        lower_bounds(_result([], 0), load("a2a3"))


def test_a_real_kernel_takes_at_least_both_bounds():
    @pypto.frontend.jit
    def scaled_matmul(a: pypto.Tensor([256, 512], pypto.DT_FP16),
                      b: pypto.Tensor([512, 256], pypto.DT_FP16),
                      out: pypto.Tensor([256, 256], pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [128, 128], [64, 64])
        pypto.set_vec_tile_shapes(64, 128)
        out[:] = pypto.exp(pypto.matmul(a, b, pypto.DT_FP32) * 0.01)

    a, b = torch.randn(256, 512).half(), torch.randn(512, 256).half()
    out = torch.zeros(256, 256)
    scaled_matmul(a, b, out)
    bounds = lower_bounds(scaled_matmul.last_run)
    assert bounds.cube_us > 0 and bounds.vector_us > 0 and bounds.chain_tasks >= 2
    # both inputs are read whole, once
    assert bounds.compulsory_bytes == (256 * 512 + 512 * 256) * 2
    assert bounds.kernel_us >= bounds.roofline_us and bounds.kernel_us >= bounds.chain_us
    assert bounds.ratio >= 1.0


@pytest.mark.parametrize("rows, cols, tile", [(256, 256, (64, 128)), (4096, 4096, (64, 512)),
                                              (8192, 2048, (16, 2048))])
def test_the_bound_before_scheduling_is_below_the_simulated_kernel_time(rows, cols, tile):
    """The tuner's pruning bound, from the stitched tasks alone: compute-light copies over
    many tiles are bandwidth bound, where the simulator's time-averaged shares could undercut
    the fluid HBM time; `HBM_SHARE` keeps the bound below them."""
    @pypto.frontend.jit(runtime_options={"numerics": "timing_only"})
    def scale(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        y[:] = x * 2.0

    scale(torch.zeros(rows, cols), torch.zeros(rows, cols))
    pending = scale.last.pending
    bound = before_scheduling(pending.tasks, pending.spec)
    run = scale.last_run
    full = lower_bounds(run)
    assert 0 < bound <= run.us(run.stats["kernel_cycles"])
    assert bound <= max(full.roofline_us, full.chain_us)   # the cheap form never exceeds them
