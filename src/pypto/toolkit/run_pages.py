"""A simulated run's folder: its data (written by `pypto.profiling.output`) and its pages.

`write_run` is what a kernel call with `runtime_debug_mode=1` ends with: the data files, then
`swimlane.html` (the viewer of that trace), `graph.html` when the folder also holds the compile
dumps (`compile_debug_mode=1` too; the page of the viewer's Graph tab, so the tab works without
running `pypto-toolkit graph`), and `output/latest` for a folder `output_*`; it prints the
run's one-line summary.
"""
from __future__ import annotations

import os
import sys

from pypto.gc_pause import gc_paused
from pypto.ir.program import Program
from pypto.machine.result import SimResult
from pypto.passes import CompiledProgram
from pypto.profiling.output import write_run_data
from pypto.profiling.reports import one_line_summary
from pypto.profiling.run_columns import RunColumns
from pypto.profiling.swimlane_writer import swimlane_text
from pypto.profiling.swimlane import SwimlaneData
from pypto.profiling.swimlane_reader import read_swimlane
from pypto.runtime.line_shares import leaf_line_shares
from pypto.toolkit.errors import ToolkitError
from pypto.toolkit.graph import write_graph_page
from pypto.toolkit.analyses import hints, page_data
from pypto.toolkit.trace import parse_text
from pypto.toolkit.run_folder import RUN_PREFIX, has_compile_dumps, mark_latest
from pypto.toolkit.viewer import render_view_html

SWIMLANE = "merged_swimlane.json"


def write_run(result: SimResult, program: Program, folder: str,
              compiled: CompiledProgram | None = None) -> str:
    """The run's data files and pages in `folder`; the folder. `compiled`: the program that
    ran, whose leaves' source lines the trace then keeps (`runtime.line_shares`)."""
    with gc_paused():
        graph = has_compile_dumps(folder)
        lines = leaf_line_shares(compiled) if compiled is not None else None
        swimlane = write_run_data(result, program, folder,
                                  lambda columns, text: _pages(columns, text, folder, graph),
                                  lines or None)
        if graph:   # (after the trace: the graph page lists the tasks that ran each op)
            _write_graph(folder)
        if os.path.basename(os.path.abspath(folder)).startswith(RUN_PREFIX):
            mark_latest(folder)
        print(f"[pypto] {one_line_summary(result)} -> {swimlane}", file=sys.stderr)
    return folder


def _pages(columns: RunColumns, text: list[str], folder: str, graph: bool) -> None:
    """While the trace goes to disk: the analyses of the run (read from the trace's text, so
    they are exactly what `view` and `analyze` of the file give), `perf_hints.log`, and
    `swimlane.html` from the columns."""
    analyses = page_data(parse_text(text, os.path.join(folder, SWIMLANE)), folder)
    hints.write_log(analyses["hints"], folder)
    write_viewer(columns, folder, graph, analyses)


def write_viewer(data: RunColumns | SwimlaneData | str | os.PathLike, folder: str,
                 with_graph: bool = False, analyses: dict | None = None) -> None:
    """`swimlane.html` beside the trace, from the run's columns (with their `analyses`), the
    trace's parsed events or the trace file at that path: the page shows exactly what the
    toolkit's `view` of the file would. Its Graph tab shows `graph.html` if that exists or
    `with_graph` (written next)."""
    if not isinstance(data, (RunColumns, SwimlaneData)):
        data = read_swimlane(data)
    if analyses is None:
        parsed = data if isinstance(data, SwimlaneData) else \
            parse_text(swimlane_text(data), os.path.join(folder, SWIMLANE))
        analyses = page_data(parsed, folder)
    graph = os.path.join(folder, "graph.html")
    render_view_html(data, os.path.join(folder, "swimlane.html"),
                     title=str(data.other.get("kernel") or os.path.basename(folder)),
                     graph=graph if with_graph or os.path.exists(graph) else None,
                     analyses=analyses)


def _write_graph(folder: str) -> None:
    """`graph.html` of the run; a dump the page cannot read is reported, not raised: the run
    and its other files are still good."""
    try:
        write_graph_page([folder])
    except ToolkitError as e:
        print(f"[pypto] graph.html not written: {e}", file=sys.stderr)
