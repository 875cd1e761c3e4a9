"""The advisor's findings as hints, one line each in `perf_hints.log` beside the swimlane (what
the next-gen PyPTO runtime writes), each naming the source line it is about.

Takes a parsed swimlane (and its run folder) → `Hint`s: every advisor finding whose status is
"advise" (`toolkit.advisor`), heaviest expected gain first, with its knob, its evidence and the
line: of the tasks the finding rests on, the leaf that spent the most time, and of that leaf's
ops the source line that spent the most (`by_line`). A trace without line data (PyPTO's own
files) gives hints whose line is "?": the finding stands, only the line is unknown.

The log's format, so a script can read it: a `#` header, then per hint one line of ` | `
separated fields, `knob | file:line | summary | evidence; evidence; ... | gain`. No field
holds a newline or " | " (both are replaced), so the split is exact.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from pypto.profiling.swimlane import SwimlaneData
from pypto.toolkit import analyze
from pypto.toolkit.analyses import by_line
from pypto.toolkit.findings import Advice

LOG_NAME = "perf_hints.log"
UNKNOWN_LINE = "?"
_HEADER = ("# perf_hints.log (OpenPTO): one finding per line, heaviest expected gain first\n"
           "# knob | file:line | summary | evidence; ... | expected gain\n")


@dataclass(frozen=True)
class Hint:
    rule: str
    knob: str
    line: str                   # "file:line" the finding is about, or "?"
    summary: str
    evidence: tuple[str, ...]
    gain_us: float | None       # a rough upper bound, as the advisor states it
    tasks: tuple[str, ...]      # names of (some of) the tasks it rests on
    time_range: tuple[float, float] | None

    def log_line(self) -> str:
        gain = f"up to ~{self.gain_us:.2f} us" if self.gain_us is not None else "-"
        fields = (self.knob, self.line, self.summary, "; ".join(self.evidence) or "-", gain)
        return " | ".join(_one_line(f) for f in fields)


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace(" | ", " / ")


def hints(data: SwimlaneData, advice: tuple[Advice, ...] | None = None) -> list[Hint]:
    """The hints of the run `data` (`advice`: the advisor's findings, if already made)."""
    if advice is None:
        advice = analyze.analyze(data, lanes=False).advice     # (the rules read no lanes)
    todo = sorted((a for a in advice if a.status == "advise"),
                  key=lambda a: (-(a.gain_us or 0.0), a.rule))
    line_of = _line_finder(data, todo)
    return [Hint(a.rule, a.knob, line_of(a.tasks), a.summary, a.evidence, a.gain_us, a.tasks,
                 a.time_range) for a in todo]


def _line_finder(data: SwimlaneData, advice: list[Advice]):
    """tasks' names -> the line their heaviest leaf spent the most time on (the names of
    `advice`'s tasks looked up once)."""
    top = by_line.heaviest_lines(data)
    wanted = {name for a in advice for name in a.tasks} if top else set()
    tasks = data.task_columns
    at = [i for i, name in enumerate(tasks.name) if name in wanted]
    leaf = tasks.args.column("leaf")
    found = {tasks.name[i]: (leaf[i], float(tasks.dur[i])) for i in at}

    def line(names: tuple[str, ...]) -> str:
        weight: Counter[str] = Counter()
        for name in names:
            leaf_name, dur = found.get(name, (None, 0.0))
            if isinstance(leaf_name, str) and leaf_name in top:
                weight[leaf_name] += dur
        return top[weight.most_common(1)[0][0]] if weight else UNKNOWN_LINE
    return line


def log_text(rows: list[dict[str, Any]]) -> str:
    """The log of the hints `rows` (`page_data`'s, each with its "log" line)."""
    if not rows:
        return _HEADER + "# no findings: nothing to change was found\n"
    return _HEADER + "".join(r["log"] + "\n" for r in rows)


def write_log(rows: list[dict[str, Any]], folder: str | os.PathLike) -> str:
    """`perf_hints.log` of the hints `rows` (`page_data`'s) in `folder`; its path."""
    path = os.path.join(folder, LOG_NAME)
    with open(path, "w", encoding="utf-8") as f:
        f.write(log_text(rows))
    return path


def page_data(data: SwimlaneData, folder: str | None = None) -> list[dict[str, Any]]:
    """The hints as the viewer's Hints panel lists them."""
    return [{**asdict(h), "log": h.log_line()} for h in hints(data)]
