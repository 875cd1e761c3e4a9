"""Loop-edge tests under unrolling (`frontend.loop_edges`): `is_loop_begin` / `is_loop_end` are
branches only where an iteration can go either way, so an unrolled body keeps a handful of
paths instead of 2^(2k), and every trip count still computes exactly what the loop means."""
from __future__ import annotations

import pypto
import pytest
import torch

from pypto.ir.program import Loop

F32 = pypto.DT_FP32
DYN = pypto.DYNAMIC
ROWS = 16


def edges_kernel(unroll_list, offset: int = 0):
    """y[block] = x*2 on the first block, x*3 on the last, x+1 between (one block: x*2 then
    +0.5 for being last too), the edge tests made on index + `offset`."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(ROWS, 64)
        n = x.shape[0]
        for i in pypto.loop(0, n, ROWS, name="L", unroll_list=unroll_list):
            v = pypto.view(x, [ROWS, 64], [i, 0], valid_shape=[(n - i).max(0).min(ROWS), 64])
            if pypto.is_loop_begin(i + offset):
                w = v * 2.0
            elif pypto.is_loop_end(i + offset):
                w = v * 3.0
            else:
                w = v + 1.0
            if pypto.is_loop_end(i + offset):
                w = w + 0.5
            y[i:, :] = w
    return k


def golden(x: torch.Tensor) -> torch.Tensor:
    blocks = list(torch.split(x, ROWS))
    out = [b + 1.0 for b in blocks]
    out[-1] = blocks[-1] * 3.0 + 0.5
    out[0] = blocks[0] * 2.0 + (0.5 if len(blocks) == 1 else 0.0)
    return torch.cat(out)


def paths(kernel) -> dict[int, int]:
    (lp,) = [lp for lp in kernel.last_program.loops() if lp.name == "L"]
    assert isinstance(lp, Loop)
    return {v.factor: len(v.paths) for v in lp.variants}


@pytest.mark.parametrize("unroll_list", [[4, 1], [4], [2, 1], None])
def test_every_trip_count_is_exact(unroll_list):
    k = edges_kernel(unroll_list)
    for blocks in range(1, 11):
        x = torch.rand(blocks * ROWS - (blocks % 3), 64)
        y = torch.zeros_like(x)
        k(x, y)
        assert torch.equal(y, golden(x)), (unroll_list, blocks)
    assert k.compile_count == 1


def test_a_tier_of_whole_copies_branches_on_its_first_begin_and_last_end_only():
    """[4, 1]: in the 4-tier only copy 0 can be the first iteration and only copy 3 the last
    (the tier covers 4 whole indices), so 2 x 2 paths, not 2^8; the 1-tier is one copy."""
    k = edges_kernel([4, 1])
    k(torch.rand(9 * ROWS, 64), torch.zeros(9 * ROWS, 64))
    # 1-tier: begin true -> end true/false; begin false -> end true (else-branch) or false
    # (then the second end test repeats it: decided) = 2 + 2 paths
    assert paths(k) == {4: 4, 1: 4}


def test_one_factor_copies_past_the_end_are_decided_by_the_copy_before():
    """[4]: the tail copies run past the end, so any copy can be the last; once one is, the
    later ones are too, and once one is not, the earlier ones are not: begin (2 outcomes on
    copy 0) x where the loop ends (copy 0..3 or after) = at most 2 x 5 paths."""
    k = edges_kernel([4])
    k(torch.rand(6 * ROWS, 64), torch.zeros(6 * ROWS, 64))
    assert paths(k) == {4: 10}


def test_offsets_that_are_not_whole_steps_stay_branches():
    """An edge test on i + 1 (not a copy's index) is never decided at trace time: it is the
    plain runtime condition, as without unrolling."""
    k = edges_kernel(None, offset=1)
    k(torch.rand(3 * ROWS, 64), torch.zeros(3 * ROWS, 64))
    (lp,) = [lp for lp in k.last_program.loops() if lp.name == "L"]
    # begin true: end either way (2); begin false: end true, and the repeated test is
    # decided by the first (1), or end false, likewise (1)
    assert len(lp.variants[0].paths) == 4


def test_begin_on_a_later_copy_is_false_and_end_implied_true():
    """The decided tests are constants: a later copy's begin is False, the copy after a last
    one is last too."""
    seen = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(ROWS, 64)
        for i in pypto.loop(0, x.shape[0], ROWS, name="L", unroll_list=[2]):
            seen.append((repr(pypto.is_loop_begin(i)), repr(pypto.is_loop_end(i))))
            if pypto.is_loop_end(i):
                y[i:, :] = x[i:i + ROWS, :]

    k(torch.rand(4 * ROWS, 64), torch.zeros(4 * ROWS, 64))
    later = [s for n, s in enumerate(seen) if n % 2 == 1]   # copy 1 of every trace
    assert all(begin == "0" for begin, _ in later)
    assert any(end == "1" for _, end in later)    # after copy 0 was the last


def test_a_negative_step_unrolled_computes_what_the_plain_loop_does():
    """Walking the blocks backwards (step -16): a later copy is never the first iteration
    there either, and every trip count gives the plain loop's result."""
    def make(unroll_list):
        @pypto.frontend.jit
        def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
            pypto.set_vec_tile_shapes(ROWS, 64)
            n = x.shape[0]
            for i in pypto.loop(n - ROWS, -ROWS, -ROWS, name="L", unroll_list=unroll_list):
                v = pypto.view(x, [ROWS, 64], [i.max(0), 0],
                               valid_shape=[(i + ROWS).max(0).min(ROWS), 64])
                if pypto.is_loop_begin(i):
                    w = v * 2.0
                elif pypto.is_loop_end(i):
                    w = v * 3.0
                else:
                    w = v + 1.0
                y[i.max(0):, :] = w
        return k

    plain, unrolled = make(None), make([3])
    for blocks in range(1, 8):
        x = torch.rand(blocks * ROWS, 64)
        y_plain, y_unrolled = torch.zeros_like(x), torch.zeros_like(x)
        plain(x, y_plain)
        unrolled(x, y_unrolled)
        assert torch.equal(y_plain, y_unrolled), blocks
    # copy 0 first: the loop ends on copy 1, 2 or after (its own end test is the skipped
    # elif) = 3 paths; copy 0 not first: it ends on copy 0, 1, 2 or after = 4 paths
    assert paths(unrolled) == {3: 7}
