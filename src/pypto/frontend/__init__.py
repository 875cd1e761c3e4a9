"""The frontend: kernel entry (`jit`), annotations, tracing, control flow, option scopes."""
from pypto.frontend.kernel import JitKernel as JitKernel
from pypto.frontend.kernel import dynamic as dynamic
from pypto.frontend.kernel import function as function
from pypto.frontend.kernel import jit as jit
