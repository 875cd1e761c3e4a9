"""The scheduling-overhead counters of a run: `SchedOverhead_AIV` / `SchedOverhead_AIC`, how
many cores of each type sit idle while tasks of that type are ready and not yet started.

Takes, per core type, the task slices (start / end times), the type's `ReadyCount_*` series
and its core count → a step series min(idle cores, ready tasks), one sample per change. The
swimlane writer (`ready_counters`, from a `SimResult`) and the toolkit's analysis
(`toolkit.analyses.sched_overhead`, from a parsed trace) both call `idle_while_ready`, so the
file's counters and the analysis's figures are the same numbers by construction.

Its own module because it is the one definition of the measure (the next-gen PyPTO runtime's
`sched_overhead_analysis`: the share of time a core was idle while ready work existed): at
any time, min(idle cores, ready tasks) cores could have run a ready task and did not. "Ready"
is what `ReadyCount_*` counts: in our files every predecessor done and the task not yet
started, so a task in flight to its core (dispatch latency) counts as waiting.
"""
from __future__ import annotations

import numpy as np


def idle_while_ready(starts: np.ndarray, ends: np.ndarray, ready_times: np.ndarray,
                     ready_values: np.ndarray, cores: int) -> tuple[np.ndarray, np.ndarray]:
    """(times, values) of min(idle cores, ready tasks) for one core type: `starts` / `ends`
    of its task slices, its ready counter as samples (`ready_times` ascending; the value
    holds until the next sample, 0 before the first) and its core count. One sample per
    change of value (an implicit 0 before the first); times in the units given."""
    starts, ends = np.asarray(starts), np.asarray(ends)
    ready_times = np.asarray(ready_times)
    ready_values = np.asarray(ready_values, dtype=np.int64)
    times = np.unique(np.concatenate([starts, ends, ready_times]))
    if not len(times):
        return times, np.zeros(0, dtype=np.int64)
    net = np.zeros(len(times), dtype=np.int64)
    np.add.at(net, np.searchsorted(times, starts), 1)
    np.add.at(net, np.searchsorted(times, ends), -1)
    busy = np.cumsum(net)
    last = np.searchsorted(ready_times, times, side="right") - 1
    ready = np.where(last >= 0, ready_values[np.maximum(last, 0)] if len(ready_values) else 0,
                     0)
    value = np.minimum(np.maximum(cores - busy, 0), np.maximum(ready, 0))
    changed = value != np.concatenate([[0], value[:-1]])
    return times[changed], value[changed]


def step_integral(times: np.ndarray, values: np.ndarray, start: float, end: float) -> float:
    """The integral over [start, end] of the step series (`times` ascending, each value held
    until the next sample, 0 before the first)."""
    times = np.asarray(times, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    if not len(times) or end <= start:
        return 0.0
    left = np.clip(times, start, end)
    right = np.clip(np.append(times[1:], max(end, float(times[-1]))), start, end)
    return float(np.dot(values, right - left))
