"""The run's tasks, compacted so the graph page can list who executed an op.

Takes `merged_swimlane.json` (ours: task args carry `root`, `call`, `leaf`, `sim_task_id`) →
`{"roots": [...], "leaves": [...], "rows": [[sim_task_id, root, call, leaf, start, dur], ...]}`
with root and leaf as indices into the name lists and times in microseconds. A PyPTO-written
trace has no such args and gives no rows: its tasks cannot be tied to our dumps.
"""
from __future__ import annotations

import os
from typing import Any

from pypto.toolkit.trace import load

SWIMLANE = "merged_swimlane.json"


def task_index(directory: str) -> dict[str, Any] | None:
    """None when the folder holds no swimlane (compiled with runtime_debug_mode off)."""
    path = os.path.join(directory, SWIMLANE)
    if not os.path.exists(path):
        return None
    data = load(path)       # (a ToolkitError naming the file when it is not a trace)
    roots: dict[str, int] = {}
    leaves: dict[str, int] = {}
    rows = []
    for t in data.tasks:
        a = t.args
        if "sim_task_id" not in a or "call" not in a:
            continue
        r = roots.setdefault(str(a.get("root")), len(roots))
        lf = leaves.setdefault(str(a.get("leaf")), len(leaves))
        rows.append([a["sim_task_id"], r, a["call"], lf, round(t.start, 4), round(t.dur, 4)])
    rows.sort()
    return {"roots": list(roots), "leaves": list(leaves), "rows": rows}
