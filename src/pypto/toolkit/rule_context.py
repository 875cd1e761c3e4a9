"""What the advisor's rules read, computed once per trace (`RuleContext`: the tasks as columns,
the core tasks by leaf, the control AICPU's window builds), and the measures several rules
share: the busy-core curve, the union of task intervals, the ready-but-idle gap before each
task. Its own module so that each rule reads a narrow, named context rather than the advisor's
internals.
"""
from __future__ import annotations

import bisect
from functools import cached_property
from itertools import accumulate, compress
from operator import methodcaller

import numpy as np

from pypto.profiling.swimlane import SwimlaneData
from pypto.profiling.trace_columns import grouped
from pypto.toolkit.findings import Analysis
from pypto.toolkit.identity import leaves

SHOWN_TASKS = 20                # task names kept per advice
STARTS_BUILD = methodcaller("startswith", "build window")


class RuleContext:
    """What several rules need, computed once: the tasks as columns (lists for the values a
    rule reads one at a time), the core tasks by leaf as index arrays."""

    def __init__(self, data: SwimlaneData, analysis: Analysis):
        self.data, self.a = data, analysis
        self.span = analysis.span
        self.tasks = tasks = data.task_columns
        self.start, self.end, self.dur = (x.tolist() for x in (tasks.start, tasks.end, tasks.dur))
        self.kinds = data.kind_of(tasks.lane)
        self.n_aic = len(data.lanes_of("aic"))
        self.n_aiv = len(data.lanes_of("aiv"))
        self.cores = np.flatnonzero(data.on(tasks.lane, "aic", "aiv"))
        keys = leaves(tasks)[0]
        self.leaf = {k: self.cores[at] for k, at in grouped([keys[i] for i in self.cores.tolist()])}
        self.leaf_name = {lf.key: lf.name for lf in analysis.leaves}

    def leaves_of(self, kind: str) -> list[tuple[str, np.ndarray]]:
        return sorted(((k, ts) for k, ts in self.leaf.items() if self.kinds[ts[0]] == kind),
                      key=lambda kt: kt[0])

    def of_kind(self, kind: str) -> np.ndarray:
        return self.cores[self.kinds[self.cores] == kind]

    def names(self, tasks: np.ndarray) -> tuple[tuple[str, ...], int]:
        """The names of (up to SHOWN_TASKS of) `tasks`, earliest first, and their count."""
        first = tasks[np.lexsort((tasks, self.tasks.start[tasks]))[:SHOWN_TASKS]]
        return tuple(self.tasks.name[i] for i in first.tolist()), len(tasks)

    def time_range(self, tasks: np.ndarray) -> tuple[float, float]:
        return min(self.tasks.start[tasks].tolist()), max(self.tasks.end[tasks].tolist())

    def total_dur(self, tasks: np.ndarray) -> float:
        """The tasks' durations added in their order."""
        return sum(self.tasks.dur[tasks].tolist())

    def mean_dur(self, tasks: np.ndarray) -> float:
        return self.total_dur(tasks) / len(tasks)

    @cached_property
    def builds(self) -> list[int]:
        """The control AICPU's "build window" events (positions in the AICPU columns)."""
        names = self.data.aicpu_columns.name
        return list(compress(range(len(names)), map(STARTS_BUILD, names)))


def pct(x: float, whole: float) -> float:
    return 100.0 * x / whole if whole > 0 else 0.0


class BusyCurve:
    """Integral of the number of busy lanes over time, to ask "how many cores were busy, on
    average, during [a, b]" in O(log n)."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray):
        times, at = np.unique(np.concatenate([starts, ends]), return_inverse=True)
        delta = np.zeros(len(times), dtype=np.int64)
        np.add.at(delta, at.reshape(-1)[:len(starts)], 1)
        np.add.at(delta, at.reshape(-1)[len(starts):], -1)
        level = np.cumsum(delta)
        self.times, self.level = times.tolist(), level.tolist()
        # area up to each time: one product per step, added in time order
        steps = level[:-1] * np.diff(times)
        self.area = list(accumulate([0.0, *steps.tolist()])) if len(times) else []

    def integral(self, x: float) -> float:
        i = bisect.bisect_right(self.times, x) - 1
        return 0.0 if i < 0 else self.area[i] + self.level[i] * (x - self.times[i])


def union(c: RuleContext, tasks: np.ndarray) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for t in sorted(tasks.tolist(), key=c.start.__getitem__):
        if out and c.start[t] <= out[-1][1]:
            out[-1][1] = max(out[-1][1], c.end[t])
        else:
            out.append([c.start[t], c.end[t]])
    return [(a, b) for a, b in out]


def lane_gaps(c: RuleContext) -> tuple[np.ndarray, np.ndarray]:
    """Idle time on its lane right before each core task while the task was ready (none for a
    lane's first task), and which tasks have one: the per-task overhead merging saves. Time
    spent waiting for a predecessor (from the trace's flows) is not counted: merging cannot
    save it."""
    tasks = c.tasks
    before = c.data.previous_on_lane()
    src, dst = c.data.flow_columns.matched()
    latest = np.full(len(tasks), -np.inf)
    np.maximum.at(latest, dst, tasks.end[src])
    has = np.zeros(len(tasks), dtype=bool)
    has[c.cores] = before[c.cores] >= 0
    # ready: the previous task's end, or a later predecessor end (a tie: the previous task's)
    ready = np.maximum(latest, tasks.end[np.maximum(before, 0)])
    return np.maximum(tasks.start - ready, 0.0), has
