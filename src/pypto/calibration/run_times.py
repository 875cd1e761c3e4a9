"""When a run's tasks and window builds happened, by task key: what the features read.

Made from a parsed swimlane (a board's, or our run's the first time, to pair it) or straight
from a simulated run (every re-timing of a calibration: writing and parsing the trace of a
14k-task model cost 2 s, re-timing it 0.1 s). Both give times in us rounded as our trace
writer rounds them (`trace_encoding.time_units`), so a run read either way has the same
features to the bit (tests/calibration/test_calibrate.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pypto.machine.result import SimResult
from pypto.profiling.swimlane import SwimlaneData
from pypto.profiling.trace_encoding import UNITS_PER_US, time_units
from pypto.toolkit.compare import kernel_span
from pypto.toolkit.task_pairs import task_keys

BUILD = "build window "


@dataclass
class RunTimes:
    """Per task key its position in `start` / `end` / `dur` (us); per window number its
    build's duration and shape (instances, cross edges); the core tasks' span; and for our
    runs the end-to-end time a host timer sees (host launch included)."""

    index: dict[tuple, int]
    start: np.ndarray
    end: np.ndarray
    dur: np.ndarray
    builds: dict[int, tuple[float, tuple]]
    build_ends: dict[int, float]
    span: tuple[float, float]
    host_e2e: float | None = None   # us, what a host timer sees (a trace does not say)

    @classmethod
    def of_trace(cls, data: SwimlaneData, index: dict[tuple, int] | None = None) -> RunTimes:
        """`index`: which task stands for each key (default: the trace's own keys; a board's
        tasks are keyed by their partners in our run)."""
        tasks, cpu = data.task_columns, data.aicpu_columns
        if index is None:
            index = {k: t for t, k in enumerate(task_keys(data)) if k is not None}
        inst, edges = cpu.args.values("instances", None), cpu.args.values("cross_edges", None)
        builds, ends = {}, {}
        for i, (name, dur, end) in enumerate(zip(cpu.name, cpu.dur.tolist(), cpu.end.tolist())):
            if name.startswith(BUILD):
                w = int(name[len(BUILD):])
                builds[w], ends[w] = (dur, (inst[i], edges[i])), end
        return cls(index, tasks.start, tasks.end, tasks.dur, builds, ends, kernel_span(data))

    @classmethod
    def of_result(cls, result: SimResult, keys: KeyCache | None = None) -> RunTimes:
        """`keys`: the task keys of an earlier run of the same call, reused when the same
        table rows ran (a re-timing never changes them; making task objects to read them
        cost a 14k-task model 0.6 s per run)."""
        starts, ends = _task_cycles(result)
        key_list = (keys or KeyCache()).of(result)
        index = dict(zip(key_list, range(len(key_list))))
        start, dur = _us(starts, ends, result.clock_mhz)
        end = start + dur
        builds, ends_by_window = {}, {}
        records = [r for r in result.aicpu if r.name.startswith(BUILD)]
        b_start, b_dur = _us([r.start for r in records], [r.end for r in records],
                             result.clock_mhz)
        for r, s, d in zip(records, b_start.tolist(), b_dur.tolist()):
            w = int(r.name[len(BUILD):])
            builds[w] = (d, (r.args.get("instances"), r.args.get("cross_edges")))
            ends_by_window[w] = s + d
        span = (float(start.min()), float(end.max())) if len(start) else (0.0, 0.0)
        host = result.stats.get("host_e2e_cycles")
        return cls(index, start, end, dur, builds, ends_by_window, span,
                   None if host is None else float(result.us(host)))

    def mean_dur(self, members: list[tuple]) -> float:
        return float(np.mean(self.dur[[self.index[k] for k in members]]))

    def dur_error(self, members: list[tuple]) -> float:
        """The relative standard error of `mean_dur`."""
        d = self.dur[[self.index[k] for k in members]]
        return float(np.std(d) / np.mean(d) / np.sqrt(len(d))) if np.mean(d) > 0 else 1.0

    def hops(self, edges: list[tuple]) -> np.ndarray:
        """(a task's start - its last predecessor's end) over `edges` ((task, preds) keys)."""
        i, start, end = self.index, self.start, self.end
        return np.array([start[i[s]] - max(end[i[p]] for p in preds) for s, preds in edges])

    def leads(self, entry: list[tuple]) -> np.ndarray | None:
        """The starts of the `entry` tasks less the end of the first window's build (None:
        the run has no build events)."""
        if 0 not in self.build_ends or not entry:
            return None
        return self.start[[self.index[k] for k in entry]] - self.build_ends[0]

    def build_means(self, shapes: dict[int, tuple[float, tuple]] | None = None
                    ) -> dict[tuple, tuple[float, float]]:
        """Mean build time by shape (instances, cross edges), and its relative standard
        error; a board's builds take the shapes of `shapes` (our run's, by window number: a
        board's trace need not say them)."""
        shapes = self.builds if shapes is None else shapes
        groups: dict[tuple, list[float]] = {}
        for w, (dur, _) in self.builds.items():
            if w in shapes and None not in shapes[w][1]:
                groups.setdefault(shapes[w][1], []).append(dur)
        return {shape: (float(np.mean(d)), float(np.std(d) / np.mean(d) / np.sqrt(len(d))))
                for shape, d in sorted(groups.items())}


class KeyCache:
    """The (window, instance, call) of each task run of one call, kept by the table rows that
    ran (the same in every re-timing of the call)."""

    def __init__(self) -> None:
        self.rows: np.ndarray | None = None
        self.keys: list[tuple] = []

    def of(self, result: SimResult) -> list[tuple]:
        columns = result.columns
        rows = columns.rows if columns is not None else None
        if rows is not None and self.rows is not None and np.array_equal(rows, self.rows):
            return self.keys
        self.keys = [(r.task.window, r.task.instance, r.task.call) for r in result.tasks]
        self.rows = None if rows is None else np.array(rows)
        return self.keys


def _task_cycles(result: SimResult) -> tuple:
    """(starts, ends) in cycles of the task runs, from the columns where the run has them."""
    columns = result.columns
    if columns is not None:
        return columns.start, columns.end
    return [r.start for r in result.tasks], [r.end for r in result.tasks]


def _us(starts: list[float], ends: list[float], clock_mhz: float
        ) -> tuple[np.ndarray, np.ndarray]:
    """(start, duration) in us as our trace writes them: each end rounded to whole ns."""
    s, e = time_units(starts, clock_mhz), time_units(ends, clock_mhz)
    return s / UNITS_PER_US, (e - s) / UNITS_PER_US
