"""OpenPTO: the PyPTO programming model on the CPU, with exact numerics and a simulated
Ascend A2/A3 machine. This module only re-exports the public names."""
from pypto._config import CompStage as CompStage
from pypto._config import RunMode as RunMode
from pypto.dtypes import DataType as DataType
from pypto.dtypes import bytes_of as bytes_of
from pypto.errors import PyptoError as PyptoError
from pypto.errors import PyptoWarning as PyptoWarning
from pypto.errors import user_facing_namespace as _user_facing_namespace
from pypto.driver import JitKernel as _JitKernel
from pypto.driver import jit as jit
from pypto.frontend.control import cond as cond
from pypto.frontend.control import is_loop_begin as is_loop_begin
from pypto.frontend.control import is_loop_end as is_loop_end
from pypto.frontend.control import loop as loop
from pypto.frontend.control import loop_unroll as loop_unroll
from pypto.frontend.options import options as options
from pypto.frontend.options import set_options as set_options
from pypto.frontend.options import set_pass_options as set_pass_options
from pypto.frontend.options import set_runtime_options as set_runtime_options
from pypto.frontend.options import set_host_options as set_host_options
from pypto.frontend.options import set_codegen_options as set_codegen_options
from pypto.frontend.options import set_verify_options as set_verify_options
from pypto.frontend.options import set_debug_options as set_debug_options
from pypto.frontend.options import get_pass_options as get_pass_options
from pypto.frontend.options import get_runtime_options as get_runtime_options
from pypto.frontend.options import get_host_options as get_host_options
from pypto.frontend.options import get_codegen_options as get_codegen_options
from pypto.frontend.options import get_verify_options as get_verify_options
from pypto.frontend.options import get_debug_options as get_debug_options
from pypto.frontend.options import set_vec_tile_shapes as set_vec_tile_shapes
from pypto.frontend.options import get_vec_tile_shapes as get_vec_tile_shapes
from pypto.frontend.options import set_cube_tile_shapes as set_cube_tile_shapes
from pypto.frontend.options import get_cube_tile_shapes as get_cube_tile_shapes
from pypto.frontend.options import set_matrix_size as set_matrix_size
from pypto.frontend.options import set_conv_tile_shapes as set_conv_tile_shapes
from pypto.frontend.options import get_conv_tile_shapes as get_conv_tile_shapes
from pypto.frontend.options import set_semantic_label as set_semantic_label
from pypto.frontend.options import reset_options as reset_options
from pypto.frontend.options import get_current_scope as get_current_scope
from pypto.frontend.options import get_options_tree as get_options_tree
from pypto.frontend.options import set_global_config as set_global_config
from pypto.frontend.options import get_global_config as get_global_config
from pypto.frontend.tensor import DYN as DYN
from pypto.frontend.tensor import DYNAMIC as DYNAMIC
from pypto.frontend.tensor import STATIC as STATIC
from pypto.frontend.tensor import StatusType as StatusType
from pypto.frontend.tensor import Tensor as Tensor
from pypto.frontend.tensor import TensorAnnotation as TensorAnnotation
from pypto.frontend.tensor_methods import TensorMethods as _TensorMethods
from pypto.ir.tensor import TileOpFormat as TileOpFormat
from pypto.ops.cast import CastMode as CastMode
from pypto.ops.cast import SaturationMode as SaturationMode
from pypto.ops.scalars import Element as Element
from pypto.ops.public import cast as cast
from pypto.ops.public import arange as arange
from pypto.ops.public import full as full
from pypto.ops.public import ones as ones
from pypto.ops.public import zeros as zeros
from pypto.ops.public import abs as abs
from pypto.ops.public import acos as acos
from pypto.ops.public import acosh as acosh
from pypto.ops.public import add as add
from pypto.ops.public import asin as asin
from pypto.ops.public import asinh as asinh
from pypto.ops.public import atan as atan
from pypto.ops.public import atan2 as atan2
from pypto.ops.public import atanh as atanh
from pypto.ops.public import bitwise_and as bitwise_and
from pypto.ops.public import bitwise_left_shift as bitwise_left_shift
from pypto.ops.public import bitwise_not as bitwise_not
from pypto.ops.public import bitwise_or as bitwise_or
from pypto.ops.public import bitwise_right_shift as bitwise_right_shift
from pypto.ops.public import bitwise_xor as bitwise_xor
from pypto.ops.public import cbrt as cbrt
from pypto.ops.public import ceil as ceil
from pypto.ops.public import clip as clip
from pypto.ops.public import copysign as copysign
from pypto.ops.public import cos as cos
from pypto.ops.public import cosh as cosh
from pypto.ops.public import div as div
from pypto.ops.public import eq as eq
from pypto.ops.public import erf as erf
from pypto.ops.public import erfc as erfc
from pypto.ops.public import exp as exp
from pypto.ops.public import exp2 as exp2
from pypto.ops.public import expand_exp_dif as expand_exp_dif
from pypto.ops.public import expm1 as expm1
from pypto.ops.public import floor as floor
from pypto.ops.public import floor_div as floor_div
from pypto.ops.public import fmod as fmod
from pypto.ops.public import gcd as gcd
from pypto.ops.public import ge as ge
from pypto.ops.public import greater as greater
from pypto.ops.public import gt as gt
from pypto.ops.public import hypot as hypot
from pypto.ops.public import isfinite as isfinite
from pypto.ops.public import isnan as isnan
from pypto.ops.public import le as le
from pypto.ops.public import log as log
from pypto.ops.public import log1p as log1p
from pypto.ops.public import log2 as log2
from pypto.ops.public import log10 as log10
from pypto.ops.public import logical_and as logical_and
from pypto.ops.public import logical_not as logical_not
from pypto.ops.public import logical_or as logical_or
from pypto.ops.public import lrelu as lrelu
from pypto.ops.public import lt as lt
from pypto.ops.public import maximum as maximum
from pypto.ops.public import minimum as minimum
from pypto.ops.public import mul as mul
from pypto.ops.public import ne as ne
from pypto.ops.public import neg as neg
from pypto.ops.public import pow as pow
from pypto.ops.public import prelu as prelu
from pypto.ops.public import reciprocal as reciprocal
from pypto.ops.public import relu as relu
from pypto.ops.public import remainder as remainder
from pypto.ops.public import round as round
from pypto.ops.public import rsqrt as rsqrt
from pypto.ops.public import sigmoid as sigmoid
from pypto.ops.public import sign as sign
from pypto.ops.public import signbit as signbit
from pypto.ops.public import sin as sin
from pypto.ops.public import sinh as sinh
from pypto.ops.public import sqrt as sqrt
from pypto.ops.public import sub as sub
from pypto.ops.public import tan as tan
from pypto.ops.public import tanh as tanh
from pypto.ops.public import trunc as trunc
from pypto.ops.public import where as where
from pypto.ops.public import matmul as matmul
from pypto.ops.public import amax as amax
from pypto.ops.public import amin as amin
from pypto.ops.public import argmax as argmax
from pypto.ops.public import argmin as argmin
from pypto.ops.public import cumprod as cumprod
from pypto.ops.public import cumsum as cumsum
from pypto.ops.public import mean as mean
from pypto.ops.public import prod as prod
from pypto.ops.public import rms_norm as rms_norm
from pypto.ops.public import softmax as softmax
from pypto.ops.public import sum as sum
from pypto.ops.public import var as var
from pypto.ops.public import assemble as assemble
from pypto.ops.public import clone as clone
from pypto.ops.public import concat as concat
from pypto.ops.public import expand_clone as expand_clone
from pypto.ops.public import fillpad as fillpad
from pypto.ops.public import move as move
from pypto.ops.public import pad as pad
from pypto.ops.public import permute as permute
from pypto.ops.public import reshape as reshape
from pypto.ops.public import squeeze as squeeze
from pypto.ops.public import transpose as transpose
from pypto.ops.public import unsqueeze as unsqueeze
from pypto.ops.public import view as view
from pypto.ops.public import argsort as argsort
from pypto.ops.public import gather as gather
from pypto.ops.public import gathermask as gathermask
from pypto.ops.public import index_add as index_add
from pypto.ops.public import index_add_ as index_add_
from pypto.ops.public import index_put_ as index_put_
from pypto.ops.public import index_select as index_select
from pypto.ops.public import one_hot as one_hot
from pypto.ops.public import scatter as scatter
from pypto.ops.public import scatter_ as scatter_
from pypto.ops.public import scatter_update as scatter_update
from pypto.ops.public import topk as topk
from pypto.ops.public import tril as tril
from pypto.ops.public import tril_ as tril_
from pypto.ops.public import triu as triu
from pypto.ops.public import triu_ as triu_
from pypto.ops.public import axpy_ as axpy_
from pypto.ops.public import ceil_div as ceil_div
from pypto.ops.public import atomic_add as atomic_add
from pypto.ops.public import interleave as interleave
from pypto.ops.public import deinterleave as deinterleave
from pypto.ops.public import pack as pack
from pypto.ops.public import unpack as unpack
from pypto.ops.public import quantize as quantize
from pypto.ops.public import dequantize as dequantize
from pypto.ops.public import quant_mx as quant_mx
from pypto.enums import PrecisionType as PrecisionType
from pypto.enums import TopKAlgo as TopKAlgo
from pypto.enums import DequantScaleRoundingMode as DequantScaleRoundingMode
from pypto.enums import ROUND_UP as ROUND_UP
from pypto.enums import ROUND_DOWN as ROUND_DOWN
from pypto.enums import CachePolicy as CachePolicy
from pypto.enums import ReduceMode as ReduceMode
from pypto.enums import ScatterMode as ScatterMode
from pypto.enums import get_scatter_mode as get_scatter_mode
from pypto.enums import TransMode as TransMode
from pypto.enums import OpType as OpType
from pypto.enums import OutType as OutType
from pypto.enums import ReLuType as ReLuType
from pypto.enums import AtomicType as AtomicType
from pypto.enums import LogBaseType as LogBaseType
from pypto.symbolic import SymbolicScalar as SymbolicScalar
from pypto.symbolic import SymInt as SymInt
from pypto.symbolic import ceildiv as ceildiv
from pypto.symbolic import sym_max as max
from pypto.symbolic import sym_min as min
from pypto.symbolic import symbolic_scalar as symbolic_scalar
from pypto import experimental as experimental
from pypto.compat import from_torch as from_torch
from pypto.compat import function as function
from pypto.compat import platform as platform
from pypto.compat import set_verify_golden_data as set_verify_golden_data
from pypto.compat import verify as verify
from pypto.ops.debug import pass_verify_print as pass_verify_print
from pypto.ops.debug import pass_verify_save as pass_verify_save
from pypto.ops.debug import get_print_options as get_print_options
from pypto.ops.debug import set_print_options as set_print_options
from pypto.frontend.tracer import get_current_function as get_current_function
from pypto.frontend.tracer import get_last_function as get_last_function
from pypto.ir.program import Program as Function
from pypto import frontend as frontend

