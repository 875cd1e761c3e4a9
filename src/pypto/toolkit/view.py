"""`pypto-toolkit view TRACE`: write the swimlane viewer page of a run and optionally open it.

TRACE is a `merged_swimlane.json` (ours or PyPTO's) or a run folder holding one. The page goes
next to the trace as `swimlane.html` unless `-o` says otherwise; a `graph.html` beside the trace
(or `--graph PATH`) becomes the page's Graph tab.
"""
from __future__ import annotations

import argparse
import webbrowser
from pathlib import Path

from pypto.toolkit.errors import ToolkitError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE",
                        help="merged_swimlane.json, or a run folder (output/output_<ts>/)")
    parser.add_argument("-o", "--output", metavar="OUT.html",
                        help="where to write the page (default: swimlane.html next to TRACE)")
    parser.add_argument("--graph", metavar="PATH",
                        help="graph.html to show in a Graph tab (default: graph.html next to "
                             "TRACE, if present)")
    parser.add_argument("--title", help="page title (default: the kernel name or file name)")
    parser.add_argument("--open", action="store_true", help="open the page in a web browser")


def run(args: argparse.Namespace) -> int:
    # NOTE: imported here so `pypto-toolkit --help` does not load the trace reader
    from pypto.toolkit.trace import load
    from pypto.toolkit.analyses import hints, page_data
    from pypto.toolkit.viewer.pack import pack
    from pypto.toolkit.viewer.page import write_view_page

    trace_path = Path(args.trace)
    folder = trace_path if trace_path.is_dir() else trace_path.parent
    graph = Path(args.graph) if args.graph else folder / "graph.html"
    if args.graph and not graph.is_file():
        raise ToolkitError(f"{graph}: no such file")
    out = Path(args.output) if args.output else folder / "swimlane.html"
    data = load(trace_path)
    title = args.title or str(data.other.get("kernel") or trace_path.resolve().name)
    run = pack(data, title)
    run["analyses"] = page_data(data, str(folder))
    tasks, lanes = len(data.task_columns), len(data.lanes)
    del data            # (the parsed trace is most of the memory; the page needs only `run`)
    try:
        page = write_view_page(run, out, title, graph=graph if graph.is_file() else None)
        hints_log = hints.write_log(run["analyses"]["hints"], out.parent)
    except OSError as e:
        raise ToolkitError(f"{out}: cannot write: {e.strerror or e}") from None
    print(f"wrote {page} ({tasks} tasks on {lanes} lanes) and {hints_log}")
    if args.open:
        webbrowser.open(page.resolve().as_uri())
    return 0
