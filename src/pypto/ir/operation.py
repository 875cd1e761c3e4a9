"""`Operation`: one tensor-level op as it was traced, with everything the compiler needs later.

Besides inputs, outputs and attributes, every op keeps the configuration that was current when
the user recorded it: the vector and cube TileShapes, the `sg_set_scope` id, the semantic label,
the cache policy hint, the user's source line and the breadth-merge pass options. Tile expansion,
partition and the breadth merges read these.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.errors import SourceLoc
from pypto.ir.tensor import TensorValue


@dataclass(frozen=True, slots=True)
class CubeTile:
    """A canonical cube TileShape: m=[mL0,mL1], k=[kL0,kL1,kL1b], n=[nL0,nL1]."""

    m: tuple[int, int]
    k: tuple[int, int, int]
    n: tuple[int, int]
    enable_split_k: bool = False


@dataclass(frozen=True, slots=True)
class TileConfig:
    """The tiling state an op was recorded under."""

    vec: tuple[int, ...] | None = None
    cube: CubeTile | None = None
    matrix_size: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Operation:
    """A traced op. `outputs` of a write op (assemble, move, scatter_) are the values written."""

    id: int
    opcode: str
    inputs: tuple[TensorValue, ...]
    outputs: tuple[TensorValue, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    tile: TileConfig = TileConfig()
    scope: int = -1
    label: str = ""
    loc: SourceLoc | None = None
    # breadth-merge pass options current when the op was recorded (name -> value, only the
    # ones set); see tracer.MERGE_OPTION_KEYS and passes/merge_settings.py
    pass_options: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        outs = ", ".join(map(repr, self.outputs))
        ins = ", ".join(f"%{v.id}" for v in self.inputs)
        where = f"  # {self.loc.short()}" if self.loc else ""
        return f"{outs} = {self.opcode}({ins}){where}"
