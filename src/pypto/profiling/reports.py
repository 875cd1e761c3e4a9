"""Text reports of a simulated run: machine statistics, bubble analysis, a one-line summary.

Takes a `machine.result.SimResult` (cycles) - or, for the bubble analysis, a parsed swimlane
(`swimlane.SwimlaneData`, ours or PyPTO's) - and returns text modelled on PyPTO's
`_simulate.stat.report.txt` and `bubble_analysis.log` (shared/reference/swimlane_format.md
sections 2 and 3). Keeps: every number is derived from the result alone, deterministically.

`SimResult.stats` keys read by `stats_report` (all optional; a missing one is derived from the
tasks when possible, else printed as "n/a"):

  kernel_cycles     AIC/AIV span: last task end - first task start (default: from the tasks)
  e2e_cycles        launch to the last event, AICPU included (default: latest end of any task
                    or AICPU event, counted from cycle 0)
  gm_read_bytes     bytes read from GM by the tasks (default: sum of SimTask.mte2_bytes)
  gm_write_bytes    bytes written to GM (default: sum of SimTask.mte3_bytes)
  l2_hit_bytes      GM read bytes served by L2 (default: sum of TaskRun.l2_hit_bytes)
  hbm_bytes         bytes that went to HBM (or hbm_read_bytes; default: sum of
                    TaskRun.hbm_bytes)
  workspace_bytes   GM workspace of the values crossing subgraphs
  windows           stitch windows (device tasks) (default: distinct SimTask.window)
  instances         root-function instances (default: distinct (window, instance))
  sched_threads     AICPU scheduler threads (the control thread comes on top)

Every other scalar (or one-level dict of scalars) in `stats` is listed, sorted, under
"Simulator Statistics", so the report shows whatever the simulator records; task counts,
utilisations and the L2 hit ratio (`tasks*`, `empty_tasks`, `utilization*`, `l2_hit_ratio`) are
re-derived from the tasks and not listed twice.

Bubble analysis (per lane, us): the lane's work window runs from the first task start of the
whole run to the lane's last task end. Each gap before a task is split at the task's ready time
(the latest end of its predecessors): the part before it is "wait predecessor", the rest "wait
schedule" (ready, not yet running: AICPU resolve + dispatch latency). A gap before a task whose
predecessors all ended before the gap began is therefore all schedule wait. On PyPTO's softmax
sample this reproduces the numbers of its `bubble_analysis.log` (AIV_25: 18.61 / 0.000556;
HUB_80: 35.73 / 42.96). Our blocks add "Busy Time" and "Idle Time" (kernel span - busy).
"""
from __future__ import annotations

import heapq
import os
from collections import defaultdict
from dataclasses import dataclass
from functools import reduce
from math import nan
from operator import add
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

# RunNumbers and run_numbers stay importable from here (profiling API); they live in machine
from pypto.machine.result import (RunNumbers, SimResult, TaskRun, percent as _pct,
                                  run_numbers)
from pypto.profiling.swimlane import SwimlaneData, lane_values, task_id
from pypto.profiling.task_edges import latest_pred_ends

_WIDTH = 60                     # PyPTO's report banner width
_LABEL = 49                     # label + dots, then ':' (PyPTO's column)
_CONSUMED = {"kernel_cycles", "e2e_cycles", "gm_read_bytes", "gm_write_bytes", "l2_hit_bytes",
             "hbm_bytes", "hbm_read_bytes", "workspace_bytes", "windows", "instances",
             "sched_threads",
             # re-derived from the tasks and printed in their own rows
             "tasks", "tasks_aic", "tasks_aiv", "empty_tasks", "utilization", "utilization_aic",
             "utilization_aiv", "l2_hit_ratio"}


# ----------------------------------------------------------------------------------------------
# numbers shared by the reports
# ----------------------------------------------------------------------------------------------

def _stat(stats: dict[str, Any], key: str, default: Callable[[], Any]) -> Any:
    """`stats[key]`, else `default()` (a pass over the tasks: only made when needed)."""
    value = stats.get(key)
    return default() if value is None else value


# ----------------------------------------------------------------------------------------------
# statistics report
# ----------------------------------------------------------------------------------------------

def _banner(title: str) -> str:
    return title.center(_WIDTH, "=")


