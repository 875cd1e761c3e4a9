"""Matmul operands read through reshapes and views (issue 13: IndexError in the cube cost).

A reshape that only drops or inserts size-1 dims is folded into the reading tile op's region
(`Region.dims`), so a cube op's input windows are in the coordinates of the tensor behind the
alias: a [64] vector read as A = [1, 64] has one extent, not two. Every case runs under both
executors (conftest checks they agree), with and without split-K, against torch; the cost of
an aliased operand equals the cost of the same operand passed as it is seen."""
from __future__ import annotations

import inspect

import pytest
import torch

import pypto

F32 = pypto.DT_FP32
R, T, V = pypto.reshape, pypto.transpose, pypto.view
CUBE = ([16, 16], [32, 32], [16, 16])
SPLIT_K = ([16, 16], [16, 16], [16, 16], True)   # K = 64: four kL1 chunks

# name: (kernel expression, torch golden, input shapes, output shape, vector TileShape)
CASES = {
    "rank1_left": (lambda x, w: pypto.matmul(R(x, [1, 64]), w, F32),
                   lambda x, w: x[None] @ w, [(64,), (64, 32)], (1, 32), None),
    "rank1_right": (lambda a, x: pypto.matmul(a, R(x, [64, 1]), F32),
                    lambda a, x: a @ x[:, None], [(32, 64), (64,)], (32, 1), None),
    "rank1_right_b_trans": (lambda a, x: pypto.matmul(a, R(x, [1, 64]), F32, b_trans=True),
                            lambda a, x: a @ x[:, None], [(32, 64), (64,)], (32, 1), None),
    "rank1_left_a_trans": (lambda x, w: pypto.matmul(R(x, [64, 1]), w, F32, a_trans=True),
                           lambda x, w: x[None] @ w, [(64,), (64, 32)], (1, 32), None),
    "rank3_left": (lambda x, w: pypto.matmul(R(x, [32, 64]), w, F32),
                   lambda x, w: x[0] @ w, [(1, 32, 64), (64, 32)], (32, 32), None),
    "rank4_left": (lambda x, w: pypto.matmul(R(x, [32, 64]), w, F32),
                   lambda x, w: x[0, 0] @ w, [(1, 1, 32, 64), (64, 32)], (32, 32), None),
    "rank4_inner_ones": (lambda x, w: pypto.matmul(R(x, [32, 64]), w, F32),
                         lambda x, w: x[:, 0, :, 0] @ w, [(32, 1, 64, 1), (64, 32)], (32, 32),
                         None),
    "rank4_right": (lambda a, w: pypto.matmul(a, R(w, [64, 32]), F32),
                    lambda a, w: a @ w[0, :, 0], [(32, 64), (1, 64, 1, 32)], (32, 32), None),
    "view_left": (lambda x, w: pypto.matmul(V(x, [16, 64], [8, 0]), w, F32),
                  lambda x, w: x[8:24] @ w, [(32, 64), (64, 32)], (16, 32), None),
    "view_then_squeeze": (lambda x, w: pypto.matmul(R(V(x, [1, 16, 64], [1, 0, 0]), [16, 64]),
                                                    w, F32),
                          lambda x, w: x[1, :16] @ w, [(2, 32, 64), (64, 32)], (16, 32), None),
    "transposed_rank1": (lambda x, w: pypto.matmul(T(R(x, [64, 1]), 0, 1), w, F32),
                         lambda x, w: x[None] @ w, [(64,), (64, 32)], (1, 32), (16, 16)),
    "transposed_left": (lambda x, w: pypto.matmul(T(x, 0, 1), w, F32),
                        lambda x, w: x.T @ w, [(64, 32), (64, 32)], (32, 32), (16, 16)),
    "batched_squeezed": (lambda x, w: pypto.matmul(R(x, [2, 16, 64]), w, F32),
                         lambda x, w: x[:, 0] @ w, [(2, 1, 16, 64), (2, 64, 32)], (2, 16, 32),
                         None),
    "batched_both_reshaped": (lambda x, w: pypto.matmul(R(x, [2, 16, 64]), R(w, [2, 64, 32]),
                                                        F32),
                              lambda x, w: x[:, 0] @ w[0], [(2, 1, 16, 64), (1, 2, 64, 32)],
                              (2, 16, 32), None),
    "batched_unsqueezed_b": (lambda x, w: pypto.matmul(x, R(w, [1, 64, 32]), F32),
                             lambda x, w: x @ w, [(2, 16, 64), (64, 32)], (2, 16, 32), None),
    "out_squeezed": (lambda x, w: R(pypto.matmul(R(x, [1, 64]), w, F32), [32]),
                     lambda x, w: x @ w, [(64,), (64, 32)], (32,), None),
    "out_squeezed_then_add": (lambda x, w: R(pypto.matmul(R(x, [1, 64]), w, F32), [32]) + 1.0,
                              lambda x, w: x @ w + 1.0, [(64,), (64, 32)], (32,), (16,)),
    "out_unsqueezed": (lambda a, w: R(pypto.matmul(a, w, F32), [1, 32, 32]),
                       lambda a, w: (a @ w)[None], [(32, 64), (64, 32)], (1, 32, 32), None),
    "batched_out_flattened": (lambda x, w: R(pypto.matmul(x, w, F32), [32, 32]),
                              lambda x, w: (x @ w).reshape(32, 32), [(2, 16, 64), (2, 64, 32)],
                              (32, 32), None),
}


