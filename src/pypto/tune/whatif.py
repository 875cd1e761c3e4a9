"""What-if: the same kernel call again with knobs changed, and what that changes.

Two entries, one result (`WhatIf`: both simulated runs, a before/after table, and `write`
for both run folders plus the toolkit's diff page):
- `kernel.whatif({...}, **knobs)` (`JitKernel.whatif` -> `rerun`) repeats the kernel's last
  call with the knobs of `frontend.knobs` applied. It runs timing only (no arithmetic, the
  caller's tensors untouched) unless the kernel's control flow or offsets read values it
  computes; then it computes on copies of the arguments. The kernel's own last run, program
  and executor stay the ones of the caller's call.
- `pypto-toolkit whatif SCRIPT[::FUNC] --set KNOB=VALUE ...` runs a script (or one
  function of it) twice, as is and with the knobs, and pairs the kernel calls of both runs in
  order. The script runs as written, numerics and golden checks included.

A knob that changes nothing because it matched no call fails the run (`Knobs.check_used`);
one that matched but changes nothing shows up as an unchanged table.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

from pypto.errors import PyptoValueError
from pypto.frontend import knobs as knob_state
from pypto.toolkit.errors import ToolkitError

# (label, how to read it from a SimResult's stats, unit)
METRICS = (("kernel", "kernel_cycles", "us"), ("end to end", "e2e_cycles", "us"),
           ("host end to end", "host_e2e_cycles", "us"), ("tasks", "tasks", ""),
           ("windows", "windows", ""), ("root instances", "instances", ""),
           ("utilisation", "utilization", "%"), ("L2 hit ratio", "l2_hit_ratio", "%"),
           ("HBM reads", "hbm_read_bytes", "MB"))


@dataclass
class WhatIf:
    """One kernel call before and after the knobs (`before`, `after`: `SimResult`s)."""

    kernel: str
    knobs: list[str]
    before: Any
    after: Any
    programs: tuple[Any, Any]
    timing_only: bool = True
    how: str = "timing only"   # how the "after" run ran, for the table's title
    folders: dict[str, str] = field(default_factory=dict)
    # the compiled programs (before, after): the run folders' traces then keep each leaf's
    # source lines, and the diff page shows time by line (`toolkit.analyses.by_line`)
    compiled: tuple[Any, Any] | None = None

    @property
    def speedup(self) -> float:
        """Kernel time before / after (> 1: the knobs made it faster)."""
        after = self.after.stats["kernel_cycles"]
        return self.before.stats["kernel_cycles"] / after if after else float("inf")

    def rows(self) -> list[tuple[str, float, float, str]]:
        """(metric, before, after, unit) in display units."""
        out = []
        for label, key, unit in METRICS:
            a, b = (self._value(r, key, unit) for r in (self.before, self.after))
            if a is not None and b is not None:
                out.append((label, a, b, unit))
        return out

    @staticmethod
    def _value(result: Any, key: str, unit: str) -> float | None:
        v = result.stats.get(key)
        if v is None:
            return None
        return {"us": result.us(v) if key.endswith("cycles") else v, "%": 100 * v,
                "MB": v / 1e6}.get(unit, v)

    def __str__(self) -> str:
        lines = [f"what-if {self.kernel}: {', '.join(self.knobs) or '(no knobs)'} "
                 f"({self.how})",
                 f"  {'metric':<16} {'before':>12} {'after':>12} {'after/before':>13}"]
        for label, a, b, unit in self.rows():
            ratio = f"{b / a:.3f}" if a else "-"
            digits = 0 if not unit else 2
            lines.append(f"  {label:<16} {a:>12,.{digits}f} {b:>12,.{digits}f} {ratio:>13}  "
                         f"{unit}".rstrip())
        lines.append(f"  kernel speedup {self.speedup:.3f}x")
        return "\n".join(lines)

    def write(self, folder: str) -> str:
        """Both runs' folders (`before/`, `after/`) and `diff.html` under `folder`; returns
        the diff page's path."""
        from pypto.toolkit.run_pages import write_run
        compiled = self.compiled or (None, None)
        for name, result, program, comp in (
                ("before", self.before, self.programs[0], compiled[0]),
                ("after", self.after, self.programs[1], compiled[1])):
            self.folders[name] = write_run(result, program, os.path.join(folder, name), comp)
        return write_diff(self.folders["before"], self.folders["after"],
                          os.path.join(folder, "diff.html"))


def by_line_delta(folders: dict[str, str]) -> str:
    """The per-source-line time before and after of two written run folders, as text ("" when
    either trace has no source lines)."""
    from pypto.toolkit import trace
    from pypto.toolkit.analyses import by_line
    a, b = (by_line.report(trace.load(folders[k]), folders[k]) for k in ("before", "after"))
    delta = by_line.delta(a, b)
    return by_line.format_delta(delta, ("before", "after")) if delta is not None else ""


