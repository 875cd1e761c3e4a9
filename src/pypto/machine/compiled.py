"""The compiled simulator core (`_simcore`, C++): which core a run uses, and the run through it.

`simulate.Simulator` is THE model, in Python; `_simcore.cpp` is the same model transcribed for
speed, held equal bit for bit (tests/machine/test_sim_cores.py). A run uses the compiled core
when the extension was built, unless `OPENPTO_SIM=python`; `OPENPTO_SIM=compiled` requires it.
Without the extension (no C++ compiler when the package was installed) the Python model runs,
after one warning that says how to build it.

Takes the stitched tasks → their table (`task_table`) → the core's arrays → a `SimResult` equal
to the Python model's: the same task runs, AICPU records, flows and stats.
"""
from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from pypto.machine.memory import l2_kept
from pypto.machine.result import AicpuRun, SimResult, SimTask, TaskRunColumns
from pypto.machine.scheduling import SchedulerThreads, build_args, dispatch_cycles
from pypto.machine.spec import MachineSpec
from pypto.machine.stats import Tally, in_order_sum, run_stats
from pypto.machine.task_table import TaskTable, UnsupportedTasks
from pypto.machine.timing import CoreTiming

try:
    from pypto.machine import _simcore
    _MISSING = ""
except ImportError as error:   # not built: the Python model runs (see `core`)
    _simcore = None
    _MISSING = f"not built: {error}"
_SOURCE = Path(__file__).with_name("_simcore.cpp")
if _simcore is not None and _SOURCE.exists() and _simcore.SOURCE != \
        hashlib.sha256(_SOURCE.read_bytes()).hexdigest()[:16]:
    # a checkout whose core changed since it was built (an editable install does not rebuild)
    _simcore, _MISSING = None, "stale: built from an older _simcore.cpp"

ENV = "OPENPTO_SIM"
BUILD_HINT = ("build it with a C++17 compiler present: pip install -e . in the checkout (or "
              "pip install openpto from source); set OPENPTO_SIM=python to use the Python model "
              "silently")
_warned = False
_KINDS = ("build", "resolve", "dispatch")


def available() -> bool:
    return _simcore is not None


def unavailable_reason() -> str:
    """Why the compiled core cannot run ("" when it can), and how to build it."""
    return "" if _simcore is not None else f"the compiled simulator core is {_MISSING}: {BUILD_HINT}"


def core() -> str:
    """"compiled" or "python": the core a run uses now (`OPENPTO_SIM`, else compiled if
    built)."""
    global _warned
    choice = os.environ.get(ENV, "").strip().lower()
    if choice not in ("", "python", "compiled"):
        raise ValueError(f"{ENV}={choice!r}: expected 'python' or 'compiled'")
    if choice == "python":
        return "python"
    if _simcore is None:
        if choice == "compiled":
            raise RuntimeError(f"{ENV}=compiled, but the compiled simulator core is "
                               f"{_MISSING}: {BUILD_HINT}")
        if not _warned:
            _warned = True
            warnings.warn(f"openpto: the compiled simulator core is {_MISSING}, so the Python "
                          f"model runs (same timelines, slower): {BUILD_HINT}", stacklevel=3)
        return "python"
    return "compiled"


def link(window: dict) -> dict:
    """The compiled transcription of `runtime.instance_links.InstanceLinker.link` on one
    window's columns (the caller checked `core()`)."""
    return _simcore.link(window)


