"""The tuner's search space: every knob of one kernel call, each with the candidates a
practitioner would try (the tuning guide's rules), found without editing the kernel.

`search_space(kernel)` traces the kernel's last call once more with `knobs.discovering` on,
which notes every knob site the trace passes (the `set_vec_tile_shapes` /
`set_cube_tile_shapes` / `pypto.loop` / `pypto.loop_unroll` /
`set_pass_options(sg_set_scope=...)` calls by file and line, and the tensor parameters), then
adds the kernel-wide options. Each `Dimension` is one knob address of `frontend.knobs` with its
current value, its candidates (the current one first) and the rule that made them:
- a vector TileShape site: each of its last two dims x 1/4, 1/2, 1, 2 or 4, the last kept a
  multiple of 16 elements (32 bytes even at 2-byte types, compiler_runtime §3 alignment) and
  every size a power-of-two multiple of the current one (divisibility);
- a cube TileShape site: the matmul guide's recommended starts (compiler_runtime §3:
  `[128,128],[64,256],[256,256]`, `[256,256],[64,256],[128,128]`, `[128,128],[128,512],
  [128,128]`) and the current tiles with split-K toggled;
- an unroll site: no unroll; one factor k = 2, 4, .., 64 (up to twice the current largest
  factor when that is more; never more than a static trip count, nor more copies of the body
  than fit `UNROLLED_OPS` traced ops), which a `pypto.loop` takes
  as [k] when k divides a static trip count and else as [k, 1] so that no copy runs empty
  (tuning case 04); and the tier ladders [h, h/4, h/16, .., >= 2] (with 1 for a
  `pypto.loop`; `loop_unroll` adds 1 itself) for h the current largest factor, its half and
  its double (16 and 64 when it has none); with several tiers, also the largest tier halved
  and doubled, the others kept;
- an `sg_set_scope` site (a `set_pass_options` call that passes one): its value, -1
  (automatic merging) and a scope id no op of the kernel uses, one per site: at a -1 site
  that forces the ops recorded after it, up to the next `sg_set_scope` call, into one
  subgraph (tuning case 09);
- `stitch_function_max_num` 16 .. 1024, `device_sched_mode` 0 .. 3, and, when the kernel has
  cube sites, `cube_l1_reuse_setting` and `cube_nbuffer_setting` {-1: 1, 2, 4, 8}; when it
  has vector sites, `vec_nbuffer_setting` {-1: 1, 2, 4};
- `cache_policy@PARAM` for every tensor parameter, its policy and the other of DEFAULT /
  NONE_CACHEABLE, only when the call's tensors outgrow the machine's L2: bypassing L2 pays by
  keeping a reused tensor resident while streamed data passes (tuning case 14d), and when
  everything fits it can only lose hits, so the dimension would spend evaluations for nothing.
Candidates are not filtered by buffer capacity here: the compile that precedes every
simulation checks UB / L1 / L0 and a candidate that does not fit fails there, cheaply, and is
recorded as infeasible (`search`).
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any, Iterator

from pypto.errors import PyptoValueError
from pypto.frontend import knobs as knob_state
from pypto.machine.memory import l2_kept

STITCH = (16, 32, 64, 128, 256, 512, 1024)
SCHED_MODES = (0, 1, 2, 3)
L1_REUSE = (1, 2, 4, 8)
VEC_NBUFFER = (1, 2, 4)
CUBE_STARTS = (((128, 128), (64, 256), (256, 256)), ((256, 256), (64, 256), (128, 128)),
               ((128, 128), (128, 512), (128, 128)))
LAST_DIM_MULTIPLE = 16
SCALES = (1, 2, 4, 8, 16)   # x 1/4, 1/2, 1, 2, 4 of a vector tile dim
UNROLL_LIMIT = 64            # the largest single unroll factor tried (or twice the current)
# The most ops an unroll candidate may trace per root function (factor x the ops of one
# iteration, nested loops included): the trace, compile and plan of a setting grow with its
# unrolled body, and glm attention's 84-op loop unrolled 64-fold took 6.7 GB in one worker.
UNROLLED_OPS = 512


@dataclass(frozen=True)
class Dimension:
    """One knob of the search: its address, current value, candidates (current first)."""

    knob: str
    current: Any
    candidates: tuple
    rule: str


def search_space(kernel: Any) -> list[Dimension]:
    """The knobs of `kernel`'s last call (see the module docstring)."""
    sites, program = _sites(kernel)
    calls = {s: v for s, v in sites.items() if s[0] in knob_state.SITE_KINDS}
    names = _addresses(calls)
    fresh = _fresh_scope(program, sites)
    dims = []
    for site, value in calls.items():
        kind, path, line = site
        address = f"{kind}@{names[path]}:{line}"
        if kind == "unroll":
            dim = _unroll_dimension(address, value, *sites.notes[site],
                                    ops=_loop_ops(program, path, line))
            if len(dim.candidates) > 1:   # (a loop of one iteration has nothing to unroll)
                dims.append(dim)
        elif kind == "sg_scope":
            dims.append(_scope_dimension(address, value, next(fresh)))
        else:
            dims.append(_vec_dimension(address, value) if kind == "vec_tile"
                        else _cube_dimension(address, value))
    kinds = {kind for kind, _, _ in calls}
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
    return dims + _policy_dimensions(kernel, sites)


