"""Synthetic boards: traces of a machine whose constants we chose, standing in for a board.

A calibration is only trustworthy if it finds constants it was not told. Here the "board" is
our own simulator on a perturbed machine (the true constants are known), with what a real
capture adds: per-task timing noise (each duration times a log-normal factor, about its
middle), tasks the
capture lost, and either our file layout or PyPTO's (its task fields only: no cost inputs, no
AICPU lanes, no shared tables). Tests and the worked example of docs/calibration.md use them.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from pypto.calibration import constants
from pypto.calibration.runs import KernelCall
from pypto.profiling.swimlane_writer import swimlane_text

# the args PyPTO's own files give a task (tests/data/pypto_samples)
PYPTO_ARGS = ("event-hint", "ioperand-hint", "ooperand-hint", "execution-hint", "color",
              "taskId", "seqNo")
CORE_PREFIXES = ("AIC_", "AIV_")


def board_trace(call: KernelCall, table: dict, true_values: dict[str, float],
                noise: float = 0.0, drop: float = 0.0, layout: str = "openpto",
                seed: int = 0) -> dict[str, Any]:
    """The trace object (`{"traceEvents": ...}`) of `call` on `table` with `true_values`
    set: durations scattered by `noise` (sigma of the log factor), a share `drop` of the core
    tasks left out, in `layout` "openpto" (ours) or "pypto" (PyPTO's fields only)."""
    if layout not in ("openpto", "pypto"):
        raise ValueError(f"layout={layout!r}: expected 'openpto' or 'pypto'")
    result = call.run_on(constants.with_values(table, true_values))
    doc = json.loads("".join(swimlane_text(result)))
    rng = np.random.default_rng(seed)
    core_tids = {e["tid"] for e in doc["traceEvents"] if e.get("ph") == "M"
                 and e.get("name") == "thread_name"
                 and str(e["args"].get("name", "")).startswith(CORE_PREFIXES)}
    kept = []
    for e in doc["traceEvents"]:
        on_core = e.get("tid") in core_tids
        if e.get("ph") == "X" and on_core:
            if drop and rng.random() < drop:
                continue
            if noise:   # about the task's middle: a timer's jitter moves both ends
                dur = float(e["dur"])
                stretched = dur * float(np.exp(rng.normal(0.0, noise)))
                e["ts"], e["dur"] = float(e["ts"]) - (stretched - dur) / 2, stretched
            if layout == "pypto":
                e["args"] = {k: v for k, v in e.get("args", {}).items() if k in PYPTO_ARGS}
        elif layout == "pypto" and not on_core and e.get("ph") in ("X", "M") \
                and e.get("name") != "process_name":
            continue   # PyPTO's capture has no AICPU lanes
        kept.append(e)
    doc["traceEvents"] = kept
    if layout == "pypto":
        doc.pop("otherData", None)
    return doc


def write_board(path: str, doc: dict[str, Any]) -> str:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path
