"""Gaps and blockers: what every idle stretch of an AIC/AIV core waited for, summed per cause.

Takes a parsed swimlane (`SwimlaneData`, ours or PyPTO's) → a `Blockers` record: every idle
microsecond of every core over the kernel span (first to last AIC/AIV task) attributed to
exactly one cause, the sums per cause (and per core type, and per scheduler thread), the
largest gaps with what blocked them, and the gaps coloured by cause for the viewer's overlay.

A gap on a lane runs from the end of the lane's busy time before a task (the kernel start for
its first task) to the task's start. The simulator (`machine/simulate.py`) lets a task of
window w begin once (a) window w is built ("build window w" on AICPU_CTRL), (b) window w - 1's
last task has ended (the window barrier), (c) its predecessors have ended (the flows), and then
(d) a scheduler thread has seen the last of those, resolved and dispatched it (the AICPU hop:
launch, completion notice, resolve and dispatch work, a core's cold start). Each constraint is
a time; sorted, they cut the gap into segments, [gap start, first) for the first met, [first,
second) for the second, ..., and the rest up to the task's start is the hop, "scheduler"
(each instant goes to the constraint that, the earlier ones met, still held the task). The
gap before a lane's first task is split the same way (what that task waited for); idle after
a lane's last task is "no work left", a lane without tasks is "unused core" all along. ("core",
a task's core still busy, never holds a gap, which starts when its core is free; it is
`split`'s for `analyses.paths`, whose waits start at the previous step's end.)

The scheduler segment names the thread: the dispatch event on an AICPU_SCHED lane that holds
the task's start (or ends last before it: a cold start), and what that thread did meanwhile
(dispatch / resolve events, busy time against the hop's length).

Degrades on PyPTO-written traces: without AICPU lanes there is no window build or barrier to
see, and no thread; the predecessor comes from the flows when the trace has them, and the rest
of each gap is "unknown" (the record's `notes` say so).

Keeps: the per-cause sums are exact over all gaps (they add up to the total idle time), while
the gaps listed are those at least `threshold_us` long (default: 1 us, or 1 % of the kernel
span when that is shorter, so a small kernel lists its gaps too), and the page keeps only the
`ROWS` largest in detail and the `OVERLAY` largest (and the longest tails) in the overlay, so a
1M-event trace stays small (~0.4 MB); everything is numpy over the trace's columns.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.profiling.swimlane import SwimlaneData
from pypto.toolkit.identity import windows

CAUSES = ("window build", "window barrier", "predecessor", "core", "scheduler", "unknown",
          "no work left", "unused core")
BUILD, BARRIER, PRED, CORE, SCHED, UNKNOWN, TAIL, UNUSED = range(len(CAUSES))
THRESHOLD_US = 1.0              # listed and drawn gaps: at least this long, or ...
THRESHOLD_SHARE = 0.01          # ... this share of the kernel span if that is shorter
ROWS = 100                      # largest gaps kept in detail (the page and --json)
OVERLAY = 4000                  # largest gaps drawn on the swimlane
_TEXT_ROWS = 15
_BUILD = re.compile(r"^build window (\d+)$")


@dataclass
class Blockers:
    """What the idle time of the cores waited for (see the module docstring); times in us."""

    span: tuple[float, float]
    cores: int
    busy_us: float
    idle_us: float
    threshold_us: float
    by_cause: dict[str, float]
    by_kind: dict[str, dict[str, float]]
    by_thread: dict[str, float]            # scheduler segments per thread
    gaps: int                              # gaps (before tasks) with idle time
    listed: int                            # of them at least threshold_us long
    rows: list[dict[str, Any]]             # the largest, with their segments
    overlay: dict[str, Any]
    notes: list[str] = field(default_factory=list)


@dataclass
class _Gaps:
    """Every idle stretch of every core lane, as columns."""

    lane: np.ndarray          # tid
    t0: np.ndarray
    t1: np.ndarray
    task: np.ndarray          # the task after it (-1: after the lane's last / unused lane)
    tail: np.ndarray          # cause for task == -1 gaps: TAIL or UNUSED


def _lane_gaps(data: SwimlaneData) -> tuple[_Gaps, float, float, float, int]:
    """The gaps of every AIC/AIV lane over the kernel span; (gaps, start, end, busy, lanes)."""
    tasks = data.task_columns
    lanes = [ln.tid for ln in data.lanes_of("aic", "aiv")]
    idx = np.flatnonzero(data.on(tasks.lane, "aic", "aiv"))
    if not len(idx):
        empty = np.zeros(0)
        return _Gaps(empty.astype(np.int64), empty, empty, empty.astype(np.int64),
                     empty.astype(np.int64)), 0.0, 0.0, 0.0, len(lanes)
    start, end = float(tasks.start[idx].min()), float(tasks.end[idx].max())
    idx = idx[np.lexsort((idx, tasks.start[idx], tasks.lane[idx]))]
    lane, s, e = tasks.lane[idx], tasks.start[idx], tasks.end[idx]
    first = np.r_[True, lane[1:] != lane[:-1]]
    # busy until: the running max end on the lane before each task (the kernel start first)
    before = np.empty(len(idx))
    cuts = np.r_[np.flatnonzero(first), len(idx)]
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        before[a] = start
        before[a + 1:b] = np.maximum(np.maximum.accumulate(e[a:b - 1]), start)
    open_ = s > before
    last_end = np.maximum.reduceat(np.maximum(e, before), cuts[:-1])
    busy = (end - start) * len(set(lane.tolist())) - float((s - before)[open_].sum()) \
        - float((end - last_end).sum())
    used = set(lane.tolist())
    unused = [t for t in lanes if t not in used]
    tail_lane = lane[cuts[:-1]]
    pieces = [(lane[open_], before[open_], s[open_], idx[open_], np.full(open_.sum(), -1)),
              (tail_lane, last_end, np.full(len(tail_lane), end), np.full(len(tail_lane), -1),
               np.full(len(tail_lane), TAIL)),
              (np.array(unused, dtype=np.int64), np.full(len(unused), start),
               np.full(len(unused), end), np.full(len(unused), -1),
               np.full(len(unused), UNUSED))]
    cols = [np.concatenate([p[k] for p in pieces]) for k in range(5)]
    keep = cols[2] > cols[1]
    gaps = _Gaps(*(c[keep] for c in cols))
    return gaps, start, end, busy, len(lanes)


@dataclass
class Model:
    """What the trace tells of the runtime: per window its build end and the previous
    window's last end, per task its latest predecessor end (NaN: not known)."""

    window: np.ndarray                  # per task, -1 if none
    build_end: dict[int, tuple[float, int]]       # window -> (end, AICPU event index)
    last_of: dict[int, tuple[float, int]]         # window -> (last end, task index)
    prev: dict[int, int]                          # window -> the window before it
    pred_end: np.ndarray
    aicpu: bool
    sched_lanes: list[int]


