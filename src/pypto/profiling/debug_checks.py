"""`runtime_debug_mode` 3 and 4 around a call: what the driver calls to run the executor
watched for out-of-range windows (`run_watched`) and, once the tasks are stitched, to check
them and write `deps.json` (`check_run`).

Takes the executor and a `runtime.gm_bounds.BoundsLog` (every mode: the indices read from a
tensor; mode 4: every window), then the call's record
(tasks, compiled program, plan, run folder) → nothing, or a named error after deps.json is
written: `PyptoDependencyError` (mode 3, `runtime.dependency_check`) or `PyptoBoundsError`
(mode 4, `runtime.gm_bounds`). Mode 3 checks the task graph, mode 4 the GM windows (and
nothing else: each mode is one check). Modes 1 and 2 write the run folder only, as before.

Its own module: the driver stays the call's outline; the checks are runtime modules and the
file a profiling one, and this ties them to one call.
NOTE: the reference executor stitches no tasks: with it, mode 4 still raises on out-of-range
windows but writes no deps.json, and mode 3 has no graph to check. With
verify_options enable_pass_verify (the differential run) the windows are not watched; the
test suite's differential check (OPENPTO_CHECK_EXECUTORS) is skipped in mode 4, which runs the
tile executor alone. An executor that refuses a window itself (an assemble out of range) stops
the call there: the error lists the windows seen until then.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pypto.errors import PyptoRuntimeError

if TYPE_CHECKING:
    from pypto.runtime.gm_bounds import BoundsLog

DEPENDENCY, BOUNDS = 3, 4


def bounds_log(mode: int) -> BoundsLog:
    """The log the call fills as it runs: every window in mode 4, the views at an index read
    from a tensor in the others (an index past the end is an error in every mode)."""
    from pypto.runtime.gm_bounds import BoundsLog  # NOTE: lazy, keeps `import pypto` fast
    return BoundsLog(indices_only=mode != BOUNDS)


def run_watched(executor: Any, bounds: BoundsLog, kernel: str, stitched: bool = True) -> None:
    """Run `executor` with its windows checked into `bounds`. An executor's own error after
    an out-of-range window was seen (an assemble outside its destination, which both
    executors refuse) becomes the bounds error, which lists every window seen so far. The
    bounds error is raised here, at the end, for the indices every mode checks and when not
    `stitched` (the reference executor); mode 4 raises it once deps.json is written."""
    executor.state.bounds = bounds
    try:
        executor.run()
    except PyptoRuntimeError as error:
        if bounds:
            raise bounds.error(kernel) from error
        raise
    if bounds and (bounds.indices_only or not stitched):
        raise bounds.error(kernel)   # (no deps.json: not mode 4, or no tasks)


def check_run(record: Any, mode: int) -> None:
    """Mode 3 or 4 after the tasks are stitched: check, write deps.json in the run folder,
    raise the check's error if it failed."""
    if mode not in (DEPENDENCY, BOUNDS) or record.pending is None:
        return
    # NOTE: lazy, keeps `import pypto` fast
    from pypto.profiling.deps_json import write_deps
    from pypto.runtime.dependency_check import (CallSources, check_dependencies,
                                                conflicts_by_window, storage_names)
    tasks = record.pending.tasks
    facts = record.plan.slot_facts
    found = conflicts_by_window(tasks, facts)
    checks: dict[str, Any] = {"dependency": None, "bounds": None}
    failed = None
    if mode == DEPENDENCY:
        report = check_dependencies(tasks, facts, CallSources(record.compiled),
                                    storage_names(record.program), found)
        checks["dependency"] = report.to_json()
        failed = report.error(record.kernel) if report else None
    else:
        bounds = getattr(getattr(record.executor, "state", None), "bounds", None)
        if bounds is None:   # (the differential run of enable_pass_verify: not watched)
            checks["bounds"] = {"ok": None, "not_checked": "verify_options enable_pass_verify "
                                "runs the executors' differential check, which is not watched"}
        else:
            checks["bounds"] = bounds.to_json()
            failed = bounds.error(record.kernel) if bounds else None
    path = write_deps(record.folder, record.kernel, tasks, record.compiled, facts, checks,
                      found)
    if failed is not None:
        raise type(failed)(f"{failed.raw_message}\n  the task graph: {path}", failed.loc,
                           locate=False)
