"""Small enums of the PyPTO API that carry no behaviour of their own here beyond the op that
reads them (values as in PyPTO)."""
from __future__ import annotations

import enum


class PrecisionType(enum.IntEnum):
    """Accepted by div/exp/sqrt/...; HIGH_PRECISION only differs on Ascend 950, so both give
    the same (exact FP32) result on the CPU."""

    INTRINSIC = 0
    HIGH_PRECISION = 1


class TopKAlgo(enum.IntEnum):
    MERGE_SORT = 0
    RADIX_SELECT = 1


class DequantScaleRoundingMode(enum.IntEnum):
    ROUND_UP = 0
    ROUND_DOWN = 1


ROUND_UP = DequantScaleRoundingMode.ROUND_UP
ROUND_DOWN = DequantScaleRoundingMode.ROUND_DOWN


class CachePolicy(enum.IntEnum):
    """`Tensor.set_cache_policy`: NONE_CACHEABLE makes the simulator bypass L2 for the buffer."""

    PREFETCH = 0
    NONE_CACHEABLE = 1
    MAX_NUM = 2


class ReduceMode(enum.IntEnum):
    ATOMIC_ADD = 0


class ScatterMode(enum.IntEnum):
    NONE = 0
    ADD = 1
    MULTIPLY = 2


def get_scatter_mode(name: str | None) -> ScatterMode:
    table = {None: ScatterMode.NONE, "add": ScatterMode.ADD, "multiply": ScatterMode.MULTIPLY}
    if name not in table:
        from pypto.errors import PyptoValueError
        raise PyptoValueError(f"scatter reduce must be None, 'add' or 'multiply', got {name!r}")
    return table[name]


class TransMode(enum.IntEnum):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2


class OpType(enum.IntEnum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class OutType(enum.IntEnum):
    BOOL = 0
    BIT = 1


class ReLuType(enum.IntEnum):
    NO_RELU = 0
    RELU = 1


class AtomicType(enum.IntEnum):
    SET = 0
    ADD = 1


class LogBaseType(enum.IntEnum):
    LOG_E = 0
    LOG_2 = 1
    LOG_10 = 2


__all__ = ["PrecisionType", "TopKAlgo", "DequantScaleRoundingMode", "ROUND_UP", "ROUND_DOWN",
           "CachePolicy", "ReduceMode", "ScatterMode", "get_scatter_mode", "TransMode",
           "OpType", "OutType", "ReLuType", "AtomicType", "LogBaseType"]
