"""Before/after tuning cases: one kernel in two (or more) variants, run, checked, compared.

The tuning guide teaches each technique as "this kernel, changed like so, gets faster". A
`Case` holds the variants of one technique (`before` first, `after` last, a sweep in between),
the metric the guide names, and the published figure if there is one. `run_case` runs every
variant once with fresh inputs, checks its numbers against the variant's torch golden, writes
its run folder (`merged_swimlane.json`, reports, program, the compile dumps and so the
viewer's Graph tab) under `output/tuning/<case>/`,
writes the diff HTML of before vs after (through `pypto-toolkit diff`), and returns the
measurements plus a one-line verdict. `main` is the command line the scripts in
`examples/tuning/` share; `benchmarks/tuning_cases.py` runs them all into a table.

A case whose "after" does not beat its "before" in our model is not hidden: its verdict says
so, and `Case.disagreement` (when set) says why.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import webbrowser
from dataclasses import dataclass, field
from typing import Any, Callable

from pypto.profiling.reports import run_numbers

#: metric name -> (label, unit, lower is better)
METRICS = {
    "kernel_us": ("kernel time", "us", True),
    "e2e_us": ("end-to-end time", "us", True),
    "tasks": ("tasks", "", True),
    "instances": ("root instances", "", True),
    "aicpu_us": ("AICPU time", "us", True),
    "gm_bytes": ("GM bytes", "B", True),
    "l1_load_bytes": ("GM->L1 bytes", "B", True),
    "l2_hit_pct": ("L2 hit ratio", "%", False),
    "util_pct": ("core utilisation", "%", False),
}


@dataclass
class Variant:
    """One version of the kernel: `run()` calls it on fresh inputs and returns
    `(runs, check)`: `runs` holds `(kernel.last_run, kernel.last_program,
    kernel.last_compiled)` of each call (one per input size), `check()` asserts the outputs
    against the torch golden."""

    name: str
    run: Callable[[], tuple[list[tuple[Any, Any, Any]], Callable[[], None]]]
    description: str = ""


def checked(name: str, kernel: Any, inputs: Callable[[], tuple] | list[Callable[[], tuple]],
            golden: Callable[..., Any], outputs: tuple[int, ...] = (-1,),
            description: str = "", **tolerance: Any) -> Variant:
    """The usual variant: call `kernel(*inputs())`, then compare the arguments at `outputs`
    with `golden(*args)` (one tensor, or a tuple for several outputs). A list of input makers
    runs the kernel once per input set (e.g. several sizes); the variant's numbers are summed
    over the calls."""
    makers = inputs if isinstance(inputs, list) else [inputs]

    def run() -> tuple[list[tuple[Any, Any, Any]], Callable[[], None]]:
        import torch
        calls, runs = [], []
        for make in makers:
            args = make()
            kernel(*args)
            calls.append(args)
            runs.append((kernel.last_run, kernel.last_program, kernel.last_compiled))

        def check() -> None:
            for args in calls:
                expected = golden(*args)
                expected = expected if isinstance(expected, tuple) else (expected,)
                for i, e in zip(outputs, expected):
                    torch.testing.assert_close(args[i], e, **tolerance)
        return runs, check
    return Variant(name, run, description)


@dataclass
class Measured:
    """The numbers of one variant's run (times in us)."""

    variant: str
    kernel_us: float
    e2e_us: float
    tasks: int
    instances: int
    aicpu_us: float
    gm_bytes: float
    l1_load_bytes: float
    l2_hit_pct: float
    util_pct: float
    folder: str | None = None

    def get(self, metric: str) -> float:
        return float(getattr(self, metric))


@dataclass
class Case:
    """A technique: its variants (before first, after last) and what should improve."""

    slug: str                       # folder and script name, e.g. "01_static_axis_for"
    title: str
    metric: str                     # a METRICS key: what the guide says improves
    variants: list[Variant]
    guide: str = ""                 # the published figure, if the guide gives one
    # custom verdict over all variants (sweeps): returns (holds, one-line text)
    verdict: Callable[[list[Measured]], tuple[bool, str]] | None = None
    disagreement: str = ""          # why our model does not show the guide's effect, if so
    extra_metrics: tuple[str, ...] = ()   # other columns worth showing for this case


@dataclass
class CaseResult:
    case: Case
    measured: list[Measured]
    holds: bool
    verdict: str
    diff_html: str | None = None
    failures: list[str] = field(default_factory=list)   # variants whose numerics failed


