"""The swimlane events of one simulated run as columns, computed once from a `SimResult`.

Takes a `machine.result.SimResult` → a `RunColumns`: the lanes, the task X events in file order
(one list per field; each args key as one `ArgColumn` holding both its JSON text and the value
the viewer keys it by, `task_arg_columns`), the AICPU X events, the flows as task positions
(the direct dependencies: an edge another path implies is left out, `task_edges`), the counter
samples (`ready_counters`). Times are whole ns (`trace_encoding.time_units`); args hold nothing
another field gives (the core index is the lane's, cycles are ts x clock_mhz). The args are all
of a task's keys, as the viewer and the reader see them; the file leaves out or shares what the
reader restores (`swimlane_writer`).
The JSON writer (`swimlane_writer`), the viewer page (`toolkit.viewer.pack.pack_run`) and the
reports (`pred_ends`) all read these columns, so nothing is computed twice and no per-event
dict is built on the way to the files. Keeps: every value is
the one `swimlane`'s module docstring specifies; the order is the file's order.

NOTE: columns are built with `map` over attribute getters and bound methods (C loops) rather
than one Python loop per task: a run has ~10k tasks, ~100k flows and ~50k counter samples.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from pypto._version import __version__
from pypto.machine.result import AicpuRun, SimResult, TaskRun
from pypto.profiling.ready_counters import ready_counters
from pypto.profiling.swimlane import (aicpu_lane_name, core_lane, core_lane_number, jsonable,
                                      lane_tid)
from pypto.profiling.task_arg_columns import ArgColumn, task_arg_columns
from pypto.profiling.task_edges import direct_flows, latest_pred_ends
from pypto.profiling.trace_encoding import US_DIGITS, UNITS_PER_US, json_numbers, time_units


@dataclass
class AicpuEvent:
    """One AICPU X event (us), its args in file key order."""

    tid: int
    ts: float
    dur: float
    name: str
    args: dict[str, Any]


@dataclass
class RunColumns:
    """The swimlane of one run (see the module docstring); task positions index `runs`."""

    result: SimResult
    lanes: list[tuple[int, str]]            # (tid, name) of every declared lane, in order
    runs: list[TaskRun]                     # the task X events in file order
    tid: list[int]
    ts: list[float]
    dur: list[float]
    name: list[str]
    ts_json: list[str]                      # ts and dur as JSON, of the tasks then AICPU events
    dur_json: list[str]
    args: dict[str, ArgColumn]              # in the file's key order
    aicpu: list[AicpuEvent]                 # in file order, after the tasks
    flow_src: list[int]                     # flow k: runs[flow_src[k]] -> runs[flow_dst[k]]
    flow_dst: list[int]
    flow_s_ts: list[float]                  # per task: ts of the s ends it is the source of
    counters: tuple[list[float], list[str], list[int]]     # (ts, name, size) in file order
    other: dict[str, Any]
    pred_ends: dict[int, float]             # `latest_pred_ends(result)`, for the reports
    # per leaf function its source lines' shares of its task time (`runtime.line_shares`),
    # written as the shared arg `lines`; None: not known (the trace then has no such table)
    lines: dict[str, list] | None = None

    @property
    def n_events(self) -> int:
        return len(self.runs) + len(self.aicpu)


def run_columns(result: SimResult, lines: dict[str, list] | None = None) -> RunColumns:
    """The columns of `result`; `lines`: `RunColumns.lines`."""
    runs, tids = _in_file_order(result)
    unit = UNITS_PER_US
    start = time_units(list(map(attrgetter("start"), runs)), result.clock_mhz)
    end = time_units(list(map(attrgetter("end"), runs)), result.clock_mhz)
    ts, dur = (start / unit).tolist(), ((end - start) / unit).tolist()
    tasks = list(map(attrgetter("task"), runs))
    names = list(map("{0.window}-{0.instance}-{0.call}-{0.root_index}-{0.leaf_index}({0.label})"
                     .format, tasks))
    aicpu = _aicpu_events(result)
    src, dst = direct_flows(result, runs)
    # s ends 1 ns before the task's end: inside its slice and before the next one of the
    # lane even at Perfetto's resolution (PyPTO puts it FLOW_LEAD_US = 0.1 ns before)
    s_ts = ((end - np.minimum(1, (end - start) // 2)) / unit).tolist()
    other = {"generator": f"openpto {__version__}", "kernel": result.kernel,
             "clock_mhz": result.clock_mhz, "aic": result.aic, "aiv": result.aiv}
    pred_ends = latest_pred_ends(result)
    return RunColumns(result, _lanes(result), runs, tids, ts, dur, names,
                      json_numbers(ts + [e.ts for e in aicpu]),
                      json_numbers(dur + [e.dur for e in aicpu], repeated=True),
                      task_arg_columns(runs, tasks, dur, US_DIGITS), aicpu, src, dst, s_ts,
                      ready_counters(result, pred_ends), other, pred_ends, lines)


def _in_file_order(result: SimResult) -> tuple[list[TaskRun], list[int]]:
    """The tasks as their X events are written (by lane, start, end, then task id), and
    their lanes' tids."""
    tids = [lane_tid(core_lane_number(result, r.task.core, r.core_index)) for r in result.tasks]
    keys = [(tid, r.start, r.end, r.task.id) for tid, r in zip(tids, result.tasks)]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return [result.tasks[i] for i in order], [tids[i] for i in order]


def _lanes(result: SimResult) -> list[tuple[int, str]]:
    lanes = [(lane_tid(n), name) for core, count in (("AIC", result.aic), ("AIV", result.aiv))
             for n, name in (core_lane(result, core, i) for i in range(count))]
    # thread 0 (control) and every scheduler thread the stats announce, idle or not
    sched = int(result.stats.get("sched_threads", 0) or 0)
    threads = sorted({a.thread for a in result.aicpu} | (set(range(sched + 1)) if sched else set()))
    first_cpu = result.aic + result.aiv + 1
    return lanes + [(lane_tid(first_cpu + th), aicpu_lane_name(th)) for th in threads]


def _aicpu_events(result: SimResult) -> list[AicpuEvent]:
    """One X event per AicpuRun, by lane, start, end; ties by content, never by input order."""
    first_cpu = result.aic + result.aiv + 1
    unit = UNITS_PER_US
    start = time_units([a.start for a in result.aicpu], result.clock_mhz)
    end = time_units([a.end for a in result.aicpu], result.clock_mhz)
    events = []
    for a, ts, dur in zip(result.aicpu, (start / unit).tolist(), ((end - start) / unit).tolist()):
        args = {"event-hint": f"{aicpu_lane_name(a.thread)}: {a.name}", "color": "",
                **{str(key): jsonable(v) for key, v in sorted(a.args.items())},
                "thread": a.thread}
        events.append(AicpuEvent(lane_tid(first_cpu + a.thread), ts, dur, a.name, args))
    runs: list[AicpuRun] = result.aicpu
    keys = [(e.tid, a.start, a.end) for e, a in zip(events, runs)]
    order = sorted(range(len(events)), key=keys.__getitem__)
    if any(keys[i] == keys[j] for i, j in zip(order, order[1:])):
        # NOTE: the content key (the event's JSON) is costly: only built when there are ties
        def content(i: int) -> str:
            e = events[i]
            return json.dumps({"args": e.args, "cat": "event", "id": 0, "name": e.name,
                               "ph": "X", "pid": 1, "tid": e.tid, "ts": e.ts, "dur": e.dur},
                              sort_keys=True)
        order = sorted(range(len(events)), key=lambda i: (*keys[i], content(i)))
    return [events[i] for i in order]
