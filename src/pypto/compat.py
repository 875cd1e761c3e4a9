"""PyPTO entry points outside the kernel body: `from_torch`, `verify`, `platform`, and the
low-level `pypto.function` graph builder (not supported here: use `@pypto.frontend.jit`)."""
from __future__ import annotations

import types
from typing import Any

import numpy as np

from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from pypto.frontend import options as opt
from pypto.frontend.binding import as_numpy
from pypto.frontend.tensor import DYNAMIC, Tensor

# A2/A3 (Ascend 910B/910C) report this architecture string; the simulator models them.
platform = types.SimpleNamespace(npuarch="DAV_2201")


def from_torch(t: Any, name: str = "", *, dynamic_axis: Any = None, tensor_format: Any = None,
               dtype: Any = None) -> Tensor:
    """An annotation-style `pypto.Tensor` with `t`'s shape and dtype; `dynamic_axis` dims
    become DYNAMIC. A 0-d tensor becomes shape [1]."""
    arr, dt = as_numpy(t, name or "from_torch")
    shape: list[Any] = list(arr.shape) or [1]
    for ax in ([dynamic_axis] if isinstance(dynamic_axis, int) else dynamic_axis or []):
        if not -len(shape) <= ax < len(shape):
            raise PyptoValueError(f"from_torch: dynamic_axis {ax} out of range for rank "
                                  f"{len(shape)}")
        shape[ax] = DYNAMIC
    return Tensor(shape, dtype or dt, name, tensor_format)


def set_verify_golden_data(in_out_tensors: Any = None, goldens: Any = None) -> None:
    """Remember golden outputs for `pypto.verify` (kept in the global option scope)."""
    opt.set_global_config("verify_golden", (in_out_tensors, goldens))


def verify(func: Any, inputs: list, outputs: list, goldens: list, *args: Any,
           **options: Any) -> None:
    """Run `func(*inputs, *outputs, *args)` and compare each output with its golden using
    `verify_options.pass_verify_error_tol` ([rtol, atol]); raise on the first mismatch."""
    if not callable(func):
        raise PyptoTypeError("verify: func must be a @pypto.frontend.jit kernel")
    if len(outputs) != len(goldens):
        raise PyptoValueError(f"verify: {len(outputs)} outputs but {len(goldens)} goldens")
    func(*inputs, *outputs, *args)
    rtol, atol = options.get("error_tol") or opt.get_verify_options()["pass_verify_error_tol"]
    for i, (out, gold) in enumerate(zip(outputs, goldens)):
        a = np.asarray(as_numpy(out, f"outputs[{i}]")[0], np.float64)
        b = np.asarray(as_numpy(gold, f"goldens[{i}]")[0], np.float64)
        if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            diff = float(np.max(np.abs(a - b))) if a.shape == b.shape else float("nan")
            raise PyptoRuntimeError(f"verify: outputs[{i}] differs from its golden (max abs "
                                    f"diff {diff}, rtol={rtol}, atol={atol})")


def function(name: str, *tensors: Any) -> Any:
    """The low-level `with pypto.function("main", a, b):` builder is not supported: write the
    body as a `@pypto.frontend.jit` kernel instead (it traces the same structure)."""
    raise PyptoRuntimeError("pypto.function(name, *tensors) graph building is not supported "
                            "by OpenPTO; decorate the kernel with @pypto.frontend.jit")
