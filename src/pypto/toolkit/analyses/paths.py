"""The critical path before scheduling against the one the run followed, and why they differ.

Takes a parsed swimlane (`SwimlaneData`) → a `Paths` record:

* the static path: the heaviest dependency chain with each task weighing its duration, the
  windows in sequence (per window its heaviest path, summed), from the trace's flows,
  durations and windows. It is `profiling.bounds.heaviest_path`, the one function behind
  `lower_bounds(...).chain_us` too; from a trace the durations are the file's (rounded to
  1 ns), so the two agree to that rounding;
* the observed path: `analyze.critical_path` (the last-arrival chain via flows and lane order);
* the decomposition, exact by construction:
  observed length (first step's start to last step's end)
    = static length + sum over causes of the waits between the observed steps
      + core hold (the busy time of the steps the next step follows via "lane": it waited
        for their core, not for their result)
      + chain difference (the other steps' busy time - the static length: the observed
        dependency chain is lighter or heavier than the static one)
      + overlap (negative: a step that began before the step before it ended, if any).
  Each wait before a step is cut with the blocker causes (`blockers.split`): window build,
  window barrier, predecessor, core (the step's core was still busy with its previous task),
  and the hop after them (scheduler; "unknown" without AICPU lanes);
* the tasks on one path and not the other, counted by leaf.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.errors import PyptoValueError
from pypto.profiling.bounds import heaviest_path
from pypto.profiling.swimlane import SwimlaneData
from pypto.toolkit.analyses.blockers import CAUSES, runtime_model, split
from pypto.toolkit.analyze import critical_path, text_table
from pypto.toolkit.errors import ToolkitError
from pypto.toolkit.identity import leaves, windows

_SHOWN = 8                      # leaves listed per side in text


@dataclass
class Paths:
    """The static and observed critical paths (see the module docstring); times in us."""

    static_us: float
    static: list[int]                     # task indices, window by window, in path order
    observed_us: float                    # first step's start to last step's end
    observed: list[int]
    observed_busy_us: float
    span_us: float                        # the kernel span, for scale
    waits: dict[str, float]               # per cause, over the observed path's waits
    core_hold_us: float                   # busy time of steps followed via "lane"
    chain_difference_us: float
    overlap_us: float
    only_static: dict[str, int]           # leaf -> tasks on the static path only
    only_observed: dict[str, int]
    basis: str
    notes: list[str] = field(default_factory=list)

    @property
    def explained_us(self) -> float:
        """The decomposition's sum, which equals `observed_us`."""
        return self.static_us + sum(self.waits.values()) + self.core_hold_us + \
            self.chain_difference_us + self.overlap_us


def static_path(data: SwimlaneData) -> tuple[float, list[int]]:
    """(length us, task indices) of the heaviest dependency chain of the trace's tasks."""
    tasks = data.task_columns
    src, dst = data.flow_columns.matched()
    window = np.array([-1 if w is None else w for w in windows(tasks)], dtype=np.int64)
    try:
        return heaviest_path(tasks.dur.astype(float), np.asarray(src, dtype=np.int64),
                             np.asarray(dst, dtype=np.int64), window,
                             "the static critical path of the trace's flows")
    except PyptoValueError as e:          # a malformed trace: the CLI says so in one line
        raise ToolkitError(str(e)) from None


def report(data: SwimlaneData, folder: str | None = None) -> Paths:
    """The two paths of `data` and the decomposition of the observed one's length."""
    tasks = data.task_columns
    cores = data.on(tasks.lane, "aic", "aiv")
    span = float(tasks.end[cores].max() - tasks.start[cores].min()) if cores.any() else 0.0
    static_us, static = static_path(data)
    cp = critical_path(data, span)
    steps = [s.task for s in cp.steps]
    idx = np.array(steps, dtype=np.int64)
    busy = float(tasks.dur[idx].sum()) if len(idx) else 0.0
    observed = float(tasks.end[idx[-1]] - tasks.start[idx[0]]) if len(idx) else 0.0
    waits, overlap = _waits(data, idx)
    hold = float(sum(tasks.dur[a.task] for a, b in zip(cp.steps, cp.steps[1:])
                     if b.via == "lane"))
    notes = _notes(data)
    _, names = leaves(tasks)

    def by_leaf(members: set[int]) -> dict[str, int]:
        return dict(Counter(names[t] for t in sorted(members)).most_common())
    return Paths(static_us, static, observed, steps, busy, span, waits,
                 hold, busy - hold - static_us, overlap, by_leaf(set(static) - set(steps)),
                 by_leaf(set(steps) - set(static)), cp.basis, notes)


