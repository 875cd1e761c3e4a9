"""The viewer's Source tab (issue 30, item 6): the kernel's source with each line's simulated
time, linked both ways with the swimlane (a line's time marks its tasks; a selected task lists
its lines) and with the Graph tab ("openpto-show-line" both ways).

The kernel has a matmul on one line (the cube leaf) and an exp on another (the vector leaf), so
each line's tasks are a known part of the run. Each layout check runs at 1400, 1000 and 800 px;
the `page` fixture (conftest.py) fails a test on any console error.
"""
from __future__ import annotations

import os

import pytest
import torch

import pypto
from pypto.toolkit.viewer import render_view_html
from pypto.toolkit import trace

from _traces import build, task, write
from marker_lines import marker_line

WIDTHS = [1400, 1000, 800]


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


@pypto.frontend.jit(debug_options={"runtime_debug_mode": 1, "compile_debug_mode": 1})
def _mm_exp(a: pypto.Tensor([128, 256], pypto.DT_FP16), b: pypto.Tensor([256, 128], pypto.DT_FP16),
            c: pypto.Tensor([128, 128], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([64, 64], [64, 256], [64, 64])
    pypto.set_vec_tile_shapes(64, 64)
    t = pypto.matmul(a, b, pypto.DT_FP32)       # CUBE_LINE
    c[:] = pypto.exp(t)                         # VEC_LINE


@pytest.fixture(scope="module")
def run_html(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("source"))
        a, b = torch.rand(128, 256).half(), torch.rand(256, 128).half()
        _mm_exp(a, b, torch.zeros(128, 128))
        _mm_exp.last_run
        folder = os.path.abspath(_mm_exp.last.folder)
    return os.path.join(folder, "swimlane.html")


def _open(page, html, width: int = 1400):
    page.page.set_viewport_size({"width": width, "height": 800})
    return page.open(html)


def _row(page, line: int):
    return page.page.locator(f'#pane-source .src-row[data-line="{line}"]')


@pytest.mark.parametrize("width", WIDTHS)
def test_the_tab_shows_each_line_with_its_time_and_fits(page, run_html, width):
    _open(page, run_html, width)
    tab = page.page.get_by_test_id("tab-source")
    assert tab.is_visible()
    tab.click()
    lines = {x["line"]: x for x in page.js("openpto.sourceLines()") if x["file"] == __file__}
    cube, vec = _line("CUBE_LINE"), _line("VEC_LINE")
    assert set(lines) == {cube, vec}
    assert lines[cube]["aic_us"] > 0 and lines[cube]["aiv_us"] == 0
    assert lines[vec]["aiv_us"] > 0 and lines[vec]["aic_us"] == 0
    assert "cube" in lines[cube]["terms"] and "vector" in lines[vec]["terms"]
    timed = page.page.get_by_test_id("source-line")
    assert timed.count() == 2
    text = _row(page, vec).inner_text()
    assert "pypto.exp(t)" in text and f"{lines[vec]['us']:.3f} us" in text
    assert "src-idle" in _row(page, vec - 2).get_attribute("class")     # a line without time
    pane = page.js("(() => { const p = document.getElementById('pane-source');"
                   " return [p.scrollWidth, p.clientWidth]; })()")
    assert pane[0] <= pane[1], f"the Source tab overflows at {width} px: {pane}"


def test_a_lines_time_marks_its_tasks_and_a_task_leads_back_to_its_lines(page, run_html):
    _open(page, run_html)
    page.page.get_by_test_id("tab-source").click()
    tasks = [page.js(f"openpto.task({i})") for i in range(page.js("openpto.taskCount"))]
    vector = sorted(i for i, t in enumerate(tasks) if t["lane"].startswith("AIV_"))
    assert 0 < len(vector) < len(tasks)
    _row(page, _line("VEC_LINE")).get_by_test_id("source-time").click()
    assert page.page.get_by_test_id("tab-swimlane").get_attribute("class").split().count("active")
    assert sorted(page.js("openpto.highlighted()")) == vector
    cube_task = next(i for i, t in enumerate(tasks) if t["lane"].startswith("AIC_"))
    page.js(f"openpto.selectTask({cube_task})")
    link = page.page.get_by_test_id("task-source-line")
    assert link.count() == 1 and f":{_line('CUBE_LINE')}" in link.inner_text()
    link.click()
    assert page.page.get_by_test_id("source-pane").is_visible()
    assert page.js("openpto.currentLine()") == {"file": __file__, "line": _line("CUBE_LINE")}


def test_the_graph_tab_and_the_source_tab_show_each_others_line(page, run_html):
    _open(page, run_html)
    vec = _line("VEC_LINE")
    assert page.js("(a) => openpto.showLineInGraph(a[0], a[1])", [__file__, vec])
    frame = next(f for f in page.page.frames if f.url.endswith("graph.html"))
    frame.wait_for_function(f"document.getElementById('search').value === {f'{__file__}:{vec}'!r}")
    hits = frame.evaluate("document.getElementById('hits').textContent")
    assert hits.split()[0] != "0" and hits.split()[1].startswith("match")
    # the graph's file:line of a selected node opens the Source tab there
    frame.evaluate("openptoGraph.show('execute')")
    frame.evaluate("openptoGraph.select('c0')")
    loc = frame.locator("[data-testid=loc]").first
    where = loc.inner_text()
    loc.click()
    page.page.wait_for_function("openpto.currentLine() !== null")
    assert page.js("openpto.currentLine()") == {"file": where.rsplit(":", 1)[0],
                                                "line": int(where.rsplit(":", 1)[1])}
    assert where.rsplit(":", 1)[0] == __file__
    assert page.page.get_by_test_id("source-pane").is_visible()


def test_a_trace_without_source_lines_keeps_the_tab_hidden(page, tmp_path):
    path = write(tmp_path / "pypto.json", build([task("AIV_25", 0, 5)], ours=False))
    html = render_view_html(trace.load(path), tmp_path / "v.html")
    _open(page, html)
    assert page.page.get_by_test_id("tab-source").is_hidden()
    assert page.js("openpto.sourceLines") is None


def test_the_first_opening_shows_the_heaviest_line(page, run_html):
    """A short window: the kernel's lines are below the fold of this file until the tab,
    opened the first time, scrolls its heaviest line into view."""
    page.page.set_viewport_size({"width": 1400, "height": 300})
    page.open(run_html)
    heaviest = max(page.js("openpto.sourceLines()"), key=lambda x: x["us"])
    page.page.get_by_test_id("tab-source").click()
    row = _row(page, heaviest["line"]).bounding_box()
    pane = page.page.get_by_test_id("source-pane").bounding_box()
    assert pane["y"] <= row["y"] and row["y"] + row["height"] <= pane["y"] + pane["height"]
    assert page.js("document.getElementById('pane-source').scrollTop") > 0


def test_a_diff_page_lists_the_per_line_delta(page, tmp_path, monkeypatch):
    """`diff -o` of two runs with source lines: the report's lines are a table, each row's
    delta the report's (a what-if's page is the same report)."""
    import json
    from pypto.cli import main
    from test_by_line import _run, _two
    monkeypatch.chdir(tmp_path)
    a, b = _run(_two, 64), _run(_two, 128)
    out = tmp_path / "diff.html"
    assert main(["diff", a, b, "-o", str(out)]) == 0
    page.open(out)
    rows = page.page.locator("[data-testid=report-lines] tbody tr")
    report = json.loads(page.page.evaluate(
        "document.getElementById('openpto-data').textContent"))["report"]
    assert rows.count() == len(report["lines"]) >= 2
    first = rows.first.inner_text()
    top = report["lines"][0]
    assert f"{os.path.basename(top['file'])}:{top['line']}" in first and "+" in first
