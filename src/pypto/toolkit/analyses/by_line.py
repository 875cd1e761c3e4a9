"""Simulated time by the kernel's source line: which lines of the user's code the task time
comes from, split by core type and by cost term.

Takes a parsed swimlane (`SwimlaneData`) whose `otherData.shared_args.lines` holds, per leaf
function, its source lines and their shares of its task time by cost term (written by our
runs: `runtime.line_shares` states the attribution rule) → per line its time (us), share of
all task time, AIC / AIV split, per-term split, leaves and task count. A line's time is
the sum over the tasks of each leaf that has the line of task duration x the line's share
(a leaf's shares sum to 1, so the lines' times sum to the task time of the leaves the table
has; a leaf it lacks is reported as unattributed). A trace without the table (PyPTO's, or
ours written without the compiled program) gives no lines and the reason.

`report(data, folder)` / `to_json` / `format_text` are `pypto-toolkit analyze --by-line`;
`page_data(data, folder)` is the viewer's Source tab (each line's times and the text of the
files involved, read from disk now; None without lines); `delta(a, b)` / `format_delta` the
per-line comparison of two runs (`pypto-toolkit diff`, what-if).
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pypto.profiling.swimlane import LINES_TABLE, SHARED_ARGS, SwimlaneData
from pypto.toolkit.errors import ToolkitError

# the cost terms in display order (`runtime.line_shares.TERMS` and its empty-leaf `head`)
TERM_ORDER = ("mte2", "vector", "cube", "mte1", "fix", "mte3", "head")
# a source file larger than this is not embedded in the page (its lines still list)
MAX_SOURCE_BYTES = 4 << 20


@dataclass
class LineTime:
    """One source line's simulated task time (us)."""

    file: str
    line: int
    us: float
    pct: float                  # of all task time
    aic_us: float
    aiv_us: float
    terms: dict[str, float]     # term -> us
    leaves: list[str]
    tasks: int                  # tasks of the leaves that have this line


@dataclass
class ByLine:
    """The lines, biggest time first; `reason` says why there are none."""

    total_us: float = 0.0               # all task time
    unattributed_us: float = 0.0        # task time of leaves the table lacks
    lines: list[LineTime] = field(default_factory=list)
    reason: str | None = None


def line_table(data: SwimlaneData) -> dict[str, list] | None:
    """The trace's per-leaf line shares, or None when it has none."""
    shared = data.other.get(SHARED_ARGS) if isinstance(data.other, dict) else None
    table = shared.get(LINES_TABLE) if isinstance(shared, dict) else None
    return table if isinstance(table, dict) and table else None


def report(data: SwimlaneData, folder: str | None = None) -> ByLine:
    """Time by source line of the run `data` (see the module docstring)."""
    table = line_table(data)
    if table is None:
        return ByLine(reason="the trace has no source lines (written by PyPTO, or by a run "
                             "without its compiled program)")
    tasks = data.task_columns
    dur = np.asarray(tasks.dur, dtype=float)
    total = float(dur.sum())
    groups = _leaf_core_groups(tasks.args.values("leaf", ""), tasks.args.values("core_type", ""),
                               dur)
    acc: dict[tuple[str, int], dict[str, Any]] = {}
    unattributed = 0.0
    for (leaf, core), (count, busy) in groups.items():
        rows = table.get(leaf)
        if not isinstance(rows, list):
            unattributed += busy
            continue
        for row in rows:
            f, line, shares = _row(row, leaf)
            entry = acc.setdefault((f, line), {"terms": {}, "aic": 0.0, "aiv": 0.0,
                                               "leaves": {}, "tasks": 0})
            part = 0.0
            for term, share in shares.items():
                t = busy * share
                entry["terms"][term] = entry["terms"].get(term, 0.0) + t
                part += t
            side = "aic" if core == "AIC" else "aiv"
            entry[side] += part
            if leaf not in entry["leaves"]:
                entry["leaves"][leaf] = None
            entry["tasks"] += count
    lines = [_line_time(f, line, e, total) for (f, line), e in acc.items()]
    lines.sort(key=lambda x: (-x.us, x.file, x.line))
    return ByLine(total, unattributed, lines)


def heaviest_lines(data: SwimlaneData) -> dict[str, str]:
    """leaf -> the "file:line" with the largest share of its time (ties: the first in the
    table); {} for a trace without the table. What a hint about a leaf's tasks points at."""
    table = line_table(data) or {}
    out = {}
    for leaf, rows in table.items():
        best = None
        for row in rows if isinstance(rows, list) else ():
            f, line, shares = _row(row, leaf)
            share = sum(shares.values())
            if best is None or share > best[0]:
                best = (share, f"{f}:{line}")
        if best is not None:
            out[leaf] = best[1]
    return out


def _leaf_core_groups(leaves: list, cores: list, dur: np.ndarray
                      ) -> dict[tuple[str, str], tuple[int, float]]:
    """(tasks, summed duration) per (leaf, core type)."""
    codes: dict[tuple[str, str], int] = {}
    setdefault = codes.setdefault
    inv = np.fromiter((setdefault(k, len(codes)) for k in zip(map(str, leaves), map(str, cores))),
                      dtype=np.int64, count=len(dur))
    counts = np.bincount(inv, minlength=len(codes)).tolist()
    sums = np.bincount(inv, weights=dur, minlength=len(codes)).tolist()
    return {k: (counts[i], sums[i]) for k, i in codes.items()}


