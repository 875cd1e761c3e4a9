"""What a TileShape is, as data: the lenient forms users write (`set_vec_tile_shapes(16, 512)`,
`set_cube_tile_shapes([128, 128], [64, 256], [256, 256])`, knob values on the command line)
checked and made canonical once, here.

Its own module because two ideas need it and neither owns it: the option scope
(`frontend/options.py`) stores canonical TileShapes, and knob overrides (`frontend/knobs.py`)
check theirs the same way before they replace a call's.
"""
from __future__ import annotations

from typing import Any

from pypto.errors import PyptoTypeError, PyptoValueError
from pypto.ir.operation import CubeTile
from pypto.symbolic import SymbolicScalar


def concrete_int(v: Any, what: str) -> int:
    """`v` as a plain int (a concrete SymbolicScalar's value), else a named type error."""
    if isinstance(v, SymbolicScalar):
        v = v.concrete()
    if isinstance(v, bool) or not isinstance(v, int):
        raise PyptoTypeError(f"{what} must be an int, got {type(v).__name__} {v!r}")
    return v


def canonical_vec_tile(shapes: Any) -> tuple[int, ...]:
    """A vector TileShape as a tuple of 1 to 6 positive ints (`set_vec_tile_shapes`)."""
    if len(shapes) == 1 and isinstance(shapes[0], (list, tuple)):
        shapes = tuple(shapes[0])
    dims = tuple(concrete_int(s, f"vec tile dim {i}") for i, s in enumerate(shapes))
    if not 1 <= len(dims) <= 6:
        raise PyptoValueError(f"set_vec_tile_shapes takes 1 to 6 sizes, got {len(dims)}")
    for i, d in enumerate(dims):
        if d <= 0:
            raise PyptoValueError(f"vec tile dim {i} must be > 0, got {d} in {list(dims)}")
    return dims


def canonical_cube_tile(m: Any, k: Any, n: Any, enable_split_k: Any = False) -> CubeTile:
    """A cube TileShape as a `CubeTile` (`set_cube_tile_shapes`): [L0, L1] per axis, L0
    dividing L1 (K may give [kL0, kL1a, kL1b])."""
    def pair(v: Any, name: str, lengths: tuple[int, ...]) -> tuple[int, ...]:
        if not isinstance(v, (list, tuple)) or len(v) not in lengths:
            want = " or ".join(str(x) for x in lengths)
            raise PyptoValueError(f"cube tile '{name}' must be a list of {want} ints "
                                  f"[{name}L0, {name}L1], got {v!r}")
        vals = tuple(concrete_int(x, f"cube tile {name}[{i}]") for i, x in enumerate(v))
        if any(x <= 0 for x in vals):
            raise PyptoValueError(f"cube tile '{name}' sizes must be > 0, got {list(vals)}")
        l0 = vals[0]
        for l1 in vals[1:]:
            if l0 > l1 or l1 % l0:
                raise PyptoValueError(
                    f"cube tile '{name}' = {list(vals)}: L0 must be <= L1 and divide it "
                    f"(e.g. [{l0}, {max(l0, l1 - l1 % l0)}])")
        return vals

    mm, kk, nn = pair(m, "m", (2,)), pair(k, "k", (2, 3)), pair(n, "n", (2,))
    if len(kk) == 2:
        kk = (kk[0], kk[1], kk[1])
    if not isinstance(enable_split_k, (bool, int)):
        raise PyptoTypeError(f"enable_split_k must be a bool, got {enable_split_k!r}")
    return CubeTile(mm, kk, nn, bool(enable_split_k))
