"""Errors a user can cause: each is a `pypto.PyptoError` whose message names the culprit
(parameter, op or option) and the user's own `file:line`, and whose traceback does not walk
through the compiler's internals (DESIGN.md §4, STYLE.md principle 10).

Lines are found by the `# <marker>` comment at the end of the offending line."""
import os
import traceback

import numpy as np
import pypto
import pytest
import torch

F32 = pypto.DT_FP32
DYN = pypto.DYNAMIC
_SOURCE = open(__file__, encoding="utf-8").read().splitlines()
_PACKAGE = os.path.dirname(os.path.abspath(pypto.__file__))


def line_of(marker: str) -> str:
    """`test_bad_input.py:<n>` for the line ending with `# <marker>`."""
    hits = [n for n, text in enumerate(_SOURCE, 1) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, marker
    return f"test_bad_input.py:{hits[0]}"


def check(info: pytest.ExceptionInfo, marker: str, *names: str) -> str:
    """The error is a PyptoError naming every `names` and the marked line; its traceback
    shows at most one pypto frame (the public entry point that re-raised it), never the
    tracer, the ops or the executor."""
    err = info.value
    assert isinstance(err, pypto.PyptoError), type(err)
    text = str(err)
    assert line_of(marker) in text, text
    for name in names:
        assert name in text, (name, text)
    frames = [f.filename for f in traceback.extract_tb(err.__traceback__)]
    assert len([f for f in frames if os.path.abspath(f).startswith(_PACKAGE)]) <= 1, frames
    return text


@pypto.frontend.jit
def rows2(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32), scale: float = 2.0):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(0, x.shape[0], 16, name="L"):
        y[i:, :] = x[i:i + 16, :] * scale


X, Y = torch.rand(32, 64), torch.zeros(32, 64)


# --------------------------------------------------------------------------------------------
# Call convention and binding

def test_too_few_tensor_arguments():
    """Every tensor parameter must be passed positionally first."""
    with pytest.raises(pypto.PyptoError) as info:
        rows2(X)  # few
    check(info, "few", "rows2", "x, y")


def test_too_many_positional_arguments():
    """Extra positionals beyond the non-tensor parameters are rejected."""
    with pytest.raises(RuntimeError) as info:
        rows2(X, Y, 2.0, 3.0)  # many
    check(info, "many", "rows2", "4 positional")


def test_unknown_keyword_argument():
    """A keyword that names no non-tensor parameter is rejected, listing the valid ones."""
    with pytest.raises(pypto.PyptoError) as info:
        rows2(X, Y, scal=2.0)  # kw
    check(info, "kw", "'scal'", "scale")


def test_missing_non_tensor_argument():
    """A non-tensor parameter without a default must be given."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4], F32), factor):
        pass

    with pytest.raises(pypto.PyptoError) as info:
        k(torch.rand(4))  # missing
    check(info, "missing", "'factor'")


def test_tensor_passed_for_a_non_tensor_parameter():
    """A tensor in a non-tensor slot is a RuntimeError naming the parameter."""
    with pytest.raises(RuntimeError) as info:
        rows2(X, Y, X)  # tensor-as-scalar
    check(info, "tensor-as-scalar", "'scale'")


def test_non_tensor_passed_for_a_tensor_parameter():
    """An int where a tensor parameter is expected names the parameter."""
    with pytest.raises(pypto.PyptoError) as info:
        rows2(3, Y)  # int-as-tensor
    check(info, "int-as-tensor", "'x'", "int")


def test_dtype_not_matching_the_annotation():
    """The annotation dtype is how the data is read; a different torch dtype is rejected."""
    with pytest.raises(ValueError) as info:
        rows2(X.double(), Y)  # dtype
    check(info, "dtype", "'x'", "DT_DOUBLE", "DT_FP32")


def test_rank_not_matching_the_annotation():
    """A fully listed annotation fixes the rank."""
    with pytest.raises(ValueError) as info:
        rows2(X, torch.zeros(32, 64, 1))  # rank
    check(info, "rank", "'y'", "rank")


def test_static_dim_not_matching_the_annotation():
    """An int entry must equal the tensor's dim."""
    with pytest.raises(ValueError) as info:
        rows2(torch.rand(32, 32), Y)  # static-dim
    check(info, "static-dim", "'x'", "dim 1", "64")