frontend.jit, frontend.JitKernel = jit, _JitKernel   # users name them pypto.frontend.*

tensor = Tensor
element = Element

# The DT_* constants are the DataType members (pypto.DT_FP32 is DataType.DT_FP32).
globals().update({_dt.name: _dt for _dt in DataType})

from pypto._version import __version__ as __version__

# Every public function and every Tensor / SymbolicScalar method is an entry point: a PyptoError
# raised below it shows the user's frames and this one entry frame, not the library's internals.
_user_facing_namespace(globals(), (Tensor, _TensorMethods, SymbolicScalar))
_user_facing_namespace(vars(experimental))


# The tune package sits above the driver; it lends the driver its entries (`driver.lend`),
# imported on first use so that `import pypto` stays fast.
def _tuned(*args: object) -> object:
    from pypto.tune.db import tuned_setting
    return tuned_setting(*args)


def _whatif(*args: object) -> object:
    from pypto.tune.whatif import rerun
    return rerun(*args)


def _tune(*args: object) -> object:
    from pypto.tune.search import tune
    return tune(*args)


def _compare(*args: object) -> object:
    from pypto.toolkit.compare import compare_result
    return compare_result(*args)


from pypto.driver import lend as _lend  # noqa: E402
from pypto.machine.result import LENT as _RESULT_LENT  # noqa: E402

_lend("tuned", _tuned)
_lend("whatif", _whatif)
_lend("tune", _tune)
_RESULT_LENT["compare"] = _compare   # SimResult.compare (kernel.last_run.compare(path))

from pypto.moved_modules import install as _answer_moved_modules  # noqa: E402

_answer_moved_modules()   # old import paths of tuning (pypto.toolkit.autotune, ...) still work
