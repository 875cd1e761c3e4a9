"""Misuse catalogue, part 2: op shapes, TileShapes, loops and views inside a kernel body.

Same rule as part 1 (misuse_check.check): a `pypto.PyptoError` naming the culprit and this
file's offending line (`# <marker>`), with at most one pypto frame in the traceback.
"""
import pypto
import pytest
import torch
from misuse_check import check

F32 = pypto.DT_FP32
F16 = pypto.DT_FP16
DYN = pypto.DYNAMIC
A, B = torch.rand(16, 64), torch.rand(16, 64)


def run2(body, x=None, out=None):
    """Trace and run `body(x, out)` as a kernel over a [16, 64] input and output."""
    @pypto.frontend.jit
    def kernel(x: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        body(x, out)

    kernel(A if x is None else x, torch.zeros(16, 64) if out is None else out)


# --------------------------------------------------------------------------------------------
# Shapes in ops

def test_broadcast_mismatch():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x + x[:, 0:32]  # bcast

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "bcast", "add", "64", "32")


def test_matmul_inner_dims():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F32), b: pypto.Tensor([32, 16], F32),
          c: pypto.Tensor([16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        c[:] = pypto.matmul(a, b, F32)  # matmul-k

    with pytest.raises(pypto.PyptoError) as info:
        k(A, torch.rand(32, 16), torch.zeros(16, 16))
    check(info, "matmul-k", "matmul", "64", "32")


def test_matmul_on_a_vector():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([64], F32), b: pypto.Tensor([64, 16], F32),
          c: pypto.Tensor([16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        c[:] = pypto.matmul(a, b, F32)  # matmul-rank

    with pytest.raises(pypto.PyptoError) as info:
        k(torch.rand(64), torch.rand(64, 16), torch.zeros(16))
    check(info, "matmul-rank", "matmul")


def test_reshape_size():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.reshape(x, [16, 32])  # reshape

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "reshape", "reshape", "1024", "[16, 32]")


def test_concat_dims():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.concat([x[0:8, :], x[0:8, 0:32]], 0)  # concat

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "concat", "concat")


def test_concat_dim_out_of_range():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.concat([x[0:8, :], x[8:16, :]], 2)  # concat-dim

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "concat-dim", "concat", "2")


def test_transpose_axis_out_of_range():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.transpose(x, 0, 2)  # transpose

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "transpose", "transpose", "2")


def test_permute_not_a_permutation():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.permute(x, [0, 0])  # permute

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "permute", "permute", "[0, 0]")


def test_sum_dim_out_of_range():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:, 0:1] = pypto.sum(x, dim=2, keepdim=True)  # sum-dim

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "sum-dim", "sum", "dim 2")


def test_amax_negative_dim_out_of_range():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:, 0:1] = pypto.amax(x, dim=-3, keepdim=True)  # amax-dim

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "amax-dim", "amax", "-3")


def test_unsqueeze_dim_out_of_range():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.squeeze(pypto.unsqueeze(x, 5), 5)  # unsqueeze

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "unsqueeze", "unsqueeze", "5")


def test_mixed_dtypes():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F32), h: pypto.Tensor([16, 64], F16),
          out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = a * h  # mixed

    with pytest.raises(TypeError) as info:
        k(A, A.half(), torch.zeros(16, 64))
    check(info, "mixed", "DT_FP32", "DT_FP16", "cast")


def test_float_scalar_with_int_tensor():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], pypto.DT_INT32), out: pypto.Tensor([16, 64], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = a + 0.5  # float-int

    with pytest.raises(TypeError) as info:
        k(A.int(), torch.zeros(16, 64, dtype=torch.int32))
    check(info, "float-int", "0.5", "DT_INT32")


def test_cast_to_a_torch_dtype():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.cast(x, torch.float16)  # cast

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "cast", "cast", "torch.float16")


def test_where_shapes():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.where(x > 0.5, x, x[0:8, :])  # where

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "where", "where", "16", "8")


def test_op_on_a_python_list():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.exp([1.0, 2.0])  # exp-list

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "exp-list", "exp", "list")


def test_host_tensor_captured_by_the_kernel():
    host = torch.rand(16, 64)

    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x + host  # host-operand

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "host-operand", "add", "torch.Tensor", "kernel as arguments")


def test_tensor_used_as_an_index():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x[x]  # tensor-index

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "tensor-index", "t[key]", "pypto.gather")


# --------------------------------------------------------------------------------------------
# TileShapes

def test_no_vec_tile():
    def body(x, out):
        out[:] = pypto.exp(x)  # no-tile

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "no-tile", "exp", "set_vec_tile_shapes")


