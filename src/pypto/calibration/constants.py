"""The machine constants a calibration may change, by their dotted names in `a2a3.toml`.

`FITTED` are the constants `docs/calibration.md` marks fitted (set from a measured row, not
stated by a source), the per-op vector costs and the cube rate: a board trace may move them
by default. Every other number of a preset is sourced and stays unless the user frees it by
name (`--free dma.gm_to_ub.bw`). A constant is fitted as a factor on its value in log space,
so it stays positive and a 10 % change means the same at any size.
"""
from __future__ import annotations

import copy
from typing import Any, Iterable

from pypto.errors import PyptoValueError

# dotted name -> what it is; fitted by default
FITTED: dict[str, str] = {
    "dma.shape.burst_overhead_bytes": "bytes each vector-core burst occupies beyond its data",
    "dma.shape.nd2nz_row_bytes": "bytes each ND row occupies reordering into L1's fractals",
    "aicpu.resolve_cycles_per_edge": "a scheduler thread resolving one successor",
    "aicpu.window_base_cycles": "the control thread's fixed cost of a window build",
    "aicpu.instance_cycles": "a window build, per root-function instance",
    "aicpu.edge_cycles": "a window build, per dependency across instances",
    "aicpu.launch_cycles": "the hand-off of a built window to the schedulers",
    "aicpu.start_cycles": "host launch before the first build (a host timer's E2E only)",
    "aicpu.fairness_cycles_per_dispatch": "the extra dispatch work of device_sched_mode 2/3",
    "cube.mac_per_cycle_fp16": "the cube rate (its efficiency): MACs per cycle",
    **{f"vector.cycles_per_repeat.{op}": f"vector cycles per repeat of '{op}'"
       for op in ("unary", "binary", "exp_fp32", "exp_fp16", "div", "fma", "reduce_full",
                  "reduce_full_fp32_add", "gather")},
}


def get(table: dict, name: str) -> Any:
    """The value at dotted `name` in nested `table` (None when absent)."""
    node: Any = table
    for part in name.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def with_values(table: dict, values: dict[str, float]) -> dict:
    """A copy of `table` with the dotted `values` set (whole-number constants stay whole when
    their new value is)."""
    out = copy.deepcopy(table)
    for name, value in values.items():
        *path, last = name.split(".")
        node = out
        for part in path:
            node = node[part]
        node[last] = value
    return out


def chosen(table: dict, free: Iterable[str] = (), fix: Iterable[str] = ()) -> list[str]:
    """The constants to fit: the fitted ones the machine has, plus `free`, less `fixed`;
    each must be a positive number of the machine (the error names the culprit)."""
    names = [n for n in FITTED if _number(get(table, n))]
    for name in free:
        value = get(table, name)
        if not _number(value):
            raise PyptoValueError(f"--free {name}: the machine has no number '{name}' "
                                  f"(dotted names as in a2a3.toml, e.g. dma.gm_to_ub.bw)")
        if value <= 0:
            raise PyptoValueError(f"--free {name}: its value is {value}; only a positive "
                                  f"constant can be fitted (give it a starting value in a "
                                  f"machine TOML and pass that as --machine)")
        if name not in names:
            names.append(name)
    fixed = set(fix)
    unknown = fixed - set(names)
    if unknown:
        raise PyptoValueError(f"--fix {', '.join(sorted(unknown))}: not among the constants "
                              f"being fitted ({', '.join(names)})")
    return [n for n in names if n not in fixed and get(table, n) > 0]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
