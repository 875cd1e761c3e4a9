"""`pypto-toolkit analyze TRACE`: where the time of one run went, and what to change.

Takes a parsed swimlane (ours or PyPTO's) → an `Analysis`: the kernel time (the AIC/AIV span,
which PyPTO prints as "AICore End-to-End Time") and utilisation PyPTO prints, the end-to-end
time (launch to the last event, AICPU included: the one meaning of "end-to-end" in OpenPTO),
per-core busy / idle with the bubbles before tasks split into waiting-for-schedule and
waiting-for-predecessor (`profiling.reports`, which reproduces PyPTO's bubble_analysis.log),
the critical path, per-leaf statistics, and the advisor's findings (`toolkit.advisor`).
Keeps: every number is computed from the trace alone, in time linear in the tasks up to a
sort, and `--json` output has a fixed schema (`SCHEMA`) with sorted, rounded values.

The critical path is the chain that decided when the run ended: start at the AIC/AIV task
that ends last and repeatedly step to the predecessor that finished last - a dependency flow's
source or the previous task on the same lane (the core was busy). Its busy share of the span
says how much of the run is work on that chain; the rest is waiting along it (dispatch,
scheduling, stitch windows). Without flows in the trace the chain is lane order only.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import asdict, replace
from itertools import compress
from typing import Any

import numpy as np

from pypto.profiling.reports import bubbles_from_swimlane
from pypto.profiling.swimlane import SwimlaneData, summarize
from pypto.profiling.trace_columns import grouped
from pypto.toolkit import advisor, trace
from pypto.toolkit.findings import Analysis, CriticalPath, LaneStats, LeafStats, PathStep
from pypto.toolkit.identity import instances, leaves, windows

SCHEMA = "openpto.analyze/1"
CORE_KINDS = ("aic", "aiv")
_PATH_SHOWN = 12                # critical-path steps printed in text (head and tail)


# ----------------------------------------------------------------------------------------------
# the analysis
# ----------------------------------------------------------------------------------------------

def analyze(data: SwimlaneData, source: str = "", lanes: bool = True) -> Analysis:
    """Everything `pypto-toolkit analyze` reports about `data` (read from its columns);
    without `lanes` the per-lane statistics are left empty (what the advisor alone needs)."""
    tasks, cpu = data.task_columns, data.aicpu_columns
    cores = data.on(tasks.lane, *CORE_KINDS)
    start = min(tasks.start[cores].tolist(), default=0.0)
    end = max(tasks.end[cores].tolist(), default=0.0)
    span = end - start
    kinds = Counter(data.kind_of(tasks.lane).tolist())
    util = {"all": summarize(data).utilization_pct}
    for kind in CORE_KINDS:
        n = len(data.lanes_of(kind))
        busy = sum(tasks.dur[data.on(tasks.lane, kind)].tolist())
        util[kind] = 100.0 * busy / (n * span) if n and span > 0 else 0.0
    launch = min(0.0, min([*tasks.start.tolist(), *cpu.start.tolist()], default=0.0))
    last_event = max([*tasks.end.tolist(), *cpu.end.tolist()], default=0.0)
    partial = Analysis(
        source, data.generator, start, end, launch, last_event,
        {**dict(sorted(kinds.items())), "total": len(tasks)},
        len(data.flow_columns.matched()[0]),
        len(set(compress(windows(tasks), cores))), len(set(compress(instances(tasks), cores))),
        util, lane_stats(data, span) if lanes else (), leaf_stats(data),
        critical_path(data, span), ())
    return replace(partial, advice=tuple(advisor.advise(data, partial)))


def lane_stats(data: SwimlaneData, span: float) -> tuple[LaneStats, ...]:
    """Busy / idle / bubbles of every AIC, AIV and HUB lane, in lane order."""
    kind = {ln.name: ln.kind for ln in data.lanes.values()}
    return tuple(LaneStats(b.lane, kind[b.lane], b.task_count, b.busy, max(0.0, span - b.busy),
                           b.wait_schedule, b.wait_predecessor)
                 for b in bubbles_from_swimlane(data, waits=False)
                 if kind[b.lane] in CORE_KINDS + ("hub",))


def leaf_stats(data: SwimlaneData) -> tuple[LeafStats, ...]:
    """Per-leaf counts and durations, the heaviest leaf first (made once per trace: the
    analyses that build on it share it)."""
    return data.task_columns.cached("leaf stats", lambda _: _leaf_stats(data))


def _leaf_stats(data: SwimlaneData) -> tuple[LeafStats, ...]:
    tasks = data.task_columns
    keys, names = leaves(tasks)
    kinds = data.kind_of(tasks.lane)
    busy = sum(tasks.dur.tolist())
    out = []
    for key, members in grouped(keys):
        durs = tasks.dur[members].tolist()
        total = sum(durs)
        core = Counter(kinds[members].tolist()).most_common(1)[0][0]
        out.append(LeafStats(key, names[int(members[0])], core.upper(), len(durs),
                             len(set(tasks.lane[members].tolist())), total, total / len(durs),
                             min(durs), max(durs), 100.0 * total / busy if busy else 0.0,
                             min(tasks.start[members].tolist()),
                             max(tasks.end[members].tolist())))
    return tuple(sorted(out, key=lambda s: (-s.total, s.key)))


def critical_path(data: SwimlaneData, span: float) -> CriticalPath:
    """The last-arrival chain ending at the last AIC/AIV task (see the module docstring); made
    once per trace and span."""
    return data.task_columns.cached(f"critical path {span!r}",
                                    lambda _: _critical_path(data, span))


def _critical_path(data: SwimlaneData, span: float) -> CriticalPath:
    tasks = data.task_columns
    bounds, sources = data.predecessors()
    lane_prev = data.previous_on_lane()
    basis = "flows and lane order" if len(sources) else \
        "lane order only (the trace has no dependency flows)"
    cores = np.flatnonzero(data.on(tasks.lane, *CORE_KINDS))
    if not len(cores):
        return CriticalPath(basis, (), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    start, end = tasks.start.tolist(), tasks.end.tolist()
    core_end = tasks.end[cores]
    cur = int(cores[core_end == core_end.max()][0])      # the last end; ties: the first task
    # (task, how the chain's previous task leads to it: "flow" / "lane"), built backwards
    chain, seen = [(cur, "")], {cur}
    while True:
        cands = [(p, "flow") for p in sources[bounds[cur]:bounds[cur + 1]].tolist()]
        if lane_prev[cur] >= 0:
            cands.append((int(lane_prev[cur]), "lane"))
        cands = [(t, via) for t, via in cands if t not in seen and start[t] <= start[cur]]
        if not cands:
            break
        # the predecessor that finished last held this task back; a flow wins a tie
        cur, via = max(cands, key=lambda c: (end[c[0]], c[1] == "flow", -c[0]))
        chain[-1] = (chain[-1][0], via)
        chain.append((cur, ""))
        seen.add(cur)
    chain.reverse()
    lanes = data.lanes
    steps = tuple(PathStep(t, tasks.name[t], lanes[int(tasks.lane[t])].name, start[t], end[t],
                           via) for t, via in chain)
    busy = sum(s.end - s.start for s in steps)
    wait = sum(max(0.0, b.start - a.end) for a, b in zip(steps, steps[1:]))
    first, last = steps[0].start, steps[-1].end

    def share(x: float) -> float:
        return 100.0 * x / span if span > 0 else 0.0
    # HUB tasks before the first AIC/AIV task may head the chain: the span share is clipped
    return CriticalPath(basis, steps, first, last, busy, wait,
                        share(last - max(first, last - span)), share(busy))


# ----------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------

def rounded(value: Any) -> Any:
    """`value` with floats rounded to 1e-6, so JSON output does not flicker in the last bits."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {str(k): rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v) for v in value]
    return value


