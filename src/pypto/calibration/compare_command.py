"""`pypto-toolkit compare SIM_RUN BOARD_TRACE [--kernel SCRIPT[::FUNC]]`.

Without `--kernel`, the comparison of `toolkit.compare` (traces only). With the script that
made the simulated run, each of the model's constants is also fitted alone to the board by
re-simulating the kernel (`attribution`), which tells apart mechanisms the traces alone
cannot (a row-shape overhead from a bandwidth); the report gains `resimulated`.
"""
from __future__ import annotations

import argparse

from pypto.errors import PyptoError
from pypto.toolkit import compare
from pypto.toolkit.errors import ToolkitError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    compare.add_arguments(parser)
    parser.add_argument("--kernel", default=None, metavar="SCRIPT[::FUNC]",
                        help="the script whose kernel call made SIM_RUN (its first call): "
                             "attribute the gap by re-simulating it, one constant at a time")


def run(args: argparse.Namespace) -> int:
    if args.kernel is None:
        return compare.run(args)
    from pypto.calibration.attribution import attribute
    from pypto.calibration.command import calls_of
    from pypto.machine.spec import table
    try:
        machine = table(args.machine)
    except PyptoError as e:
        raise ToolkitError(f"compare --machine: {e}") from None
    call = calls_of([args.kernel], 1)[0]

    def resimulated(report: dict, board) -> list[str]:
        report["resimulated"] = found = attribute(call, board, machine)
        return resimulated_lines(found)
    return compare.run(args, resimulated)


def resimulated_lines(found: dict) -> list[str]:
    """The re-simulated attribution for people."""
    lines = ["  re-simulated, each constant fitted alone (share of the gap it removes):"]
    for row in found["rows"][:8]:
        lines.append(f"    {row['constant']:<46} x{row['scale']:.3f}  "
                     f"{100 * row['explains']:5.1f} %  ({row['mechanism']})")
    for p in found["points_at"]:
        lines.append(f"  points at: {p['mechanism']}: {p['constant']} x{p['scale']:.2f}")
    if not found["points_at"]:
        lines.append("  points at: no single constant (none removes half the gap alone)")
    return lines
