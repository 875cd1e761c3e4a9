"""The ready counters of a run: `ReadyCount_AIV` / `ReadyCount_AIC` samples, how many tasks of
each core type are ready (every predecessor done) but not yet running; and from them the
scheduling-overhead counters `SchedOverhead_AIV` / `SchedOverhead_AIC`, how many cores of
that type sat idle while such tasks waited (`overhead_counters`).

Its own module because the counters are a time series derived from the tasks, not an event of
one: each task's ready time (given, else its last predecessor's end, else its window's first
start) and its start become +1 / -1 steps, netted at the file's time resolution.
"""
from __future__ import annotations

from itertools import repeat
from operator import attrgetter

import numpy as np

from pypto.machine.result import SimResult
from pypto.profiling.overhead_counters import idle_while_ready
from pypto.profiling.trace_encoding import UNITS_PER_US, time_units


def _ready_times(result: SimResult, pred_ends: dict[int, float],
                 start: np.ndarray) -> np.ndarray:
    """Cycle at which each task (in `result.tasks` order) became ready: `TaskRun.ready` when
    set, else the end of its last predecessor (at the latest its start), else the first task
    start of its window."""
    runs = result.tasks
    window = np.fromiter(map(attrgetter("task.window"), runs), dtype=np.int64, count=len(runs))
    windows, of_window = np.unique(window, return_inverse=True)
    window_first = np.full(len(windows), np.inf)
    np.minimum.at(window_first, of_window, start)
    latest = np.fromiter(map(pred_ends.get, map(attrgetter("task.id"), runs), repeat(np.nan)),
                         dtype=np.float64, count=len(runs))
    ready = np.where(np.isnan(latest), window_first[of_window], np.minimum(latest, start))
    given = list(map(attrgetter("ready"), runs))
    if given.count(None) != len(given):
        ready[[i for i, g in enumerate(given) if g is not None]] = [
            float(g) for g in given if g is not None]
    return ready


# counter names in their order among samples at one time
_COUNTER_ORDER = {"ReadyCount_AIV": 0, "ReadyCount_AIC": 1, "SchedOverhead_AIV": 2,
                  "SchedOverhead_AIC": 3}


def _step_counter(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(times, values) of a counter driven by +/- changes, one sample per change of value;
    changes at the same time are netted."""
    t, inverse = np.unique(times, return_inverse=True)
    net = np.zeros(len(t), dtype=np.int64)
    np.add.at(net, inverse, deltas)
    changed = net != 0
    return t[changed], np.cumsum(net[changed])


def ready_counters(result: SimResult,
                   pred_ends: dict[int, float]) -> tuple[list[float], list[str], list[int]]:
    """ReadyCount_AIV / _AIC and SchedOverhead_AIV / _AIC samples (us, name, size), by time
    then counter. Changes are netted at the file's time resolution (`time_units`): one sample
    per counter and written time; the overhead counters from the written task times and
    ready counts, as a reader of the file would compute them. NOTE: no ReadyCount_Total (their sum: the reader restores it, `restore_counters`)
    and no BusyCount (cores running a task: any trace viewer shows it, the X slices)."""
    runs = result.tasks
    start = np.fromiter(map(attrgetter("start"), runs), dtype=np.float64, count=len(runs))
    ready = time_units(_ready_times(result, pred_ends, start), result.clock_mhz)
    start = time_units(start, result.clock_mhz)
    end = time_units(np.fromiter(map(attrgetter("end"), runs), dtype=np.float64,
                                 count=len(runs)), result.clock_mhz)
    core = np.array(list(map(attrgetter("task.core"), runs)), dtype=object)
    series: list[tuple[str, np.ndarray, np.ndarray]] = []
    counts = {"AIC": result.aic, "AIV": result.aiv}
    for k in sorted(set(core.tolist())):
        mine = core == k
        up_down = np.repeat([1, -1], int(mine.sum()))
        counted = _step_counter(np.concatenate([ready[mine], start[mine]]), up_down)
        series.append((f"ReadyCount_{k}", *counted))
        series.append((f"SchedOverhead_{k}", *idle_while_ready(
            start[mine], end[mine], *counted, counts.get(k, 0))))
    if not series:
        return [], [], []
    times = np.concatenate([t for _, t, _ in series])
    rank = np.concatenate([np.full(len(t), _COUNTER_ORDER.get(n, 9)) for n, t, _ in series])
    order = np.lexsort((rank, times))               # by time, then counter (stable)
    names = np.concatenate([np.full(len(t), i) for i, (_, t, _) in enumerate(series)])[order]
    label = [n for n, _, _ in series]
    values = np.concatenate([v for _, _, v in series])[order]
    return ((times[order] / UNITS_PER_US).tolist(),
            [label[i] for i in names.tolist()],
            values.tolist())