def runtime_model(data: SwimlaneData) -> Model:
    """What `data` tells of the runtime's constraints (see `Model`; made once per trace)."""
    return data.task_columns.cached("blockers.runtime_model", lambda _: _model(data))


def _model(data: SwimlaneData) -> Model:
    tasks, cpu = data.task_columns, data.aicpu_columns
    window = np.array([-1 if w is None else w for w in windows(tasks)], dtype=np.int64)
    cpu_kind = {ln.tid: ln for ln in data.lanes_of("aicpu")}
    ctrl = [t for t, ln in cpu_kind.items() if not ln.name.startswith("AICPU_SCHED")]
    builds: dict[int, tuple[float, int]] = {}
    for i in np.flatnonzero(np.isin(cpu.lane, ctrl)).tolist() if len(cpu) else []:
        m = _BUILD.match(cpu.name[i]) if isinstance(cpu.name[i], str) else None
        if m:
            builds[int(m[1])] = (float(cpu.end[i]), i)
    cores = np.flatnonzero(data.on(tasks.lane, "aic", "aiv") & (window >= 0))
    last_of: dict[int, tuple[float, int]] = {}
    if len(cores):
        order = cores[np.lexsort((-cores, tasks.end[cores], window[cores]))]
        top = order[np.r_[window[order][1:] != window[order][:-1], True]]
        last_of = {int(window[t]): (float(tasks.end[t]), int(t)) for t in top.tolist()}
    ids = sorted(last_of)
    prev = dict(zip(ids[1:], ids[:-1]))
    bounds, sources = data.predecessors()
    pred_end = np.full(len(tasks), np.nan)
    has = np.flatnonzero(bounds[1:] > bounds[:-1])
    if len(has):
        pred_end[has] = np.maximum.reduceat(tasks.end[sources], bounds[:-1][has])
    sched = [t for t, ln in cpu_kind.items() if ln.name.startswith("AICPU_SCHED")]
    return Model(window, builds, last_of, prev, pred_end, bool(cpu_kind), sched)