def test_vec_tile_rank():
    def body(x, out):
        pypto.set_vec_tile_shapes(64)
        out[:] = pypto.exp(x)  # tile-rank

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "tile-rank", "exp", "rank 1", "rank 2")


def test_zero_tile_dim():
    def body(x, out):
        pypto.set_vec_tile_shapes(0, 64)  # tile-zero
        out[:] = x

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "tile-zero", "vec tile dim 0", "> 0")


def test_negative_tile_dim():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, -64)  # tile-neg
        out[:] = x

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "tile-neg", "vec tile dim 1", "-64")


def test_float_tile_dim():
    def body(x, out):
        pypto.set_vec_tile_shapes(16.0, 64)  # tile-float
        out[:] = x

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "tile-float", "vec tile dim 0", "16.0")


def test_too_many_tile_dims():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 1, 1, 1, 1, 1, 64)  # tile-7
        out[:] = x

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "tile-7", "set_vec_tile_shapes", "7")


def test_last_tile_dim_not_32_bytes():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F16), out: pypto.Tensor([16, 64], F16)):
        pypto.set_vec_tile_shapes(16, 8)
        out[:] = a + a  # align

    with pytest.raises(pypto.PyptoError) as info:
        k(A.half(), torch.zeros(16, 64, dtype=torch.float16))
    check(info, "align", "add", "8 x 2 B", "32 B", "e.g. 16")


def test_vec_tile_exceeds_ub():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([1024, 1024], F32), out: pypto.Tensor([1024, 1024], F32)):
        pypto.set_vec_tile_shapes(1024, 1024)
        out[:] = a + a  # ub

    with pytest.raises(pypto.PyptoError) as info:
        k(torch.rand(1024, 1024), torch.zeros(1024, 1024))
    check(info, "ub", "UB")


def test_no_cube_tile():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F32), b: pypto.Tensor([64, 16], F32),
          c: pypto.Tensor([16, 16], F32)):
        c[:] = pypto.matmul(a, b, F32)  # no-cube

    with pytest.raises(pypto.PyptoError) as info:
        k(A, torch.rand(64, 16), torch.zeros(16, 16))
    check(info, "no-cube", "matmul", "set_cube_tile_shapes")


def test_cube_tile_with_one_entry():
    def body(x, out):
        pypto.set_cube_tile_shapes([128], [64, 256], [256, 256])  # cube-short
        out[:] = x

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "cube-short", "cube tile 'm'", "[128]")


def test_cube_tile_l0_not_dividing_l1():
    def body(x, out):
        pypto.set_cube_tile_shapes([128, 128], [64, 96], [256, 256])  # cube-divide
        out[:] = x

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "cube-divide", "cube tile 'k'", "divide")


def test_cube_tile_not_a_list():
    def body(x, out):
        pypto.set_cube_tile_shapes(128, 64, 256)  # cube-int
        out[:] = x

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "cube-int", "cube tile 'm'", "128")


def test_cube_tile_exceeds_l0():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([512, 512], F32), b: pypto.Tensor([512, 512], F32),
          c: pypto.Tensor([512, 512], F32)):
        pypto.set_cube_tile_shapes([512, 512], [512, 512], [512, 512])
        c[:] = pypto.matmul(a, b, F32)  # l0

    with pytest.raises(pypto.PyptoError) as info:
        k(torch.rand(512, 512), torch.rand(512, 512), torch.zeros(512, 512))
    check(info, "l0", "matmul", "L0")


# --------------------------------------------------------------------------------------------
# Loops

def test_loop_step_zero():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(0, 16, 0):  # step-zero
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "step-zero", "pypto.loop", "step", "0")


def test_loop_negative_step_runs_downwards():
    """Deliberate: a negative step counts down, as Python's range does."""
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(15, -1, -1):
            out[i:i + 1, :] = x[i:i + 1, :] * 2.0

    out = torch.zeros(16, 64)
    run2(body, out=out)
    assert torch.equal(out, A * 2.0)


def test_loop_float_bound():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(0, 16.0):  # float-bound
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "float-bound", "pypto.loop", "stop", "16.0")


def test_loop_string_bound():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop("16"):  # str-bound
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "str-bound", "pypto.loop", "str")


def test_loop_four_bounds():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(0, 16, 1, 2):  # four-bounds
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "four-bounds", "pypto.loop", "got 4")


def test_loop_name_not_a_string():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(16, name=5):  # loop-name
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "loop-name", "pypto.loop name", "5")


def test_unroll_list_empty():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(16, unroll_list=[]):  # unroll-empty
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "unroll-empty", "unroll_list")


