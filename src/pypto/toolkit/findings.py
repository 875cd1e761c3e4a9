"""What `pypto-toolkit analyze` reports about a run, as frozen records: per-lane and per-leaf
statistics, the critical path, the advisor's findings and the `Analysis` that holds them.

The records are their own module because three ideas read them and none owns them:
`toolkit/analyze.py` computes them, `toolkit/advisor.py`'s rules read an analysis and add
`Advice`, and `toolkit/diff.py` compares two.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Advice:
    rule: str
    knob: str
    status: str                 # "advise" | "ok" | "no-info"
    summary: str
    evidence: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()             # names of (up to _SHOWN_TASKS) tasks it rests on
    task_count: int = 0
    time_range: tuple[float, float] | None = None
    gain_us: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "knob": self.knob, "status": self.status,
                "summary": self.summary, "evidence": list(self.evidence),
                "tasks": list(self.tasks), "task_count": self.task_count,
                "time_range_us": list(self.time_range) if self.time_range else None,
                "gain_us": self.gain_us}


@dataclass(frozen=True)
class LaneStats:
    """One core lane over the span (us)."""

    lane: str
    kind: str
    tasks: int
    busy: float
    idle: float                 # span - busy
    wait_schedule: float        # ready but not started (dispatch, scheduler, window build)
    wait_predecessor: float     # not started because a predecessor was still running


@dataclass(frozen=True)
class LeafStats:
    """The tasks of one leaf function (isomorphic tasks), us."""

    key: str
    name: str
    core: str
    tasks: int
    lanes: int
    total: float
    mean: float
    min: float
    max: float
    share_pct: float            # of all task busy time
    first_start: float
    last_end: float


@dataclass(frozen=True)
class PathStep:
    task: int                   # index into SwimlaneData.tasks
    name: str
    lane: str
    start: float
    end: float
    via: str                    # how the previous step leads here: "flow", "lane" ("" first)


@dataclass(frozen=True)
class CriticalPath:
    basis: str                  # "flows and lane order" or "lane order only (...)"
    steps: tuple[PathStep, ...]
    start: float
    end: float
    busy: float
    wait: float
    span_share_pct: float       # (end - start) / span
    busy_share_pct: float       # busy / span


@dataclass(frozen=True)
class Analysis:
    source: str
    generator: str
    span_start: float           # the kernel: first AIC/AIV task start ...
    span_end: float             # ... to the last AIC/AIV task end
    launch: float               # end-to-end: launch (time 0, or an earlier event) ...
    last_event: float           # ... to the last end of any event, AICPU included
    tasks: dict[str, int]       # by lane kind, plus "total"
    flows: int
    windows: int
    instances: int
    utilization_pct: dict[str, float]   # "all" (PyPTO's formula), "aic", "aiv"
    lanes: tuple[LaneStats, ...]
    leaves: tuple[LeafStats, ...]
    critical_path: CriticalPath
    advice: tuple[Advice, ...]

    @property
    def span(self) -> float:
        """The kernel time: what PyPTO's tool prints as "AICore End-to-End Time"."""
        return self.span_end - self.span_start

    @property
    def end_to_end(self) -> float:
        """Launch to the last event: what our run summary, viewer header and diff call
        end-to-end (the guide's E2E: the kernel plus device-task build and launch)."""
        return self.last_event - self.launch