def split(t0: np.ndarray, t1: np.ndarray, task: np.ndarray, m: Model,
          core_free: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cut each wait [t0, t1) before `task` (-1: none) by its constraints (window build,
    window barrier, predecessor, and `core_free`: when its core was free, if given), each
    clipped into the wait and sorted: (cuts, n x 6: t0, the 4 sorted times, t1; causes of
    the 5 segments, n x 5: the constraints' in the order met, then the hop)."""
    n = len(t0)
    has = task >= 0
    t = np.where(has, task, 0)
    w = np.where(has, m.window[t], -1) if len(m.window) else np.full(n, -1)
    c = np.full((n, 4), np.nan)
    if m.aicpu:
        c[:, 0] = _lookup({k: v[0] for k, v in m.build_end.items()}, w)
        c[:, 1] = _lookup({k: m.last_of[p][0] for k, p in m.prev.items()}, w)
    if len(m.pred_end):
        c[:, 2] = np.where(has, m.pred_end[t], np.nan)
    if core_free is not None:
        c[:, 3] = core_free
    c = np.where(np.isnan(c), t0[:, None], c)
    c = np.clip(c, t0[:, None], t1[:, None])
    c[~has] = t0[~has, None]
    order = np.argsort(c, axis=1, kind="stable")
    cuts = np.column_stack([t0, np.take_along_axis(c, order, 1), t1])
    hop = SCHED if m.sched_lanes else UNKNOWN
    causes = np.column_stack([np.array([BUILD, BARRIER, PRED, CORE])[order], np.full(n, hop)])
    return cuts, causes


def _lookup(table: dict[int, float], keys: np.ndarray) -> np.ndarray:
    """`table[k]` for each key (NaN where absent), in numpy."""
    known = np.array(sorted(table), dtype=np.int64)
    values = np.array([table[k] for k in known.tolist()], dtype=float)
    at = np.minimum(np.searchsorted(known, keys), max(len(known) - 1, 0))
    hit = (at < len(known)) & (known[at] == keys) if len(known) else np.zeros(len(keys), bool)
    return np.where(hit, values[at] if len(known) else np.nan, np.nan)


def _segments(g: _Gaps, m: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`split` of every gap; idle after a lane's last task is its tail or unused cause."""
    cuts, causes = split(g.t0, g.t1, g.task, m)
    has = g.task >= 0
    causes[~has, -1] = g.tail[~has]
    w = np.where(has, m.window[np.where(has, g.task, 0)], -1) if len(m.window) else \
        np.full(len(has), -1)
    return cuts, causes, w


def _threads(data: SwimlaneData, m: Model, task: np.ndarray) -> np.ndarray:
    """The AICPU event index of the dispatch that started each task (-1: none found): the
    dispatch on a scheduler lane holding the task's start, else the one ending last before."""
    cpu, tasks = data.aicpu_columns, data.task_columns
    out = np.full(len(task), -1, dtype=np.int64)
    lanes = np.isin(cpu.lane, m.sched_lanes) if len(cpu) else np.zeros(0, dtype=bool)
    mine = np.flatnonzero(lanes & (np.asarray(cpu.name, dtype=object) == "dispatch"))
    if not len(mine) or not len(task):
        return out
    mine = mine[np.argsort(cpu.end[mine], kind="stable")]
    ends, starts = cpu.end[mine], cpu.start[mine]
    at = tasks.start[task]
    k = np.searchsorted(ends, at - 1e-9)
    for shift in range(len(m.sched_lanes)):       # a longer record of another thread
        j = np.minimum(k + shift, len(mine) - 1)
        hold = (out < 0) & (k + shift < len(mine)) & (starts[j] < at) & (ends[j] >= at - 1e-9)
        out[hold] = mine[j[hold]]
    before = np.searchsorted(ends, at + 1e-9) - 1
    rest = (out < 0) & (before >= 0)
    out[rest] = mine[before[rest]]
    return out


def report(data: SwimlaneData, folder: str | None = None,
           threshold_us: float | None = None) -> Blockers:
    """The blockers of `data`; gaps at least `threshold_us` long are listed (default: the
    shorter of `THRESHOLD_US` and `THRESHOLD_SHARE` of the kernel span, so a small kernel
    lists its gaps too)."""
    g, start, end, busy, n_lanes = _lane_gaps(data)
    span = end - start
    m = runtime_model(data)
    cuts, causes, win = _segments(g, m)
    seg = np.diff(cuts, axis=1)
    sums = np.bincount(causes.ravel(), weights=seg.ravel(), minlength=len(CAUSES))
    aic = data.on(g.lane, "aic")
    by_kind = {k: dict(zip(CAUSES, np.bincount(causes[on].ravel(), weights=seg[on].ravel(),
                                               minlength=len(CAUSES)).tolist()))
               for k, on in (("AIC", aic), ("AIV", ~aic))}
    threshold = threshold_us if threshold_us is not None else min(
        THRESHOLD_US, THRESHOLD_SHARE * span)
    size = g.t1 - g.t0
    before = g.task >= 0
    thread = np.full(len(g.t0), -1, dtype=np.int64)
    thread[before] = _threads(data, m, g.task[before])
    by_thread = _by_thread(data, thread, seg[:, -1] * (causes[:, -1] == SCHED))
    largest = np.argsort(-np.where(before, size, -1.0), kind="stable")[:int(before.sum())]
    rows = [_row(data, m, g, cuts, causes, win, thread, i)
            for i in largest[:ROWS].tolist() if size[i] >= threshold]
    notes = _notes(data, m)
    return Blockers((start, end), n_lanes, busy, float(seg.sum()), threshold,
                    dict(zip(CAUSES, sums.tolist())), by_kind, by_thread,
                    int(before.sum()), int((size[before] >= threshold).sum()), rows,
                    _overlay(data, g, cuts, causes, largest, size, threshold), notes)


def _by_thread(data: SwimlaneData, thread: np.ndarray, sched: np.ndarray) -> dict[str, float]:
    cpu = data.aicpu_columns
    out: dict[str, float] = {}
    on = sched > 0
    found = on & (thread >= 0)
    if (on & ~found).any():
        out["(no dispatch found)"] = float(sched[on & ~found].sum())
    if found.any():
        tids, where = np.unique(cpu.lane[thread[found]], return_inverse=True)
        for tid, us in zip(tids.tolist(), np.bincount(where.reshape(-1),
                                                      weights=sched[found]).tolist()):
            out[data.lanes[int(tid)].name] = us
    return dict(sorted(out.items()))


def _notes(data: SwimlaneData, m: Model) -> list[str]:
    notes = []
    if not m.aicpu:
        notes.append("the trace has no AICPU lanes (a PyPTO-written trace?): window builds, "
                     "the window barrier and scheduler threads cannot be seen; what the flows "
                     "do not explain is \"unknown\"")
    elif not m.sched_lanes:
        notes.append("the trace has no AICPU_SCHED lanes: the hop after the last constraint "
                     "is \"unknown\"")
    if not len(data.flow_columns):
        notes.append("the trace has no dependency flows: no gap is put down to a predecessor")
    return notes


def _row(data: SwimlaneData, m: Model, g: _Gaps, cuts: np.ndarray, causes: np.ndarray,
         win: np.ndarray, thread: np.ndarray, i: int) -> dict[str, Any]:
    """Gap i in detail: its lane, the task after it and each segment with what blocked it."""
    tasks = data.task_columns
    t = int(g.task[i])
    row: dict[str, Any] = {"lane": data.lanes[int(g.lane[i])].name, "t0": float(g.t0[i]),
                           "t1": float(g.t1[i]), "us": float(g.t1[i] - g.t0[i]),
                           "task": t, "name": tasks.name[t] if t >= 0 else None,
                           "window": int(win[i]) if t >= 0 and win[i] >= 0 else None}
    segs = []
    for k in range(cuts.shape[1] - 1):
        a, b, cause = float(cuts[i, k]), float(cuts[i, k + 1]), int(causes[i, k])
        if b > a:
            segs.append({"cause": CAUSES[cause], "t0": a, "t1": b, "us": b - a,
                         **_blocker(data, m, t, int(win[i]), cause, a, b, int(thread[i]))})
    row["segments"] = segs
    row["cause"] = max(segs, key=lambda s: s["us"])["cause"] if segs else None
    return row


def _blocker(data: SwimlaneData, m: Model, t: int, w: int, cause: int, a: float, b: float,
             thread: int) -> dict[str, Any]:
    """What held task t in [a, b) for `cause`: the build event, the window's last task, the
    last-finishing predecessor, or the scheduler thread and its work meanwhile."""
    tasks, cpu = data.task_columns, data.aicpu_columns
    if cause == BUILD:
        e = m.build_end[w][1]
        return {"what": f"{cpu.name[e]} ({cpu.start[e]:.3f} -> {cpu.end[e]:.3f} us)",
                "event": e}
    if cause == BARRIER:
        p = m.prev[w]
        last = m.last_of[p][1]
        return {"what": f"window {p} draining: its last task {tasks.name[last]} ends "
                        f"{tasks.end[last]:.3f} us", "blocker": last}
    if cause == PRED:
        bounds, sources = data.predecessors()
        preds = sources[bounds[t]:bounds[t + 1]]
        p = int(preds[np.argmax(tasks.end[preds])])
        return {"what": f"predecessor {tasks.name[p]} on "
                        f"{data.lanes[int(tasks.lane[p])].name} ends {tasks.end[p]:.3f} us",
                "blocker": p}
    if cause == SCHED and thread >= 0:
        return _thread_work(data, thread, a, b)
    if cause in (TAIL, UNUSED):
        return {"what": "no task left for this core" if cause == TAIL
                else "no task ran on this core"}
    return {"what": "not known from this trace"}


def _thread_work(data: SwimlaneData, event: int, a: float, b: float) -> dict[str, Any]:
    """The scheduler thread of dispatch `event` and what it did in [a, b)."""
    cpu = data.aicpu_columns
    lane = int(cpu.lane[event])
    on = np.flatnonzero((cpu.lane == lane) & (cpu.start < b) & (cpu.end > a))
    busy = float((np.minimum(cpu.end[on], b) - np.maximum(cpu.start[on], a)).sum())
    names = [cpu.name[k] for k in on.tolist()]
    counts = {k: names.count(k) for k in ("dispatch", "resolve")}
    name = data.lanes[lane].name
    return {"what": f"{name} dispatched it; meanwhile busy {busy:.3f} of {b - a:.3f} us "
                    f"({counts['dispatch']} dispatch, {counts['resolve']} resolve events)",
            "thread": name, "event": event, "busy_us": busy, "hop_us": b - a, **counts}


def _overlay(data: SwimlaneData, g: _Gaps, cuts: np.ndarray, causes: np.ndarray,
             largest: np.ndarray, size: np.ndarray, threshold: float) -> dict[str, Any]:
    """The segments of the `OVERLAY` largest gaps before tasks and the longest tails (all at
    least `threshold` long), as columns: lane name index, t0, t1, cause index."""
    tails = np.flatnonzero(g.tail == TAIL)
    pick = np.r_[largest[:OVERLAY], tails[np.argsort(-size[tails])][:OVERLAY // 4]]
    pick = pick[size[pick] >= threshold]
    a, b, c = cuts[pick, :-1].ravel(), cuts[pick, 1:].ravel(), causes[pick].ravel()
    lane = np.repeat(g.lane[pick], causes.shape[1])
    keep = b > a
    names = sorted({data.lanes[int(x)].name for x in lane[keep].tolist()})
    code = {n: k for k, n in enumerate(names)}
    return {"causes": list(CAUSES), "lanes": names,
            "lane": [code[data.lanes[int(x)].name] for x in lane[keep].tolist()],
            "t0": np.round(a[keep], 4).tolist(), "t1": np.round(b[keep], 4).tolist(),
            "cause": c[keep].tolist(), "gaps": int(len(pick)), "of": int(len(size))}


# ----------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------

def to_json(r: Blockers) -> dict[str, Any]:
    """The record as JSON (the overlay left out: it is the page's)."""
    return {"span": {"start_us": r.span[0], "end_us": r.span[1], "us": r.span[1] - r.span[0]},
            "cores": r.cores, "busy_us": r.busy_us, "idle_us": r.idle_us,
            "threshold_us": r.threshold_us, "by_cause": r.by_cause, "by_kind": r.by_kind,
            "by_thread": r.by_thread, "gaps": r.gaps, "listed": r.listed,
            "rows": r.rows, "notes": r.notes}


def format_text(r: Blockers) -> str:
    """The per-cause table and the largest gaps with their blockers."""
    from pypto.toolkit.analyze import text_table
    span = r.span[1] - r.span[0]
    out = [f"Gaps and blockers: {r.cores} cores over the kernel span {span:.3f} us; idle "
           f"{r.idle_us:.3f} us of {r.cores * span:.3f} (busy {r.busy_us:.3f})"]
    out += [f"  note: {n}" for n in r.notes]
    rows = [[c, us, f"{100.0 * us / r.idle_us:.1f}" if r.idle_us else "-",
             r.by_kind["AIC"][c], r.by_kind["AIV"][c]]
            for c, us in r.by_cause.items() if us > 0]
    out += text_table(["cause", "idle us", "share%", "AIC", "AIV"], rows)
    if r.by_thread:
        out += ["", "Scheduler segments by thread (us)"]
        out += text_table(["thread", "us"], [[k, v] for k, v in r.by_thread.items()])
    out += ["", f"Largest gaps ({r.listed} of {r.gaps} gaps before a task are at least "
                f"{r.threshold_us:.3f} us)"]
    for row in r.rows[:_TEXT_ROWS]:
        head = row["name"] or "(end)"
        out.append(f"  {row['lane']} {row['t0']:.3f} -> {row['t1']:.3f} us ({row['us']:.3f}) "
                   f"before {head}")
        out += [f"    {s['us']:9.3f} us  {s['cause']}: {s['what']}" for s in row["segments"]]
    return "\n".join(out) + "\n"


def page_data(data: SwimlaneData, folder: str | None = None) -> dict[str, Any] | None:
    """What the viewer's Blockers panel shows: the sums, the largest gaps and the overlay."""
    if not len(data.task_columns) or not data.lanes_of("aic", "aiv"):
        return None
    r = report(data, folder)
    rows = [{k: v for k, v in row.items()} for row in r.rows]
    return {**to_json(r), "rows": rows, "overlay": r.overlay}