def measure(name: str, runs: list[Any]) -> Measured:
    """The headline numbers of a variant: summed over its calls' simulated runs (ratios are
    weighted by time or bytes)."""
    total = Measured(name, 0.0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
    hit_bytes = read_bytes = busy = lanes_time = 0.0
    for result in runs:
        nums = run_numbers(result)
        mhz, st = result.clock_mhz, result.stats
        total.kernel_us += nums.kernel_cycles / mhz
        total.e2e_us += nums.e2e_cycles / mhz
        total.tasks += nums.tasks
        total.instances += nums.instances
        total.aicpu_us += (st.get("aicpu_build_cycles", 0.0)
                           + st.get("aicpu_sched_cycles", 0.0)) / mhz
        total.gm_bytes += (nums.gm_read_bytes or 0.0) + (nums.gm_write_bytes or 0.0)
        total.l1_load_bytes += sum(r.task.mte2_bytes for r in result.tasks
                                   if r.task.core == "AIC")
        hit_bytes += nums.l2_hit_bytes or 0.0
        read_bytes += nums.gm_read_bytes or 0.0
        busy += nums.aic_busy + nums.aiv_busy
        lanes_time += (result.aic + result.aiv) * nums.kernel_cycles
    total.l2_hit_pct = 100.0 * hit_bytes / read_bytes if read_bytes else 0.0
    total.util_pct = 100.0 * busy / lanes_time if lanes_time else 0.0
    return total


def default_verdict(case: Case, runs: list[Measured]) -> tuple[bool, str]:
    label, unit, lower = METRICS[case.metric]
    before, after = runs[0].get(case.metric), runs[-1].get(case.metric)
    holds = after < before if lower else after > before
    good, bad = (before, after) if lower else (after, before)
    change = f"{good / bad:.2f}x" if bad and good else "from zero" if good else "both zero"
    return holds, (f"{label}: {runs[0].variant} {_fmt(before, unit)} -> {runs[-1].variant} "
                   f"{_fmt(after, unit)} ({change} {'better' if holds else 'NOT better'})")


def _fmt(value: float, unit: str) -> str:
    if unit == "B":
        return f"{value / 2**20:.2f} MiB"
    if unit == "us":
        return f"{value:.1f} us"
    if unit == "%":
        return f"{value:.1f}%"
    return f"{value:g}"


def run_case(case: Case, out_root: str = os.path.join("output", "tuning"),
             write: bool = True) -> CaseResult:
    """Run every variant of `case`; see the module docstring."""
    from pypto.passes.dump import dump_compiled
    from pypto.toolkit.run_pages import write_run
    measured, failures = [], []
    for v in case.variants:
        runs, check = v.run()
        try:
            check()
        except AssertionError as e:
            failures.append(f"{v.name}: {str(e).splitlines()[0]}")
        m = measure(v.name, [result for result, _, _ in runs])
        if write:   # the swimlane of the last (for size sweeps: the largest) call
            m.folder = os.path.join(out_root, case.slug, _safe(v.name))
            result, program, compiled = runs[-1]
            # the compile dumps first: with them the run folder gets graph.html (Graph tab)
            dump_compiled(compiled, m.folder)
            write_run(result, program, m.folder, compiled)
        measured.append(m)
    holds, text = (case.verdict or (lambda r: default_verdict(case, r)))(measured)
    diff_html = _write_diff(measured[0], measured[-1], out_root, case) if write else None
    return CaseResult(case, measured, holds, text, diff_html, failures)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _write_diff(a: Measured, b: Measured, out_root: str, case: Case) -> str | None:
    """before vs after as one HTML (the toolkit's diff view); None if it could not be made."""
    from pypto.toolkit.errors import ToolkitError
    from pypto.tune.whatif import write_diff
    try:
        return write_diff(a.folder, b.folder, os.path.join(out_root, case.slug, "diff.html"))
    except ToolkitError:
        return None


def main(case: Case, argv: list[str] | None = None) -> int:
    """`script.py [--out DIR] [--no-write]`: run the case, print each variant and the verdict.
    Exit code 1 when a variant's numbers differ from its golden (the verdict does not change
    the exit code: a model disagreement is reported, not an error)."""
    parser = argparse.ArgumentParser(description=case.title)
    parser.add_argument("--out", default=os.path.join("output", "tuning"),
                        help="folder for the run folders and diff HTML (default: %(default)s)")
    parser.add_argument("--no-write", action="store_true",
                        help="only measure: write no swimlanes or HTML")
    # the examples' flags: a case writes its swimlanes anyway, so --swimlane only says so
    parser.add_argument("--swimlane", action="store_true",
                        help="write each variant's run folder (the default; as the examples)")
    parser.add_argument("--open", action="store_true",
                        help="open the last variant's swimlane.html in the browser")
    args = parser.parse_args(argv)
    if args.no_write and (args.swimlane or args.open):
        parser.error("--no-write writes no swimlane: it excludes --swimlane and --open")
    result = run_case(case, args.out, write=not args.no_write)
    for m in result.measured:
        where = f"  -> {m.folder}" if m.folder else ""
        print(f"  {m.variant:<28} kernel {m.kernel_us:9.1f} us  e2e {m.e2e_us:9.1f} us  "
              f"tasks {m.tasks:6d}  util {m.util_pct:5.1f}%{where}")
    if result.diff_html:
        print(f"  diff: {result.diff_html}")
    # "~": the model does not show the guide's effect and the case documents why (reported,
    # not an error); "✗" is reserved for an undocumented miss
    mark = "✓" if result.holds else "~" if case.disagreement else "✗"
    print(f"{mark} {case.slug}: {result.verdict}"
          + (f" [guide: {case.guide}]" if case.guide else ""))
    if not result.holds and case.disagreement:
        print(f"  model note: {case.disagreement}")
    for f in result.failures:
        print(f"✗ numerics: {f}", file=sys.stderr)
    if args.open and result.measured[-1].folder:
        page = os.path.join(result.measured[-1].folder, "swimlane.html")
        webbrowser.open(pathlib.Path(page).resolve().as_uri())
    return 1 if result.failures else 0
