"""Scheduling overhead: per core type, the share of time a core was idle while ready work of
its type existed (the next-gen PyPTO runtime's `sched_overhead_analysis` measure).

Takes a parsed swimlane (ours or PyPTO's) → an `Overhead`: per core type (AIC, AIV) with tasks
and a ready counter, over the kernel span S (first to last AIC/AIV task),

    overhead = integral over S of min(idle cores of the type, ready tasks of the type) dt
               / (cores of the type x S)

with the absolute core-us and the denominator. Idle cores come from the task slices (cores
of the type minus the tasks running), ready tasks from the trace's `ReadyCount_AIC` /
`ReadyCount_AIV` counters. The step series is `profiling.overhead_counters.idle_while_ready`,
the one our swimlane writer puts in the file as `SchedOverhead_*` counters: the figures here
are the integral of those counters over the span.

What "ready" means is the counter's: in our files a task counts from its last predecessor's
end (or its given ready time) to its start, so a task dispatched and in flight to its core
still waits; PyPTO's runtime counts its ready queue (ready, not yet dispatched), so on its
traces the measure leaves out the dispatch latency. A trace without the counters gives None
figures with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from pypto.profiling.overhead_counters import idle_while_ready, step_integral
from pypto.profiling.swimlane import SwimlaneData

KINDS = ("aic", "aiv")
# times in integer picoseconds: our files' ns times exactly, PyPTO's cycle times to 1 ps
_UNITS_PER_US = 1_000_000
READY_MEANING = {
    "openpto": "ready = every predecessor done, not yet started (a task in flight to its core "
               "waits too)",
    "pypto": "ready = in PyPTO's ready queue (the counter as PyPTO's runtime writes it)",
}


@dataclass(frozen=True, eq=False)
class CoreOverhead:
    """One core type's figures (us; core-us for the integrals) and the step series."""

    core: str                   # "AIC" / "AIV"
    cores: int
    tasks: int
    busy_core_us: float         # task time on cores of the type
    idle_core_us: float         # cores x span - busy
    idle_ready_core_us: float   # the integral of min(idle cores, ready tasks)
    denominator_core_us: float  # cores x span
    overhead_pct: float         # idle_ready / denominator
    idle_ready_share_pct: float  # of the idle time, the part with ready work waiting
    times: np.ndarray           # the samples (us) of cores idle while work was ready
    values: np.ndarray

    def samples(self) -> list[tuple[float, int]]:
        return list(zip(self.times.tolist(), self.values.tolist()))

    def figures(self) -> dict[str, Any]:
        """Everything but the samples."""
        return {k: getattr(self, k) for k in FIGURES}


FIGURES = tuple(f.name for f in fields(CoreOverhead) if f.name not in ("times", "values"))


@dataclass(frozen=True)
class Overhead:
    span_start: float
    span_end: float
    ready_meaning: str
    cores: tuple[CoreOverhead, ...]
    reason: str = ""            # why a core type with tasks has no figure ("" when all do)

    @property
    def span(self) -> float:
        return self.span_end - self.span_start


def _units(us: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(us, dtype=np.float64) * _UNITS_PER_US).astype(np.int64)


def overhead_series(data: SwimlaneData, kind: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(us, value) samples of cores of `kind` idle while ready tasks of that kind waited, as
    our writer's `SchedOverhead_*` counter holds them; None without a `ReadyCount_*` counter."""
    samples = data.counters.get(f"ReadyCount_{kind.upper()}")
    if not samples:
        return None
    tasks = data.task_columns
    mine = data.on(tasks.lane, kind)
    ready = np.array(samples, dtype=np.float64).reshape(-1, 2)
    order = np.argsort(ready[:, 0], kind="stable")
    times, values = idle_while_ready(
        _units(tasks.start[mine]), _units(tasks.end[mine]),
        _units(ready[order, 0]), np.rint(ready[order, 1]).astype(np.int64),
        len(data.lanes_of(kind)))
    return times / _UNITS_PER_US, values


def report(data: SwimlaneData, folder: str | None = None) -> Overhead | None:
    """The scheduling overhead of `data`; None when it has no AIC/AIV task. Made once per
    trace: the page's part and the advisor's rule both ask for it."""
    return data.task_columns.cached("sched overhead", lambda _: _report(data))


def _report(data: SwimlaneData) -> Overhead | None:
    tasks = data.task_columns
    cores = data.on(tasks.lane, *KINDS)
    if not cores.any():
        return None
    start, end = float(tasks.start[cores].min()), float(tasks.end[cores].max())
    span = end - start
    out, missing = [], []
    for kind in KINDS:
        mine = data.on(tasks.lane, kind)
        if not mine.any():
            continue
        series = overhead_series(data, kind)
        if series is None:
            missing.append(f"ReadyCount_{kind.upper()}")
            continue
        n = len(data.lanes_of(kind))
        busy = float(tasks.dur[mine].sum())
        lost = step_integral(*series, start, end)
        denominator = n * span
        idle = max(0.0, denominator - busy)
        out.append(CoreOverhead(
            kind.upper(), n, int(mine.sum()), busy, idle, lost, denominator,
            100.0 * lost / denominator if denominator > 0 else 0.0,
            100.0 * lost / idle if idle > 0 else 0.0, *series))
    reason = f"the trace has no {' / '.join(missing)} counter" if missing else ""
    meaning = READY_MEANING["openpto" if data.generator.startswith("openpto") else "pypto"]
    return Overhead(start, end, meaning, tuple(out), reason)


def to_json(record: Overhead | None) -> dict[str, Any] | None:
    """The figures as JSON (`analyze --overhead --json`); the series left out."""
    if record is None:
        return None
    return {"span": {"start_us": record.span_start, "end_us": record.span_end,
                     "us": record.span},
            "definition": "integral over the kernel span of min(idle cores, ready tasks) / "
                          "(cores x span), per core type",
            "ready_meaning": record.ready_meaning, "reason": record.reason or None,
            "cores": [c.figures() for c in record.cores]}


def format_text(record: Overhead | None) -> str:
    """The report a person reads (`analyze --overhead`)."""
    if record is None:
        return "Scheduling overhead: none (the trace has no AIC/AIV task)\n"
    out = [f"Scheduling overhead (cores idle while ready work of their type waited; over the "
           f"kernel span {record.span:.3f} us)", f"  {record.ready_meaning}"]
    for c in record.cores:
        out.append(f"  {c.core}: {c.overhead_pct:.1f}% = {c.idle_ready_core_us:.3f} core-us of "
                   f"{c.denominator_core_us:.3f} ({c.cores} cores x {record.span:.3f} us); "
                   f"{c.idle_ready_share_pct:.1f}% of the {c.idle_core_us:.3f} idle core-us")
    if record.reason:
        out.append(f"  no figure for some core types: {record.reason}")
    return "\n".join(out) + "\n"


def page_data(data: SwimlaneData, folder: str | None = None) -> dict[str, Any] | None:
    """The figures for the viewer's Statistics tab (None without an AIC/AIV task)."""
    return to_json(report(data, folder))
