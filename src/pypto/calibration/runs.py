"""One kernel call re-timed on a candidate machine, read back as the swimlane a board writes.

A calibration varies the machine's costs, never the compiled program: the board ran what its
compiler decided, so `JitKernel.retimed` keeps the record's compiled structure and only the
constants change. The run is read as the times our trace writer would write (`run_times`), so our
features and a board's are measured alike (`observed`).
"""
from __future__ import annotations

import json
from typing import Any

from pypto.calibration.run_times import KeyCache, RunTimes
from pypto.machine.result import SimResult
from pypto.machine.spec import from_table
from pypto.profiling.swimlane import SwimlaneData
from pypto.profiling.swimlane_reader import parse_swimlane
from pypto.profiling.swimlane_writer import swimlane_text


class KernelCall:
    """A kernel call to calibrate on: its name, its `JitKernel` and its `CallRecord` (and the
    keys of its tasks, found once)."""

    def __init__(self, name: str, kernel: Any, record: Any):
        self.name, self.kernel, self.record = name, kernel, record
        self.keys = KeyCache()

    def run_on(self, table: dict) -> SimResult:
        """The call's simulated run on the machine `table` (nested tables, `spec.table`)."""
        spec = from_table(table, f"calibration of {self.name}")
        return self.kernel.retimed(self.record, spec).run

    def trace_on(self, table: dict) -> SwimlaneData:
        """The call's run on `table` as a parsed swimlane."""
        return trace_of(self.run_on(table))

    def times_on(self, table: dict) -> RunTimes:
        """When the call's tasks and builds happen on `table` (what the features read)."""
        return RunTimes.of_result(self.run_on(table), self.keys)


def trace_of(result: SimResult) -> SwimlaneData:
    """`result` as our trace writer writes it, parsed back."""
    return parse_swimlane(json.loads("".join(swimlane_text(result))))
