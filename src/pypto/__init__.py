"""OpenPTO: the PyPTO programming model on the CPU, with exact numerics and a simulated
Ascend A2/A3 machine. This module only re-exports the public names."""
from pypto._config import CompStage as CompStage
from pypto._config import RunMode as RunMode
from pypto.dtypes import DataType as DataType
from pypto.dtypes import bytes_of as bytes_of
from pypto.errors import PyptoError as PyptoError
from pypto.errors import PyptoWarning as PyptoWarning
from pypto.frontend.kernel import jit as jit
from pypto.frontend.control import cond as cond
from pypto.frontend.control import is_loop_begin as is_loop_begin
from pypto.frontend.control import is_loop_end as is_loop_end
from pypto.frontend.control import loop as loop
from pypto.frontend.control import loop_unroll as loop_unroll
from pypto.frontend.options import *  # noqa: F401,F403  (the option API, listed in __all__)
from pypto.frontend.options import __all__ as _options_all
from pypto.frontend.tensor import DYN as DYN
from pypto.frontend.tensor import DYNAMIC as DYNAMIC
from pypto.frontend.tensor import STATIC as STATIC
from pypto.frontend.tensor import StatusType as StatusType
from pypto.frontend.tensor import Tensor as Tensor
from pypto.frontend.tensor import TensorAnnotation as TensorAnnotation
from pypto.ir.tensor import TileOpFormat as TileOpFormat
from pypto.ops.cast import CastMode as CastMode
from pypto.ops.cast import SaturationMode as SaturationMode
from pypto.ops.elementwise import Element as Element
from pypto.ops.public import *  # noqa: F401,F403  (every op function, listed in __all__)
from pypto.ops.public import __all__ as _ops_all
from pypto.enums import *  # noqa: F401,F403
from pypto.enums import __all__ as _enums_all
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

tensor = Tensor
element = Element

for _dt in DataType:
    globals()[_dt.name] = _dt

__version__ = "0.1.0"
