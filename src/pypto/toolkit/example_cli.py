"""The command line every example script shares: `script.py [example_id] [--list]
[--run_mode npu|sim] [--swimlane [--open]] [--timing-only]`, PyPTO's example convention plus
the swimlane.

`run_examples` runs the selected examples (all by default), reports each as passed or failed,
and returns the exit code (0 all passed, 1 some failed, 2 unknown example id). `peek_run_mode`
reads `--run_mode` early, before a script's kernels are decorated with it. `--swimlane` runs
every kernel with both debug modes (the run folder: swimlane, reports, compile dumps and the
graph page of the viewer's Graph tab) and prints each folder written as `wrote <folder>`;
`--open` also opens the last one's swimlane.html in the default browser. Entries outside
`default` are full size (run only when named; `--list` marks them); `--timing-only` runs them
with `numerics="timing_only"` (the same timeline, no arithmetic), and `checking()` tells the
script to skip their golden checks meanwhile.
"""
from __future__ import annotations

import argparse
import contextlib
import glob
import os
import sys
import traceback
import webbrowser
from pathlib import Path
from typing import Any, Callable, Iterator

from pypto._config import RunMode
from pypto.toolkit.run_folder import kernel_of

# both modes: the run's swimlane, and the compile dumps that the viewer's Graph tab shows
SWIMLANE_DEBUG_OPTIONS = {"runtime_debug_mode": 1, "compile_debug_mode": 1}
_timing_only = False   # set by --timing-only while the examples run


def checking() -> bool:
    """Whether the example should check its results against the golden: not under
    `--timing-only`, where no arithmetic runs."""
    return not _timing_only


def peek_run_mode(argv: list[str] | None = None) -> RunMode:
    """`--run_mode` from the command line (default sim), read before argparse runs."""
    argv = sys.argv if argv is None else argv
    mode = "sim"
    for i, arg in enumerate(argv):
        if arg == "--run_mode" and i + 1 < len(argv):
            mode = argv[i + 1]
        elif arg.startswith("--run_mode="):
            mode = arg.split("=", 1)[1]
    return RunMode.NPU if mode == "npu" else RunMode.SIM


def run_examples(examples: dict[str, Callable[..., Any]], doc: str | None,
                 argv: list[str] | None = None,
                 setup: Callable[[str], Any] | None = None,
                 default: list[str] | None = None) -> int:
    """Parse the command line and run `examples` ({"file::test": fn}). With `setup`, its
    result for the chosen run mode is passed to every example (e.g. the device). `default`
    lists the ids run when none is named (all by default): slow ones, such as a model at full
    size, then run only when named, and `--list` still shows them."""
    args = _parser(next(iter(examples), "file::test"), doc).parse_args(argv)
    args.swimlane = args.swimlane or args.open
    full_size = [] if default is None else [n for n in examples if n not in default]
    if args.list:
        print("\n".join(f"{n}  (full size: run only when named; --timing-only)"
                        if n in full_size else n for n in examples))
        return 0
    extra = (setup(args.run_mode),) if setup is not None else ()
    names = _selected(examples, args.example_id, default)
    if args.example_id is not None and not names:
        print(f"unknown example '{args.example_id}'; use --list", file=sys.stderr)
        return 2
    checked = [n for n in names if n not in full_size] if args.timing_only else []
    if checked:
        print(f"--timing-only is for the full-size entries, which then skip their golden "
              f"check; {', '.join(checked)} {'is' if len(checked) == 1 else 'are'} not "
              f"(see --list)", file=sys.stderr)
        return 2
    failed, written = _run_each(examples, names, extra, args)
    _say_how_to_view(written)
    if args.open:
        _open_swimlane(written)
    return 1 if failed else 0


