"""Kernel statistics: per leaf function, per core type and per stitch window, what the tasks
took and moved (PyPTO's VS Code toolkit's Kernel Statistics tab, and more).

Takes a parsed swimlane (ours or PyPTO's) and, optionally, its run folder → a `KernelStats`:

* per leaf (`analyze.leaf_stats`, extended) and per core type: tasks, total / mean / p50 / p95
  / min / max duration, share of all task time; the split of that time by the cost model's
  terms (head, latency, cube, vector, MTE1, MTE2, MTE3, fixpipe: `cost_terms`, from each
  task's `cost` arg); bytes moved (HBM reads, L2-hit reads, MTE2 in, MTE3 out) and the L2 hit
  ratio of the reads; per leaf its source line: the one it spends the most time on
  (`by_line.heaviest_lines`, from the trace's line table; None in PyPTO's traces);
* per window: root instances, tasks, the control AICPU's build time ("build window N"), the
  workspace, why the window closed, and the span of its tasks.

The cost terms need the machine's constants: the trace keeps clock_mhz / aic / aiv but not
the preset, so they are read from the default preset (`machine.spec.load()`, a2a3 unless
$OPENPTO_MACHINE names another) at the trace's clock; `spec` in the record says which.
What a PyPTO-written trace does not carry (cost inputs, bytes, window builds) is None.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pypto.profiling.swimlane import SwimlaneData
from pypto.profiling.trace_columns import ABSENT, grouped
from pypto.toolkit.analyses.by_line import heaviest_lines
from pypto.toolkit.analyses.cost_terms import TERMS, inputs_of_costs, term_cycles
from pypto.toolkit.analyze import leaf_stats, text_table
from pypto.toolkit.identity import instance_codes, leaves, windows

BYTES = ("hbm", "l2_hit", "mte2", "mte3")


@dataclass(frozen=True)
class Group:
    """The tasks of one leaf function or one core type (us; bytes)."""

    key: str
    name: str
    core: str
    tasks: int
    lanes: int
    total: float
    mean: float
    p50: float
    p95: float
    min: float
    max: float
    share_pct: float                        # of all task time
    terms: dict[str, float] | None          # us by cost term (TERMS), None without inputs
    bytes: dict[str, float] | None          # BYTES, None without them
    l2_hit_pct: float | None                # L2-hit reads / all GM reads
    line: str | None = None                 # a leaf's source line (file:line)


@dataclass(frozen=True)
class Window:
    window: int
    instances: int
    tasks: int
    build_us: float | None                  # the control AICPU's "build window N"
    workspace_bytes: float | None
    closed_by: str | None
    start: float                            # first task start .. last task end (us)
    end: float

    @property
    def span(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class KernelStats:
    busy: float                             # all task time (us)
    leaves: tuple[Group, ...]               # heaviest first
    cores: tuple[Group, ...]                # by core type
    windows: tuple[Window, ...]
    spec: str | None                        # the preset the cost terms assume
    builds: int                             # "build window N" events in the trace


# ----------------------------------------------------------------------------------------------
# the statistics
# ----------------------------------------------------------------------------------------------

def report(data: SwimlaneData, folder: str | None = None) -> KernelStats:
    """The statistics of `data` (`folder`, its run folder, is not needed)."""
    tasks = data.task_columns
    kinds = data.kind_of(tasks.lane)
    terms, spec = _task_terms(data, kinds)
    moved = _task_bytes(data)
    busy = float(tasks.dur.sum())
    lines = heaviest_lines(data)
    keys, _ = leaves(tasks)
    members = dict(grouped(keys))
    out_leaves = []
    for s in leaf_stats(data):
        extra = _extras(data, members[s.key], terms, moved)
        out_leaves.append(Group(s.key, s.name, s.core, s.tasks, s.lanes, s.total, s.mean,
                                extra["p50"], extra["p95"], s.min, s.max, s.share_pct,
                                extra["terms"], extra["bytes"], extra["l2_hit_pct"],
                                lines.get(s.name)))
    cores = []
    for kind, at in grouped(kinds.tolist()):
        durs = tasks.dur[at]
        total = float(durs.sum())
        extra = _extras(data, at, terms, moved)
        cores.append(Group(str(kind), str(kind).upper(), str(kind).upper(), len(at),
                           len(set(tasks.lane[at].tolist())), total, total / len(at),
                           extra["p50"], extra["p95"], float(durs.min()), float(durs.max()),
                           100.0 * total / busy if busy else 0.0, extra["terms"],
                           extra["bytes"], extra["l2_hit_pct"]))
    cores.sort(key=lambda g: g.key)
    found, builds = window_stats(data)
    return KernelStats(busy, tuple(out_leaves), tuple(cores), found, spec, builds)


def _extras(data: SwimlaneData, at: np.ndarray, terms: dict[str, np.ndarray] | None,
            moved: dict[str, np.ndarray] | None) -> dict[str, Any]:
    """The percentiles, cost terms and bytes of the tasks at positions `at`."""
    p50, p95 = np.percentile(data.task_columns.dur[at], [50, 95]).tolist()
    split = None if terms is None else {k: float(v[at].sum()) for k, v in terms.items()}
    got = None if moved is None else {k: float(v[at].sum()) for k, v in moved.items()}
    reads = None if got is None else got["hbm"] + got["l2_hit"]
    hit = 100.0 * got["l2_hit"] / reads if reads else None
    return {"p50": p50, "p95": p95, "terms": split, "bytes": got, "l2_hit_pct": hit}


def _task_terms(data: SwimlaneData, kinds: np.ndarray
                ) -> tuple[dict[str, np.ndarray] | None, str | None]:
    """Each task's duration (us) split by `TERMS`, and the preset assumed; (None, None)
    without cost inputs (a PyPTO-written trace)."""
    tasks = data.task_columns
    inputs = inputs_of_costs(tasks.args.values("cost", None)) if len(tasks) else None
    if inputs is None:
        return None, None
    from pypto.machine.spec import load, resolve
    clock = data.clock_mhz
    split = term_cycles(kinds == "aic", tasks.dur * clock, inputs, load())
    return {k: split[k] / clock for k in TERMS}, resolve(None)


def _task_bytes(data: SwimlaneData) -> dict[str, np.ndarray] | None:
    """Each task's HBM / L2-hit reads and MTE2 / MTE3 bytes; None without `hbm_bytes` args."""
    args = data.task_columns.args
    if "hbm_bytes" not in args.columns:
        return None

    def numbers(values: list) -> np.ndarray:
        return np.array([v if type(v) in (int, float) else 0.0 for v in values],
                        dtype=np.float64)
    inputs = inputs_of_costs(args.values("cost", None))
    zero = np.zeros(args.n)
    return {"hbm": numbers(args.values("hbm_bytes", 0.0)),
            "l2_hit": numbers(args.values("l2_hit_bytes", 0.0)),
            "mte2": zero if inputs is None else inputs["mte2_bytes"],
            "mte3": zero if inputs is None else inputs["mte3_bytes"]}


