"""Tensor values and the storage behind them.

A `TensorValue` is what one op produces (or a kernel parameter / local scratch tensor is): a
static shape that may contain symbolic dims, a dtype, and a `valid_shape` saying how much of it
holds real data. Its `Storage` is the buffer it lives in. Most values own a fresh storage; a
kernel parameter's storage is the caller's tensor, a `pypto.tensor(...)` local has a scratch
storage that ops write into, and `reshape(..., inplace=True)` makes a second value over the same
storage. Writes (assemble, move, scatter_) mutate a storage; everything else is pure.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

from pypto.dtypes import DataType
from pypto.symbolic import Const, Expr


class StorageKind(enum.Enum):
    ARG = "arg"        # a kernel parameter: the caller's tensor, written in place
    LOCAL = "local"    # pypto.tensor(...) scratch: uninitialised until written
    TEMP = "temp"      # an op's result


class TileOpFormat(enum.IntEnum):
    """Data layout tag. NZ is the cube unit's fractal layout; on the CPU data stays ND."""

    TILEOP_ND = 0
    TILEOP_NZ = 1
    TILEOP_FORMAT_NUM = 2


@dataclass(frozen=True, slots=True, eq=False)
class Storage:
    """A buffer. Identity is the object (and `id`); `shape` is the layout it was created with."""

    id: int
    kind: StorageKind
    name: str
    dtype: DataType
    shape: tuple[Expr, ...]
    param_index: int = -1


@dataclass(frozen=True, slots=True, eq=False)
class TensorValue:
    """One tensor in the tensor graph. Shapes hold `Expr`s (`Const` for static dims)."""

    id: int
    shape: tuple[Expr, ...]
    dtype: DataType
    valid_shape: tuple[Expr, ...]
    storage: Storage
    name: str = ""
    format: TileOpFormat = TileOpFormat.TILEOP_ND
    producer: int = field(default=-1)  # id of the op that created it, -1 for params/locals

    @property
    def rank(self) -> int:
        return len(self.shape)

    def static_shape(self) -> tuple[int, ...] | None:
        """The shape as ints, or None if a dim is symbolic."""
        if all(isinstance(d, Const) for d in self.shape):
            return tuple(d.value for d in self.shape)
        return None

    def aliases(self, other: "TensorValue") -> bool:
        return self.storage is other.storage

    def __repr__(self) -> str:
        dims = ", ".join(map(repr, self.shape))
        return f"%{self.id}:{self.name or 't'}[{dims}]{self.dtype.name[3:]}"
