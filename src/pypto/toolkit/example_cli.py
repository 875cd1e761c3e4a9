"""The command line every example script shares: `script.py [example_id] [--list]
[--run_mode npu|sim]`, PyPTO's example convention.

`run_examples` runs the selected examples (all by default), reports each as passed or failed,
and returns the exit code (0 all passed, 1 some failed, 2 unknown example id). `peek_run_mode`
reads `--run_mode` early, before a script's kernels are decorated with it.
"""
from __future__ import annotations

import argparse
import sys
import traceback
from typing import Any, Callable

from pypto._config import RunMode


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
                 setup: Callable[[str], Any] | None = None) -> int:
    """Parse the command line and run `examples` ({"file::test": fn}). With `setup`, its
    result for the chosen run mode is passed to every example (e.g. the device)."""
    first = next(iter(examples), "file::test")
    parser = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0]
                                     if doc else None)
    parser.add_argument("example_id", nargs="?", default=None,
                        help=f"run one example, e.g. {first} (default: all)")
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    parser.add_argument("--run_mode", choices=["npu", "sim"], default="sim",
                        help="pypto.RunMode for the kernels (default: sim)")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(examples))
        return 0
    extra = (setup(args.run_mode),) if setup is not None else ()
    names = list(examples)
    if args.example_id is not None:
        names = [n for n in examples if args.example_id in (n, n.split("::")[-1])]
        if not names:
            print(f"unknown example '{args.example_id}'; use --list", file=sys.stderr)
            return 2
    failed = []
    for name in names:
        try:
            examples[name](*extra)
        except Exception:  # report every failing example, then exit non-zero
            traceback.print_exc()
            failed.append(name)
            print(f"✗ {name} failed")
        else:
            print(f"✓ {name} passed")
    return 1 if failed else 0
