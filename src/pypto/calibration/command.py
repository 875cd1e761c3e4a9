"""`pypto-toolkit calibrate BOARD_TRACE... --kernel SCRIPT[::FUNC]`: fit the machine to a board.

The script runs once as written (its kernel calls recorded, as `whatif` does); its calls pair
with the board traces in order (one call per trace; a script that makes more calls than there
are traces uses its first ones, and `--kernel` may be given once per trace). The fitted
machine is written as a preset TOML (`-o`, default `calibrated.toml`), and the report says, per
constant, its old and new value, its uncertainty and whether the traces determined it, and
per kernel its error before and after and when predicted by a fit on the others alone.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from typing import Any

from pypto.errors import PyptoError
from pypto.toolkit.errors import ToolkitError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("boards", nargs="+", metavar="BOARD_TRACE",
                        help="swimlanes recorded on the board (merged_swimlane.json, PyPTO's "
                             "or ours), one per kernel call")
    parser.add_argument("--kernel", action="append", required=True, metavar="SCRIPT[::FUNC]",
                        help="the script whose kernel calls the traces recorded (once, or once "
                             "per trace)")
    parser.add_argument("--machine", default=None,
                        help="the machine to start from: a preset or TOML (default: "
                             "$OPENPTO_MACHINE or a2a3)")
    parser.add_argument("--free", action="append", default=[], metavar="NAME",
                        help="also fit this sourced constant (dotted, e.g. dma.gm_to_ub.bw)")
    parser.add_argument("--fix", action="append", default=[], metavar="NAME",
                        help="keep this fitted constant as it is")
    parser.add_argument("--host-e2e-us", default=None, metavar="US[,US...]",
                        help="each trace's end-to-end time by a host timer, in us (a trace "
                             "does not carry it; it determines the host launch), '-' for one "
                             "not measured")
    parser.add_argument("-o", "--output", default="calibrated.toml", metavar="TOML",
                        help="where to write the calibrated machine (default: calibrated.toml)")
    parser.add_argument("--no-held-out", action="store_true",
                        help="skip the leave-one-kernel-out predictions (one fit per kernel)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from pypto.calibration.calibrate import calibrate, summary
    from pypto.calibration.preset import write_preset
    from pypto.machine.spec import resolve, table
    from pypto.toolkit import trace
    try:
        base = table(args.machine)
    except PyptoError as e:
        raise ToolkitError(f"calibrate --machine: {e}") from None
    boards = [trace.load(b) for b in args.boards]
    hosts = _host_times(args.host_e2e_us, len(boards))   # (checked before the script runs)
    calls = calls_of(args.kernel, len(boards))
    try:
        cal = calibrate(calls, boards, base, args.free, args.fix, args.boards,
                        held_out=not args.no_held_out,
                        progress=lambda line: print(line, file=sys.stderr, flush=True),
                        host_e2e_us=hosts)
    except PyptoError as e:
        raise ToolkitError(str(e)) from None
    path = write_preset(cal, args.output, resolve(args.machine))
    report = summary(cal)
    report["preset"] = os.path.abspath(path)
    print(json.dumps(report, indent=1) if args.json else format_text(report))
    print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _host_times(text: str | None, count: int) -> list[float | None]:
    """`--host-e2e-us`: one positive number (or '-') per trace."""
    if text is None:
        return []
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != count:
        raise ToolkitError(f"calibrate --host-e2e-us: {len(parts)} values for {count} traces")
    out: list[float | None] = []
    for p in parts:
        try:
            value = None if p == "-" else float(p)
        except ValueError:
            raise ToolkitError(f"calibrate --host-e2e-us: '{p}' is not a number of us") from None
        if value is not None and not value > 0:
            raise ToolkitError(f"calibrate --host-e2e-us: '{p}' is not a positive time")
        out.append(value)
    return out


def calls_of(scripts: list[str], count: int) -> list:
    """One recorded kernel call per board trace, in order (see the module docstring)."""
    from pypto.calibration.runs import KernelCall
    from pypto.tune.whatif import script_calls
    if len(scripts) not in (1, count):
        raise ToolkitError(f"calibrate: {len(scripts)} --kernel scripts for {count} traces; "
                           f"give one script, or one per trace")
    with contextlib.redirect_stdout(sys.stderr):   # the script's own prints: not the report
        recorded = _recorded(scripts, count, script_calls)
    return [KernelCall(c.name, c.kernel, c.record) for c in recorded]


def _recorded(scripts: list[str], count: int, script_calls: Any) -> list:
    if len(scripts) == 1:
        recorded = script_calls(scripts[0], None)
        if len(recorded) < count:
            raise ToolkitError(f"calibrate: {scripts[0]} made {len(recorded)} kernel calls "
                               f"for {count} traces")
        recorded = recorded[:count]
    else:
        recorded = [script_calls(s, None)[0] for s in scripts]
    return recorded


def format_text(report: dict[str, Any]) -> str:
    """The report for people."""
    lines = ["calibrate: " + ", ".join(
        f"{os.path.basename(b)}: {p['pairs']} of {p['sim_tasks']} tasks paired"
        for b, p in zip(report["boards"], report["paired"]))]
    lines.append(f"  {'constant':<46} {'old':>10} {'new':>10}  +-1 sigma  status")
    for c in report["constants"]:
        u = c["uncertainty"]
        shown = f"{100 * u:6.1f} %" if math.isfinite(u) else "      -"
        lines.append(f"  {c['name']:<46} {c['old']:>10g} {c['new']:>10g}  {shown}   "
                     f"{c['status']}")
    lines.append("  kernel: span ours/board and median leaf error, before -> after"
                 + (" (held out)" if report["held_out"] else ""))
    held = {e["kernel"]: e for e in report["held_out"]}
    for a, b in zip(report["before"], report["after"]):
        line = (f"    {a['kernel']:<40} {a['span_ratio']:.3f} {100 * a['leaf_error']:5.1f} % -> "
                f"{b['span_ratio']:.3f} {100 * b['leaf_error']:5.1f} %")
        if a["kernel"] in held:
            h = held[a["kernel"]]
            line += f"   ({h['span_ratio']:.3f} {100 * h['leaf_error']:5.1f} %)"
        lines.append(line)
    return "\n".join(lines)
