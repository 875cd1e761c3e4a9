"""Compile time of every example: trace + compile per kernel compile, in one process.

Runs each example script in-process (its own module namespace) with every kernel call
executed as usual, then reports, per script, the number of compiles and the slowest and total
trace+compile time. Target (issue 3): every compile < 0.3 s on a 2-core machine.

    python benchmarks/compile_examples.py [--limit 0.3]
"""
from __future__ import annotations

import argparse
import glob
import io
import os
import runpy
import sys
import time
from contextlib import redirect_stdout

from pypto.driver import JitKernel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(script: str) -> tuple[int, float, float, float]:
    """(compiles, slowest trace+compile s, total trace+compile s, wall s) of one script."""
    created: list[JitKernel] = []
    original = JitKernel.__init__

    def tracking_init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        created.append(self)

    JitKernel.__init__ = tracking_init
    argv = sys.argv
    sys.argv = [script]
    start = time.perf_counter()
    try:
        with redirect_stdout(io.StringIO()):
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as e:
                if e.code not in (0, None):
                    raise RuntimeError(f"{script} exited with {e.code}") from None
    finally:
        JitKernel.__init__ = original
        sys.argv = argv
    wall = time.perf_counter() - start
    times = [t + c for k in created for t, c in k.compile_times]
    return len(times), max(times, default=0.0), sum(times), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=0.3, help="seconds per compile")
    args = parser.parse_args()
    scripts = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.py"), recursive=True))
    print(f"{'example':58} {'compiles':>8} {'max s':>8} {'total s':>8} {'wall s':>8}")
    worst = 0.0
    for path in scripts:
        n, slowest, total, wall = measure(path)
        worst = max(worst, slowest)
        name = os.path.relpath(path, os.path.join(ROOT, "examples"))
        flag = "  <-- over limit" if slowest > args.limit else ""
        print(f"{name:58} {n:8d} {slowest:8.3f} {total:8.3f} {wall:8.2f}{flag}")
    print(f"slowest single compile: {worst:.3f} s (limit {args.limit} s)")
    return 0 if worst <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
