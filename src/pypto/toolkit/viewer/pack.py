"""Pack a parsed swimlane into the compact, columnar form the viewer page embeds.

Takes a `SwimlaneData` → a JSON-able dict: lanes in display order, one array per task field
(lane, start, dur and string-table indices for name / leaf / root / label), every `args` key as
one column (numbers kept as numbers, anything else interned in the run's string table, -1 or
null where a task lacks the key) and the flows as two index arrays. Keeps: task `i` of the page
is `data.tasks[i]` for `i < n_core`, then the AICPU events in order, so flow indices need no
remapping. Columns instead of one object per task keep the page small and let the browser load
them straight into typed arrays; nothing of the raw trace text is kept.
"""
from __future__ import annotations

import json
import re
from typing import Any

from pypto.profiling.swimlane import SwimlaneData, TaskEvent

# display order of lane kinds, and the group each kind is shown under
_KIND_ORDER = {"aic": 0, "aiv": 1, "hub": 2, "fake": 3, "aicpu": 4, "other": 5}
_HASH = {key: re.compile(rf"\b{key}:(\d+)") for key in ("leafHash", "rootHash")}


class _Strings:
    """An interning string table: equal strings share one index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.table: list[str] = []

    def __call__(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.table)
            self.table.append(s)
        return i


def _function(task: TaskEvent, key: str, hash_key: str) -> str:
    """Our `leaf`/`root` arg, else PyPTO's leafHash/rootHash from the event hint, else ""."""
    value = task.args.get(key)
    if value is not None:
        return str(value)
    m = _HASH[hash_key].search(str(task.args.get("event-hint", "")))
    return f"{hash_key}:{m.group(1)}" if m else ""


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _arg_columns(events: list[TaskEvent], strings: _Strings) -> list[dict[str, Any]]:
    """One column per args key in first-seen order: {"k", "num": [...]} or {"k", "str": [...]}."""
    keys: dict[str, None] = {}
    for e in events:
        keys.update(dict.fromkeys(e.args))
    cols = []
    for key in keys:
        values = [e.args.get(key) for e in events]
        if all(v is None or _is_number(v) for v in values):
            cols.append({"k": key, "num": values})
            continue
        ids = [-1 if key not in e.args else
               strings(v if isinstance(v, str) else json.dumps(v, sort_keys=True))
               for e, v in zip(events, values)]
        cols.append({"k": key, "str": ids})
    return cols


def pack(data: SwimlaneData, title: str) -> dict[str, Any]:
    """The page data of one run (see the module docstring)."""
    lanes = sorted(data.lanes.values(),
                   key=lambda ln: (_KIND_ORDER[ln.kind], ln.number is None, ln.number or 0, ln.tid))
    lane_pos = {ln.tid: i for i, ln in enumerate(lanes)}
    events = data.tasks + data.aicpu
    strings = _Strings()
    label = [strings(e.label) for e in events]
    return {
        "title": title,
        "lanes": [[ln.name, ln.kind] for ln in lanes],
        "n_core": len(data.tasks),
        "lane": [lane_pos[e.lane] for e in events],
        "start": [e.start for e in events],
        "dur": [e.dur for e in events],
        "name": [strings(e.name) for e in events],
        "leaf": [strings(_function(e, "leaf", "leafHash")) for e in events],
        "root": [strings(_function(e, "root", "rootHash")) for e in events],
        "label": label,
        "args": _arg_columns(events, strings),
        "flow_src": [f.src for f in data.flows if f.src is not None and f.dst is not None],
        "flow_dst": [f.dst for f in data.flows if f.src is not None and f.dst is not None],
        "strings": strings.table,
        "generator": data.generator,
        "kernel": str(data.other.get("kernel", "")),
    }
