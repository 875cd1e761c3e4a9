"""`pypto.Tensor`: a kernel-signature annotation outside tracing, a traced value inside.

`pypto.Tensor([pypto.DYNAMIC, 128], pypto.DT_FP32)` in a signature is an annotation (shape
markers are resolved against the caller's tensor at bind time). Inside a kernel body,
`pypto.tensor([g, d], pypto.DT_FP32, "acc")` creates an uninitialised local scratch tensor. The
`Tensor` objects the kernel body sees wrap a `TensorValue` of the tensor graph; their operator
and method forms are installed by `pypto.ops` (they forward to the module-level functions).
"""
from __future__ import annotations

import enum
from typing import Any

from pypto.dtypes import DataType, check_supported
from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.frontend.tensor_methods import TensorMethods
from pypto.frontend.tracer import current_tracer
from pypto.ir.tensor import StorageKind, TensorValue, TileOpFormat
from pypto.symbolic import Const, SymbolicScalar, as_expr, wrap


class StatusType(enum.Enum):
    """Shape markers for annotations: DYNAMIC/DYN (runtime size) and STATIC (taken from input)."""

    DYN = "DYN"
    DYNAMIC = "DYNAMIC"
    STATIC = "STATIC"


DYNAMIC = StatusType.DYNAMIC
DYN = StatusType.DYN
STATIC = StatusType.STATIC


def is_status_shape(shape: Any, tracing: bool = False) -> bool:
    """True when a shape list must be completed from the caller's tensor. While tracing, a
    SymbolicScalar entry is a runtime size (`pypto.tensor([x.shape[0], 64], ...)`), not a named
    dynamic dim of an annotation."""
    if shape is None or shape is Ellipsis:
        return True
    if not isinstance(shape, (list, tuple)):
        return False
    if len(shape) == 0:
        return True
    return any(isinstance(d, StatusType) or d is Ellipsis or (isinstance(d, int) and d == -1)
               or (not tracing and isinstance(d, SymbolicScalar) and d.is_symbol())
               for d in shape)


class TensorAnnotation:
    """What a kernel parameter annotation says: shape entries, dtype, format, name."""

    def __init__(self, shape: Any = None, dtype: DataType | None = None,
                 format: TileOpFormat | None = None, name: str = ""):
        if shape is Ellipsis:
            shape = None
        if shape is not None and not isinstance(shape, (list, tuple)):
            raise PyptoTypeError(f"Tensor annotation shape must be a list or tuple, got {shape!r}")
        if shape is not None:
            for i, d in enumerate(shape):
                if d is Ellipsis and i != len(shape) - 1:
                    raise PyptoValueError(f"'...' may only be the last entry of an annotation "
                                          f"shape, got {list(shape)}")
                ok = (isinstance(d, (StatusType, SymbolicScalar)) or d is Ellipsis
                      or (isinstance(d, int) and not isinstance(d, bool) and (d > 0 or d == -1)))
                if not ok:
                    raise PyptoValueError(f"invalid entry {d!r} in annotation shape "
                                          f"{list(shape)}: use ints, pypto.DYNAMIC, "
                                          f"pypto.STATIC, a named dynamic dim or '...'")
        if dtype is not None:
            check_supported(dtype, "annotation dtype")
        self.shape = None if shape is None else list(shape)
        self.dtype = dtype
        self.format = format if format is not None else TileOpFormat.TILEOP_ND
        self.name = name

    def to_tensor(self) -> "TensorAnnotation":
        return self

    def __repr__(self) -> str:
        return f"Tensor({self.shape!r}, {self.dtype!r})"


