"""Misuse catalogue, part 1: kernel arguments, annotations, calls and options.

Each case is a mistake a user can plausibly write. The rule (misuse_check.check): a
`pypto.PyptoError` that names the culprit and the offending line of this file (the line ending
with the case's `# <marker>` comment), with no pypto frames in the traceback beyond the single
public entry point. Where the behaviour is deliberate rather than an error, the case asserts it.
"""
import types

import numpy as np
import pypto
import pytest
import torch
from misuse_check import check

F32 = pypto.DT_FP32
DYN = pypto.DYNAMIC
N = pypto.frontend.dynamic("N")


@pypto.frontend.jit
def scale_rows(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32),
               factor: float = 2.0):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = x * factor  # writes-y


@pypto.frontend.jit
def shared_n(a: pypto.Tensor([N, 64], F32), b: pypto.Tensor([N, 64], F32)):
    pypto.set_vec_tile_shapes(8, 64)
    b[:] = a + 1.0


X, Y = torch.rand(16, 64), torch.zeros(16, 64)


# --------------------------------------------------------------------------------------------
# Arguments of the kernel call

def test_wrong_dtype():
    with pytest.raises(ValueError) as info:
        scale_rows(X.double(), Y)  # dtype
    check(info, "dtype", "'x'", "DT_DOUBLE", "DT_FP32")


def test_int_tensor_for_a_float_parameter():
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(X, Y.int())  # int-for-float
    check(info, "int-for-float", "'y'", "DT_INT32", "DT_FP32")


def test_wrong_rank():
    with pytest.raises(ValueError) as info:
        scale_rows(X.reshape(16, 64, 1), Y)  # rank
    check(info, "rank", "'x'", "rank", "3")


def test_zero_dim_tensor_for_a_matrix():
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(torch.tensor(1.0), Y)  # zero-dim
    check(info, "zero-dim", "'x'", "rank")


def test_static_dim_mismatch():
    with pytest.raises(ValueError) as info:
        scale_rows(torch.rand(16, 32), Y)  # static-dim
    check(info, "static-dim", "'x'", "dim 1", "64")


def test_named_dynamic_dim_differs_between_tensors():
    with pytest.raises(pypto.PyptoError) as info:
        shared_n(torch.rand(8, 64), torch.zeros(16, 64))  # named-dim
    check(info, "named-dim", "'N'", "'b'", "8", "16")


def test_empty_tensor():
    with pytest.raises(pypto.PyptoError) as info:
        shared_n(torch.rand(0, 64), torch.zeros(0, 64))  # empty
    check(info, "empty", "'a'", "empty")


def test_non_contiguous_transpose():
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(torch.rand(64, 16).t(), Y)  # transposed
    check(info, "transposed", "'x'", "contiguous")


def test_non_contiguous_strided_slice():
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(torch.rand(16, 128)[:, ::2], Y)  # strided
    check(info, "strided", "'x'", "contiguous")


def test_non_contiguous_numpy():
    x = np.random.rand(16, 128).astype(np.float32)[:, 64:]
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(x, Y.numpy())  # np-strided
    check(info, "np-strided", "'x'", "contiguous")


def test_too_few_tensors():
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(X)  # few
    check(info, "few", "scale_rows", "x, y")


def test_too_many_positionals():
    with pytest.raises(RuntimeError) as info:
        scale_rows(X, Y, 2.0, 3.0)  # many
    check(info, "many", "scale_rows", "4 positional")


def test_tensors_passed_by_keyword():
    """Tensor parameters are positional, as in PyPTO."""
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(x=X, y=Y)  # tensor-kw
    check(info, "tensor-kw", "scale_rows", "0 positional")


def test_unknown_keyword():
    with pytest.raises(RuntimeError) as info:
        scale_rows(X, Y, facter=3.0)  # unknown-kw
    check(info, "unknown-kw", "'facter'", "factor")


