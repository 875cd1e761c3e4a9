"""The data files of one simulated run (`runtime_debug_mode=1`), in PyPTO's layout.

Takes a `SimResult` and the traced program → `merged_swimlane.json`, `program.json` (+ DOT per
root function), the stats report and the bubble report in the run folder. The pages made from
them (`swimlane.html`, `graph.html`) and `output/latest` are the toolkit's
(`pypto.toolkit.run_pages.write_run`, which calls this first).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from pypto.ir.dump import dump_program
from pypto.ir.program import Program
from pypto.machine.result import SimResult
from pypto.profiling.reports import write_reports
from pypto.profiling.run_columns import RunColumns, run_columns
from pypto.profiling.swimlane_writer import swimlane_text, write_text


def write_run_data(result: SimResult, program: Program, folder: str,
                   while_writing: Callable[[RunColumns, list[str]], None] | None = None,
                   lines: dict[str, list] | None = None) -> str:
    """Write the run's data files into `folder` (made if missing); the trace's path.
    `while_writing(columns, text)` runs while the trace goes to disk, on the columns it was
    made from and the trace's text (in pieces): the toolkit's viewer page shows the same run
    without reading the file back. `lines`: each leaf's source-line shares
    (`runtime.line_shares`), kept in the trace for the time-by-line analysis."""
    os.makedirs(folder, exist_ok=True)
    columns = run_columns(result, lines)
    trace = swimlane_text(columns)
    with ThreadPoolExecutor(max_workers=1) as disk:
        # NOTE: the trace (~45 MB for 10k tasks) goes to disk while the page and the reports
        # are made: the write system calls run without the GIL
        written = disk.submit(write_text, os.path.join(folder, "merged_swimlane.json"), trace)
        if while_writing is not None:
            while_writing(columns, trace)
        del trace
        pred_ends = columns.pred_ends
        del columns
        if not os.path.exists(os.path.join(folder, "program.json")):
            dump_program(program, folder)
        write_reports(result, folder, pred_ends)
    return written.result()
