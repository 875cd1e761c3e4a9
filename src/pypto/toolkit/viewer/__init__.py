"""The offline swimlane viewer: one self-contained HTML page per run (or per pair of runs).

`render_view_html(trace, out)` writes the page of one parsed swimlane; `render_diff_html(a, b,
report, out)` stacks two runs on one time axis under a panel showing the diff report. The page
embeds the run as compact columns (`pack`) and the bundled scripts and stylesheet (`assets/`),
so it opens from disk with no network and no server.

The analyses' tabs. A page of one run also embeds `toolkit.analyses.page_data` of it (as
`runs[0].analyses`) and shows a Statistics tab (kernel statistics, scheduling overhead), a
Source tab (time by source line), and Blockers (gaps by cause, with a lane overlay, and the
static vs observed critical path) and Hints (perf_hints.log) side panels; each is one script
in `assets/` that registers in `EXTENSIONS` and stays hidden when its part has nothing to show
(a PyPTO trace has no source lines).

Graph tab protocol. When a `graph.html` (compiled-graph views of the run) is given, the page
shows a "Graph" tab holding `<iframe src="graph.html">`, and the two talk with
`window.postMessage` (target origin "*": pages opened from disk have opaque origins; the
viewer only accepts messages whose `source` is that iframe's window). Messages are JSON
objects:

* viewer → graph, when a task is clicked or selected:
  `{"type": "openpto-select-task", "task": {"sim_task_id", "root", "leaf", "call",
  "instance", "window", "name"}}` (keys absent from the trace's args are null; PyPTO's own
  traces carry only the name).
* graph → viewer, to highlight tasks in the swimlane (the others are dimmed; Esc clears):
  `{"type": "openpto-highlight-tasks", "sim_task_ids": [3, 17, ...]}`, or
  `{"type": "openpto-highlight-tasks", "match": {"root": ..., "leaf": ..., "call": ...}}`
  selecting every task whose args equal all the given keys (compared as strings). Both may be
  given; the union is highlighted.
* both ways, to show one source line: `{"type": "openpto-show-line", "file": "/abs/k.py",
  "line": 12}`. Viewer → graph (a line's "graph" link in the Source tab): the graph page
  searches `file:line` and keeps the nodes of exactly that line. Graph → viewer (clicking the
  `file:line` of a selected op): the viewer opens its Source tab at that line (matched by the
  full path, else by the file's name).

Test hooks. The page exposes `window.openpto` (lanes(), taskCount, summary(),
selectTaskByName(), selected(), setRawArgs(), search(), searchNext(), rangeSelect(t0, t1),
taskRect(i), groups(), laneHeight(), colorBy(), highlight(), frames(), span(), toggleSpan(),
ticks(), laneLabels(), ...; hooks.js; the Source tab's sourceLines(), showLine(file, line),
showLineTasks(file, line), currentLine(), taskSourceLines(i); source.js) and `data-testid` attributes on its panels, so tests
assert on state instead of pixels.

Reading aids. The details panel decodes operand hints with PyPTO's dtype codes (embedded from
`pypto.dtypes.DataType`) and hides internal ids (hashes, magics, packed task ids, integers of
2**32 and up) until "raw" is ticked; tables in the side panel have a fixed layout and cut long
names in the middle and widen number columns to their widest value. The page opens on the
kernel span (first to last AIC/AIV task, 2 % margin); E toggles it with end to end, 0 / "fit"
shows end to end. In a diff the lanes shrink (down to 2 px) so both runs fit the first screen;
the thin lanes are named every few lanes, and the group headers call the runs A and B (the
full names on hover).
"""
from pypto.toolkit.viewer.page import render_diff_html as render_diff_html
from pypto.toolkit.viewer.page import render_view_html as render_view_html