def _kernel(expr, shapes, out_shape, cube, tile):
    def k(*ts):
        if tile is not None:
            pypto.set_vec_tile_shapes(*tile)
        pypto.set_cube_tile_shapes(*cube)
        ts[-1][:] = expr(*ts[:-1])

    param = inspect.Parameter.POSITIONAL_OR_KEYWORD
    names = [f"in{i}" for i in range(len(shapes))] + ["out"]
    k.__signature__ = inspect.Signature([
        inspect.Parameter(n, param, annotation=pypto.Tensor(list(s), F32))
        for n, s in zip(names, list(shapes) + [out_shape])])
    return pypto.frontend.jit(k)


@pytest.mark.parametrize("cube", [CUBE, SPLIT_K], ids=["whole_k", "split_k"])
@pytest.mark.parametrize("name", list(CASES))
def test_matmul_over_aliased_operands(name, cube):
    expr, golden, shapes, out_shape, tile = CASES[name]
    gen = torch.Generator().manual_seed(13)
    ins = [torch.rand(s, generator=gen) for s in shapes]
    out = torch.full(out_shape, 7.0)
    _kernel(expr, shapes, out_shape, cube, tile)(*ins, out)
    torch.testing.assert_close(out, golden(*ins), rtol=1e-5, atol=1e-5)


def _cube_costs(expr, shapes):
    k = _kernel(expr, shapes, (1, 32), CUBE, None)
    gen = torch.Generator().manual_seed(1)
    k(*[torch.rand(s, generator=gen) for s in shapes], torch.zeros(1, 32))
    return sorted((t.cube_cycles, t.mte1_bytes, t.mte2_bytes)
                  for t in k.last_executor.stitcher.tasks if t.core == "AIC")


def test_aliased_operand_costs_like_the_operand_it_is_seen_as():
    """A [64] vector read as [1, 64] costs what a [1, 64] parameter costs: same cube cycles,
    L1 -> L0 and GM bytes per cube task."""
    aliased = _cube_costs(lambda x, w: pypto.matmul(R(x, [1, 64]), w, F32), [(64,), (64, 32)])
    plain = _cube_costs(lambda a, w: pypto.matmul(a, w, F32), [(1, 64), (64, 32)])
    assert aliased == plain and len(plain) == 2 and all(c > 0 for c, _, _ in plain)
