"""Binding a kernel call: caller tensors (torch or numpy) against the signature's annotations.

Produces, per tensor parameter, the numpy array that shares the caller's memory, its DataType,
and the shape the kernel sees (ints for static dims, symbols for dynamic ones), plus the values
of the dynamic-dim symbols for this call. Every mismatch is reported with the parameter's name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.dtypes import DataType, from_numpy, from_torch_name, to_numpy
from pypto.errors import PyptoRuntimeError, PyptoTypeError, PyptoValueError
from pypto.frontend.tensor import StatusType, TensorAnnotation
from pypto.ir.tensor import TileOpFormat
from pypto.symbolic import Const, Expr, Sym, SymbolicScalar


@dataclass(frozen=True)
class BoundTensor:
    name: str
    array: np.ndarray
    dtype: DataType
    dims: tuple[Expr, ...]          # what the kernel sees: Const or Sym per dim
    static_key: tuple               # the part of the shape that keys the compile cache
    format: TileOpFormat = TileOpFormat.TILEOP_ND   # as annotated (the data itself is ND)


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def as_numpy(x: Any, name: str) -> tuple[np.ndarray, DataType]:
    """A numpy array sharing `x`'s memory (torch CPU tensor or numpy array)."""
    if isinstance(x, np.ndarray):
        if not x.flags.c_contiguous:
            raise PyptoValueError(f"tensor argument '{name}' is not contiguous; pass "
                                  f"np.ascontiguousarray(...)")
        return x, from_numpy(x.dtype)
    if _is_torch(x):
        if x.device.type != "cpu":
            raise PyptoValueError(f"tensor argument '{name}' is on {x.device}; OpenPTO runs on "
                                  f"the CPU, pass a CPU tensor")
        if not x.is_contiguous():
            raise PyptoValueError(f"tensor argument '{name}' is not contiguous; pass "
                                  f"{name}.contiguous()")
        dtype = from_torch_name(str(x.dtype))
        if dtype is None:
            raise PyptoTypeError(f"tensor argument '{name}' has unsupported dtype {x.dtype}")
        t = x.detach()
        if dtype in (DataType.DT_BF16,):
            import torch
            arr = t.view(torch.int16).numpy().view(to_numpy(dtype))
        elif dtype in (DataType.DT_FP8E4M3, DataType.DT_FP8E5M2, DataType.DT_FP8E8M0):
            import torch
            arr = t.view(torch.uint8).numpy().view(to_numpy(dtype))
        else:
            arr = t.numpy()
        if x.requires_grad:
            arr = arr.view()
        return arr, dtype
    kind = type(x)
    where = "" if kind.__module__ == "builtins" else kind.__module__.split(".")[0] + "."
    hint = (" (a pypto.Tensor is an annotation or a traced value; pass the torch tensor "
            "itself)" if where == "pypto." else "")
    raise PyptoTypeError(f"tensor argument '{name}' must be a torch.Tensor or numpy.ndarray, "
                         f"got {where}{kind.__name__}{hint}")


def bind_tensor(index: int, name: str, ann: TensorAnnotation, x: Any,
                symbols: dict[str, int]) -> BoundTensor:
    arr, dtype = as_numpy(x, name)
    where = f"input tensor #{index} '{name}'"
    if ann.dtype is not None and ann.dtype != dtype:
        raise PyptoValueError(f"The dtype of {where} ({dtype.name}) does not match its "
                              f"annotation ({ann.dtype.name})")
    shape = arr.shape
    entries = ann.shape
    dims: list[Expr] = []
    if entries is None:
        entries = [StatusType.STATIC] * len(shape)
    elif len(entries) == 0:
        entries = [StatusType.STATIC] * len(shape)
    elif entries[-1] is Ellipsis:
        fixed = entries[:-1]
        if len(shape) < len(fixed):
            raise PyptoValueError(f"The rank of {where} is {len(shape)}, but its annotation "
                                  f"needs at least {len(fixed)} dims")
        entries = list(fixed) + [StatusType.STATIC] * (len(shape) - len(fixed))
    if len(entries) != len(shape):
        raise PyptoValueError(f"The rank of {where} is {len(shape)} (shape {list(shape)}), "
                              f"but its annotation has {len(entries)} dims")
    key = []
    for d, (e, n) in enumerate(zip(entries, shape)):
        if isinstance(e, int) and e != -1:
            if e != n:
                raise PyptoValueError(f"The shape of {where} is {list(shape)}, but dim {d} is "
                                      f"annotated as {e}")
            dims.append(Const(n))
            key.append(n)
        elif e is StatusType.STATIC:
            dims.append(Const(n))
            key.append(n)
        elif isinstance(e, SymbolicScalar):
            sym = e.expr
            if not isinstance(sym, Sym):
                raise PyptoValueError(f"annotation of {where} dim {d} must be a named dynamic "
                                      f"dim (pypto.frontend.dynamic(name)), got {e!r}")
            if sym.name in symbols and symbols[sym.name] != n:
                raise PyptoValueError(f"dynamic dim '{sym.name}' is {symbols[sym.name]} for an "
                                      f"earlier tensor but {n} for {where}")
            symbols[sym.name] = n
            dims.append(sym)
            key.append(None)
        else:  # DYNAMIC / DYN / -1
            sym = Sym(f"ARG_{name}_dim{d}", f"RUNTIME_GetInputShapeDim(ARG_{name},{d})")
            symbols[sym.name] = n
            dims.append(sym)
            key.append(None)
    if arr.size == 0:
        raise PyptoValueError(f"{where} is empty (shape {list(shape)}); empty tensors are not "
                              f"supported")
    return BoundTensor(name, arr, dtype, tuple(dims), (dtype, tuple(key)), ann.format)


def freeze(value: Any, where: str) -> Any:
    """A hashable, order-stable form of a non-tensor argument (for the compile cache key)."""
    if _is_torch(value) or isinstance(value, np.ndarray):
        raise PyptoRuntimeError(f"{where} is a non-tensor parameter but got a tensor; tensor "
                                f"parameters must come first and be annotated with "
                                f"pypto.Tensor(...)")
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(freeze(v, where) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted(((repr(k), freeze(v, where)) for k, v in value.items())))
    if hasattr(value, "__dataclass_fields__"):
        return (type(value).__qualname__,) + tuple(
            (f, freeze(getattr(value, f), where)) for f in value.__dataclass_fields__)
    try:
        hash(value)
        return (type(value).__qualname__, value)
    except TypeError:
        return (type(value).__qualname__, repr(value))
