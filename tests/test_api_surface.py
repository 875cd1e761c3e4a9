"""The public names of the PyPTO API contract (reference/api_surface.md) exist in `pypto`."""
import pytest

import pypto

# Names the contract's §0-§6 use, by section. Names OpenPTO deliberately does not provide are
# listed in NOT_PROVIDED with the reason (they are reported in the docs, not silently absent).
REQUIRED = """
jit frontend Tensor tensor TensorAnnotation RunMode CompStage DataType bytes_of DYNAMIC DYN STATIC
StatusType SymbolicScalar SymInt symbolic_scalar min max ceildiv Element element TileOpFormat
CastMode SaturationMode PrecisionType TopKAlgo DequantScaleRoundingMode ROUND_UP ROUND_DOWN
CachePolicy ReduceMode ScatterMode get_scatter_mode TransMode OpType OutType ReLuType AtomicType
options set_options set_pass_options get_pass_options set_runtime_options set_host_options
get_host_options set_codegen_options get_codegen_options set_verify_options get_verify_options
set_debug_options get_debug_options set_vec_tile_shapes get_vec_tile_shapes set_cube_tile_shapes
get_cube_tile_shapes set_matrix_size set_conv_tile_shapes get_conv_tile_shapes set_semantic_label
reset_options get_options_tree get_current_scope get_global_config set_global_config
loop loop_unroll cond is_loop_begin is_loop_end experimental from_torch verify
set_verify_golden_data pass_verify_print pass_verify_save platform
full zeros ones arange add sub mul div pow fmod remainder exp exp2 expm1 log log1p log2 log10
sqrt rsqrt reciprocal abs neg sign signbit ceil floor trunc round relu sigmoid softmax tanh erf
erfc sin cos maximum minimum clip where eq ne lt le gt ge greater logical_not logical_and
hypot copysign gcd lrelu prelu bitwise_and bitwise_or bitwise_xor isfinite isnan
sum amax amin prod mean var argmax argmin cumsum rms_norm
matmul cast transpose permute reshape unsqueeze view assemble concat expand_clone clone pad
fillpad gather scatter scatter_ scatter_update index_add index_add_ index_select topk argsort
triu tril one_hot
axpy_ ceil_div atomic_add interleave deinterleave pack unpack quantize dequantize quant_mx
set_print_options get_last_function get_current_function Function
""".split()

EXPERIMENTAL = """set_operation_options get_operation_options online_softmax online_softmax_update
transposed_batchmatmul""".split()

TENSOR_METHODS = "axpy_ ceil_div quant_mx copy clone is_empty".split()

DTYPES = """DT_INT4 DT_INT8 DT_INT16 DT_INT32 DT_INT64 DT_FP8 DT_FP16 DT_FP32 DT_BF16 DT_HF4
DT_HF8 DT_UINT8 DT_UINT16 DT_UINT32 DT_UINT64 DT_BOOL DT_DOUBLE DT_FP8E5M2 DT_FP8E4M3 DT_FP8E8M0
DT_FP4_E2M1X2 DT_FP4_E1M2X2 DT_BOTTOM""".split()


@pytest.mark.parametrize("name", REQUIRED)
def test_public_name_exists(name):
    """Every name of the contract's minimum subset and op list is exported by `pypto`."""
    assert hasattr(pypto, name), f"pypto.{name} is missing"


@pytest.mark.parametrize("name", EXPERIMENTAL)
def test_experimental_name_exists(name):
    """The `pypto.experimental` functions of the contract (§1.6, §4.5, §4.9)."""
    assert callable(getattr(pypto.experimental, name, None)), f"experimental.{name} is missing"


@pytest.mark.parametrize("name", TENSOR_METHODS)
def test_tensor_method_exists(name):
    """Tensor methods the contract lists (§3) beyond the common ones."""
    assert callable(getattr(pypto.Tensor, name, None)), f"Tensor.{name} is missing"


def test_frontend_entry_points():
    """jit, function and dynamic live in pypto.frontend; pypto.jit is the same object."""
    assert pypto.jit is pypto.frontend.jit
    assert callable(pypto.frontend.function) and callable(pypto.frontend.dynamic)


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_constants(name):
    """Every DT_* constant is a DataType member with PyPTO's enum value."""
    dt = getattr(pypto, name)
    assert dt is pypto.DataType[name]


def test_dtype_values_match_pypto():
    """Enum values follow PyPTO 0.2.0 (they appear in dumps and in user code)."""
    assert (pypto.DT_INT8, pypto.DT_FP16, pypto.DT_FP32, pypto.DT_BF16, pypto.DT_BOOL) == (
        1, 6, 7, 8, 15)
    assert pypto.bytes_of(pypto.DT_BF16) == 2
    assert repr(pypto.DT_FP32) == "DataType.DT_FP32"


def test_run_mode_values():
    assert int(pypto.RunMode.NPU) == 0 and int(pypto.RunMode.SIM) == 1
