"""`pypto-toolkit`: the command-line entry of the offline toolkit.

Each subcommand lives in its own module, which exposes `add_arguments(parser)` and
`run(args) -> int` (the exit code); this file only wires them up. Building the parser imports
every subcommand module (for its options), so those modules import their heavy parts inside
`run`, keeping `pypto-toolkit --help` instant. Errors a user can fix (a missing or
malformed file, a bad option) are raised as `ToolkitError` and printed as one line naming the
culprit, with exit code 2. Commands print each file they write as one `wrote <path>` line.

`view`, `analyze` and `graph` read one run: their run argument may be a folder of runs
(`output/`, meaning its newest run) or left out (meaning `./output`'s newest run); the
resolution is `run_folder.newest_run`.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from pypto._version import __version__
from pypto.gc_pause import gc_paused
from pypto.toolkit.errors import ToolkitError

# subcommand -> (module, one-line help)
SUBCOMMANDS = {
    "view": ("pypto.toolkit.view",
             "turn a merged_swimlane.json into one self-contained HTML viewer"),
    "analyze": ("pypto.toolkit.analyze",
                "busy/idle, bubbles, critical path, per-leaf stats and tuning advice"),
    "diff": ("pypto.toolkit.diff", "compare two runs: totals, per-leaf deltas, both swimlanes"),
    "compare": ("pypto.calibration.compare_command",
                "a simulated run against a board's trace: times, per-leaf ratios, and which "
                "of the model's mechanisms the gap points at"),
    "graph": ("pypto.toolkit.graph",
              "compiled-graph views (tensor/tile/execute/block) of a run's output folder"),
    "whatif": ("pypto.tune.whatif",
               "run a script's kernels again with knobs changed (--set), and diff the runs"),
    "tune": ("pypto.tune.report",
             "tune the kernels a script calls on the simulated machine; an HTML report each"),
    "calibrate": ("pypto.calibration.command",
                  "fit the simulated machine's constants to board traces of a script's kernel "
                  "calls; writes a machine preset TOML"),
}


# subcommand -> (its run argument, what a run must hold for it)
RUN_ARGUMENTS = {"view": ("trace", "swimlane"), "analyze": ("trace", "swimlane"),
                 "graph": ("output_dir", "compile_dumps")}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pypto-toolkit",
        description="OpenPTO toolkit for kernels written against the PyPTO API: swimlane "
                    "viewer, analysis, diff and graph views of runs; what-if and tuning on the "
                    "simulated machine; comparison with and calibration to a board's traces.")
    parser.add_argument("--version", action="version", version=f"openpto {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                parser_class=_SubcommandParser)
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        p.run_argument = RUN_ARGUMENTS.get(name, (None,))[0]
        _module(module).add_arguments(p)
        if name in RUN_ARGUMENTS:
            p.add_argument("--kernel", default=None, metavar="NAME",
                           help="from a folder of runs, the newest run of this kernel (a "
                                "script that calls several kernels writes a run each)")
    return parser


class _SubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser; its run argument (`run_argument`, the positional of that dest)
    may be left out (`./output`) or name a folder of runs (its newest run)."""

    run_argument: str | None = None

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        # NOTE: the subcommand modules declare the argument; it is widened here, where it is
        # resolved, so the modules keep taking one run and know nothing of folders of runs
        action = super().add_argument(*args, **kwargs)
        if action.dest == self.run_argument and not action.option_strings:
            action.nargs, action.default = "?", None
            action.help = (f"{action.help}; or a folder of runs (its newest run); "
                           "default: the newest run in ./output")
        return action


def _resolve_run(args: argparse.Namespace) -> None:
    from pypto.toolkit import run_folder
    dest, needs = RUN_ARGUMENTS[args.command]
    holds = run_folder.has_compile_dumps if needs == "compile_dumps" else run_folder.has_swimlane
    setattr(args, dest, run_folder.newest_run(getattr(args, dest), holds, args.kernel))


def _module(name: str):
    return importlib.import_module(name)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    # NOTE: a command holds a parsed trace of millions of acyclic objects from start to end;
    # every full pass of the cyclic GC would walk them all (a 1M-event view spent half its
    # time there), so the collector is paused for the command (refcounting still frees)
    with gc_paused():
        try:
            if args.command in RUN_ARGUMENTS:
                _resolve_run(args)
            return int(_module(args._module).run(args) or 0)
        except ToolkitError as e:
            print(f"pypto-toolkit {args.command}: error: {e}", file=sys.stderr)
            return 2
        except RecursionError:      # (the readers stop deeper JSON; this is the last resort)
            print(f"pypto-toolkit {args.command}: error: an input is nested too deeply to "
                  "process", file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