def _row(label: str, value: Any, pct: float | None = None) -> str:
    head = label + "." * max(0, _LABEL - len(label))
    if value is None:
        text = f"{'n/a':>10}"
    elif isinstance(value, float):
        text = f"{value:>10.2f}"
    elif isinstance(value, int):
        text = f"{value:>10}"
    else:
        text = f"{value!s:>10}" if len(str(value)) < 10 else f" {value}"
    return f"{head}:{text}" + (f"{pct:>8.2f}%" if pct is not None else "")


def _num(x: float | None) -> int | float | None:
    """Cycles and byte counts print as integers when they are whole numbers."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _avg(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _extra_stats(stats: dict[str, Any]) -> list[str]:
    rows = []
    for key in sorted(k for k in stats if k not in _CONSUMED):
        value = stats[key]
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for sub, v in sorted(items, key=lambda kv: str(kv[0])):
            if isinstance(v, (int, float, str, bool)):
                name = key if sub is None else f"{key}.{sub}"
                rows.append(_row(name, str(v) if isinstance(v, bool) else v))
    return rows


def stats_report(result: SimResult) -> str:
    """Machine statistics of `result`, laid out like PyPTO's `_simulate.stat.report.txt`."""
    n = run_numbers(result)
    leaves = _leaf_cycles(result.tasks)
    out = (_machine_rows(result, n, len({leaf for leaf, _ in leaves}))
           + _task_rows(result, n, leaves) + _core_rows(result, n) + _memory_rows(result, n))
    extra = _extra_stats(result.stats)
    if extra:
        out += [_banner("Simulator Statistics")] + extra
    out.append(_banner("OpenPTO MachineModel Report End"))
    return "\n".join(out) + "\n"


def _leaf_cycles(runs: list[TaskRun]) -> dict[tuple[str, str], list[float]]:
    """(leaf, core type) -> the cycles of each of its tasks, in task order."""
    leaves: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in runs:
        leaves[(r.task.leaf, r.task.core)].append(r.end - r.start)
    return leaves


def _machine_rows(result: SimResult, n: RunNumbers, leaf_count: int) -> list[str]:
    """The report's head: kernel, clock, span, the machine's size and the run's shape."""
    threads = result.stats.get("sched_threads")
    return [_banner("OpenPTO MachineModel Report"),
            _row("Kernel", result.kernel),
            _row("Clock MHz", result.clock_mhz),
            _row("Total Cycles", _num(n.e2e_cycles)),
            _row("Kernel Cycles", _num(n.kernel_cycles)),
            _row("End-to-End Time (us)", float(result.us(n.e2e_cycles))),
            _row("Kernel Time (us)", float(result.us(n.kernel_cycles))),
            _row("AICPU Thread Count", None if threads is None else int(threads) + 1),
            _row("Core Machine Count", result.aic + result.aiv),
            _row("|--Cube Count", result.aic),
            _row("|--Vector Count", result.aiv),
            _row("Stitch Windows", n.windows),
            _row("Root Instances", n.instances),
            _row("Leaf Function Count", leaf_count)]


def _task_rows(result: SimResult, n: RunNumbers,
               leaves: dict[tuple[str, str], list[float]]) -> list[str]:
    """Task counts by kind, task cycles, resolves, and the tasks of each leaf function."""
    runs = result.tasks
    cycles = [r.end - r.start for r in runs]
    empty = sum(r.task.empty for r in runs)
    out = [_banner("Task Statistics"),
           _row("Total Submit Tasks", n.tasks),
           _row("  |--Cube Tasks", n.aic_tasks, _pct(n.aic_tasks, n.tasks)),
           _row("  |--Vector Tasks", n.aiv_tasks, _pct(n.aiv_tasks, n.tasks)),
           _row("  |--Empty Tasks", empty, _pct(empty, n.tasks)),
           _row("Average Task Cycles", float(_avg(cycles))),
           _row("  |--Max Task Cycles", _num(max(cycles, default=0))),
           _row("  |--Min Task Cycles", _num(min(cycles, default=0))),
           _row("Total Resolve Times", len(set(result.flows))),
           "Tasks per Leaf Function (count, average cycles):"]
    for (leaf, core), cyc in sorted(leaves.items()):
        out.append(_row(f"  |--{leaf} [{core}]", len(cyc)) + f"{_avg(cyc):>10.2f}")
    return out