def window_stats(data: SwimlaneData) -> tuple[tuple[Window, ...], int]:
    """Per stitch window of the AIC/AIV tasks: instances, tasks, build, workspace, close
    reason, span; and the number of "build window N" events."""
    tasks = data.task_columns
    cores = data.on(tasks.lane, "aic", "aiv")
    builds = _builds(data)
    codes = instance_codes(tasks)   # (counted per window with numpy: 10k tasks a window)
    out = []
    for w, at in grouped(windows(tasks)):
        at = at[cores[at]]
        if w is None or not len(at):
            continue
        b = builds.get(w, {})
        out.append(Window(int(w), len(np.unique(codes[at])), len(at),
                          b.get("dur"), _number(b.get("workspace_bytes")),
                          None if b.get("closed_by") is None else str(b["closed_by"]),
                          float(tasks.start[at].min()), float(tasks.end[at].max())))
    return tuple(sorted(out, key=lambda w: w.window)), len(builds)


def _builds(data: SwimlaneData) -> dict[int, dict[str, Any]]:
    """window -> args (and "dur", us) of the control AICPU's "build window N" events."""
    cpu = data.aicpu_columns
    ctrl = [tid for tid, ln in data.lanes.items() if ln.name == "AICPU_CTRL"]
    at = np.flatnonzero(np.isin(cpu.lane, ctrl)).tolist()
    # NOTE: the control lane holds a few events, the scheduler lanes most of them
    closed, workspace = (cpu.args.column(k) for k in ("closed_by", "workspace_bytes"))
    out: dict[int, dict[str, Any]] = {}
    for i in at:
        head, _, number = str(cpu.name[i]).rpartition(" ")
        if head == "build window" and number.isdigit():
            args = {"closed_by": closed[i], "workspace_bytes": workspace[i]}
            out[int(number)] = {**{k: v for k, v in args.items() if v is not ABSENT},
                                "dur": float(cpu.dur[i])}
    return out


