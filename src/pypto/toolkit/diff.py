"""`pypto-toolkit diff A B [-o diff.html]`: what changed between two runs.

Takes two traces (files or run folders, ours or PyPTO's) → their `findings.Analysis` → a report
dict: `totals` (name -> {a, b, delta, ratio}), `leaves` (one row per leaf function, paired by
the stable leaf key of `toolkit.identity`, the biggest change in total time first),
`critical_path` (both chains) and, when both traces have source lines, `lines` (per
`file:line` its time in A and B and the change, `analyses.by_line.delta`). The same dict is printed as text, as JSON (`--json`), or handed
to the viewer's `render_diff_html` (`-o`): both swimlanes stacked under the kernel / end-to-end /
tasks / utilisation comparison, the critical paths and the leaf rows as tables.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pypto.toolkit import trace
from pypto.toolkit.analyze import analyze, rounded, text_table
from pypto.toolkit.findings import Analysis

SCHEMA = "openpto.diff/1"


def _pair(a: float, b: float) -> dict[str, Any]:
    return {"a": a, "b": b, "delta": b - a, "ratio": b / a if a else None}


def totals(a: Analysis) -> dict[str, float]:
    """The headline numbers of one run that a diff compares."""
    cp = a.critical_path
    out = {"span_us": a.span, "tasks": a.tasks["total"]}
    out.update({f"tasks_{k}": n for k, n in a.tasks.items() if k != "total"})
    out.update({
        "flows": a.flows, "windows": a.windows, "instances": a.instances,
        "busy_us": sum(ln.busy for ln in a.lanes if ln.kind in ("aic", "aiv")),
        "utilization_pct": a.utilization_pct["all"],
        "wait_schedule_us": sum(ln.wait_schedule for ln in a.lanes),
        "wait_predecessor_us": sum(ln.wait_predecessor for ln in a.lanes),
        "critical_path_tasks": len(cp.steps), "critical_path_busy_us": cp.busy,
        "critical_path_wait_us": cp.wait, "leaves": len(a.leaves)})
    return out


def _path(a: Analysis) -> dict[str, Any]:
    cp = a.critical_path
    return {"basis": cp.basis, "tasks": len(cp.steps), "start_us": cp.start, "end_us": cp.end,
            "busy_us": cp.busy, "wait_us": cp.wait, "busy_share_pct": cp.busy_share_pct,
            "names": [s.name for s in cp.steps]}


def compare(a: Analysis, b: Analysis) -> dict[str, Any]:
    """The diff report of run `a` (before) against run `b` (after)."""
    ta, tb = totals(a), totals(b)
    names = list(ta) + [k for k in tb if k not in ta]
    la, lb = {lf.key: lf for lf in a.leaves}, {lf.key: lf for lf in b.leaves}
    rows = []
    for key in list(la) + [k for k in lb if k not in la]:
        x, y = la.get(key), lb.get(key)
        ref = x or y
        rows.append({
            "leaf": key, "name": ref.name, "core": ref.core,
            "status": "both" if x and y else ("only A" if x else "only B"),
            "tasks_a": x.tasks if x else 0, "tasks_b": y.tasks if y else 0,
            "tasks_delta": (y.tasks if y else 0) - (x.tasks if x else 0),
            "total_us_a": x.total if x else 0.0, "total_us_b": y.total if y else 0.0,
            "total_us_delta": (y.total if y else 0.0) - (x.total if x else 0.0),
            "mean_us_a": x.mean if x else None, "mean_us_b": y.mean if y else None})
    rows.sort(key=lambda r: (-abs(r["total_us_delta"]), r["leaf"]))
    return rounded({
        "schema": SCHEMA, "a": a.source, "b": b.source,
        "totals": {k: _pair(ta.get(k, 0), tb.get(k, 0)) for k in names},
        "leaves": rows,
        "critical_path": {"a": _path(a), "b": _path(b)}})


def with_lines(report: dict[str, Any], a: Any, b: Any, folders: tuple[str | None, str | None]
               = (None, None)) -> dict[str, Any]:
    """`report` with `lines` added, the per-source-line time of runs `a` and `b` (parsed
    traces) and its change (`analyses.by_line.delta`), when both traces have source lines."""
    from pypto.toolkit.analyses import by_line
    rows = by_line.delta(by_line.report(a, folders[0]), by_line.report(b, folders[1]))
    return report if rows is None else {**report, "lines": rounded(rows)}


def _num(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def format_text(report: dict[str, Any]) -> str:
    out = [f"A: {report['a']}", f"B: {report['b']}", "", "Totals"]
    out += text_table(["", "A", "B", "delta", "B/A"],
                       [[k, _num(v["a"]), _num(v["b"]), _num(v["delta"]),
                         "-" if v["ratio"] is None else f"{v['ratio']:.3f}"]
                        for k, v in report["totals"].items()])
    out += ["", "Leaves (biggest change in total time first; us)"]
    out += text_table(["leaf", "core", "status", "tasks A", "tasks B", "d tasks", "total A",
                       "total B", "d total", "mean A", "mean B"],
                       [[r["name"], r["core"], r["status"], r["tasks_a"], r["tasks_b"],
                         r["tasks_delta"], _num(r["total_us_a"]), _num(r["total_us_b"]),
                         _num(r["total_us_delta"]), _num(r["mean_us_a"]), _num(r["mean_us_b"])]
                        for r in report["leaves"]])
    out += ["", "Critical path"]
    for side in ("a", "b"):
        p = report["critical_path"][side]
        ends = f"{p['names'][0]} .. {p['names'][-1]}" if p["names"] else "-"
        out.append(f"  {side.upper()}: {p['tasks']} tasks, busy {p['busy_us']:.3f} us "
                   f"({p['busy_share_pct']:.1f}% of the span), waiting {p['wait_us']:.3f} us "
                   f"[{p['basis']}]: {ends}")
    if report.get("lines"):
        from pypto.toolkit.analyses.by_line import format_delta
        out += ["", format_delta(report["lines"]).rstrip("\n")]
    return "\n".join(out) + "\n"


def _title(path: str) -> str:
    """A run's short name: its folder for `.../output_<ts>/merged_swimlane.json`."""
    p = Path(path)
    return p.parent.name if p.name == "merged_swimlane.json" else p.name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help="the run before: merged_swimlane.json or a run folder")
    parser.add_argument("b", help="the run after")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("-o", "--output", metavar="HTML",
                        help="also write both swimlanes and the report as one HTML page")


def run(args: argparse.Namespace) -> int:
    da, db = trace.load(args.a), trace.load(args.b)
    report = with_lines(compare(analyze(da, str(args.a)), analyze(db, str(args.b))), da, db)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_text(report))
    if args.output:
        # NOTE: imported here so the text diff never pays for (or depends on) the viewer
        from pypto.toolkit.viewer import render_diff_html
        path = render_diff_html(da, db, report, args.output,
                                titles=(_title(args.a), _title(args.b)))
        # (stdout, unless it holds the JSON report)
        print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0
