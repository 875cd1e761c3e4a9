"""What a task of a swimlane is an instance of - its leaf function, stitch window and root
instance - read the same way from our traces and from PyPTO's.

Our traces name these in `args` (`leaf`, `window`, `instance`); PyPTO's carry only the
event-hint (`leafHash`, `rootHash`) and the task name `seqNo-instance-task-rootIndex-psgId(label)`.
Every toolkit analysis goes through these functions so that a rule never depends on which of
the two wrote the file.
"""
from __future__ import annotations

import re

from pypto.profiling.swimlane import TaskEvent

_HINT = re.compile(r"(\w+):\s*(-?\d+)")


def hint_fields(task: TaskEvent) -> dict[str, int]:
    """The integer fields of PyPTO's event-hint (`rootHash`, `leafHash`, `TaskId`, ...)."""
    return {k: int(v) for k, v in _HINT.findall(str(task.args.get("event-hint", "")))}


def leaf_of(task: TaskEvent) -> tuple[str, str]:
    """(key, display name) of the leaf function `task` runs.

    The key is stable across runs of the same kernel (our leaf name, PyPTO's leafHash), so a
    diff can pair leaves; HUB tasks (leafHash 0) are one pseudo-leaf "HUB".
    """
    if "leaf" in task.args:
        name = str(task.args["leaf"])
        return name, name
    hint = hint_fields(task)
    fields = task.fields
    where = f"root{fields[3]}/psg{fields[4]}" if fields else task.name
    label = f"({task.label})" if task.label else ""
    if hint.get("leafHash") == 0:
        return "HUB", "HUB"
    if "leafHash" in hint:
        return f"leafHash:{hint['leafHash']}", where + label
    if fields and "rootHash" in hint:
        return f"rootHash:{hint['rootHash']}/psg{fields[4]}", where + label
    return task.name, task.name


def window_of(task: TaskEvent) -> int | None:
    """The stitch window (PyPTO's seqNo, the devTask) the task was submitted in."""
    args = task.args
    window = args.get("window")
    if isinstance(window, int):
        return window
    window = args.get("seqNo")
    if isinstance(window, int):
        return window
    fields = task.fields
    return fields[0] if fields else None


def instance_of(task: TaskEvent) -> tuple[int, int] | None:
    """(window, root instance) of the task: one iteration of a `pypto.loop` body."""
    window = window_of(task)
    instance = task.args.get("instance")
    if isinstance(instance, int):
        return window, instance
    fields = task.fields
    return (window, fields[1]) if fields and window is not None else None