def constants(spec: MachineSpec, sched_mode: int, sched_threads: int | None) -> dict:
    """The machine constants as the core takes them (the values the Python model uses)."""
    a, memory = spec.aicpu, spec.memory
    threads = SchedulerThreads(spec, sched_threads)
    line = int(memory["l2_line"])
    return {
        "aic": spec.aic, "aiv": spec.aiv, "slots": a["slots_per_core"], "mode": sched_mode,
        "threads": threads.count, "owner": threads.owner,
        "dispatch_cost": dispatch_cycles(a, sched_mode),
        "resolve_cost": a["resolve_cycles_per_edge"], "notice": float(a["completion_cycles"]),
        "cold": float(spec.task["cold_start_cycles"]),
        "window_base": a["window_base_cycles"], "instance_cycles": a["instance_cycles"],
        "edge_cycles": a["edge_cycles"], "launch_cycles": a["launch_cycles"],
        "hbm_bw": float(memory["hbm_bytes_per_cycle"]),
        "l2_bw": float(memory["l2_bytes_per_cycle"]),
        # what L2 keeps, as `memory.Memory` takes it (the LRU and the write-back rule)
        "l2_capacity": l2_kept(memory), "l2_line": line,
        "l2_max_lines": max(1, int(l2_kept(memory) // line)),
        "timing": [list(CoreTiming.of(spec, core))[:5] for core in ("AIC", "AIV")],
    }


def simulate_compiled(tasks: Sequence[SimTask] | TaskTable, spec: MachineSpec, kernel: str,
                      sched_mode: int, workspace: Sequence[float],
                      sched_threads: int | None, closed_by: Sequence[str] = ()
                      ) -> SimResult | None:
    """The run by the compiled core, or None when the tasks hold what its table does not
    carry (the caller runs the Python model)."""
    if not isinstance(tasks, TaskTable):
        try:
            tasks = TaskTable.of(tasks)
        except UnsupportedTasks:
            return None
    table = tasks
    out = _simcore.run(table.columns, constants(spec, sched_mode, sched_threads))
    # the task runs in task order (the Python model's order: window by window, or task order
    # when the windows did not come in it), as columns until read
    ran = np.flatnonzero(~np.isnan(out["start"]))
    every = len(ran) == len(table)   # (the usual run: no copies of the columns)
    picked = [out[k] if every else out[k][ran] for k in ("core", "start", "end", "hit", "hbm",
                                                          "ready")]
    core_index = np.concatenate((np.arange(spec.aic), np.arange(spec.aiv)))
    picked[0] = core_index[picked[0]]
    columns = TaskRunColumns(table, ran, *picked)
    windows = out["window"].tolist()
    space = [float(workspace[w]) if w < len(workspace) else 0.0 for w in windows]
    reasons = [closed_by[w] if w < len(closed_by) else "" for w in windows]
    window_stats = list(zip(out["window_instances"].tolist(), out["window_tasks"].tolist(),
                            out["window_cross_edges"].tolist(), space, reasons))
    kinds = out["record_kind"]
    spans = out["record_end"] - out["record_start"]   # (exact: one IEEE subtraction each)
    tally = Tally()
    (tally.first, tally.last, tally.busy_aic, tally.busy_aiv, tally.tasks, tally.tasks_aiv,
     tally.empty, tally.read, tally.write, tally.hit, tally.hbm) = out["tally"]
    stats = run_stats(tally, len(ran), spec.aic, spec.aiv, out["build_end"], window_stats,
                      in_order_sum(spans[kinds == 0]), in_order_sum(spans[kinds != 0]),
                      SchedulerThreads(spec, sched_threads).count,
                      float(spec.aicpu["start_cycles"]))
    lazy = {"tasks": columns.runs,
            "aicpu": lambda: _records(out, dict(zip(windows, window_stats))),
            "flows": lambda: list(zip(out["flow_pred"].tolist(), out["flow_succ"].tolist()))}
    return SimResult(kernel, spec.clock_mhz, spec.aic, spec.aiv, None, None, None, stats,
                     columns=columns, lazy=lazy)


def _records(out: dict, windows: dict[int, tuple]) -> list[AicpuRun]:
    """The AICPU records in time order: each window's build, then the work its threads did."""
    records = []
    for thread, kind, start, end, count, w in zip(
            *(out[f"record_{k}"].tolist()
              for k in ("thread", "kind", "start", "end", "count", "window"))):
        if kind == 0:
            records.append(AicpuRun(0, f"build window {w}", start, end, build_args(*windows[w])))
        else:
            records.append(AicpuRun(thread, _KINDS[kind], start, end, {"count": count}))
    return records