def _core_rows(result: SimResult, n: RunNumbers) -> list[str]:
    """Busy cycles and utilisation, overall and per core type, and the pipes' average use."""
    runs = result.tasks
    used = {k: len({r.core_index for r in runs if r.task.core == k}) for k in ("AIC", "AIV")}
    pipe = {k: sum(r.task.cube_cycles if k == "AIC" else r.task.vector_cycles
                   for r in runs if r.task.core == k) for k in ("AIC", "AIV")}
    out = [_banner("Core Statistics"),
           _row("AICore Busy Cycles", float(n.aic_busy + n.aiv_busy), n.util_pct)]
    for core, title, total, busy, util in (
            ("AIC", "Cube", result.aic, n.aic_busy, n.aic_util_pct),
            ("AIV", "Vector", result.aiv, n.aiv_busy, n.aiv_util_pct)):
        pipe_avg = pipe[core] / used[core] if used[core] else 0.0
        out += [_row(f"Used {title} Cores", used[core]),
                _row(f"{title} Core Busy Cycles (avg)", float(busy / total if total else 0.0),
                     util),
                _row(f"Average {title} Pipe Usage", float(pipe_avg),
                     _pct(pipe_avg, n.kernel_cycles))]
    return out


def _memory_rows(result: SimResult, n: RunNumbers) -> list[str]:
    """GM traffic, L2 hits, HBM bytes and the workspace."""
    st, runs = result.stats, result.tasks
    return [_banner("Memory Statistics"),
            _row("GM Read Bytes", _num(n.gm_read_bytes)),
            _row("GM Write Bytes", _num(n.gm_write_bytes)),
            _row("L2 Hit Bytes", _num(n.l2_hit_bytes), n.l2_hit_pct),
            _row("HBM Bytes", _num(_stat(st, "hbm_bytes", lambda: _stat(
                st, "hbm_read_bytes", lambda: sum(r.hbm_bytes for r in runs))))),
            _row("Workspace Bytes", _num(st.get("workspace_bytes")))]


def one_line_summary(result: SimResult) -> str:
    """One line for logs: kernel and end-to-end time, tasks, utilisation, windows, L2 hits."""
    n = run_numbers(result)
    l2 = "n/a" if n.l2_hit_pct is None else f"{n.l2_hit_pct:.1f}%"
    return (f"{result.kernel}: kernel {result.us(n.kernel_cycles):.2f} us, "
            f"e2e {result.us(n.e2e_cycles):.2f} us, {n.tasks} tasks "
            f"({n.aic_tasks} AIC / {n.aiv_tasks} AIV), AICore util {n.util_pct:.2f}% "
            f"(AIC {n.aic_util_pct:.2f}%, AIV {n.aiv_util_pct:.2f}%), "
            f"{n.windows} window(s), {n.instances} instance(s), L2 hit {l2}")


# ----------------------------------------------------------------------------------------------
# bubble analysis
# ----------------------------------------------------------------------------------------------

class LaneTask(NamedTuple):
    """A task on a lane, in us; `ready` = latest predecessor end (None: no predecessor).
    NOTE: named tuples, not dataclasses: a run makes one per task, and a frozen dataclass is
    several times slower to build."""

    key: int                    # PyPTO TaskId
    label: str                  # the swimlane event name
    start: float
    end: float
    ready: float | None


class TaskWait(NamedTuple):
    key: int
    label: str
    lane: str
    start: float
    schedule: float             # ready -> start
    predecessor: float          # gap start -> ready


@dataclass(frozen=True)
class LaneBubbles:
    lane: str
    task_count: int
    work: float                 # run start -> last task end on this lane (0 if idle)
    busy: float
    wait_schedule: float
    wait_predecessor: float
    idle: float                 # run span - busy
    waits: tuple[TaskWait, ...]

    @property
    def total_wait(self) -> float:
        return self.wait_schedule + self.wait_predecessor


def analyze_bubbles(lanes: list[tuple[str, list[LaneTask]]]) -> list[LaneBubbles]:
    """Busy / wait / idle per lane (see the module docstring); lanes keep their order."""
    return lane_bubbles([(name, _lane_columns(tasks)) for name, tasks in lanes])