def test_keyword_given_twice():
    with pytest.raises(RuntimeError) as info:
        scale_rows(X, Y, 3.0, factor=3.0)  # twice
    check(info, "twice", "'factor'", "twice")


def test_missing_non_tensor_argument():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32), factor):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x * factor

    with pytest.raises(RuntimeError) as info:
        k(X, Y)  # missing
    check(info, "missing", "'factor'")


def test_tensor_for_a_scalar_parameter():
    with pytest.raises(RuntimeError) as info:
        scale_rows(X, Y, X)  # tensor-for-scalar
    check(info, "tensor-for-scalar", "'factor'")


def test_scalar_for_a_tensor_parameter():
    with pytest.raises(TypeError) as info:
        scale_rows(2.0, Y)  # scalar-for-tensor
    check(info, "scalar-for-tensor", "'x'", "float")


def test_list_for_a_tensor_parameter():
    with pytest.raises(TypeError) as info:
        scale_rows([[1.0] * 64] * 16, Y)  # list-for-tensor
    check(info, "list-for-tensor", "'x'", "list")


def test_annotation_passed_as_an_argument():
    with pytest.raises(TypeError) as info:
        scale_rows(pypto.Tensor([16, 64], F32), Y)  # ann-arg
    check(info, "ann-arg", "'x'", "pypto.Tensor", "torch tensor itself")


def test_tensor_on_another_device():
    """A GPU-like device: OpenPTO runs on the CPU ('meta' stands in for cuda/npu here)."""
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(torch.empty(16, 64, device="meta"), Y)  # device
    check(info, "device", "'x'", "meta", "CPU")


def test_unsupported_torch_dtype():
    with pytest.raises(TypeError) as info:
        scale_rows(torch.zeros(16, 64, dtype=torch.complex64), Y)  # complex
    check(info, "complex", "'x'", "complex64")


def test_read_only_output():
    y = np.zeros((16, 64), np.float32)
    y.flags.writeable = False
    with pytest.raises(pypto.PyptoError) as info:
        scale_rows(X.numpy(), y)
    check(info, "writes-y", "'y'", "read-only")


def test_requires_grad_inputs_are_documented_to_work():
    """Deliberate: a tensor that requires grad is read (and written) through its data; no
    autograd graph is recorded."""
    x = torch.rand(16, 64, requires_grad=True)
    y = torch.zeros(16, 64)
    scale_rows(x, y, 3.0)
    assert torch.equal(y, x.detach() * 3.0)


# --------------------------------------------------------------------------------------------
# Annotations and decoration

def test_zero_in_annotation_shape():
    with pytest.raises(pypto.PyptoError) as info:
        pypto.Tensor([16, 0], F32)  # zero-ann
    check(info, "zero-ann", "0", "annotation shape")


def test_ellipsis_not_last_in_annotation():
    with pytest.raises(pypto.PyptoError) as info:
        pypto.Tensor([..., 64], F32)  # ellipsis
    check(info, "ellipsis", "'...'", "last")


def test_annotation_shape_is_a_string():
    with pytest.raises(TypeError) as info:
        pypto.Tensor("16x64", F32)  # str-shape
    check(info, "str-shape", "'16x64'")


def test_annotation_dtype_is_a_torch_dtype():
    with pytest.raises(TypeError) as info:
        pypto.Tensor([16, 64], torch.float32)  # torch-dtype
    check(info, "torch-dtype", "torch.float32", "pypto.DT_FP32")


def test_subscription_annotation_with_unknown_item():
    with pytest.raises(TypeError) as info:
        pypto.Tensor[[16, 64], 3.5]  # subscript
    check(info, "subscript", "3.5")


def test_jit_on_a_non_function():
    with pytest.raises(TypeError) as info:
        pypto.frontend.jit(42)  # jit-int
    check(info, "jit-int", "int")