def write_diff(before: str, after: str, path: str) -> str:
    """The toolkit's diff page of two run folders."""
    from pypto.toolkit import trace
    from pypto.toolkit.analyze import analyze
    from pypto.toolkit.diff import compare, with_lines
    from pypto.toolkit.viewer import render_diff_html
    da, db = trace.load(before), trace.load(after)
    report = with_lines(compare(analyze(da, before), analyze(db, after)), da, db,
                        (before, after))
    return str(render_diff_html(da, db, report, path, titles=("before", "after")))


# ---- the kernel API -----------------------------------------------------------------------

def rerun(kernel: Any, assignments: Mapping[str, Any]) -> WhatIf:
    """`kernel`'s last call again with `assignments` applied (see the module docstring)."""
    last = kernel.last
    if last is None:
        raise PyptoValueError(f"kernel '{kernel.__name__}': whatif repeats the kernel's last "
                              f"call; call it once first")
    parsed = knob_state.parse(assignments)
    after = kernel.evaluate(*last.args, knobs=parsed, **last.kwargs)
    how = "timing only" if after.timing_only else \
        "computed on copies: its control flow or offsets read values it computes"
    return WhatIf(kernel.__name__, parsed.describe(), last.run, after.run,
                  (last.program, after.program), after.timing_only, how,
                  compiled=(last.compiled, after.compiled))


# ---- the command line ---------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="a Python file that calls kernels, or FILE::FUNC to "
                                       "call one function of it (no arguments)")
    parser.add_argument("--set", dest="knobs", action="append", default=[], metavar="KNOB=VALUE",
                        help="a knob: an option (stitch_function_max_num=512, "
                             "pass.cube_l1_reuse_setting={-1:4}), a call site "
                             "(vec_tile@kernel.py:42=16,512, "
                             "cube_tile@mm.py:17=[[128,128],[64,256],[256,256]], "
                             "unroll@kernel.py:30=64,16,4, sg_scope@kernel.py:12=1) or a "
                             "tensor parameter's cache policy (cache_policy@w=NONE_CACHEABLE); "
                             "repeatable")
    parser.add_argument("-o", "--output", metavar="DIR", default=os.path.join("output", "whatif"),
                        help="where the runs and diff pages go (default: output/whatif)")


def run(args: argparse.Namespace) -> int:
    if not args.knobs:
        raise ToolkitError("whatif: give at least one --set KNOB=VALUE")
    try:
        parsed = knob_state.parse(dict(map(knob_state.parse_assignment, args.knobs)))
    except PyptoValueError as e:
        raise ToolkitError(str(e)) from None
    before = script_calls(args.script, None)
    after = script_calls(args.script, parsed)
    if len(before) != len(after):
        raise ToolkitError(f"{args.script} made {len(before)} kernel call(s) as written and "
                           f"{len(after)} with the knobs: the calls cannot be paired")
    for n, (a, b) in enumerate(zip(before, after)):
        result = WhatIf(a.name, parsed.describe(), a.run, b.run, (a.program, b.program),
                        timing_only=False,
                        how=f"call {n + 1} of {len(before)}; the script ran as written",
                        compiled=(a.record.compiled, b.record.compiled))
        print(result)
        path = result.write(os.path.join(args.output, f"{n}_{a.name}"))
        lines = by_line_delta(result.folders)
        if lines:
            print(lines, end="")
        print(f"wrote {path}")
    return 0


def script_calls(script: str, knobs: knob_state.Knobs | None) -> list:
    """A `knobs.Call` for every kernel call `script` makes (FILE or FILE::FUNC), with `knobs`
    active (None: as written)."""
    path, _, func = script.partition("::")
    if not os.path.isfile(path):
        raise ToolkitError(f"whatif: no such script '{path}'")
    argv, sys.argv = sys.argv, [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with knob_state.recording() as calls, contextlib.ExitStack() as stack:
            if knobs is not None:
                stack.enter_context(knob_state.applied(knobs))
            namespace = runpy.run_path(path, run_name="__main__" if not func else "__whatif__")
            if func:
                if not callable(namespace.get(func)):
                    raise ToolkitError(f"whatif: {path} has no function '{func}'")
                namespace[func]()
    except PyptoValueError as e:
        raise ToolkitError(str(e)) from None
    except SystemExit as e:
        if e.code not in (0, None):
            raise ToolkitError(f"whatif: {script} exited with {e.code}") from None
    finally:
        sys.argv = argv
        sys.path.pop(0)
    try:
        if knobs is not None:
            knobs.check_used()
    except PyptoValueError as e:
        raise ToolkitError(str(e)) from None
    if not calls:
        raise ToolkitError(f"whatif: {script} called no kernel")
    return calls
