"""The frontend: tracing only (annotations, binding, tracer, control flow, option scopes).

`jit` and `JitKernel` are named here (`pypto.frontend.jit is pypto.jit`) but live in
`pypto/driver.py`, above the compiler and the runtime they call: `pypto/__init__.py` attaches
them to this namespace, so importing the frontend alone never imports the layers above it.
"""
from pypto.frontend.entry import dynamic as dynamic
from pypto.frontend.entry import function as function
