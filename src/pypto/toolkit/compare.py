"""`pypto-toolkit compare SIM_RUN BOARD_TRACE`: how far our simulated run of a kernel is from a
board's trace of the same kernel, and which of the model's mechanisms each gap points at.

Both files are swimlanes (`merged_swimlane.json`, ours or PyPTO's, any version `trace` reads);
their tasks are paired by program order (`task_pairs`), and what stays unpaired is listed. The
report (a dict with a fixed `SCHEMA`; text, `--json`, or `-o page.html` with both swimlanes on
one time axis) holds:
- `totals`: kernel time (the AIC/AIV span) and end-to-end time of each, and board / sim;
- `matched`: paired tasks and instances, each run's share paired, the unpaired tasks' names;
- `leaves`: per leaf function of the simulated run, the board / sim duration ratio of its
  paired tasks (median, p10, p90) and both mean durations;
- `aicpu`: each run's AICPU phases where its trace has them (window build per root instance,
  dispatch per task, resolve per edge: our lanes; "no-info" otherwise);
- `gaps`: per core type, the share of the span its cores were idle;
- `mechanisms`: each mechanism of the duration formula scaled alone until the re-timed
  simulated tasks fit the board's best (`mechanism_fit`); the ones whose own scale explains
  most of the gap, with that scale far from 1, name the constants of `a2a3.toml` behind it.
  A mechanism the pairs cannot tell from another is reported as not separable, never
  guessed.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

import numpy as np

from pypto.machine.spec import MachineSpec
from pypto.machine.spec import load as load_spec
from pypto.profiling.swimlane import SwimlaneData
from pypto.toolkit import trace
from pypto.toolkit.errors import ToolkitError
from pypto.toolkit.identity import leaves
from pypto.toolkit.mechanism_fit import fit_scales
from pypto.toolkit.mechanisms import pipes
from pypto.toolkit.task_pairs import CORE_KINDS, TaskPairs, pair_tasks

SCHEMA = "openpto.compare/1"
_SHOWN = 20   # unpaired task names listed per run


def compare_runs(sim: SwimlaneData, board: SwimlaneData,
                 spec: MachineSpec | None = None) -> dict[str, Any]:
    """The comparison report of `sim` (our simulated run) against `board` (see the module
    docstring); `spec`: the machine the simulation ran on (default: the a2a3 preset)."""
    spec = spec or load_spec()
    pairs = pair_tasks(sim, board)
    sim_dur = sim.task_columns.dur[pairs.sim]
    board_dur = board.task_columns.dur[pairs.board]
    pipe_times, aic = pipes(sim, spec, pairs.sim)
    return {"schema": SCHEMA,
            "totals": _totals(sim, board),
            "matched": _matched(sim, board, pairs),
            "leaves": _leaves(sim, pairs, sim_dur, board_dur),
            "aicpu": {"sim": aicpu_phases(sim), "board": aicpu_phases(board)},
            "gaps": {"sim": idle_shares(sim), "board": idle_shares(board)},
            "mechanisms": fit_scales(pipe_times, aic, board_dur)}


def compare_result(result: Any, board: str, machine: str | None = None) -> dict[str, Any]:
    """`SimResult.compare`: a simulated run (its written folder, else its trace made in a
    temporary folder) against the trace at `board`."""
    import os
    import tempfile

    from pypto.profiling.run_columns import run_columns
    from pypto.profiling.swimlane_writer import swimlane_text, write_text
    board_data = trace.load(board)
    if result.folder:
        return compare_runs(trace.load(result.folder), board_data, load_spec(machine))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "merged_swimlane.json")
        write_text(path, swimlane_text(run_columns(result)))
        return compare_runs(trace.load(path), board_data, load_spec(machine))


def kernel_span(data: SwimlaneData) -> tuple[float, float]:
    """(first AIC/AIV task start, last end), us."""
    tasks = data.task_columns
    cores = data.on(tasks.lane, *CORE_KINDS)
    if not cores.any():
        return 0.0, 0.0
    return float(tasks.start[cores].min()), float(tasks.end[cores].max())


def end_to_end(data: SwimlaneData) -> float:
    """Launch (time 0, or an earlier event) to the last end of any event, us."""
    tasks, cpu = data.task_columns, data.aicpu_columns
    starts = [*tasks.start.tolist(), *cpu.start.tolist()]
    ends = [*tasks.end.tolist(), *cpu.end.tolist()]
    return max(ends, default=0.0) - min(0.0, min(starts, default=0.0))


def _totals(sim: SwimlaneData, board: SwimlaneData) -> dict[str, Any]:
    out = {}
    for name, a, b in (("kernel_us", np.subtract(*kernel_span(sim)[::-1]),
                        np.subtract(*kernel_span(board)[::-1])),
                       ("e2e_us", end_to_end(sim), end_to_end(board))):
        out[name] = {"sim": float(a), "board": float(b), "ratio": float(b / a) if a else None}
    return out


def _matched(sim: SwimlaneData, board: SwimlaneData, pairs: TaskPairs) -> dict[str, Any]:
    share_sim, share_board = pairs.matched_share
    names = lambda d, ts: [d.task_columns.name[t] for t in ts[:_SHOWN]]   # noqa: E731
    return {"tasks": len(pairs.sim), "instances": pairs.instances_paired,
            "sim_instances": pairs.instances[0], "board_instances": pairs.instances[1],
            "sim_share": share_sim, "board_share": share_board,
            "sim_only": len(pairs.sim_only), "board_only": len(pairs.board_only),
            "sim_only_names": names(sim, pairs.sim_only),
            "board_only_names": names(board, pairs.board_only)}


def _leaves(sim: SwimlaneData, pairs: TaskPairs, sim_dur: np.ndarray,
            board_dur: np.ndarray) -> list[dict[str, Any]]:
    keys, shown = leaves(sim.task_columns)
    groups: dict[str, list[int]] = {}
    for k, t in enumerate(pairs.sim.tolist()):
        groups.setdefault(keys[t], []).append(k)
    rows = []
    for key, at in groups.items():
        a, b = sim_dur[at], board_dur[at]
        ok = a > 0
        ratio = b[ok] / a[ok] if ok.any() else np.array([np.nan])
        rows.append({"leaf": shown[pairs.sim[at[0]]], "key": key, "tasks": len(at),
                     "sim_mean_us": float(a.mean()), "board_mean_us": float(b.mean()),
                     "ratio_median": float(np.median(ratio)),
                     "ratio_p10": float(np.percentile(ratio, 10)),
                     "ratio_p90": float(np.percentile(ratio, 90))})
    rows.sort(key=lambda r: -abs(np.log(r["ratio_median"])) * r["tasks"]
              if r["ratio_median"] > 0 else 0.0)
    return rows


def aicpu_phases(data: SwimlaneData) -> dict[str, Any]:
    """Window build per root instance, dispatch per task and resolve per edge (us), from our
    AICPU lanes ("build window N" with its instances, "dispatch" / "resolve" with counts);
    {"status": "no-info"} for a trace without them."""
    cpu = data.aicpu_columns
    if not len(cpu):
        return {"status": "no-info", "why": "the trace has no AICPU lanes"}
    out: dict[str, Any] = {"status": "ok"}
    dur, names = cpu.dur.tolist(), list(cpu.name)
    for phase, unit, prefix in (("build", "instances", "build window"),
                                ("dispatch", "count", "dispatch"),
                                ("resolve", "count", "resolve")):
        at = [i for i, n in enumerate(names) if n.startswith(prefix)]
        units = sum(_count(cpu.args.values(unit, 0)[i]) for i in at)
        total = sum(dur[i] for i in at)
        out[phase] = {"events": len(at), "total_us": total, "units": units,
                      "per_unit_us": total / units if units else None}
    return out


def idle_shares(data: SwimlaneData) -> dict[str, float | None]:
    """Per core type, the share of lanes x kernel span its cores were idle."""
    start, end = kernel_span(data)
    tasks, out = data.task_columns, {}
    for kind in CORE_KINDS:
        lanes = len(data.lanes_of(kind))
        busy = float(tasks.dur[data.on(tasks.lane, kind)].sum())
        out[kind] = 1.0 - busy / (lanes * (end - start)) if lanes and end > start else None
    return out


def _count(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) else 0


# ---- text and the command line -------------------------------------------------------------

def format_text(report: dict[str, Any]) -> str:
    """The report for people."""
    t, m = report["totals"], report["matched"]
    lines = [f"compare: {m['tasks']} tasks paired in {m['instances']} instances "
             f"({100 * m['sim_share']:.0f} % of the simulated run's, "
             f"{100 * m['board_share']:.0f} % of the board's)"]
    for name in ("kernel_us", "e2e_us"):
        r = t[name]
        ratio = f"{r['ratio']:.3f}" if r["ratio"] is not None else "-"
        lines.append(f"  {name[:-3]:<8} sim {r['sim']:12,.2f} us  board {r['board']:12,.2f} us"
                     f"  board/sim {ratio}")
    lines.append("  leaves (board/sim duration: median [p10, p90]):")
    for row in report["leaves"][:12]:
        lines.append(f"    {_tail(row['leaf'], 40):<40} {row['tasks']:6} tasks  "
                     f"{row['ratio_median']:.3f} [{row['ratio_p10']:.3f}, "
                     f"{row['ratio_p90']:.3f}]")
    lines += _mechanism_lines(report["mechanisms"])
    for who in ("sim", "board"):
        if m[f"{who}_only"]:
            lines.append(f"  unpaired in the {who} run: {m[f'{who}_only']} tasks, e.g. "
                         + ", ".join(m[f"{who}_only_names"][:5]))
    return "\n".join(lines)


def _tail(name: str, width: int) -> str:
    """A long leaf name by its end, where leaves of one kernel differ (`...leaf3`)."""
    return name if len(name) <= width else "..." + name[len(name) - width + 3:]


def _mechanism_lines(fit: dict[str, Any]) -> list[str]:
    if fit["status"] != "ok":
        return [f"  mechanisms: no-info ({fit['why']})"]
    lines = [f"  mechanisms (each scaled alone until the board fits; error as is "
             f"{100 * fit['error']['as_is']:.1f} %, all fitted {100 * fit['error']['fitted']:.1f} %):"]
    for row in fit["rows"]:
        if row["status"] == "fitted":
            what = (f"alone x{row['alone_scale']:.3f} explains {100 * row['explains']:3.0f} %,"
                    f" joint x{row['scale']:.3f}")
        else:
            what = row["status"]
        lines.append(f"    {row['mechanism']:<15} {100 * row['share']:5.1f} % of sim time  {what}")
    for p in fit["points_at"]:
        lines.append(f"  points at: {p['mechanism']} x{p['scale']:.2f} ({p['constants']})")
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sim", help="our simulated run: a run folder or merged_swimlane.json")
    parser.add_argument("board", help="a swimlane recorded on a board (PyPTO's "
                                      "merged_swimlane.json), or any other run to compare")
    parser.add_argument("--machine", default=None,
                        help="the machine preset or TOML the simulated run used (default: "
                             "$OPENPTO_MACHINE or a2a3)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("-o", "--output", metavar="HTML", default=None,
                        help="also write a page with both swimlanes on one time axis")


def run(args: argparse.Namespace,
        extra: Callable[[dict[str, Any], SwimlaneData], list[str]] | None = None) -> int:
    """The command; `extra(report, board)` may add to the report and returns the lines it
    adds to the text (`calibration.compare_command`: the re-simulated attribution)."""
    try:
        spec = load_spec(args.machine)
    except Exception as e:   # an unknown preset or a malformed TOML: named by spec.load
        raise ToolkitError(f"compare --machine: {e}") from None
    sim, board = trace.load(args.sim), trace.load(args.board)
    report = compare_runs(sim, board, spec)
    lines = extra(report, board) if extra is not None else []
    print(json.dumps(report, indent=1, sort_keys=True) if args.json
          else "\n".join([format_text(report), *lines]))
    if args.output:
        from pypto.toolkit.viewer import render_diff_html
        path = render_diff_html(sim, board, _page_report(report), args.output,
                                titles=("sim", "board"))
        print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _page_report(report: dict[str, Any]) -> dict[str, Any]:
    """The comparison in the diff page's report shape (totals, then the rest as 'more')."""
    totals = {k: {"a": v["sim"], "b": v["board"], "delta": v["board"] - v["sim"],
                  "ratio": v["ratio"]} for k, v in report["totals"].items()}
    return {"totals": totals, "matched": report["matched"], "leaves_compared": report["leaves"],
            "mechanisms": report["mechanisms"], "aicpu": report["aicpu"], "gaps": report["gaps"]}