def to_json(a: Analysis) -> dict[str, Any]:
    """The machine-readable report (`--json`): fixed keys, floats rounded to 1e-6 us."""
    return rounded({
        "schema": SCHEMA, "source": a.source, "generator": a.generator,
        "span": {"start_us": a.span_start, "end_us": a.span_end, "us": a.span},
        "end_to_end": {"start_us": a.launch, "end_us": a.last_event, "us": a.end_to_end},
        "tasks": a.tasks, "flows": a.flows, "windows": a.windows, "instances": a.instances,
        "utilization_pct": a.utilization_pct,
        "lanes": [asdict(ln) for ln in a.lanes],
        "leaves": [asdict(lf) for lf in a.leaves],
        "critical_path": {**{k: v for k, v in asdict(a.critical_path).items() if k != "steps"},
                          "tasks": len(a.critical_path.steps),
                          "steps": [asdict(s) for s in a.critical_path.steps]},
        "advice": [adv.to_json() for adv in a.advice],
    })


def _lane_ranges(names: list[str]) -> str:
    """"AIC_1..AIC_24, AIV_30" for a list of lane names (consecutive numbers folded)."""
    runs: list[list] = []
    for name in names:
        head, _, num = name.rpartition("_")
        if runs and num.isdigit() and runs[-1][0] == head and runs[-1][2] + 1 == int(num):
            runs[-1][2] = int(num)
        else:
            runs.append([head, int(num) if num.isdigit() else None, int(num) if num.isdigit()
                         else None, name])
    return ", ".join(r[3] if r[1] is None or r[1] == r[2] else f"{r[0]}_{r[1]}..{r[0]}_{r[2]}"
                     for r in runs)


