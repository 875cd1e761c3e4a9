"""Planted faults: the wrong results real tile-level bugs give, put into one tile of a run, so
a test can prove the executors' cross-check (runtime/differential.py) flags each kind.

Kinds (each spoils the first tile result it can change, in run order):
    flipped_sign   one tile's result negated
    offset         one tile computed from its first input read one element further along
                   the last axis (an off-by-one tile offset: its last element is then past
                   the tile, read as zero, as a window past an edge reads)
    reduce_axis    one reduction tile reduced along another axis than its own
    dropped_tail   the last tile of an op with several tiles never computed: its buffer keeps
                   the zeros it was allocated with

Used as `with planted(Fault("offset")) as fault: kernel(...)`; `fault.applied` then says
which tile it spoiled (empty: no tile qualified). Tile batching is off while a fault is
planted, so that one tile means one tile.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from pypto.runtime.tile_executor import TileExecutor

KINDS = ("flipped_sign", "offset", "reduce_axis", "dropped_tail")
_REDUCTIONS = {"REDUCE_SUM": np.sum, "REDUCE_MAX": np.max, "REDUCE_MIN": np.min,
               "REDUCE_MEAN": np.mean, "REDUCE_PROD": np.prod}


@dataclass
class Fault:
    kind: str
    applied: str = ""      # the tile it spoiled, once it has

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; choose from {KINDS}")

    def apply(self, op: Any, arrays: list, attrs: dict, result: np.ndarray,
              offs: tuple[int, ...], extent: tuple[int, ...],
              compute: Callable) -> np.ndarray:
        """The tile result to keep: a spoiled one once, the real one otherwise."""
        if self.applied or op.opcode in ("PRINT", "SAVE") or result.size == 0:
            return result
        spoiled = getattr(self, "_" + self.kind)(op, arrays, attrs, result, offs, extent,
                                                 compute)
        if spoiled is result:
            return result
        where = ", ".join(f"{o}:{o + n}" for o, n in zip(offs, result.shape))
        line = f" ({op.src.loc.short()})" if op.src.loc else ""
        self.applied = f"{self.kind}: tile [{where}] of {op.opcode}{line}"
        return spoiled

    # ---- the kinds: each returns `result` itself where it cannot spoil this tile ----
    def _flipped_sign(self, op, arrays, attrs, result, offs, extent, compute):
        if result.dtype.kind not in "fiV" or not np.any(result.astype(np.float64) != 0):
            return result
        return (-result.astype(np.float64)).astype(result.dtype)

    def _offset(self, op, arrays, attrs, result, offs, extent, compute):
        if not arrays or not isinstance(arrays[0], np.ndarray) or arrays[0].ndim == 0 or \
                arrays[0].shape[-1] < 2:
            return result
        a = arrays[0]
        past = np.zeros(a.shape[:-1] + (1,), a.dtype)
        shifted = [np.concatenate([a[..., 1:], past], axis=-1)] + list(arrays[1:])
        with np.errstate(all="ignore"):
            out = np.asarray(compute(shifted, attrs))
        return _changed(result, out)

    def _reduce_axis(self, op, arrays, attrs, result, offs, extent, compute):
        fn = _REDUCTIONS.get(op.opcode)
        if fn is None or not arrays:
            return result
        x = arrays[0]
        own = set(attrs.get("dims", ()))
        others = [d for d in range(x.ndim) if d not in own and x.shape[d] > 1]
        if not others:
            return result
        with np.errstate(all="ignore"):
            wrong = fn(x, axis=others[0], keepdims=True)
        return _changed(result, np.resize(wrong, result.shape))

    def _dropped_tail(self, op, arrays, attrs, result, offs, extent, compute):
        last = all(o + n >= e for o, n, e in zip(offs, result.shape, extent))
        if not any(offs) or not last or not np.any(result.astype(np.float64) != 0):
            return result
        return np.zeros_like(result)


def _changed(result: np.ndarray, out: np.ndarray) -> np.ndarray:
    """`out` in the result's dtype where it differs from the real result, else the result."""
    if out.shape != result.shape:
        return result
    out = out.astype(result.dtype)
    same = np.array_equal(out.astype(np.float64), result.astype(np.float64), equal_nan=True)
    return result if same else out


@contextlib.contextmanager
def planted(fault: Fault) -> Iterator[Fault]:
    """Plant `fault` in every tile executor run inside the block (tile batching off)."""
    saved = TileExecutor.fault, TileExecutor.batch
    TileExecutor.fault, TileExecutor.batch = fault, False
    try:
        yield fault
    finally:
        TileExecutor.fault, TileExecutor.batch = saved
