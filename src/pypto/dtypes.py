"""`DataType` and the `DT_*` constants, with their numpy (and ml_dtypes) storage types.

Low-precision floats (BF16, FP16, FP8) are stored in their own numpy dtype but computed in
FP32 and rounded once, as the NPU's vector unit does; `compute_dtype` says which.
"""
from __future__ import annotations

import enum

import numpy as np

from pypto.errors import PyptoTypeError, PyptoValueError


class DataType(enum.IntEnum):
    """PyPTO's data types, with PyPTO 0.2.0's enum values."""

    DT_INT4 = 0
    DT_INT8 = 1
    DT_INT16 = 2
    DT_INT32 = 3
    DT_INT64 = 4
    DT_FP8 = 5
    DT_FP16 = 6
    DT_FP32 = 7
    DT_BF16 = 8
    DT_HF4 = 9
    DT_HF8 = 10
    DT_UINT8 = 11
    DT_UINT16 = 12
    DT_UINT32 = 13
    DT_UINT64 = 14
    DT_BOOL = 15
    DT_DOUBLE = 16
    DT_FP8E5M2 = 17
    DT_FP8E4M3 = 18
    DT_FP8E8M0 = 19
    DT_FP4_E2M1X2 = 20
    DT_FP4_E1M2X2 = 21
    DT_BOTTOM = 22
    DT_FP4_E2M1 = 23
    DT_FP4_E1M2 = 24

    def __repr__(self) -> str:
        return f"DataType.{self.name}"

    __str__ = __repr__


_NUMPY = {
    DataType.DT_INT8: np.dtype(np.int8),
    DataType.DT_INT16: np.dtype(np.int16),
    DataType.DT_INT32: np.dtype(np.int32),
    DataType.DT_INT64: np.dtype(np.int64),
    DataType.DT_FP16: np.dtype(np.float16),
    DataType.DT_FP32: np.dtype(np.float32),
    DataType.DT_UINT8: np.dtype(np.uint8),
    DataType.DT_UINT16: np.dtype(np.uint16),
    DataType.DT_UINT32: np.dtype(np.uint32),
    DataType.DT_UINT64: np.dtype(np.uint64),
    DataType.DT_BOOL: np.dtype(np.bool_),
    DataType.DT_DOUBLE: np.dtype(np.float64),
}
# Types stored in ml_dtypes' numpy types. NOTE: ml_dtypes is imported on first use (it takes
# about half a second to register its types), so FP32/FP16/integer kernels never pay for it.
_ML_DTYPES = {DataType.DT_INT4: "int4", DataType.DT_BF16: "bfloat16",
              DataType.DT_FP8E5M2: "float8_e5m2", DataType.DT_FP8E4M3: "float8_e4m3fn",
              DataType.DT_FP8E8M0: "float8_e8m0fnu"}


def _load_ml_dtypes() -> None:
    if DataType.DT_BF16 not in _NUMPY:
        import ml_dtypes
        for dt, name in _ML_DTYPES.items():
            _NUMPY[dt] = np.dtype(getattr(ml_dtypes, name))

# Types with no faithful CPU representation here, and why.
_UNSUPPORTED = {
    DataType.DT_FP8: "the generic FP8 tag has no fixed format; use DT_FP8E4M3 or DT_FP8E5M2",
    DataType.DT_HF4: "HiFloat4 has no numpy representation",
    DataType.DT_HF8: "HiFloat8 has no numpy representation",
    DataType.DT_FP4_E2M1X2: "packed FP4 pairs are not supported on the CPU backend",
    DataType.DT_FP4_E1M2X2: "packed FP4 pairs are not supported on the CPU backend",
    DataType.DT_FP4_E2M1: "FP4 tensors are not supported on the CPU backend",
    DataType.DT_FP4_E1M2: "FP4 tensors are not supported on the CPU backend",
    DataType.DT_BOTTOM: "DT_BOTTOM is a sentinel, not a data type",
}

