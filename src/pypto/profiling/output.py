"""The files of one simulated run (`runtime_debug_mode=1`), in PyPTO's layout.

Takes a `SimResult` and the traced program → `output/output_<ts>/` holding
`merged_swimlane.json`, `swimlane.html` (the toolkit viewer of that file), `program.json` (+ DOT
per root function), the stats report and the bubble report, and prints the one-line summary.
Returns the folder.
"""
from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import Iterator

from pypto.ir.dump import dump_program
from pypto.ir.program import Program
from pypto.machine.result import SimResult
from pypto.profiling.reports import one_line_summary, write_reports
from pypto.profiling.swimlane import (SwimlaneData, read_swimlane, swimlane_data,
                                      swimlane_parts, write_parts)


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Cyclic GC paused for the block. NOTE: writing a run allocates a few hundred thousand
    acyclic containers (events, strings, columns) next to a large live task graph; every
    allocation burst triggers collections that re-walk the live objects (~25 % of the write
    time of a 9k-task run). Any cycle made meanwhile is collected after the block."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def write_run(result: SimResult, program: Program, folder: str) -> str:
    with no_gc():
        return _write_run(result, program, folder)


def _write_run(result: SimResult, program: Program, folder: str) -> str:
    os.makedirs(folder, exist_ok=True)
    parts = swimlane_parts(result)
    swimlane = write_parts(parts, os.path.join(folder, "merged_swimlane.json"))
    # NOTE: the viewer parses the events just written from memory, not from the file: the
    # same data (JSON round-trips our numbers and strings exactly) without reading it back
    _write_viewer(swimlane_data(parts), folder)
    del parts
    if not os.path.exists(os.path.join(folder, "program.json")):
        dump_program(program, folder)
    write_reports(result, folder)
    print(f"[pypto] {one_line_summary(result)} -> {swimlane}", file=sys.stderr)
    return folder


def _write_viewer(data: SwimlaneData | str | os.PathLike, folder: str) -> None:
    """`swimlane.html` beside the trace, from the trace's parsed events (or the trace file at
    that path), so the page shows exactly what the toolkit's `view` of the file would."""
    # NOTE: imported here: the toolkit is a later stage than profiling and imports it
    from pypto.toolkit.viewer import render_view_html

    if not isinstance(data, SwimlaneData):
        data = read_swimlane(data)
    graph = os.path.join(folder, "graph.html")
    render_view_html(data, os.path.join(folder, "swimlane.html"),
                     title=str(data.other.get("kernel") or os.path.basename(folder)),
                     graph=graph if os.path.exists(graph) else None)
