"""`pypto.experimental`: operation options (tail-axis broadcast hints)."""
from pypto.frontend.options import get_operation_options as get_operation_options
from pypto.frontend.options import set_operation_options as set_operation_options