class LaneColumns(NamedTuple):
    """The tasks of one lane as columns (us); `ready` is NaN where a task has no predecessor."""

    key: list[Any]              # PyPTO TaskId
    label: list[str]            # the swimlane event name
    start: np.ndarray
    end: np.ndarray
    ready: np.ndarray


def _lane_columns(tasks: list[LaneTask]) -> LaneColumns:
    ready = [nan if t.ready is None else t.ready for t in tasks]
    return LaneColumns([t.key for t in tasks], [t.label for t in tasks],
                       np.array([t.start for t in tasks], dtype=np.float64),
                       np.array([t.end for t in tasks], dtype=np.float64),
                       np.array(ready, dtype=np.float64))


def lane_bubbles(lanes: list[tuple[str, LaneColumns]], waits: bool = True) -> list[LaneBubbles]:
    """`analyze_bubbles` of lanes given as columns; `waits=False` leaves each lane's per-task
    waits out (the totals are the same). NOTE: a lane's gaps are array operations (the gap
    before each task starts at the latest end before it: a running maximum); the totals add
    up task by task, in order, as the one-task-at-a-time definition does."""
    origin = min(np.concatenate([c.start for _, c in lanes] or [[]]).tolist(), default=0.0)
    span = max(np.concatenate([c.end for _, c in lanes] or [[]]).tolist(), default=0.0) - origin
    out = []
    for name, c in lanes:
        order = _by_start_end_key(c)
        start, end, ready = c.start[order], c.end[order], c.ready[order]
        # the gap before each task starts at the latest end before it (or the run's start)
        gap_start = np.maximum.accumulate(np.r_[origin, end])
        # (max(0.0, x), min(max(r, 0.0), gap): numpy's operands in the order that keeps the
        # same one of two equal zeros)
        gap = np.maximum(start - gap_start[:-1], 0.0)
        ready = np.where(np.isnan(ready), gap_start[:-1], ready)
        pred = np.minimum(gap, np.maximum(0.0, ready - gap_start[:-1]))
        sched = gap - pred
        busy = _in_order_sum(end - start)
        work = float(gap_start[-1]) - origin if len(start) else 0.0
        rows = ()
        if waits:
            rows = tuple(map(TaskWait, _taken(c.key, order), _taken(c.label, order),
                             [name] * len(start), start.tolist(), sched.tolist(),
                             pred.tolist()))
        out.append(LaneBubbles(name, len(start), work, busy, _in_order_sum(sched),
                               _in_order_sum(pred), span - busy, rows))
    return out


def _by_start_end_key(c: LaneColumns) -> np.ndarray:
    """The lane's task order: by start, end, then key (ties keep their order)."""
    if set(map(type, c.key)) <= {int}:
        try:
            return np.lexsort((np.array(c.key, dtype=np.int64), c.end, c.start))
        except OverflowError:
            pass
    return np.array(sorted(range(len(c.key)), key=lambda i: (c.start[i], c.end[i], c.key[i])),
                    dtype=np.int64)


def _taken(values: list, order: np.ndarray) -> list:
    return [values[i] for i in order.tolist()]


def _in_order_sum(values: np.ndarray) -> float:
    """0.0 + values[0] + values[1] + ..., one addition at a time (as a running total is)."""
    return reduce(add, values.tolist(), 0.0)


def bubbles_from_result(result: SimResult,
                        pred_ends: dict[int, float] | None = None) -> list[LaneBubbles]:
    """Bubble analysis of every AIC and AIV lane of `result` (idle lanes included).
    `pred_ends`: `task_edges.latest_pred_ends(result)`, when already computed."""
    if pred_ends is None:
        pred_ends = latest_pred_ends(result)
    lanes: dict[tuple[str, int], list[LaneTask]] = {
        (core, i): [] for core, n in (("AIC", result.aic), ("AIV", result.aiv))
        for i in range(n)}
    mhz = result.clock_mhz
    for r in result.tasks:
        t = r.task
        ready = pred_ends.get(t.id)
        lanes.setdefault((t.core, r.core_index), []).append(LaneTask(
            task_id(t.instance, t.call),
            f"{t.window}-{t.instance}-{t.call}-{t.root_index}-{t.leaf_index}({t.label})",
            r.start / mhz, r.end / mhz, None if ready is None else ready / mhz))
    named = [(f"{core}_{i + 1 if core == 'AIC' else result.aic + i + 1}", tasks)
             for (core, i), tasks in sorted(lanes.items())]
    return analyze_bubbles(named)