def _number(v: Any) -> float | None:
    return float(v) if type(v) in (int, float) else None


# ----------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------

def to_json(record: KernelStats) -> dict[str, Any]:
    return {"busy_us": record.busy, "spec": record.spec, "terms": list(TERMS),
            "leaves": [asdict(g) for g in record.leaves],
            "cores": [asdict(g) for g in record.cores],
            "windows": [{**asdict(w), "span": w.span} for w in record.windows],
            "build_events": record.builds}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _group_rows(groups: tuple[Group, ...], leaf: bool) -> list[str]:
    head = ["leaf" if leaf else "core", *(["core"] if leaf else []), "tasks", "total", "mean",
            "p50", "p95", "share%", "L2hit%"]
    rows = [[g.name, *([g.core] if leaf else []), g.tasks, g.total, g.mean, g.p50, g.p95,
             f"{g.share_pct:.1f}", _pct(g.l2_hit_pct)] for g in groups]
    return text_table(head, rows)


def _term_rows(groups: tuple[Group, ...]) -> list[str]:
    # (a term under 0.05 % of every group's time is left out)
    used = [t for t in TERMS if any(g.terms and g.terms[t] > 5e-4 * g.total for g in groups)]
    rows = [[g.name, *(f"{100.0 * g.terms[t] / g.total:.1f}" if g.total else "-"
                       for t in used)] for g in groups if g.terms is not None]
    return text_table(["", *(f"{t}%" for t in used)], rows) if rows else []


def format_text(record: KernelStats) -> str:
    """The report a person reads (`analyze --stats`)."""
    out = [f"Kernel statistics (us; {record.busy:.3f} us of task time)", "", "Per core type"]
    out += _group_rows(record.cores, False)
    out += ["", "Per leaf function (heaviest first)"]
    out += _group_rows(record.leaves, True)
    if any(g.line for g in record.leaves):
        out += ["", "Source lines"] + [f"  {g.name}: {g.line}" for g in record.leaves if g.line]
    if any(g.terms for g in record.cores):
        out += ["", f"Time by cost-model term (machine preset {record.spec}, at the trace's "
                    "clock; MTE2/MTE3/fixpipe: the busiest transfer pipe at the core's own "
                    "rates)"]
        out += _term_rows(record.cores) + _term_rows(record.leaves)
    if any(g.bytes for g in record.cores):
        out += ["", "Bytes moved (MB)"]
        out += text_table(["", "HBM reads", "L2-hit reads", "MTE2 in", "MTE3 out"],
                          [[g.name, *(f"{g.bytes[k] / 1e6:.3f}" for k in BYTES)]
                           for g in (*record.cores, *record.leaves) if g.bytes])
    out += ["", f"Windows ({len(record.windows)}; {record.builds} build events)"]
    out += text_table(["window", "instances", "tasks", "build", "workspace", "closed by",
                       "start", "span"],
                      [[w.window, w.instances, w.tasks,
                        "-" if w.build_us is None else w.build_us,
                        "-" if w.workspace_bytes is None else f"{w.workspace_bytes:.0f}",
                        w.closed_by or "-", w.start, w.span] for w in record.windows])
    return "\n".join(out) + "\n"


def page_data(data: SwimlaneData, folder: str | None = None) -> dict[str, Any] | None:
    """The statistics for the viewer's Statistics tab (None without tasks)."""
    if not len(data.task_columns):
        return None
    return to_json(report(data, folder))

