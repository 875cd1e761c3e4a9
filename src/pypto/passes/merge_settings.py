"""What the user asks of the breadth merges: a block's settings and how a group reads them.

Its own module because it is the user's vocabulary, not the merging: which key of a setting
dict names which group, and where a block's settings come from. `merge` asks it one question
per group (`resolve`: a count or auto) and never parses keys itself.

Keys of a setting dict: int keys (0.2.0) — `k >= 0` is group k, `-1` the default of every group,
`-2` only a mode flag (see `merge`); or str keys (HEAD) — "func{magic}_{group}", "DEFAULT"
(= -1), or a semantic label (`set_semantic_label`). Resolution: exact group key > labels (the
max of the labels that hit; for the vec/cube NBuffers any op of the group, for L1 reuse any op
of the subgraph itself) > default > auto. A key that matches nothing is ignored silently.

Settings: each op keeps the merge pass options current when it was recorded
(`Operation.pass_options`, see _config.MERGE_OPTION_KEYS); a block uses those of its last op, so
a `set_pass_options` inside a loop body (before its ops) applies to that loop's roots only. Keys
the op did not record fall back to the options current at compile time (`current_options`),
then to the defaults (`mg_*` bounds from the machine spec's partition section).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

from pypto.machine.spec import MachineSpec


@dataclass(frozen=True)
class MergeSettings:
    vec_nbuffer: dict = field(default_factory=dict)
    cube_l1_reuse: dict = field(default_factory=dict)
    cube_nbuffer: dict = field(default_factory=lambda: {-1: 1})
    copyin_upper_bound: int = 104857600
    vec_parallel_lb: int = 48
    aic_cores: int = 24
    l1_bytes: int = 524288   # L1 per AIC: a load merged subgraphs share must fit it whole
    magic: int = 0  # the block's index in Program.blocks(): "func{magic}_{group}" keys


class GroupInfo(NamedTuple):
    group: int   # hashorder in this pass's numbering: the int key of the setting
    key: str     # the same group as a HEAD string key, "func{magic}_{group}"
    size: int    # members of the group before this pass merged (PyPTO's subGraphCount)
    merged: int  # this pass's subgraphs held by the call (1 = not merged)


def group_key(magic: int, group: int) -> str:
    """The HEAD-style string key of a group: "func{magic}_{group}"."""
    return f"func{magic}_{group}"


def block_settings(block: Any, spec: MachineSpec, current: dict[str, Any],
                   magic: int) -> MergeSettings:
    """The settings of one block: its last op's recorded options, else `current`, else the
    defaults (machine spec for the two bounds)."""
    recorded = block.ops[-1].pass_options if block.ops else {}

    def get(k: str, default: Any) -> Any:
        v = recorded[k] if k in recorded else current.get(k)
        return default if v is None else v

    return MergeSettings(
        get("vec_nbuffer_setting", {}), get("cube_l1_reuse_setting", {}),
        get("cube_nbuffer_setting", {-1: 1}),
        get("mg_copyin_upper_bound", spec.partition["mg_copyin_upper_bound"]),
        max(1, get("mg_vec_parallel_lb", spec.partition["mg_vec_parallel_lb"])),
        spec.aic, spec.l1, magic)


def _count(v: Any) -> tuple[int, str | None]:
    return v if isinstance(v, tuple) else (v, None)


def resolve(setting: dict, group: int, labels: Iterable[str],
            magic: int) -> tuple[int | None, str | None]:
    """(merge count or None for auto, L1 side or None) of `group` under `setting`."""
    if not setting:
        return None, None
    if all(isinstance(k, int) for k in setting):
        for k in (group, -1):
            if k in setting:
                return _count(setting[k])
        return None, None
    key = group_key(magic, group)
    if key in setting:
        return _count(setting[key])
    hits = [_count(setting[lb]) for lb in labels if lb and lb in setting]
    if hits:
        return max(hits, key=lambda h: h[0])
    if "DEFAULT" in setting:
        return _count(setting["DEFAULT"])
    return None, None