def test_jit_unknown_keyword():
    with pytest.raises(TypeError) as info:
        pypto.frontend.jit(runtime_option={"run_mode": 1})  # jit-kw
    check(info, "jit-kw", "runtime_option")


def test_star_args_kernel():
    with pytest.raises(pypto.PyptoError) as info:
        @pypto.frontend.jit  # star-args
        def k(x: pypto.Tensor([4], F32), *rest):
            pass
    check(info, "star-args", "'k'", "*args")


def test_tensor_parameter_after_scalar():
    with pytest.raises(ValueError) as info:
        @pypto.frontend.jit  # order
        def k(n: int, x: pypto.Tensor([4], F32)):
            pass
    check(info, "order", "'x'", "'n'")


def test_kernel_returns_a_value():
    with pytest.raises(pypto.PyptoError) as info:
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4], F32)):
            return x  # returns
    check(info, "returns", "'k'", "output parameter")


# --------------------------------------------------------------------------------------------
# Calls: kernels, ops and helpers used in the wrong place

@pypto.frontend.jit
def add_one(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = a + 1.0


def test_kernel_called_inside_a_kernel():
    """The message names both kernels and points at @pypto.frontend.function."""
    @pypto.frontend.jit
    def outer(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        add_one(a, out)  # nested

    with pytest.raises(RuntimeError) as info:
        outer(X, Y)
    text = check(info, "nested", "'add_one'", "'outer'", "@pypto.frontend.function")
    assert "torch.Tensor or numpy" not in text


def test_kernel_called_on_host_tensors_inside_a_kernel():
    held = torch.rand(16, 64)

    @pypto.frontend.jit
    def outer(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        add_one(held, held)  # nested-host
        out[:] = a

    with pytest.raises(pypto.PyptoError) as info:
        outer(X, Y)
    check(info, "nested-host", "'add_one'", "'outer'")


def test_helper_function_is_the_way_to_share_code():
    """Deliberate: a @pypto.frontend.function helper is inlined into the kernel calling it."""
    @pypto.frontend.function
    def plus_one(a: pypto.Tensor([16, 64], F32)):
        return a + 1.0

    @pypto.frontend.jit
    def outer(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = plus_one(a) * 2.0

    y = torch.zeros(16, 64)
    outer(X, y)
    assert torch.equal(y, (X + 1.0) * 2.0)


def test_helper_function_called_with_keywords():
    @pypto.frontend.function
    def plus(a, b):
        return a + b

    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = plus(a, b=a)  # helper-kw

    with pytest.raises(TypeError) as info:
        k(X, Y)
    check(info, "helper-kw", "'plus'", "positional")


def test_helper_function_tensor_dtype_mismatch():
    @pypto.frontend.function
    def half_only(a: pypto.Tensor([16, 64], pypto.DT_FP16)):
        return a

    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = half_only(a)  # helper-dtype

    with pytest.raises(ValueError) as info:
        k(X, Y)
    check(info, "helper-dtype", "'half_only'", "'a'", "DT_FP16", "DT_FP32")


def test_op_on_a_torch_tensor_outside_a_kernel():
    with pytest.raises(TypeError) as info:
        pypto.exp(torch.rand(4))  # exp-torch
    check(info, "exp-torch", "pypto.exp", "torch.Tensor", "outside any kernel")


def test_op_on_a_numpy_array_outside_a_kernel():
    with pytest.raises(pypto.PyptoError) as info:
        pypto.add(np.ones(4, np.float32), 1.0)  # add-numpy
    check(info, "add-numpy", "pypto.add", "numpy.ndarray", "outside any kernel")


def test_annotation_used_as_a_value_outside_a_kernel():
    ann = pypto.Tensor([16, 64], F32)
    with pytest.raises(pypto.PyptoError) as info:
        ann + 1.0  # ann-value
    check(info, "ann-value", "annotation")


def test_loop_outside_a_kernel():
    with pytest.raises(RuntimeError) as info:
        for _ in pypto.loop(4):  # loop-outside
            pass
    check(info, "loop-outside", "pypto.loop", "@pypto.frontend.jit")


def test_loop_unroll_outside_a_kernel():
    with pytest.raises(pypto.PyptoError) as info:
        pypto.loop_unroll(8, unroll_list=[4])  # unroll-outside
    check(info, "unroll-outside", "pypto.loop_unroll")


def test_cond_on_a_string():
    with pytest.raises(TypeError) as info:
        pypto.cond("x > 0")  # cond-str
    check(info, "cond-str", "pypto.cond", "str")


def test_tensor_truth_value():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        if a > 0.5:  # truth
            out[:] = a

    with pytest.raises(TypeError) as info:
        k(X, Y)
    check(info, "truth", "truth value", "pypto.where")


def test_iterating_a_tensor():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 64], F32), out: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        for row in a:  # iterate
            out[:] = row

    with pytest.raises(TypeError) as info:
        k(X, Y)
    check(info, "iterate", "not iterable", "pypto.loop")


def test_low_level_function_builder():
    with pytest.raises(RuntimeError) as info:
        pypto.function("main", X, Y)  # builder
    check(info, "builder", "pypto.function", "@pypto.frontend.jit")


def test_dynamic_without_a_name():
    with pytest.raises(TypeError) as info:
        pypto.frontend.dynamic("")  # dyn-name
    check(info, "dyn-name", "pypto.frontend.dynamic", "name")


# --------------------------------------------------------------------------------------------
# Options

def test_unknown_runtime_option():
    with pytest.raises(pypto.PyptoError) as info:
        pypto.frontend.jit(runtime_options={"stitch_function_max_nun": 8})  # rt-key
    check(info, "rt-key", "'stitch_function_max_nun'", "stitch_function_max_num")


def test_runtime_options_not_a_dict():
    with pytest.raises(TypeError) as info:
        pypto.frontend.jit(runtime_options=[("run_mode", 1)])  # rt-type
    check(info, "rt-type", "runtime_options", "dict")


def test_runtime_option_out_of_range():
    with pytest.raises(ValueError) as info:
        pypto.frontend.jit(runtime_options={"stitch_function_max_num": 0})  # rt-range
    check(info, "rt-range", "stitch_function_max_num", "[1, 1024]")


def test_unknown_executor():
    with pytest.raises(ValueError) as info:
        pypto.frontend.jit(runtime_options={"executor": "gpu"})  # executor
    check(info, "executor", "executor", "'gpu'", "'tile'")


def test_invalid_run_mode():
    with pytest.raises(ValueError) as info:
        pypto.set_runtime_options(run_mode=7)  # run-mode
    check(info, "run-mode", "run_mode", "RunMode")


def test_debug_option_out_of_range():
    with pytest.raises(ValueError) as info:
        pypto.frontend.jit(debug_options={"runtime_debug_mode": 7})  # debug-range
    check(info, "debug-range", "runtime_debug_mode", "[0, 4]")


def test_unknown_debug_option():
    with pytest.raises(TypeError) as info:
        pypto.frontend.jit(debug_options={"runtime_debug_mod": 1})  # debug-key
    check(info, "debug-key", "'runtime_debug_mod'", "runtime_debug_mode")


def test_host_option_wrong_type():
    with pytest.raises(TypeError) as info:
        pypto.frontend.jit(host_options={"compile_stage": "tile"})  # host-type
    check(info, "host-type", "compile_stage", "'tile'")


def test_pass_option_wrong_type():
    with pytest.raises(TypeError) as info:
        pypto.frontend.jit(pass_options={"pg_upper_bound": "big"})  # pass-type
    check(info, "pass-type", "pg_upper_bound", "'big'")


def test_pass_option_setting_not_a_dict():
    with pytest.raises(TypeError) as info:
        pypto.set_pass_options(vec_nbuffer_setting=5)  # nbuffer
    check(info, "nbuffer", "vec_nbuffer_setting", "dict")


def test_options_unknown_keyword():
    with pytest.raises(TypeError) as info:
        pypto.options(pass_option={"sg_set_scope": 1})  # options-kw
    check(info, "options-kw", "'pass_option'", "pass_options")


def test_runtime_option_changed_after_decoration_is_checked_at_the_call():
    rt = {}

    @pypto.frontend.jit(runtime_options=rt)
    def k(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = x

    rt["device_sched_mode"] = 9
    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)  # rt-late
    check(info, "rt-late", "device_sched_mode", "[0, 3]")


def test_bad_option_set_inside_the_kernel():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
        pypto.set_pass_options(sg_set_scope=-7)  # in-kernel
        y[:] = x

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "in-kernel", "sg_set_scope")


# --------------------------------------------------------------------------------------------
# Module globals read by a kernel key its compile cache (frontend/guards.py)

SCALE = 2.0
TILE_ROWS = 16
SETTINGS = {"scale": 2.0}


def _times_scale(t):
    return t * SCALE


@pypto.frontend.jit
def scaled(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
    pypto.set_vec_tile_shapes(TILE_ROWS, 64)
    y[:] = _times_scale(x)


@pypto.frontend.jit
def scaled_by_dict(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = x * SETTINGS["scale"]


class _Config:
    scale = 2.0


CONFIG = _Config()
CFG_MODULE = types.ModuleType("cfg_module")
CFG_MODULE.SCALE = 2.0


@pypto.frontend.jit
def scaled_by_module(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = x * CFG_MODULE.SCALE


@pypto.frontend.jit
def scaled_by_object(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = x * CONFIG.scale


def test_changed_global_recompiles(monkeypatch):
    """A global read by a helper the kernel calls (SCALE) and one read by the kernel itself
    (TILE_ROWS) key the cache: a change recompiles, no change reuses the program."""
    y = torch.zeros(16, 64)
    scaled(X, y)
    first = scaled.compile_count
    scaled(X, y)
    assert scaled.compile_count == first
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    scaled(X, y)
    assert scaled.compile_count == first + 1 and torch.equal(y, X * 3.0)
    monkeypatch.setitem(globals(), "TILE_ROWS", 8)
    scaled(X, y)
    assert scaled.compile_count == first + 2
    assert scaled.last_program is not None
    tiles = {op.tile.vec for blk in scaled.last_program.blocks() for op in blk.ops}
    assert tiles == {(8, 64)}, tiles
    scaled(X, y)
    assert scaled.compile_count == first + 2 and torch.equal(y, X * 3.0)


def test_mutated_dict_global_recompiles(monkeypatch):
    """A small dict (or list, tuple) of simple values is guarded by content."""
    y = torch.zeros(16, 64)
    scaled_by_dict(X, y)
    count = scaled_by_dict.compile_count
    monkeypatch.setitem(SETTINGS, "scale", 5.0)
    scaled_by_dict(X, y)
    assert scaled_by_dict.compile_count == count + 1 and torch.equal(y, X * 5.0)


def test_module_attribute_is_guarded(monkeypatch):
    """`module.NAME` read by the kernel is guarded like a global of its own module."""
    y = torch.zeros(16, 64)
    scaled_by_module(X, y)
    count = scaled_by_module.compile_count
    monkeypatch.setattr(CFG_MODULE, "SCALE", 4.0)
    scaled_by_module(X, y)
    assert scaled_by_module.compile_count == count + 1 and torch.equal(y, X * 4.0)


TRACES = []
TRACE_COUNT = 0


@pypto.frontend.jit
def counts_its_traces(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
    global TRACE_COUNT
    TRACE_COUNT += 1
    TRACES.append(TRACE_COUNT)
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = x + 1.0


def test_globals_the_trace_itself_changes_are_state_not_guards():
    """A counter or list the kernel body updates while traced is not guarded (guarding it
    would recompile on every call): the second call reuses the program."""
    y = torch.zeros(16, 64)
    counts_its_traces(X, y)
    counts_its_traces(X, y)
    counts_its_traces(X, y)
    assert counts_its_traces.compile_count == 1 and len(TRACES) == 1
    assert torch.equal(y, X + 1.0)


def test_object_attribute_is_documented_as_unguarded(monkeypatch):
    """Deliberate (README, frontend/guards.py): an attribute of an object is not guarded; the
    program traced first keeps the value it saw until something else recompiles."""
    y = torch.zeros(16, 64)
    scaled_by_object(X, y)
    count = scaled_by_object.compile_count
    monkeypatch.setattr(_Config, "scale", 5.0)
    scaled_by_object(X, y)
    assert scaled_by_object.compile_count == count and torch.equal(y, X * 2.0)


# --------------------------------------------------------------------------------------------
# The mechanism: every public entry point drops the library's frames the same way

def _public_callables():
    for name in dir(pypto):
        value = getattr(pypto, name)
        if callable(value) and getattr(value, "__module__", "").startswith("pypto") \
                and not isinstance(value, type) and not name.startswith("_"):
            yield f"pypto.{name}", value
    for name in ("jit", "function", "dynamic"):
        yield f"pypto.frontend.{name}", getattr(pypto.frontend, name)
    for cls in (*pypto.Tensor.__mro__[:-1], pypto.SymbolicScalar):   # (its op methods: a base)
        for name, member in vars(cls).items():
            if name.startswith("_") and name not in (
                    "__init__", "__add__", "__getitem__", "__setitem__", "__bool__",
                    "__iter__", "__index__", "__class_getitem__"):
                continue
            if isinstance(member, property):
                yield f"{cls.__name__}.{name}", member.fget
            elif isinstance(member, (staticmethod, classmethod)):
                yield f"{cls.__name__}.{name}", member.__func__
            elif callable(member):
                yield f"{cls.__name__}.{name}", member


def test_every_public_function_and_method_is_an_entry_point():
    """pypto.<op>, the option setters, loop/cond, pypto.frontend.*, and the methods and
    operators of Tensor and SymbolicScalar are all marked (errors.user_facing)."""
    names = dict(_public_callables())
    assert len(names) > 250, len(names)
    missing = [n for n, f in names.items() if not getattr(f, "__pypto_entry__", False)]
    assert not missing, missing
    assert getattr(pypto.frontend.JitKernel.__call__, "__pypto_entry__", False)


def test_error_while_tracing_keeps_the_kernel_body_frame():
    """The traceback of an error raised while tracing runs test -> entry -> kernel body (and
    the user's helper), with the library's frames in between dropped."""
    def helper(t):
        return pypto.exp(t)[0:4, :, 0]  # helper-line

    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 64], F32), y: pypto.Tensor([16, 64], F32)):
        pypto.set_vec_tile_shapes(16, 64)
        y[:] = helper(x)  # body-line

    with pytest.raises(pypto.PyptoError) as info:
        k(X, Y)
    check(info, "helper-line", "too many indices")
    frames = [(f.name, f.lineno) for f in __import__("traceback").extract_tb(
        info.value.__traceback__)]
    names = [name for name, _ in frames]
    assert names == ["test_error_while_tracing_keeps_the_kernel_body_frame", "entry", "k",
                     "helper"], frames


def test_entry_points_still_pickle_by_reference():
    """Marking keeps public functions picklable (multiprocessing workers receive them)."""
    import pickle
    for fn in (pypto.exp, pypto.max, pypto.set_vec_tile_shapes, pypto.frontend.jit,
               pypto.experimental.online_softmax):
        assert pickle.loads(pickle.dumps(fn)) is fn