def test_unroll_list_zero():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(16, unroll_list=[4, 0]):  # unroll-zero
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "unroll-zero", "unroll_list", "0")


def test_unroll_list_not_a_list():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(16, unroll_list=4):  # unroll-int
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(TypeError) as info:
        run2(body)
    check(info, "unroll-int", "unroll_list", "4")


def test_unroll_list_without_one():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(16, unroll_list=[8, 4]):  # unroll-no-1
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "unroll-no-1", "unroll_list", "[8, 4]", "1")


def test_loop_unroll_with_negative_step():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i, k in pypto.loop_unroll(15, -1, -1, unroll_list=[4]):  # unroll-neg
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "unroll-neg", "pypto.loop_unroll", "step")


def test_break_in_a_loop():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(16, name="rows"):  # break-loop
            out[i:i + 1, :] = x[i:i + 1, :]
            break

    with pytest.raises(RuntimeError) as info:
        run2(body)
    check(info, "break-loop", "'rows'", "break")


def test_range_over_a_dynamic_dim():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in range(x.shape[0]):  # range-dyn
            out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(pypto.PyptoError) as info:
        k(A, torch.zeros(16, 64))
    check(info, "range-dyn", "pypto.loop")


def test_is_loop_begin_on_a_non_index():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 64)
        for i in pypto.loop(16):
            if pypto.is_loop_begin(i * 2):  # loop-begin
                out[i:i + 1, :] = x[i:i + 1, :]

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "loop-begin", "pypto.is_loop_begin", "loop index")


def test_branch_outside_any_loop_is_a_runtime_branch():
    """Deliberate: `if` on a SymbolicScalar in the kernel body is a runtime branch of the
    implicit outer loop; both sides are traced and the right one runs."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), out: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(8, 64)
        if x.shape[0] > 8:
            out[:] = x * 2.0
        else:
            out[:] = x * 3.0

    out = torch.zeros(16, 64)
    k(A, out)
    assert torch.equal(out, A * 2.0)


# --------------------------------------------------------------------------------------------
# Views and assignment

def test_slice_with_a_step():
    def body(x, out):
        pypto.set_vec_tile_shapes(8, 64)
        out[0:8, :] = x[::2, :]  # slice-step

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "slice-step", "step")


def test_too_many_indices():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x[0:16, 0:64, 0:1]  # many-idx

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "many-idx", "too many indices", "rank-2")


def test_float_index():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x[0:8.0, :]  # float-idx

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "float-idx", "8.0")


def test_assign_writes_the_value_extent():
    """Deliberate, as in PyPTO (ops/shape.py setitem): the slice stop is ignored and the value's
    extent is written at the slice start, so `out[0:8, :] = x` with 16-row x writes 16 rows."""
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[0:8, :] = x

    out = torch.zeros(16, 64)
    run2(body, out=out)
    assert torch.equal(out, A)


def test_assign_beyond_the_destination():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[8:16, :] = x  # assign-beyond

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "assign-beyond", "dim 0")


def test_assign_value_of_a_higher_rank():
    def body(x, out):
        pypto.set_vec_tile_shapes(1, 16, 64)
        out[0, :] = pypto.unsqueeze(x, 0)  # assign-rank

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "assign-rank", "rank 3")


def test_view_beyond_the_parent():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[0:16, :] = pypto.view(x, [16, 64], [40, 0]) + 1.0  # view

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "view", "view", "40", "dim 0")


def test_view_offsets_of_the_wrong_rank():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.view(x, [16, 64], [0])  # view-rank

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "view-rank", "view", "offsets", "2 entries")


def test_assign_a_scalar_to_a_slice_of_the_wrong_type():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = "zero"  # assign-str

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "assign-str", "str")


def test_reading_an_unwritten_local():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        scratch = pypto.tensor([16, 64], F32, "scratch")
        out[:] = scratch + x  # unwritten

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "unwritten", "'scratch'")


def test_local_tensor_with_a_zero_dim():
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.tensor([16, 0], F32, "scratch")  # local-zero
        out[:] = x

    with pytest.raises(ValueError) as info:
        run2(body)
    check(info, "local-zero", "pypto.tensor", "[16, 0]")


def test_static_slice_partly_outside():
    """Depends on the numerics fix (ops/shape.py): a static slice reaching past the dim is an
    error, not a clamped (and partly unwritten) copy."""
    def body(x, out):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = x[8:24, :]  # slice-oob

    with pytest.raises(pypto.PyptoError) as info:
        run2(body)
    check(info, "slice-oob", "[8:24]", "dim 0", "'x'", "16")
