"""The toolkit's analyses of one run, beyond `analyze`'s summary: each reads a parsed swimlane
(`SwimlaneData`, ours or PyPTO's; some also the run folder) and gives the viewer page its part,
the `analyze` command its text and JSON.

The parts, one module each (a part a trace cannot give, e.g. source lines of a PyPTO-written
trace, gives None and its tab stays hidden):

* `kernel_stats`   - per leaf, core type and window: counts, durations, cost terms, bytes, L2
* `sched_overhead` - per core type, the share of time a core idled while ready work existed
* `blockers`       - what each idle stretch of a core waited for, summed per cause
* `paths`          - the static critical path (before scheduling) against the observed one
* `by_line`        - simulated time by the kernel's source line
* `hints`          - the advisor's findings as `perf_hints.log` lines, each naming its line

`page_data(data, folder)` is what the viewer embeds: {part: its page data}. Its scripts are
`ANALYSIS_SCRIPTS` (`viewer/assets/<name>.js`), one per tab or side panel.
"""
from __future__ import annotations

import importlib
from typing import Any

from pypto.profiling.swimlane import SwimlaneData

PARTS = ("kernel_stats", "sched_overhead", "blockers", "paths", "by_line", "hints")
ANALYSIS_SCRIPTS = ("stats", "blockers", "source", "hints")


def page_data(data: SwimlaneData, folder: str | None = None) -> dict[str, Any]:
    """Each part's page data for the run `data` (read from `folder`, its run folder, if any)."""
    out = {}
    for part in PARTS:
        module = importlib.import_module(f"{__name__}.{part}")
        out[part] = module.page_data(data, folder)
    return out
