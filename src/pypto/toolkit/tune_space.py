"""The tuner's search space: every knob of one kernel call, each with the candidates a
practitioner would try (the tuning guide's rules), found without editing the kernel.

`search_space(kernel)` traces the kernel's last call once more with `knobs.discovering` on,
which notes every `set_vec_tile_shapes` / `set_cube_tile_shapes` call site the trace passes
(file and line), then adds the kernel-wide options. Each `Dimension` is one knob address of
`frontend.knobs` with its current value, its candidates (the current one first) and the rule
that made them:
- a vector TileShape site: each of its last two dims x 1/4, 1/2, 1, 2 or 4, the last kept a
  multiple of 16 elements (32 bytes even at 2-byte types, compiler_runtime §3 alignment) and
  every size a power-of-two multiple of the current one (divisibility);
- a cube TileShape site: the matmul guide's recommended starts (compiler_runtime §3:
  `[128,128],[64,256],[256,256]`, `[256,256],[64,256],[128,128]`, `[128,128],[128,512],
  [128,128]`) and the current tiles with split-K toggled;
- `stitch_function_max_num` 16 .. 1024, `device_sched_mode` 0 .. 3, and, when the kernel has
  cube sites, `cube_l1_reuse_setting` and `cube_nbuffer_setting` {-1: 1, 2, 4, 8}; when it
  has vector sites, `vec_nbuffer_setting` {-1: 1, 2, 4}.
Candidates are not filtered by buffer capacity here: the compile that precedes every
simulation checks UB / L1 / L0 and a candidate that does not fit fails there, cheaply, and is
recorded as infeasible (`tune_search`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pypto.errors import PyptoValueError
from pypto.frontend import knobs as knob_state

STITCH = (16, 32, 64, 128, 256, 512, 1024)
SCHED_MODES = (0, 1, 2, 3)
L1_REUSE = (1, 2, 4, 8)
VEC_NBUFFER = (1, 2, 4)
CUBE_STARTS = (((128, 128), (64, 256), (256, 256)), ((256, 256), (64, 256), (128, 128)),
               ((128, 128), (128, 512), (128, 128)))
LAST_DIM_MULTIPLE = 16
SCALES = (1, 2, 4, 8, 16)   # x 1/4, 1/2, 1, 2, 4 of a vector tile dim


@dataclass(frozen=True)
class Dimension:
    """One knob of the search: its address, current value, candidates (current first)."""

    knob: str
    current: Any
    candidates: tuple
    rule: str


def search_space(kernel: Any) -> list[Dimension]:
    """The knobs of `kernel`'s last call (see the module docstring)."""
    sites = _sites(kernel)
    names = _addresses(sites)
    dims = []
    for (kind, path, line), value in sites.items():
        address = f"{kind}@{names[path]}:{line}"
        dims.append(_vec_dimension(address, value) if kind == "vec_tile"
                    else _cube_dimension(address, value))
    kinds = {kind for kind, _, _ in sites}
    for name, group, values, rule in (
            ("stitch_function_max_num", "runtime", STITCH,
             "stitch windows of 16 to 1024 root instances"),
            ("device_sched_mode", "runtime", SCHED_MODES, "FIFO, L2 affinity, fair, both"),
            ("cube_l1_reuse_setting", "pass", [{-1: n} for n in L1_REUSE] if "cube_tile" in kinds
             else (), "merge 1 to 8 cube subgraphs that share a GM->L1 load"),
            ("cube_nbuffer_setting", "pass", [{-1: n} for n in L1_REUSE] if "cube_tile" in kinds
             else (), "merge 1 to 8 isomorphic cube subgraphs"),
            ("vec_nbuffer_setting", "pass", [{-1: n} for n in VEC_NBUFFER]
             if "vec_tile" in kinds else (), "merge 1 to 4 isomorphic vector subgraphs")):
        if values:
            current = _current(kernel, group, name)
            dims.append(Dimension(name, current, _with_current(current, list(values)), rule))
    return dims


def _sites(kernel: Any) -> dict:
    """The tile-shape call sites the last call's trace passes, in trace order."""
    if kernel.last_call is None:
        raise PyptoValueError(f"kernel '{kernel.__name__}': the search space comes from the "
                              f"kernel's last call; call it once first")
    from pypto.toolkit.whatif import rerun
    cache, kernel.use_cache = kernel.use_cache, False   # a fresh trace passes every site
    try:
        with knob_state.discovering() as found:
            rerun(kernel, {})
    finally:
        kernel.use_cache = cache
    return found


def _addresses(sites: dict) -> dict[str, str]:
    """path -> how a knob names it: the file name, or the full path when two share it."""
    paths = {path for _, path, _ in sites}
    base = {p: os.path.basename(p) for p in paths}
    clash = {b for b in base.values() if list(base.values()).count(b) > 1}
    return {p: (p if b in clash else b) for p, b in base.items()}


def _vec_dimension(address: str, dims: tuple[int, ...]) -> Dimension:
    options = []
    for i, d in enumerate(dims):
        if i < len(dims) - 2:
            options.append((d,))
            continue
        sizes = [d * f // 4 for f in SCALES if d * f % 4 == 0 and d * f >= 4]
        if i == len(dims) - 1:
            sizes = [s for s in sizes if s == d or s % LAST_DIM_MULTIPLE == 0]
        options.append(tuple(dict.fromkeys(sizes)))
    import itertools
    import math
    # nearest first: a descent tries x2 and x1/2 before x4 and x1/4
    candidates = sorted((tuple(c) for c in itertools.product(*options)),
                        key=lambda c: sum(abs(math.log2(a / b)) for a, b in zip(c, dims)))
    return Dimension(address, tuple(dims), _with_current(tuple(dims), candidates),
                     f"last two dims x 1/4 .. 4, the last a multiple of "
                     f"{LAST_DIM_MULTIPLE} elements")


def _cube_dimension(address: str, tile: Any) -> Dimension:
    current = (tuple(tile.m), tuple(tile.k), tuple(tile.n), tile.enable_split_k)
    candidates = [(m, k, n, False) for m, k, n in CUBE_STARTS]
    candidates.append(current[:3] + (not current[3],))
    return Dimension(address, current, _with_current(current, candidates),
                     "the matmul guide's recommended starts, and split-K toggled")


def _current(kernel: Any, group: str, name: str) -> Any:
    """The option's value for the kernel: its decorator's, else the scope's, else the
    declared default (a value set inside the body is not seen)."""
    from pypto import _config
    from pypto.frontend.options import lookup
    key = f"{group}.{name}"
    return kernel._options_scope().get(key, lookup(key, _config.default(group, name)))


def _with_current(current: Any, candidates: list) -> tuple:
    """The candidates with the current value first, each once."""
    out = [current]
    for c in candidates:
        if c not in out:
            out.append(c)
    return tuple(out)
