"""The files of one simulated run (`runtime_debug_mode=1`), in PyPTO's layout.

Takes a `SimResult` and the traced program → `output/output_<ts>/` holding
`merged_swimlane.json`, `swimlane.html` (the toolkit viewer of that file), `program.json` (+ DOT
per root function), the stats report and the bubble report, and prints the one-line summary.
Returns the folder.
"""
from __future__ import annotations

import os
import sys

from pypto.ir.dump import dump_program
from pypto.ir.program import Program
from pypto.machine.result import SimResult
from pypto.profiling.reports import one_line_summary, write_reports
from pypto.profiling.swimlane import read_swimlane, write_swimlane


def write_run(result: SimResult, program: Program, folder: str) -> str:
    os.makedirs(folder, exist_ok=True)
    swimlane = write_swimlane(result, os.path.join(folder, "merged_swimlane.json"))
    _write_viewer(swimlane, folder)
    if not os.path.exists(os.path.join(folder, "program.json")):
        dump_program(program, folder)
    write_reports(result, folder)
    print(f"[pypto] {one_line_summary(result)} -> {swimlane}", file=sys.stderr)
    return folder


def _write_viewer(swimlane: str | os.PathLike, folder: str) -> None:
    """`swimlane.html` beside the trace, read back from the file just written so the page shows
    exactly what the toolkit's `view` would."""
    # NOTE: imported here: the toolkit is a later stage than profiling and imports it
    from pypto.toolkit.viewer import render_view_html

    data = read_swimlane(swimlane)
    graph = os.path.join(folder, "graph.html")
    render_view_html(data, os.path.join(folder, "swimlane.html"),
                     title=str(data.other.get("kernel") or os.path.basename(folder)),
                     graph=graph if os.path.exists(graph) else None)