def _row(row: Any, leaf: str) -> tuple[str, int, dict[str, float]]:
    """(file, line, {term: share}) of a table row, or a clear error naming the leaf."""
    if isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and \
            isinstance(row[1], int) and isinstance(row[2], dict) and \
            all(isinstance(v, (int, float)) for v in row[2].values()):
        return row[0], row[1], row[2]
    raise ToolkitError(f"shared_args.{LINES_TABLE}['{leaf}']: a row is not [file, line, "
                       f"{{term: share}}]: {row!r}")


def _line_time(f: str, line: int, e: dict[str, Any], total: float) -> LineTime:
    terms = {t: e["terms"][t] for t in _ordered(e["terms"])}
    us = e["aic"] + e["aiv"]
    return LineTime(f, line, us, 100.0 * us / total if total else 0.0, e["aic"], e["aiv"],
                    terms, list(e["leaves"]), e["tasks"])


def _ordered(terms: Any) -> list[str]:
    return [t for t in TERM_ORDER if t in terms] + sorted(t for t in terms
                                                          if t not in TERM_ORDER)


def to_json(record: ByLine) -> dict[str, Any]:
    return {"total_us": record.total_us, "unattributed_us": record.unattributed_us,
            "reason": record.reason, "lines": [asdict(x) for x in record.lines]}


def where(f: str, line: int) -> str:
    """`file:line` as the text shows it (relative to the working folder when inside it)."""
    if not f:
        return "(no source line)"
    rel = os.path.relpath(f) if os.path.isabs(f) else f
    return f"{rel if not rel.startswith('..') else f}:{line}"


def format_text(record: ByLine, top: int = 40) -> str:
    """The `analyze --by-line` text: the lines by time, with their code when readable."""
    if record.reason:
        return f"Time by source line: not available: {record.reason}\n"
    out = [f"Time by source line ({len(record.lines)} lines, {record.total_us:.3f} us of task "
           f"time; a task's time split over its leaf's lines by the cost model's terms)"]
    terms = _ordered({t for x in record.lines for t in x.terms})
    texts = _Sources()
    shown = record.lines[:top]
    rows = [[where(x.file, x.line), x.us, f"{x.pct:.1f}%", x.aic_us, x.aiv_us,
             *(x.terms.get(t, 0.0) for t in terms)] for x in shown]
    from pypto.toolkit.analyze import text_table
    table = text_table(["line", "us", "share", "AIC us", "AIV us", *terms], rows)
    codes = ["code"] + [texts.line(x.file, x.line)[:72] for x in shown]
    out += [f"{row}  {code}".rstrip() for row, code in zip(table, codes)]
    if len(record.lines) > top:
        rest = sum(x.us for x in record.lines[top:])
        out.append(f"  ... {len(record.lines) - top} more lines, {rest:.3f} us")
    if record.unattributed_us:
        out.append(f"  unattributed (leaves without source lines): "
                   f"{record.unattributed_us:.3f} us")
    return "\n".join(out) + "\n"


class _Sources:
    """The text of source files, read once each (None: not readable)."""

    def __init__(self) -> None:
        self.files: dict[str, list[str] | None] = {}

    def lines(self, f: str) -> list[str] | None:
        if f not in self.files:
            self.files[f] = _read(f)
        return self.files[f]

    def line(self, f: str, line: int) -> str:
        text = self.lines(f)
        return text[line - 1].strip() if text and 0 < line <= len(text) else ""


def _read(f: str) -> list[str] | None:
    try:
        if not f or os.path.getsize(f) > MAX_SOURCE_BYTES:
            return None
        with open(f, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return None


def page_data(data: SwimlaneData, folder: str | None = None) -> dict[str, Any] | None:
    """The Source tab's data: the lines (by file, then line) with their times, and each
    file's text (None: "source not available"); None when the trace has no lines."""
    try:
        record = report(data, folder)
    except ToolkitError:
        return None             # (a malformed table: `analyze --by-line` names the culprit)
    if record.reason:
        return None
    sources = _Sources()
    lines = sorted(record.lines, key=lambda x: (x.file, x.line))
    files = {x.file: sources.lines(x.file) for x in lines}
    return {"total_us": record.total_us, "unattributed_us": record.unattributed_us,
            "terms": _ordered({t for x in lines for t in x.terms}),
            "lines": [asdict(x) for x in lines], "files": files}


def delta(a: ByLine, b: ByLine) -> list[dict[str, Any]] | None:
    """Per line of either run: its time in A and in B (us) and B - A, the biggest change
    first; None unless both runs have lines."""
    if a.reason or b.reason:
        return None
    ta = {(x.file, x.line): x.us for x in a.lines}
    tb = {(x.file, x.line): x.us for x in b.lines}
    rows = [{"file": f, "line": line, "a_us": ta.get((f, line), 0.0),
             "b_us": tb.get((f, line), 0.0),
             "delta_us": tb.get((f, line), 0.0) - ta.get((f, line), 0.0)}
            for f, line in list(ta) + [k for k in tb if k not in ta]]
    rows.sort(key=lambda r: (-abs(r["delta_us"]), r["file"], r["line"]))
    return rows


def format_delta(rows: list[dict[str, Any]], titles: tuple[str, str] = ("A", "B")) -> str:
    """The per-line comparison as text."""
    from pypto.toolkit.analyze import text_table
    out = [f"Time by source line (us; biggest change first; {titles[0]} -> {titles[1]})"]
    out += text_table(["line", titles[0], titles[1], "delta"],
                      [[where(r["file"], r["line"]), r["a_us"], r["b_us"],
                        f"{r['delta_us']:+.3f}"] for r in rows])
    return "\n".join(out) + "\n"
