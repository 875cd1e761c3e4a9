"""How many tasks share the GM bandwidth over each task's life: one relaxation step toward
the fluid model.

HBM and L2 bandwidth are shared by the transfers in flight (hw_model §5, "L1 shared
bandwidth": processor sharing, the fluid model). The simulator fixes a task's duration when
the task is dispatched, so the share it can give is the one seen then. In a burst the first
tasks see almost nobody and get the whole bandwidth; a task that starts while many run keeps
its small share after they have ended. Both make a burst's timing depend on dispatch order
rather than on how many tasks really overlap.

So `simulate` runs the schedule twice. Pass 1 shares each task's bandwidth with the tasks
running at its dispatch. Pass 2 shares it with `lifetime_sharers`: the time-average number of
tasks that ran during its life in pass 1, itself included.

Why this form (measured on bursts of 24..200 equal HBM-bound AIV tasks,
tests/machine/test_bandwidth_sharing.py):
- the arithmetic mean, not the harmonic one: the harmonic mean is what equal sharing gives a
  transfer inside a FIXED timeline, but at a constant rate the tasks then take bandwidth the
  new timeline does not have and a burst beat the HBM roofline by up to 10 %; the arithmetic
  mean rounds each rate down and kept every burst above it;
- one relaxation pass: more passes oscillate within 2-3 % around the same answer (damping
  converges, but slowly and from below the roofline), for twice the cost each.

Every running task counts as one sharer whatever its traffic; an empty task (no moves) never
counts. The per-core DMA caps of `timing.task_cycles` still apply on top of the share.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from pypto.machine.result import TaskRun


def lifetime_sharers(runs: Sequence[TaskRun], count: int) -> list[float]:
    """Per task id (0..count-1) the time-average number of tasks running during its life,
    itself included (>= 1); 1.0 for tasks that did not run or took no time."""
    out = [1.0] * count
    timed = [r for r in runs if not r.task.empty and r.end > r.start]
    if not timed:
        return out
    starts = np.fromiter((r.start for r in timed), float, len(timed))
    ends = np.fromiter((r.end for r in timed), float, len(timed))
    times = np.concatenate((starts, ends))
    order = np.argsort(times, kind="stable")
    at = times[order]
    running = np.cumsum(np.concatenate((np.ones(len(timed)), -np.ones(len(timed))))[order])
    # the integral of n(t), piecewise constant between consecutive points
    integral = np.concatenate(((0.0,), np.cumsum(running[:-1] * np.diff(at))))
    overlap = np.interp(ends, at, integral) - np.interp(starts, at, integral)
    sharers = np.maximum(overlap / (ends - starts), 1.0)
    for r, n in zip(timed, sharers.tolist()):
        out[r.task.id] = n
    return out
