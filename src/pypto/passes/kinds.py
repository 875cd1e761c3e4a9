"""The closed vocabularies of the tile graph: how a tile op runs, what an edge carries, which
core a task needs.

Each is an enum whose members are also the plain strings the dumps, swimlanes and run-side
code have always used: a member equals its string, hashes like it, and `str`, `format` and
`json` give the string (a `(str, Enum)` member formats as `Kind.NAME` on Python 3.11+, so the
base restores str's own methods). `repr` stays the enum's, to tell them apart when debugging.
"""
from __future__ import annotations

from enum import Enum


class _Word(str, Enum):
    """A str-valued enum member that behaves as its string everywhere but in `repr`."""

    __str__ = str.__str__
    __format__ = str.__format__
    __hash__ = str.__hash__


class TileKind(_Word):
    """How a tile op executes."""

    COMPUTE = "compute"    # the tensor op's semantics on the input regions' valid data
    PARTIAL = "partial"    # first step of a reduction whose reduce axis is split
    COMBINE = "combine"    # its second step: partial results into the output tile
    COPY_OUT = "copy_out"  # a write of its input region into a storage (assemble / move)
    WHOLE = "whole"        # the tensor op run as a whole on GM (no tile rule)


class EdgeKind(_Word):
    """What a dependency between two tile ops carries."""

    FUSE = "fuse"    # data that may stay in on-chip buffers (one-to-one or tree-shaped flow)
    GM = "gm"        # data that goes through GM (many-to-many flow)
    ORDER = "order"  # storage read/write ordering only


class Core(_Word):
    """The core type a tile op (and its task) runs on."""

    AIV = "AIV"  # vector
    AIC = "AIC"  # cube


# NOTE: module-level aliases: `op.kind is COPY_OUT` skips the enum class's attribute lookup,
# which costs more than the comparison in the passes' per-tile loops
COMPUTE, PARTIAL, COMBINE = TileKind.COMPUTE, TileKind.PARTIAL, TileKind.COMBINE
COPY_OUT, WHOLE = TileKind.COPY_OUT, TileKind.WHOLE
FUSE, GM, ORDER = EdgeKind.FUSE, EdgeKind.GM, EdgeKind.ORDER
AIV, AIC = Core.AIV, Core.AIC
