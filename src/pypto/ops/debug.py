"""Debug ops: print or save tensor values at run time (`pass_verify_print`, `pass_verify_save`),
and the print format (`set_print_options`).

They are recorded like other ops, so the values shown are the ones of each root-function
instance that reaches them, in program order; `cond` (an int or SymbolicScalar) selects the
instances that print, e.g. `cond=pypto.is_loop_begin(i)`.
"""
from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.options import get_global_config, set_global_config
from pypto.frontend.tensor import Tensor
from pypto.ops.core import NONE, emit, register
from pypto.symbolic import SymbolicScalar, as_expr


def _cond(cond: Any) -> Any:
    if isinstance(cond, (bool, int, SymbolicScalar)):
        return as_expr(cond)
    raise PyptoTypeError(f"cond must be an int or SymbolicScalar, got {cond!r}")


_PRINT_DEFAULTS = {"edgeitems": 3, "precision": 4, "threshold": 10, "linewidth": 10}
_PRINT_KEY = "print_options"


def set_print_options(*, edgeitems: int = 3, precision: int = 4, threshold: int = 10,
                      linewidth: int = 10) -> None:
    """Set how `pass_verify_print` formats tensors (all four values; omitted ones take their
    defaults). They are numpy's `array2string` settings: a tensor with more than `threshold`
    elements is summarised to `edgeitems` items at each end of every dim, floats show
    `precision` digits after the point, and lines wrap at `linewidth` characters. The values
    live in the global option scope and apply to prints that run after this call."""
    values = {"edgeitems": edgeitems, "precision": precision, "threshold": threshold,
              "linewidth": linewidth}
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise PyptoTypeError(f"set_print_options: {name} must be an int, got {v!r}")
        low = 1 if name == "linewidth" else 0
        if v < low:
            raise PyptoValueError(f"set_print_options: {name} must be >= {low}, got {v}")
    set_global_config(_PRINT_KEY, values)


def get_print_options() -> dict[str, int]:
    """The current `set_print_options` values (the defaults until it is called)."""
    return dict(get_global_config(_PRINT_KEY) or _PRINT_DEFAULTS)


def _format(arr: np.ndarray) -> str:
    o = get_print_options()
    arr = np.asarray(arr)
    if arr.dtype.kind not in "biufc":  # BF16 / FP8 (ml_dtypes): format their FP32 values
        arr = arr.astype(np.float32)
    return np.array2string(arr, threshold=o["threshold"], edgeitems=o["edgeitems"],
                           precision=o["precision"], max_line_width=o["linewidth"])


@register("PRINT", core=NONE, widen=False)
def _print_compute(xs: list, at: dict) -> None:
    if not at["cond"]:
        return None
    parts = []
    it = iter(xs)
    for item in at["items"]:
        parts.append(_format(next(it)) if item is None else str(item))
    where = f" ({at['_loc'].short()})" if at.get("_loc") else ""
    print(f"[pypto print{where}] " + " ".join(parts), file=sys.stdout)
    return None


def pass_verify_print(*values: Any, cond: Any = 1) -> None:
    """Print tensors (their valid region) and scalars when the op runs and `cond` holds."""
    tensors, items = [], []
    for v in values:
        if isinstance(v, Tensor):
            tensors.append(v.value)
            items.append(None)
        elif isinstance(v, SymbolicScalar):
            items.append(v.expr)
        else:
            items.append(str(v))
    emit("PRINT", tensors, [], {"items": tuple(items), "cond": _cond(cond)})


@register("SAVE", core=NONE, widen=False)
def _save_compute(xs: list, at: dict) -> None:
    if at["cond"]:
        directory = os.path.dirname(at["fname"])
        if directory:
            os.makedirs(directory, exist_ok=True)
        np.save(at["fname"], xs[0])
    return None


def pass_verify_save(tensor: Any, fname: str, cond: Any = 1, **kwargs: Any) -> None:
    """Save the tensor's valid region to `fname` (.npy) when the op runs and `cond` holds."""
    if not isinstance(tensor, Tensor):
        raise PyptoTypeError("pass_verify_save: tensor must be a pypto.Tensor")
    if not isinstance(fname, str) or not fname:
        raise PyptoTypeError("pass_verify_save: fname must be a non-empty str")
    emit("SAVE", [tensor.value], [], {"fname": fname, "cond": _cond(cond)})