class Tensor(TensorMethods):
    """A tensor in a PyPTO kernel (annotation, local scratch tensor, or traced value)."""

    __slots__ = ("_value", "_annotation", "_name", "__weakref__")

    def __init__(self, shape: Any = None, dtype: DataType | None = None, name: str = "",
                 format: TileOpFormat | None = None, data_ptr: Any = None, device: Any = None,
                 ori_shape: Any = None):
        self._value: TensorValue | None = None
        self._annotation: TensorAnnotation | None = None
        self._name = name
        tracer = current_tracer()
        if tracer is not None and tracer.frames and not is_status_shape(shape, tracing=True):
            self._value = _new_local(tracer, shape, dtype or DataType.DT_FP32, name, format)
        else:
            self._annotation = TensorAnnotation(shape, dtype, format, name)

    def __class_getitem__(cls, item: Any) -> TensorAnnotation:
        """`Tensor[[...], DT_FP16]`, `Tensor[...]`: the subscription annotation form."""
        items = item if isinstance(item, tuple) else (item,)
        shape, dtype, fmt, name = None, DataType.DT_FP32, None, ""
        if items == (Ellipsis,):
            return TensorAnnotation(None, DataType.DT_FP32)
        for it in items:
            if isinstance(it, (list, tuple)):
                shape = it
            elif isinstance(it, DataType):
                dtype = it
            elif isinstance(it, TileOpFormat):
                fmt = it
            elif isinstance(it, str):
                name = it
            elif isinstance(it, dict):
                shape = it.get("shape", shape)
                dtype = it.get("dtype", dtype)
                fmt = it.get("format", fmt)
                name = it.get("name", name)
            elif it is Ellipsis:
                shape = None
            else:
                raise PyptoTypeError(f"unsupported item {it!r} in Tensor[...] annotation")
        return TensorAnnotation(shape, dtype, fmt, name)

    @classmethod
    def _wrap(cls, value: TensorValue) -> "Tensor":
        t = cls.__new__(cls)
        t._value = value
        t._annotation = None
        t._name = value.name
        return t

    # ---- annotation protocol ----
    def to_tensor(self) -> TensorAnnotation:
        if self._annotation is None:
            raise PyptoTypeError("a traced tensor is not an annotation")
        return self._annotation

    # ---- properties ----
    @property
    def value(self) -> TensorValue:
        if self._value is None:
            raise PyptoTypeError("this pypto.Tensor is an annotation, not a traced tensor; "
                                 "it has no data inside a kernel")
        return self._value

    @property
    def shape(self) -> list[int | SymbolicScalar]:
        if self._value is None:
            return [] if self._annotation.shape is None else [
                d for d in self._annotation.shape if isinstance(d, int)]
        return [wrap(d) for d in self._value.shape]

    @property
    def valid_shape(self) -> list[int | SymbolicScalar]:
        return [SymbolicScalar(d) for d in self.value.valid_shape]

    @property
    def dtype(self) -> DataType:
        if self._value is None:
            return self._annotation.dtype
        return self._value.dtype

    @property
    def dim(self) -> int:
        return len(self.shape)

    @property
    def format(self) -> TileOpFormat:
        if self._value is None:
            return self._annotation.format
        return self._value.format

    @property
    def id(self) -> int:
        return self.value.id

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, v: str) -> None:
        self._name = v

    def is_empty(self) -> bool:
        return any(isinstance(d, Const) and d.value == 0 for d in self.value.valid_shape)

    def __iter__(self):
        raise PyptoTypeError("a pypto.Tensor is not iterable; slice it or use pypto.loop")

    def __len__(self) -> int:
        d = self.value.shape[0]
        if not isinstance(d, Const):
            raise PyptoTypeError("len() of a tensor with a dynamic first dim; use .shape[0]")
        return d.value

    def __bool__(self) -> bool:
        raise PyptoTypeError("the truth value of a pypto.Tensor is only known at run time; "
                             "use pypto.where or compare scalars")

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        if self._value is None:
            return repr(self._annotation)
        dims = ", ".join(map(repr, self._value.shape))
        return f"Tensor({self._name or 't' + str(self._value.id)}, [{dims}], {self.dtype!r})"


def _new_local(tracer: Any, shape: Any, dtype: DataType, name: str,
               fmt: TileOpFormat | None) -> TensorValue:
    check_supported(dtype, "pypto.tensor dtype")
    if not isinstance(shape, (list, tuple)):
        raise PyptoTypeError(f"pypto.tensor shape must be a list, got {shape!r}")
    dims = []
    for d in shape:
        e = as_expr(d)
        if isinstance(e, Const) and e.value <= 0:
            raise PyptoValueError(f"pypto.tensor dims must be > 0, got {list(shape)}")
        dims.append(e)
    dims_t = tuple(dims)
    storage = tracer.new_storage(StorageKind.LOCAL, name or f"local{tracer.next_id()}", dtype,
                                 dims_t)
    return tracer.new_value(dims_t, dtype, dims_t, storage, name,
                            fmt if fmt is not None else TileOpFormat.TILEOP_ND)
