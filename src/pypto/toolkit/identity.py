"""What each task of a swimlane is an instance of - its leaf function, stitch window and root
instance - read the same way from our traces and from PyPTO's.

Our traces name these in `args` (`leaf`, `window`, `instance`); PyPTO's carry only the
event-hint (`leafHash`, `rootHash`) and the task name `seqNo-instance-task-rootIndex-psgId(label)`.
Every toolkit analysis goes through these functions so that a rule never depends on which of
the two wrote the file. They take a trace's task columns and answer for every task at once
(kept with the columns: analyze and the advisor both ask).
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from pypto.profiling.swimlane import name_parts
from pypto.profiling.trace_columns import ABSENT, EventColumns, first_use_codes

_HINT = re.compile(r"(\w+):\s*(-?\d+)")


def hint_fields(hint: Any) -> dict[str, int]:
    """The integer fields of PyPTO's event-hint (`rootHash`, `leafHash`, `TaskId`, ...)."""
    return {k: int(v) for k, v in _HINT.findall(str("" if hint is ABSENT else hint))}


def leaves(tasks: EventColumns) -> tuple[list[str], list[str]]:
    """(key, display name) of the leaf function each task runs.

    The key is stable across runs of the same kernel (our leaf name, PyPTO's leafHash), so a
    diff can pair leaves; HUB tasks (leafHash 0) are one pseudo-leaf "HUB".
    """
    return tasks.cached("leaves", _leaves)


def _leaves(tasks: EventColumns) -> tuple[list[str], list[str]]:
    leaf = tasks.args.values("leaf", ABSENT)
    if ABSENT not in leaf:                          # (ours: every task names its leaf)
        names = list(map(str, leaf))
        return names, names
    fields, brackets = name_parts(tasks)
    hints, colors = (tasks.args.values(k, ABSENT) for k in ("event-hint", "color"))
    pairs = [(str(v), str(v)) if v is not ABSENT else _pypto_leaf(*other) for v, *other in
             zip(leaf, tasks.name, fields, brackets, hints, colors)]
    return [k for k, _ in pairs], [n for _, n in pairs]


def _pypto_leaf(name: str, fields: tuple[int, ...] | None, bracket: str | None, hint: Any,
                color: Any) -> tuple[str, str]:
    """The leaf of a task without our `leaf` arg: from its event-hint and name."""
    hint_of = hint_fields(hint)
    where = f"root{fields[3]}/psg{fields[4]}" if fields else name
    label = bracket if bracket is not None else "" if color is ABSENT else color
    shown = f"({label})" if label else ""
    if hint_of.get("leafHash") == 0:
        return "HUB", "HUB"
    if "leafHash" in hint_of:
        return f"leafHash:{hint_of['leafHash']}", where + shown
    if fields and "rootHash" in hint_of:
        return f"rootHash:{hint_of['rootHash']}/psg{fields[4]}", where + shown
    return name, name


def windows(tasks: EventColumns) -> list[int | None]:
    """The stitch window (PyPTO's seqNo, the devTask) each task was submitted in."""
    def make(t: EventColumns) -> list[int | None]:
        fields = name_parts(t)[0]
        return [w if isinstance(w, int) else s if isinstance(s, int) else
                f[0] if f else None for w, s, f in
                zip(t.args.values("window"), t.args.values("seqNo"), fields)]
    return tasks.cached("windows", make)


def instances(tasks: EventColumns) -> list[tuple[int, int] | None]:
    """(window, root instance) of each task: one iteration of a `pypto.loop` body."""
    def make(t: EventColumns) -> list[tuple[int, int] | None]:
        fields = name_parts(t)[0]
        return [(w, i) if isinstance(i, int) else (w, f[1]) if f and w is not None else None
                for w, i, f in zip(windows(t), t.args.values("instance"), fields)]
    return tasks.cached("instances", make)


def instance_codes(tasks: EventColumns) -> np.ndarray:
    """`instances` as integers: equal (window, root instance) pairs share a code, -1 where a
    task's instance is unknown; what counting and summing per instance index by."""
    def make(t: EventColumns) -> np.ndarray:
        inst = instances(t)
        codes, table = first_use_codes(inst)
        if None in table:
            codes[codes == table.index(None)] = -1
        return codes
    return tasks.cached("instance codes", make)