def test_non_contiguous_torch_input():
    """Inputs must be contiguous: a transposed torch view is rejected by name."""
    with pytest.raises(pypto.PyptoError) as info:
        rows2(torch.rand(64, 32).t(), Y)  # torch-t
    check(info, "torch-t", "'x'", "contiguous")


def test_non_contiguous_numpy_input():
    """A numpy column slice is not contiguous either."""
    sliced = np.random.rand(32, 128).astype(np.float32)[:, :64]
    with pytest.raises(pypto.PyptoError) as info:
        rows2(sliced, Y.numpy())  # np-slice
    check(info, "np-slice", "'x'", "contiguous")


def test_output_that_is_not_writable():
    """Writing into a read-only numpy array names the parameter and the writing line; reading a
    read-only input is fine."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x + 1.0  # readonly-write

    x = np.random.rand(32, 64).astype(np.float32)
    x.flags.writeable = False
    y = np.zeros((32, 64), np.float32)
    k(x, y)
    assert np.array_equal(y, x + np.float32(1))
    y.flags.writeable = False
    with pytest.raises(pypto.PyptoError) as info:
        k(x, y)
    check(info, "readonly-write", "'y'", "read-only")


# --------------------------------------------------------------------------------------------
# Tiling

def test_vec_tile_rank_differs_from_op_rank():
    """The vector TileShape needs one size per dim of the op."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(4, 16, 64)
        y[:] = x + 1.0  # tile-rank

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "tile-rank", "[4, 16, 64]", "rank 3", "rank 2")


def test_missing_vec_tile():
    """A vector op needs a vector TileShape."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        y[:] = pypto.exp(x)  # no-tile

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "no-tile", "exp", "set_vec_tile_shapes")


def test_vec_tile_last_dim_not_32_byte_aligned():
    """last tile dim x dtype size must be a multiple of 32 B; the error suggests a legal size."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(16, 12)
        y[:] = pypto.exp(x)  # align

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "align", "exp", "12", "32 B", "e.g. 8")


def test_matmul_without_cube_tiles():
    """matmul needs set_cube_tile_shapes first."""
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], F32), b: pypto.Tensor([64, 32], F32),
          c: pypto.Tensor([32, 32], F32)):
        pypto.set_vec_tile_shapes(16, 32)
        c[:] = pypto.matmul(a, b, F32)  # no-cube

    with pytest.raises(pypto.PyptoError) as info:
        k(X, torch.rand(64, 32), torch.zeros(32, 32))
    check(info, "no-cube", "matmul", "set_cube_tile_shapes")


# --------------------------------------------------------------------------------------------
# Kernel structure

def test_python_range_over_a_symbolic_bound():
    """range() needs a Python int; a dynamic dim points the user at pypto.loop."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([DYN, 64], F32), y: pypto.Tensor([DYN, 64], F32)):
        pypto.set_vec_tile_shapes(1, 64)
        for i in range(x.shape[0]):  # range
            y[i:, :] = x[i:i + 1, :]

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "range", "RUNTIME_GetInputShapeDim(ARG_x,0)", "pypto.loop")


def test_returning_a_value_points_at_the_return():
    """Kernels have no return value: decoration fails at the `return` line."""
    with pytest.raises(pypto.PyptoError) as info:
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4], F32)):
            if x.dim == 1:
                return x  # return
    check(info, "return", "'k'", "out.move")


def test_return_annotation_is_rejected():
    """A return annotation is as wrong as a return value."""
    with pytest.raises(pypto.PyptoError) as info:
        @pypto.frontend.jit  # ret-ann
        def k(x: pypto.Tensor([4], F32)) -> int:
            pass
    check(info, "ret-ann", "'k'", "return annotation")


def test_tensor_parameter_after_a_non_tensor_parameter():
    """Tensor parameters come first in the signature."""
    with pytest.raises(ValueError) as info:
        @pypto.frontend.jit  # order
        def k(n: int, x: pypto.Tensor([4], F32)):
            pass
    check(info, "order", "'x'", "'n'")


def test_reading_a_local_tensor_nobody_wrote():
    """pypto.tensor does not initialise memory: reading it first is an error at the read."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        scratch = pypto.tensor([32, 64], F32, "scratch")
        y[:] = scratch + x  # unwritten

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "unwritten", "'scratch'")


