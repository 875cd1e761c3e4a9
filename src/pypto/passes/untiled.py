"""Ops that run untiled: one task on whole tensors, because no tile rule covers them.

Such an op ignores its TileShape and skips the buffer-capacity checks, so a user tuning tile
shapes must know which ones they are: the compiler warns once per op (with its source line),
the tile-graph dump lists them, and the task's swimlane label says "whole <op>" so the advisor
does not suggest a TileShape that cannot split it. An in-place reshape is not one of them: it
only renames a buffer (an empty task).
"""
from __future__ import annotations

import warnings

from pypto.errors import PyptoWarning
from pypto.passes.kinds import WHOLE
from pypto.passes.tile_graph import TileGraph, TileOp

LABEL_PREFIX = "whole "


def untiled(op: TileOp) -> bool:
    return op.kind is WHOLE and not (op.src.opcode == "RESHAPE"
                                       and op.src.attrs.get("inplace"))


def whole_label(op: TileOp) -> str:
    """The swimlane label of an untiled op's task: the user's label, else "whole <op>"."""
    return op.src.label or f"{LABEL_PREFIX}{op.src.opcode.lower()}"


def why_untiled(op: TileOp) -> str:
    shapes = [v.static_shape() for v in op.src.inputs + op.src.outputs]
    if any(s is None for s in shapes):
        return "a DYNAMIC shape its run-time grid does not cover"
    return "no tile rule"


def untiled_json(graph: TileGraph) -> list[dict]:
    """For the tile-graph dump: each untiled op, where it was written, and why."""
    return [{"tile_op": op.id, "op": op.src.opcode.lower(),
             "at": str(op.src.loc) if op.src.loc else None, "why": why_untiled(op)}
            for op in graph.ops if untiled(op)]


def warn_untiled(kernel: str, graphs: list[TileGraph]) -> None:
    """One PyptoWarning per untiled op (at the user's line: shown once by `warnings`)."""
    for graph in graphs:
        for op in graph.ops:
            if not untiled(op):
                continue
            msg = (f"kernel '{kernel}': {op.src.opcode.lower()} runs untiled, as one task on "
                   f"whole tensors ({why_untiled(op)}): its TileShape and the buffer checks "
                   f"do not apply")
            loc = op.src.loc
            if loc is not None:
                warnings.warn_explicit(f"{msg} [at {loc}]", PyptoWarning, loc.file, loc.line)
            else:
                warnings.warn(msg, PyptoWarning, stacklevel=2)
