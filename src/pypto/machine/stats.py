"""The stats of a simulated run (`SimResult.stats`), summed from its task runs.

Keeps: the sums add in task order, so a run's stats do not depend on how its windows were fed.
"""
from __future__ import annotations

from functools import reduce
from operator import add, attrgetter
from typing import Any

import numpy as np

from pypto.machine.result import SimTask, TaskRun


class Tally:
    """The sums behind a run's stats, fed the tasks that ran in task order. NOTE: fed window by
    window while a window's columns are still in cache; the sums add in the same order as one
    loop over all the runs."""

    __slots__ = ("first", "last", "busy_aic", "busy_aiv", "tasks", "tasks_aiv", "empty",
                 "read", "write", "hit", "hbm")

    def __init__(self):
        self.first, self.last = float("inf"), 0.0
        self.busy_aic = self.busy_aiv = 0.0
        self.tasks = self.tasks_aiv = self.empty = 0
        self.read = self.write = self.hit = self.hbm = 0.0

    def add(self, tasks: list[SimTask], kinds: list[int], starts: list[float],
            ends: list[float], hits: list[float], hbms: list[float]) -> None:
        if not tasks:
            return
        first, last = min(starts), max(ends)
        if first < self.first:
            self.first = first
        if last > self.last:
            self.last = last
        self.tasks += len(tasks)
        self.tasks_aiv += sum(kinds)
        busy_aic, busy_aiv, empty = self.busy_aic, self.busy_aiv, self.empty
        read, write = self.read, self.write
        for t, aiv, start, end in zip(tasks, kinds, starts, ends):
            if aiv:
                busy_aiv += end - start
            else:
                busy_aic += end - start
            empty += t.empty
            read += t.mte2_bytes
            write += t.mte3_bytes
        self.busy_aic, self.busy_aiv, self.empty = busy_aic, busy_aiv, empty
        self.read, self.write = read, write
        self.hit = reduce(add, hits, self.hit)
        self.hbm = reduce(add, hbms, self.hbm)

    def add_runs(self, runs: list[TaskRun]) -> None:
        """Feed runs in task order (when the windows did not come in task order)."""
        ran = [r.task for r in runs]
        self.add(ran, [0 if t.core == "AIC" else 1 for t in ran],
                 *(list(map(attrgetter(name), runs))
                   for name in ("start", "end", "l2_hit_bytes", "hbm_bytes")))


def in_order_sum(values: Any) -> float:
    """Python's `sum` of floats, first to last, of a list or a numpy array (an array's running
    sum adds in the same order, where its `.sum()` would pair them)."""
    if isinstance(values, np.ndarray):
        return float(np.add.accumulate(values)[-1]) if len(values) else 0
    return sum(values)


def run_stats(tally: Tally, runs: int, aic: int, aiv: int, build_end: float,
              windows: list[tuple], builds: float, sched: float,
              threads: int, host_start: float = 0.0) -> dict[str, Any]:
    """The stats dict; `windows`: (instances, tasks, cross edges, workspace, why it closed) per window;
    `builds`, `sched`: the summed durations of the control thread's builds and of the
    scheduler threads' records, added in record order from 0 (`in_order_sum`, as every
    core sums them); `host_start`: the
    host's launch and the AICPU's start-up before the first build, which a host-side timer
    sees on top of e2e (the guide's "E2E")."""
    first = tally.first if runs else 0.0
    last = tally.last
    span = max(last - first, 1e-9)
    busy_aic, busy_aiv = tally.busy_aic, tally.busy_aiv
    stats = {
        "kernel_cycles": last - first,
        "e2e_cycles": max(last, build_end),
        "host_launch_cycles": host_start,
        "host_e2e_cycles": host_start + max(last, build_end),
        "tasks": runs,
        "tasks_aic": runs - tally.tasks_aiv,
        "tasks_aiv": tally.tasks_aiv,
        "empty_tasks": tally.empty,
        "utilization": (busy_aic + busy_aiv) / (span * (aic + aiv)),
        "utilization_aic": busy_aic / (span * aic),
        "utilization_aiv": busy_aiv / (span * aiv),
        "gm_read_bytes": tally.read,
        "gm_write_bytes": tally.write,
        "l2_hit_bytes": tally.hit,
        "hbm_read_bytes": tally.hbm,
        "windows": len(windows),
        "instances": sum(w[0] for w in windows),
        "cross_edges": sum(w[2] for w in windows),
        "aicpu_build_cycles": builds,
        "aicpu_sched_cycles": sched,
        "sched_threads": threads,
        "workspace_bytes": max((w[3] for w in windows), default=0),
    }
    reads = stats["gm_read_bytes"]
    stats["l2_hit_ratio"] = stats["l2_hit_bytes"] / reads if reads else 0.0
    return stats