def test_mixed_dtype_binary_op():
    """Binary ops need one dtype; the error says to cast."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), h: pypto.Tensor([32, 64], pypto.DT_FP16),
          y: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x + h  # mixed

    with pytest.raises(TypeError) as info:
        k(X, X.half(), Y)
    check(info, "mixed", "DT_FP32", "DT_FP16", "cast")


def test_float_scalar_with_int_tensor():
    """A float scalar cannot combine with an integer tensor."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], pypto.DT_INT32), y: pypto.Tensor([32, 64], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x * 1.5  # float-int

    with pytest.raises(pypto.PyptoError) as info:
        k(X.int(), Y.int())
    check(info, "float-int", "1.5", "DT_INT32")


def test_view_outside_its_parent():
    """A view starting beyond its parent's extent names the op, the dim and the parent size
    (a window that only overhangs the edge is a legal tail view)."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 64], F32), y: pypto.Tensor([32, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[0:16, :] = pypto.view(x, [16, 64], [40, 0]) + 1.0  # view

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "view", "view", "40", "dim 0", "size 32")


# --------------------------------------------------------------------------------------------
# Options

def test_unknown_jit_runtime_option_suggests_the_closest_key():
    """An unknown key names the closest valid one."""
    with pytest.raises(pypto.PyptoError) as info:
        pypto.frontend.jit(runtime_options={"stitch_function_max_nu": 8})  # jit-rt

    check(info, "jit-rt", "'stitch_function_max_nu'", "did you mean 'stitch_function_max_num'")


def test_jit_pass_option_out_of_range():
    """A value outside the documented range names the key and the range."""
    with pytest.raises(pypto.PyptoError) as info:
        @pypto.frontend.jit(pass_options={"sg_set_scope": -5})  # jit-pass
        def k(x: pypto.Tensor([4], F32)):
            pass
    check(info, "jit-pass", "sg_set_scope", "-5", "[-1, 2147483647]")


def test_jit_runtime_option_checked_again_at_call():
    """runtime_options is held by reference, so it is re-checked on every call."""
    rt = {}

    @pypto.frontend.jit(runtime_options=rt)
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_vec_tile_shapes(4, 64)
        y[:] = x + 1.0

    rt["device_sched_mode"] = 9
    with pytest.raises(pypto.PyptoError) as info:
        k(torch.rand(4, 64), torch.zeros(4, 64))  # rt-call
    check(info, "rt-call", "device_sched_mode", "[0, 3]")


def test_pypto_options_unknown_key_and_bad_value():
    """pypto.options checks its dicts when it is built."""
    with pytest.raises(pypto.PyptoError) as info:
        pypto.options(pass_options={"enable_slic": True})  # options-key
    check(info, "options-key", "'enable_slic'", "did you mean 'enable_slice'")
    with pytest.raises(pypto.PyptoError) as info:
        pypto.options(runtime_options={"run_mode": 3})  # options-value
    check(info, "options-value", "run_mode", "RunMode")


def test_set_pass_options_unknown_key_and_bad_value():
    """set_pass_options names the key and the closest valid one, or the legal range."""
    with pytest.raises(pypto.PyptoError) as info:
        pypto.set_pass_options(sg_set_scop=1)  # setter-key
    check(info, "setter-key", "'sg_set_scop'", "did you mean 'sg_set_scope'")
    with pytest.raises(pypto.PyptoError) as info:
        pypto.set_pass_options(sg_set_tunevf_mode=5)  # setter-value
    check(info, "setter-value", "sg_set_tunevf_mode", "[0, 2]")
    assert pypto.get_pass_options()["sg_set_scope"] == -1


def test_bad_option_inside_a_kernel_points_at_the_kernel_line():
    """An option setter called in the kernel body reports the body's line."""
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 64], F32), y: pypto.Tensor([4, 64], F32)):
        pypto.set_pass_options(sg_set_scope=-7)  # in-kernel
        y[:] = x

    with pytest.raises(pypto.PyptoError) as info:
        k(torch.rand(4, 64), torch.zeros(4, 64))
    check(info, "in-kernel", "sg_set_scope")
