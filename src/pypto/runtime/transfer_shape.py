"""What a GM transfer occupies on the memory path, by its shape (hw_costs.md §1).

Takes one GM box (valid extents over the accessed tensor's shape), its element size and how
the core moves it → the bytes the transfer occupies, at least the bytes it carries. The
machine then moves those at its bandwidth (`machine/timing.py`), so narrow rows cost what
they cost instead of running at the rate of long bursts. The rules, each from a source:

- a transfer is a sequence of bursts, and each burst is split into pieces of 128, 256 or 512
  bytes with a partial piece rounded up (costs §1.1 #3): a 32-byte row occupies 128 bytes;
- every burst pays a small overhead (`burst_overhead_bytes`, fitted on costs §1.2: 128-byte
  bursts reach 76 % where 2 KiB bursts reach 83 %);
- a vector core's copy (GM <-> UB) is one burst per contiguous run: rows merge while the box
  spans the tensor's whole inner dims;
- a cube core loads an ND tensor row by row into the fractal (NZ) layout of L1 (ND2NZ), each
  row a burst plus one reordering granule (`nd2nz_row_bytes`, fitted on costs §1.2: 128-byte
  rows at 59 %, 512-byte rows at 78 %), and its fixpipe writes an ND result row by row
  (NZ2ND); a tensor already in NZ layout moves as contiguous 16-column blocks instead.
"""
from __future__ import annotations

from enum import Enum
from typing import Sequence


class Path(Enum):
    """How a core moves a GM box."""

    CONTIGUOUS = "contiguous"   # vector core DMA: one burst per contiguous run
    ND2NZ = "nd2nz"             # cube core load of an ND tensor: a burst per row, reordered
    NZ2ND = "nz2nd"             # cube core fixpipe store to an ND tensor: a burst per row
    FRACTAL = "fractal"         # cube core, NZ tensor: a burst per 32-byte-wide column block


def _runs(valid: Sequence[int], shape: Sequence[int], path: Path, itemsize: float
          ) -> tuple[float, float]:
    """(number of bursts, bytes per burst) of a box."""
    numel = 1
    for e in valid:
        numel *= e
    if path is Path.FRACTAL and len(valid) >= 2:
        c0 = max(1, int(32 // itemsize)) if itemsize else 16   # columns per 32-byte block
        blocks = -(-valid[-1] // c0)
        rest = numel // (valid[-1] * valid[-2]) if valid[-1] * valid[-2] else 0
        return blocks * rest, valid[-2] * c0 * itemsize
    run = valid[-1] if valid else 1
    if path is Path.CONTIGUOUS and len(valid) == len(shape):
        for d in range(len(valid) - 1, 0, -1):
            if valid[d] != shape[d]:
                break
            run *= valid[d - 1]
    return (numel / run if run else 0.0), run * itemsize


def _occupied(burst: float, pieces: Sequence[int]) -> float:
    """Bytes one burst of `burst` bytes occupies: whole largest pieces, then the smallest
    piece that holds the rest."""
    largest = pieces[-1]
    whole, rest = divmod(burst, largest)
    out = whole * largest
    if rest > 0:
        out += next(p for p in pieces if p >= rest)
    return out


def transfer_bytes(valid: Sequence[int], shape: Sequence[int], itemsize: float, path: Path,
                   rules: dict) -> float:
    """Bytes the transfer of box `valid` of a tensor of `shape` occupies on the memory path
    (`rules`: the spec's `dma.shape` table)."""
    bursts, burst = _runs(valid, shape, path, itemsize)
    if not bursts:
        return 0.0
    extra = rules["burst_overhead_bytes"]
    if path is Path.ND2NZ:
        extra += rules["nd2nz_row_bytes"]
    return bursts * (_occupied(burst, rules["piece_bytes"]) + extra)