def _waits(data: SwimlaneData, idx: np.ndarray) -> tuple[dict[str, float], float]:
    """Per cause the waits between consecutive observed steps; the overlaps' (negative)
    sum."""
    tasks = data.task_columns
    out = dict.fromkeys(CAUSES, 0.0)
    if len(idx) < 2:
        return out, 0.0
    a, b = idx[:-1], idx[1:]
    t0, t1 = tasks.end[a], tasks.start[b]
    overlap = float(np.minimum(t1 - t0, 0.0).sum())
    t0 = np.minimum(t0, t1)
    prev = data.previous_on_lane()[b]
    core_free = np.where(prev >= 0, tasks.end[np.maximum(prev, 0)], np.nan)
    cuts, causes = split(t0, t1, b, runtime_model(data), core_free)
    sums = np.bincount(causes.ravel(), weights=np.diff(cuts, axis=1).ravel(),
                       minlength=len(CAUSES))
    out.update(zip(CAUSES, sums.tolist()))
    return out, overlap


def _notes(data: SwimlaneData) -> list[str]:
    notes = []
    if not len(data.flow_columns):
        notes.append("the trace has no dependency flows: the static path is the single "
                     "heaviest task of each window, the observed one follows lane order")
    if not data.lanes_of("aicpu"):
        notes.append("the trace has no AICPU lanes (a PyPTO-written trace?): waits are split "
                     "only into predecessor, core and \"unknown\"")
    return notes


# ----------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------

def _names(data: SwimlaneData, path: list[int]) -> list[str]:
    return [data.task_columns.name[t] for t in path]


def to_json(r: Paths) -> dict[str, Any]:
    return {"static": {"us": r.static_us, "tasks": len(r.static), "path": r.static},
            "observed": {"us": r.observed_us, "tasks": len(r.observed), "path": r.observed,
                         "busy_us": r.observed_busy_us, "basis": r.basis},
            "span_us": r.span_us,
            "decomposition": {"static_us": r.static_us,
                              "waits": {k: v for k, v in r.waits.items() if v},
                              "core_hold_us": r.core_hold_us,
                              "chain_difference_us": r.chain_difference_us,
                              "overlap_us": r.overlap_us, "sum_us": r.explained_us},
            "only_static": r.only_static, "only_observed": r.only_observed,
            "notes": r.notes}


def format_text(r: Paths) -> str:
    out = [f"Critical paths: static (before scheduling) {r.static_us:.3f} us over "
           f"{len(r.static)} tasks; observed {r.observed_us:.3f} us over {len(r.observed)} "
           f"tasks ({r.basis}); kernel span {r.span_us:.3f} us"]
    out += [f"  note: {n}" for n in r.notes]
    rows = [["static chain", r.static_us]]
    rows += [[f"wait: {k}", v] for k, v in r.waits.items() if v]
    rows += [["core hold (steps followed via lane)", r.core_hold_us],
             ["chain difference (other busy - static)", r.chain_difference_us]]
    if abs(r.overlap_us) > 1e-9:
        rows.append(["overlap", r.overlap_us])
    rows.append(["= observed path", r.explained_us])
    out += ["", "Observed path = static chain + waits by cause + chain difference (us)"]
    out += text_table(["term", "us"], rows)
    for title, side in (("On the static path only", r.only_static),
                        ("On the observed path only", r.only_observed)):
        items = list(side.items())
        more = f", ... {len(items) - _SHOWN} more leaves" if len(items) > _SHOWN else ""
        out.append(f"  {title}: {sum(side.values())} tasks" + (": " + ", ".join(
            f"{k} x{v}" for k, v in items[:_SHOWN]) + more if items else ""))
    return "\n".join(out) + "\n"


def page_data(data: SwimlaneData, folder: str | None = None) -> dict[str, Any] | None:
    """The summary the Blockers panel shows (paths as task indices, capped)."""
    if not len(data.task_columns) or not data.lanes_of("aic", "aiv"):
        return None
    try:
        r = to_json(report(data, folder))
    except ToolkitError as e:             # flows with a cycle: the page shows the rest
        return {"error": str(e)}
    for side in ("static", "observed"):
        r[side]["path"] = r[side]["path"][:2000]
    return r