def text_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """Aligned text columns: the first left-aligned, numbers (3 decimals) right-aligned."""
    cells = [header] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return ["  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths))) for r in cells]


def format_text(a: Analysis) -> str:
    """The report a person reads."""
    out = [f"Analysis of {a.source}" if a.source else "Analysis", f"  generator: {a.generator}"]
    kinds = ", ".join(f"{k.upper()} {n}" for k, n in a.tasks.items() if k != "total")
    u = a.utilization_pct
    out += [f"  kernel: {a.span:.3f} us ({a.span_start:.3f} -> {a.span_end:.3f}), the AIC/AIV "
            "span (PyPTO prints it as \"AICore End-to-End Time\")",
            f"  end-to-end: {a.end_to_end:.3f} us ({a.launch:.3f} -> {a.last_event:.3f}), "
            "launch to the last event, AICPU included",
            f"  tasks: {a.tasks['total']} ({kinds}); {a.flows} dependency flows; "
            f"{a.windows} stitch window(s), {a.instances} root instance(s)",
            f"  AICore utilisation: {u['all']:.2f}% (AIC {u['aic']:.2f}%, AIV {u['aiv']:.2f}%)",
            "", "Cores (us over the span; bubbles before tasks split by cause)"]
    used = [ln for ln in a.lanes if ln.tasks]
    by_kind = []
    for kind in ("aic", "aiv", "hub"):
        lanes = [ln for ln in a.lanes if ln.kind == kind]
        if lanes:
            busy = [ln for ln in lanes if ln.tasks]
            by_kind.append([kind.upper(), f"{len(busy)}/{len(lanes)}",
                            sum(ln.busy for ln in lanes), sum(ln.idle for ln in busy),
                            sum(ln.wait_schedule for ln in lanes),
                            sum(ln.wait_predecessor for ln in lanes)])
    out += text_table(["kind", "used", "busy", "idle(used)", "wait-schedule",
                       "wait-predecessor"], by_kind)
    out.append("")
    out += text_table(["lane", "tasks", "busy", "idle", "util%", "wait-schedule",
                       "wait-predecessor"],
                      [[ln.lane, ln.tasks, ln.busy, ln.idle,
                        f"{100.0 * ln.busy / a.span:.1f}" if a.span > 0 else "-",
                        ln.wait_schedule, ln.wait_predecessor] for ln in used])
    idle = [ln.lane for ln in a.lanes if not ln.tasks]
    if idle:
        out.append(f"  idle lanes: {_lane_ranges(idle)}")
    cp = a.critical_path
    out += ["", f"Critical path ({cp.basis}): {len(cp.steps)} tasks, {cp.start:.3f} -> "
                f"{cp.end:.3f} us = {cp.span_share_pct:.1f}% of the span; busy {cp.busy:.3f} us "
                f"({cp.busy_share_pct:.1f}%), waiting {cp.wait:.3f} us"]
    rows = [[s.name, s.lane, s.start, s.end, s.via or "-"] for s in cp.steps]
    if len(rows) > _PATH_SHOWN:
        half = _PATH_SHOWN // 2
        rows = rows[:half] + [[f"... {len(rows) - 2 * half} more", "", "", "", ""]] + rows[-half:]
    out += text_table(["task", "lane", "start", "end", "via"], rows)
    out += ["", "Leaves (isomorphic tasks; us)"]
    out += text_table(["leaf", "core", "tasks", "lanes", "total", "mean", "min", "max", "share%"],
                       [[lf.name, lf.core, lf.tasks, lf.lanes, lf.total, lf.mean, lf.min, lf.max,
                         f"{lf.share_pct:.1f}"] for lf in a.leaves])
    out += ["", advisor.format_advice(a.advice), "",
            "More: --stats (per leaf, core type and window), --overhead (scheduling overhead), "
            "--blockers (what idle cores waited for), --paths (static vs observed critical "
            "path), --by-line (time by source line)"]
    return "\n".join(out).rstrip() + "\n"


# the sections `analyze` prints instead of its summary: option -> analyses module (each has
# `report(data, folder) -> record`, `to_json(record)` and `format_text(record)`)
SECTIONS = {"stats": "kernel_stats", "overhead": "sched_overhead", "blockers": "blockers",
            "paths": "paths", "by_line": "by_line"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", help="merged_swimlane.json (ours or PyPTO's) or a run folder")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--stats", action="store_true",
                        help="kernel statistics: per leaf function, core type and window")
    parser.add_argument("--overhead", action="store_true",
                        help="scheduling overhead: per core type, the share of time a core "
                             "was idle while ready work existed")
    parser.add_argument("--blockers", action="store_true",
                        help="gaps and blockers: what every idle stretch of a core waited for")
    parser.add_argument("--paths", action="store_true",
                        help="the critical path before scheduling against the observed one")
    parser.add_argument("--by-line", action="store_true",
                        help="simulated time by the kernel's source line")


def _sections(args: argparse.Namespace) -> int:
    """Print the sections asked for (text, or one JSON object keyed by section)."""
    import importlib
    from pathlib import Path
    path = Path(args.trace)
    data = trace.load(path)
    folder = str(path if path.is_dir() else path.parent)
    chosen = [(key, importlib.import_module(f"pypto.toolkit.analyses.{module}"))
              for key, module in SECTIONS.items() if getattr(args, key)]
    reports = [(key, module, module.report(data, folder)) for key, module in chosen]
    if args.json:
        json.dump(rounded({"schema": SCHEMA, "source": str(args.trace),
                           **{key: module.to_json(r) for key, module, r in reports}}),
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(module.format_text(r).rstrip() + "\n"
                                    for _, module, r in reports))
    return 0


def run(args: argparse.Namespace) -> int:
    if any(getattr(args, key) for key in SECTIONS):
        return _sections(args)
    a = analyze(trace.load(args.trace), str(args.trace))
    if args.json:
        json.dump(to_json(a), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(a))
    return 0