def bubbles_from_swimlane(data: SwimlaneData, waits: bool = True) -> list[LaneBubbles]:
    """Bubble analysis of a parsed swimlane (PyPTO's or ours): every non-AICPU lane, by tid;
    predecessors come from the flows (a task is ready when the last one ends). `waits` as for
    `lane_bubbles`."""
    tasks = data.task_columns
    src, dst = data.flow_columns.matched()
    ready = np.full(len(tasks), -np.inf)
    np.maximum.at(ready, dst, tasks.end[src])
    ready[ready == -np.inf] = nan
    task_ids = tasks.args.values("taskId")
    keys = [i if k is None else k for k, i in zip(task_ids, tasks.id.tolist())]
    lane_of = {tid: i for i, tid in enumerate(sorted(tid for tid, ln in data.lanes.items()
                                                     if ln.kind != "aicpu"))}
    code = lane_values(data.lanes, tasks.lane, lambda ln: lane_of[ln.tid], np.int64)
    order = np.argsort(code, kind="stable")
    bounds = np.searchsorted(code[order], np.arange(len(lane_of) + 1))
    lanes = []
    for tid, i in lane_of.items():
        mine = order[bounds[i]:bounds[i + 1]]
        lanes.append((data.lanes[tid].name, LaneColumns(
            _taken(keys, mine), _taken(tasks.name, mine) if waits else [],
            tasks.start[mine], tasks.end[mine], ready[mine])))
    return lane_bubbles(lanes, waits)


def _wait_line(w: TaskWait, pad: int) -> str:
    return f"    Task:{w.key}, label:{w.label}, wait:{' ' * pad}{w.schedule}"


def _top(waits: list[TaskWait], k: int) -> list[TaskWait]:
    """The k longest schedule waits; ties keep lane/start order (nsmallest is sorted()[:k])."""
    return heapq.nsmallest(k, waits, key=lambda w: -w.schedule)


def format_bubbles(lanes: list[LaneBubbles], top: int = 10, per_lane: int = 3) -> str:
    """The bubble analysis as text, in the layout of PyPTO's `bubble_analysis.log`."""
    out = [f"Top {top} tasks in waiting schedule"]
    out += [_wait_line(w, 17) for w in _top([w for ln in lanes for w in ln.waits], top)]
    out += ["", ""]
    for ln in lanes:
        out.append(f"[{ln.lane}] Execute task num:{ln.task_count}")
        if not ln.task_count:
            out += ["    Core Total Work Time: 0.0", "    Total Wait Time: 0",
                    "    Wait Schedule Time: 0", "    Wait Predecessor Time: 0",
                    "    Busy Time: 0.0", f"    Idle Time: {ln.idle}"]
            continue
        out += [f"    Core Total Work Time: {ln.work}", f"    Total Wait Time: {ln.total_wait}",
                f"    Wait Schedule Time: {ln.wait_schedule}",
                f"    Wait Predecessor Time: {ln.wait_predecessor}",
                f"    Busy Time: {ln.busy}", f"    Idle Time: {ln.idle}",
                f"    Top {per_lane} tasks in waiting schedule time"]
        out += [_wait_line(w, 21) for w in _top(list(ln.waits), per_lane)]
    return "\n".join(out) + "\n"


def bubble_report(result: SimResult, pred_ends: dict[int, float] | None = None) -> str:
    """Per-core busy / idle / wait report of `result` (us), modelled on bubble_analysis.log
    (`pred_ends` as for `bubbles_from_result`)."""
    return format_bubbles(bubbles_from_result(result, pred_ends))


def write_reports(result: SimResult, folder: str | os.PathLike,
                  pred_ends: dict[int, float] | None = None) -> list[Path]:
    """Write `stat.report.txt` and `bubble_analysis.log` into `folder`; returns their paths
    (`pred_ends` as for `bubbles_from_result`)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stat, bubble = folder / "stat.report.txt", folder / "bubble_analysis.log"
    stat.write_text(stats_report(result))
    bubble.write_text(bubble_report(result, pred_ends))
    return [stat, bubble]