_BYTES = {DataType.DT_INT4: 0.5, DataType.DT_HF4: 0.5, DataType.DT_FP8: 1, DataType.DT_HF8: 1,
          DataType.DT_BF16: 2, DataType.DT_FP8E5M2: 1, DataType.DT_FP8E4M3: 1,
          DataType.DT_FP8E8M0: 1,
          DataType.DT_FP4_E2M1X2: 1, DataType.DT_FP4_E1M2X2: 1, DataType.DT_FP4_E2M1: 0.5,
          DataType.DT_FP4_E1M2: 0.5, DataType.DT_BOTTOM: 0}

_LOW_PRECISION_FLOATS = {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP8E5M2,
                         DataType.DT_FP8E4M3, DataType.DT_FP8E8M0}
_FLOATS = _LOW_PRECISION_FLOATS | {DataType.DT_FP32, DataType.DT_DOUBLE}
_SIGNED_INTS = {DataType.DT_INT4, DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32,
                DataType.DT_INT64}
_UNSIGNED_INTS = {DataType.DT_UINT8, DataType.DT_UINT16, DataType.DT_UINT32, DataType.DT_UINT64}


def check_supported(dtype: DataType, what: str = "dtype") -> DataType:
    """Reject types the CPU backend cannot hold, with the reason."""
    if not isinstance(dtype, DataType):
        raise PyptoTypeError(f"{what} must be a pypto.DataType (e.g. pypto.DT_FP32), got {dtype!r}")
    if dtype in _UNSUPPORTED:
        raise PyptoValueError(f"{what} {dtype!r} is not supported: {_UNSUPPORTED[dtype]}")
    return dtype


def to_numpy(dtype: DataType) -> np.dtype:
    """The numpy dtype that stores `dtype`."""
    if type(dtype) is DataType:   # NOTE: executors ask per op; a known type is one lookup
        found = _NUMPY.get(dtype)
        if found is not None:
            return found
    check_supported(dtype)
    if dtype in _ML_DTYPES:
        _load_ml_dtypes()
    return _NUMPY[dtype]


def from_numpy(np_dtype) -> DataType:
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "V" or np_dtype.type.__module__.startswith("ml_dtypes"):
        _load_ml_dtypes()
    for dt, nd in _NUMPY.items():
        if nd == np_dtype and dt is not DataType.DT_INT4:
            return dt
    raise PyptoTypeError(f"numpy dtype {np_dtype} has no pypto DataType")


def bytes_of(dtype: DataType) -> int | float:
    """Size of one element in bytes (INT4/FP4 count as 0.5)."""
    if dtype in _BYTES:
        return _BYTES[dtype]
    return _NUMPY[dtype].itemsize


def is_float(dtype: DataType) -> bool:
    return dtype in _FLOATS


def is_int(dtype: DataType) -> bool:
    return dtype in _SIGNED_INTS or dtype in _UNSIGNED_INTS


def is_low_precision(dtype: DataType) -> bool:
    return dtype in _LOW_PRECISION_FLOATS


def compute_dtype(dtype: DataType) -> np.dtype:
    """The numpy type arithmetic is done in: FP32 for low-precision floats, else the type itself."""
    if dtype in _LOW_PRECISION_FLOATS:
        return np.dtype(np.float32)
    return to_numpy(dtype)


_TORCH_NAMES = {
    "float16": DataType.DT_FP16, "bfloat16": DataType.DT_BF16, "float32": DataType.DT_FP32,
    "float64": DataType.DT_DOUBLE, "int8": DataType.DT_INT8, "int16": DataType.DT_INT16,
    "int32": DataType.DT_INT32, "int64": DataType.DT_INT64, "uint8": DataType.DT_UINT8,
    "uint16": DataType.DT_UINT16, "uint32": DataType.DT_UINT32, "uint64": DataType.DT_UINT64,
    "bool": DataType.DT_BOOL, "float8_e4m3fn": DataType.DT_FP8E4M3,
    "float8_e5m2": DataType.DT_FP8E5M2, "float8_e8m0fnu": DataType.DT_FP8E8M0,
}


def from_torch_name(name: str) -> DataType | None:
    """`torch.float32` → DT_FP32 (by the dtype's name, so torch need not be imported)."""
    return _TORCH_NAMES.get(name.replace("torch.", ""))