def _say_how_to_view(written: list[str]) -> None:
    """After runs of several kernels: `view output` opens only the newest, so name them."""
    kernels = list(dict.fromkeys(k for k in map(kernel_of, written) if k))
    if len(kernels) > 1:
        print(f"{len(written)} run folders of {len(kernels)} kernels under output/; "
              f"`pypto-toolkit view output` opens the newest ({kernels[-1]}); pick one with "
              f"--kernel NAME: {', '.join(kernels)}")


def _parser(first: str, doc: str | None) -> argparse.ArgumentParser:
    """The shared options; `first` is the example id the help shows."""
    parser = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0]
                                     if doc else None)
    parser.add_argument("example_id", nargs="?", default=None,
                        help=f"run one example, e.g. {first} (default: all)")
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    parser.add_argument("--run_mode", choices=["npu", "sim"], default="sim",
                        help="pypto.RunMode for the kernels (default: sim)")
    parser.add_argument("--swimlane", action="store_true",
                        help="write each kernel call's run folder under ./output (swimlane.html, "
                             "graph.html, reports) and print it; newest: output/latest")
    parser.add_argument("--open", action="store_true",
                        help="open the last run's swimlane.html in the browser (implies "
                             "--swimlane)")
    parser.add_argument("--timing-only", action="store_true",
                        help="run full-size entries with numerics='timing_only': the same "
                             "simulated timeline in a fraction of the time, no golden check")
    return parser


def _selected(examples: dict[str, Callable[..., Any]], example_id: str | None,
              default: list[str] | None) -> list[str]:
    """The ids to run: the one named (by full id or test name; none if unknown), else the
    default ones, else all."""
    if example_id is not None:
        return [n for n in examples if example_id in (n, n.split("::")[-1])]
    return list(examples) if default is None else [n for n in examples if n in default]


def _run_each(examples: dict[str, Callable[..., Any]], names: list[str], extra: tuple,
              args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """Run each named example, reporting it as passed or failed (a failure does not stop the
    others); the failed ids and the run folders written, in order."""
    failed, written = [], []
    for name in names:
        with _run_folders(args.swimlane) as folders, _timing(args.timing_only):
            try:
                examples[name](*extra)
            except Exception:  # report every failing example, then exit non-zero
                traceback.print_exc()
                failed.append(name)
                print(f"✗ {name} failed")
            else:
                print(f"✓ {name} passed")
        for folder in folders:
            print(f"wrote {folder}")
        written += folders
    return failed, written


@contextlib.contextmanager
def _timing(on: bool) -> Iterator[None]:
    """With `on`, every kernel call inside runs timing-only and `checking()` is False."""
    global _timing_only
    if not on:
        yield
        return
    from pypto.frontend.options import options
    _timing_only = True
    try:
        with options(runtime_options={"numerics": "timing_only"}):
            yield
    finally:
        _timing_only = False


@contextlib.contextmanager
def _run_folders(swimlane: bool) -> Iterator[list[str]]:
    """With `swimlane`, every kernel call inside writes its run folder; yields the list that
    holds the new folders (in time order) once the block is done."""
    folders: list[str] = []
    if not swimlane:
        yield folders
        return
    from pypto.frontend.options import options
    pattern = os.path.join("output", "output_*")
    before = set(glob.glob(pattern))
    try:
        # NOTE: an option scope around the example: every kernel inherits the debug modes
        # (a kernel's own debug_options still win) and they end with the example
        with options(debug_options=SWIMLANE_DEBUG_OPTIONS):
            yield folders
    finally:
        # (the folder names are timestamps, so name order is time order)
        folders += sorted(set(glob.glob(pattern)) - before)


def _open_swimlane(folders: list[str]) -> None:
    pages = [os.path.join(f, "swimlane.html") for f in folders
             if os.path.isfile(os.path.join(f, "swimlane.html"))]
    if not pages:
        print("--open: no swimlane.html was written (no kernel ran)", file=sys.stderr)
        return
    webbrowser.open(Path(pages[-1]).resolve().as_uri())
