"""The files of one simulated run (`runtime_debug_mode=1`), in PyPTO's layout.

Takes a `SimResult` and the traced program → `output/output_<ts>/` holding
`merged_swimlane.json`, `swimlane.html` (the toolkit viewer of that file), `program.json` (+ DOT
per root function), the stats report and the bubble report, and prints the one-line summary.
When the folder also holds the compile dumps (`compile_debug_mode=1` too) it writes `graph.html`,
the page of the viewer's Graph tab, so the tab works without running `pypto-toolkit graph`.
A folder `output_*` becomes `output/latest` (`toolkit.run_folder`). Returns the folder.
"""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

from pypto.gc_pause import gc_paused
from pypto.ir.dump import dump_program
from pypto.ir.program import Program
from pypto.machine.result import SimResult
from pypto.profiling.reports import one_line_summary, write_reports
from pypto.profiling.run_columns import RunColumns, run_columns
from pypto.profiling.swimlane import SwimlaneData, read_swimlane
from pypto.profiling.swimlane_writer import swimlane_text, write_text


def write_run(result: SimResult, program: Program, folder: str) -> str:
    with gc_paused():
        return _write_run(result, program, folder)


def _write_run(result: SimResult, program: Program, folder: str) -> str:
    os.makedirs(folder, exist_ok=True)
    # NOTE: imported here: the toolkit is a later stage than profiling and imports it
    from pypto.toolkit.run_folder import RUN_PREFIX, has_compile_dumps, mark_latest
    graph = has_compile_dumps(folder)
    # NOTE: the trace and its viewer page are both made from one set of columns: the page
    # shows what the toolkit's `view` of the file would, without parsing the file back
    columns = run_columns(result)
    trace = swimlane_text(columns)
    with ThreadPoolExecutor(max_workers=1) as disk:
        # NOTE: the trace (~45 MB for 10k tasks) goes to disk while the page and the reports
        # are made: the write system calls run without the GIL
        written = disk.submit(write_text, os.path.join(folder, "merged_swimlane.json"), trace)
        del trace
        _write_viewer(columns, folder, graph)
        pred_ends = columns.pred_ends
        del columns
        if not os.path.exists(os.path.join(folder, "program.json")):
            dump_program(program, folder)
        write_reports(result, folder, pred_ends)
    swimlane = written.result()
    if graph:   # (after the trace: the graph page lists the tasks that ran each op)
        _write_graph(folder)
    if os.path.basename(os.path.abspath(folder)).startswith(RUN_PREFIX):
        mark_latest(folder)
    print(f"[pypto] {one_line_summary(result)} -> {swimlane}", file=sys.stderr)
    return folder


def _write_viewer(data: RunColumns | SwimlaneData | str | os.PathLike, folder: str,
                  with_graph: bool = False) -> None:
    """`swimlane.html` beside the trace, from the run's columns, the trace's parsed events or
    the trace file at that path: the page shows exactly what the toolkit's `view` of the file
    would. Its Graph tab shows `graph.html` if that exists or `with_graph` (written next)."""
    # NOTE: imported here: the toolkit is a later stage than profiling and imports it
    from pypto.toolkit.viewer import render_view_html

    if not isinstance(data, (RunColumns, SwimlaneData)):
        data = read_swimlane(data)
    graph = os.path.join(folder, "graph.html")
    render_view_html(data, os.path.join(folder, "swimlane.html"),
                     title=str(data.other.get("kernel") or os.path.basename(folder)),
                     graph=graph if with_graph or os.path.exists(graph) else None)


def _write_graph(folder: str) -> None:
    """`graph.html` of the run; a dump the page cannot read is reported, not raised: the run
    and its other files are still good."""
    from pypto.toolkit.errors import ToolkitError
    from pypto.toolkit.graph import write_graph_page
    try:
        write_graph_page([folder])
    except ToolkitError as e:
        print(f"[pypto] graph.html not written: {e}", file=sys.stderr)
