"""`pypto-toolkit graph`: the compiled graphs of a run as one offline HTML page.

Reads the per-stage dumps a kernel writes with `debug_options={"compile_debug_mode": 1}` (see
`pypto.passes.dump`) and, when present, the run's `merged_swimlane.json`; writes a page with,
per root function, the tensor graph, the tile graph coloured by subgraph, the execute graph
(call ops, leaves, merge groups, dependencies classed 1:1 / M:N / order) and each leaf's block
graph (pipes, buffers). With `--diff` it shows two runs side by side with added, removed and
changed nodes marked, which is how a TileShape or `sg_set_scope` edit shows its effect on the
partition. The page is built only on demand so that kernel runs stay cheap.
"""
from __future__ import annotations

import argparse
import os

from pypto.toolkit.errors import ToolkitError
from pypto.toolkit.graphview.diff import diff_runs
from pypto.toolkit.graphview.model import load_run
from pypto.toolkit.graphview.page import build_html
from pypto.toolkit.graphview.tasks import SWIMLANE, task_index

DEFAULT_NAME = "graph.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        f"Without -o the page is written as OUTPUT_DIR/{DEFAULT_NAME}; a {DEFAULT_NAME} next to "
        f"the run's {SWIMLANE} is what enables the 'Graph' tab of `pypto-toolkit view`, which "
        "then links swimlane tasks and call ops both ways.")
    parser.add_argument("output_dir", metavar="OUTPUT_DIR",
                        help="a run folder (output/output_<ts>/) or a file inside it")
    parser.add_argument("-o", "--output", metavar="HTML",
                        help=f"where to write the page (default: OUTPUT_DIR/{DEFAULT_NAME})")
    parser.add_argument("--diff", metavar="RUN_B",
                        help="a second run folder: show both side by side, changes marked")
    parser.add_argument("--source", action="store_true",
                        help="embed the kernel source files so selected ops show their code")


def _run_dir(path: str) -> str:
    if os.path.isfile(path):
        return os.path.dirname(os.path.abspath(path))
    if not os.path.exists(path):
        raise ToolkitError(f"{path}: no such run folder")
    return path


def _load(path: str) -> dict:
    run = load_run(_run_dir(path))
    run["label"] = os.path.basename(run["dir"])
    run["tasks"] = task_index(run["dir"])
    return run


def write_graph_page(paths: list[str], output: str | None = None,
                     source: bool = False) -> str:
    """The page of one run (or two, side by side with the changes marked); its path.
    Default place: OUTPUT_DIR/graph.html of the first run."""
    runs = [_load(p) for p in paths]
    if len(runs) == 2:
        diff_runs(runs[0], runs[1])
    title = " vs ".join(r["label"] for r in runs)
    out = os.path.abspath(output or os.path.join(runs[0]["dir"], DEFAULT_NAME))
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(build_html(runs, f"graphs: {title}", source=source))
    except OSError as e:
        raise ToolkitError(f"{out}: cannot write ({e.strerror})") from None
    return out


def run(args: argparse.Namespace) -> int:
    paths = [args.output_dir] + ([args.diff] if args.diff else [])
    print(f"wrote {write_graph_page(paths, args.output, args.source)}")
    return 0