def _sites(kernel: Any) -> tuple[knob_state.Found, Any]:
    """The knob sites the last call's trace passes, in trace order, and its program."""
    if kernel.last_call is None:
        raise PyptoValueError(f"kernel '{kernel.__name__}': the search space comes from the "
                              f"kernel's last call; call it once first")
    args, kwargs = kernel.last_call
    with knob_state.discovering() as found:   # a fresh trace passes every site
        program = kernel.evaluate(*args, fresh=True, **kwargs).program
    return found, program


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


def _loop_ops(program: Any, path: str, line: int) -> float:
    """Ops per iteration of the loop the call at `path`:`line` made (0 if not found)."""
    for lp in program.loops() if program is not None else ():
        if lp.loc is not None and lp.loc.line == line and \
                os.path.normpath(os.path.abspath(lp.loc.file)) == path:
            return lp.ops_per_iteration()
    return 0.0


def _unroll_dimension(address: str, current: tuple[int, ...] | None, call: str,
                      trips: int | None, ops: float = 0.0) -> Dimension:
    plain = call == "pypto.loop"
    top = max((f for f in current or () if f > 1), default=0)
    limit = max(UNROLL_LIMIT, 2 * top)
    if ops:   # a big body: fewer copies (UNROLLED_OPS), the current setting always kept
        limit = max(top, min(limit, int(UNROLLED_OPS // ops)))
    sizes = [1 << i for i in range(1, limit.bit_length()) if trips is None or 1 << i <= trips]
    candidates: list = [None]
    for k in sizes:
        candidates.append((k,) if not plain or (trips is not None and trips % k == 0)
                          else (k, 1))
    for head in (top, top // 2, 2 * top) if top else (16, 64):
        if head in sizes:
            ladder = tuple(head >> s for s in range(0, head.bit_length(), 2) if head >> s >= 2)
            candidates.append(ladder + ((1,) if plain else ()))
    rest = tuple(f for f in current or () if f < top)
    if len(rest) > 1 or (rest and not plain):   # tiers: the largest halved, doubled
        candidates += [(h,) + tuple(f for f in rest if f < h) for h in (top // 2, 2 * top)
                       if h in sizes]
    if not plain:   # loop_unroll adds the 1-tier itself: [64, 16, 4, 1] is [64, 16, 4]
        tiers = {_tiers(current): current}
        for c in candidates:
            tiers.setdefault(_tiers(c), c)
        candidates = list(tiers.values())
    return Dimension(address, current, _with_current(current, candidates),
                     f"{call} unroll_list: none, one factor 2 .. {limit} (copies of the "
                     f"body within {UNROLLED_OPS} traced ops), tier ladders x 1/4 "
                     f"from the largest factor, its half and its double, the largest tier "
                     f"halved and doubled")


def _tiers(unroll: tuple[int, ...] | None) -> tuple[int, ...]:
    return tuple(f for f in unroll or () if f > 1)


def _scope_dimension(address: str, current: Any, fresh: int) -> Dimension:
    return Dimension(address, current, _with_current(current, [-1, fresh]),
                     "the call's scope id, -1 (automatic merging), an id no op uses")


def _fresh_scope(program: Any, sites: dict) -> Iterator[int]:
    """Scope ids no op of `program` and no sg_set_scope site uses, one per call."""
    used = [0]
    for block in program.blocks():
        used += [op.scope[0] if isinstance(op.scope, tuple) else op.scope for op in block.ops]
    used += [v[0] if isinstance(v, tuple) else v for (k, _, _), v in sites.items()
             if k == "sg_scope"]
    return itertools.count(max(used) + 1)


def _policy_dimensions(kernel: Any, sites: dict) -> list[Dimension]:
    """A cache policy per tensor parameter, when the call's tensors outgrow L2."""
    bound, _, _ = kernel.bind(*kernel.last_call)
    footprint = sum(b.array.nbytes for b in bound)
    memory = kernel.last_compiled.spec.memory   # what L2 keeps: above it a working set streams
    l2 = l2_kept(memory) if "l2_capacity" in memory else float("inf")
    if footprint <= l2:
        return []
    return [Dimension(knob_state.address(site), current,
                      _with_current(current, ["DEFAULT", "NONE_CACHEABLE"]),
                      f"bypass L2 (the call's {footprint / 2**20:,.0f} MiB outgrow its "
                      f"{l2 / 2**20:,.0f} MiB)")
            for site, current in sites.items() if site[0] == "cache_policy"]


def _current(kernel: Any, group: str, name: str) -> Any:
    """The option's value for the kernel: its decorator's, else the scope's, else the
    declared default (a value set inside the body is not seen)."""
    from pypto import _config
    from pypto.frontend.options import lookup
    key = f"{group}.{name}"
    return kernel.options().get(key, lookup(key, _config.default(group, name)))


def _with_current(current: Any, candidates: list) -> tuple:
    """The candidates with the current value first, each once."""
    out = [current]
    for c in candidates:
        if c not in out:
            out.append(c)
    return tuple(out)
