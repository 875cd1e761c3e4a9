"""Debug ops: print or save tensor values at run time (`pass_verify_print`, `pass_verify_save`).

They are recorded like other ops, so the values shown are the ones of each root-function
instance that reaches them, in program order; `cond` (an int or SymbolicScalar) selects the
instances that print, e.g. `cond=pypto.is_loop_begin(i)`.
"""
from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from pypto.errors import PyptoTypeError
from pypto.frontend.tensor import Tensor
from pypto.ops.core import NONE, emit, register
from pypto.symbolic import SymbolicScalar, as_expr


def _cond(cond: Any) -> Any:
    if isinstance(cond, (bool, int, SymbolicScalar)):
        return as_expr(cond)
    raise PyptoTypeError(f"cond must be an int or SymbolicScalar, got {cond!r}")


@register("PRINT", core=NONE, widen=False)
def _print_compute(xs: list, at: dict) -> None:
    if not at["cond"]:
        return None
    parts = []
    it = iter(xs)
    for item in at["items"]:
        parts.append(np.array2string(next(it), threshold=64, edgeitems=3) if item is None
                     else str(item))
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
