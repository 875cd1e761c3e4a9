"""The viewer's Statistics tab (issue 30, items 1 and 4): shown when the page has kernel
statistics, its tables sort by a header click (numbers right-aligned), a leaf row marks that
leaf's tasks in the swimlane, a window row zooms the swimlane to the window, the scheduling
overhead is listed, and nothing overflows at 1400, 1000 and 800 px. The `page` fixture
(conftest.py) fails a test on any console error.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pypto.toolkit.trace import load
from pypto.toolkit.viewer import render_view_html

from _traces import build, task, write

WIDTHS = [1400, 1000, 800]
LONG = "TENSOR_loop_1_Unroll1_PATH0_hiddenfunc0_leaf0_with_a_very_long_name_indeed"


def trace() -> dict:
    """4 AIV cores: leaf LONG has 3 tasks (2 + 1 + 1 us), leaf B one (0.5 us); window 0 holds
    the first three tasks (0..2 us), window 1 the last (5..6 us); 1 core idles while ready."""
    cost = {"vector_cycles": 900, "mte2_bytes": 4096, "mte3_bytes": 2048}
    tasks = [task("AIV_1", 0, 2, leaf=LONG, window=0, instance=0, cost=cost, hbm_bytes=4096,
                  l2_hit_bytes=0),
             task("AIV_2", 0, 1, leaf=LONG, window=0, instance=1, cost=cost, hbm_bytes=2048,
                  l2_hit_bytes=2048),
             task("AIV_3", 1, 0.5, leaf="B", window=0, instance=1, call=1, cost=cost,
                  hbm_bytes=0, l2_hit_bytes=4096),
             task("AIV_1", 5, 1, leaf=LONG, window=1, instance=0, cost=cost, hbm_bytes=4096,
                  l2_hit_bytes=0)]
    obj = build(tasks, aic=0, aiv=4)
    obj["traceEvents"] += [
        {"name": "ReadyCount_AIV", "pid": 1, "tid": 1, "ph": "C", "ts": ts,
         "args": {"size": size}} for ts, size in ((2.5, 1), (5, 0))]
    return obj


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stats")
    return render_view_html(load(write(folder / "t.json", trace())), folder / "v.html",
                            title="stats")


def open_stats(page, html, width: int = 1400):
    page.page.set_viewport_size({"width": width, "height": 800})
    page.open(html)
    tab = page.page.locator("[data-testid=tab-stats]")
    assert tab.is_visible()
    tab.click()
    assert page.page.locator("[data-testid=stats-pane]").is_visible()
    return page


def test_tables_hold_the_statistics_and_the_overhead(page, html):
    open_stats(page, html)
    tables = page.js("openpto.statsTables()")
    assert set(tables) == {"cores", "overhead", "leaves", "terms", "bytes", "windows"}
    leaves = tables["leaves"]
    assert leaves["columns"][:4] == ["leaf", "core", "line", "tasks"]
    assert [r[0] for r in leaves["rows"]] == [LONG, "B"]            # heaviest first
    assert leaves["rows"][0][3:5] == ["3", "4.000"]
    assert [r[0] for r in tables["windows"]["rows"]] == ["0", "1"]
    # 1 of 4 cores idle from 2.5 to 5 while a task was ready: 2.5 core-us of 4 x 6 us
    overhead = tables["overhead"]["rows"][0]
    assert overhead[:4] == ["AIV", "4", "10.4", "2.500"]
    align = page.js("""[...document.querySelectorAll('[data-testid=stats-leaves] td')]
                       .map(c => getComputedStyle(c).textAlign)""")
    assert align[3:10] == ["right"] * 7 and align[0] != "right"


def test_a_header_click_sorts_and_again_reverses(page, html):
    open_stats(page, html)
    assert page.js("openpto.sortStats('leaves', 'tasks')") == [LONG, "B"]
    assert page.js("openpto.sortStats('leaves', 'tasks')") == ["B", LONG]
    header = page.page.locator("[data-testid=stats-leaves] th", has_text="leaf").first
    header.click()                                          # text: A..Z
    rows = page.js("openpto.statsTables().leaves.rows.map(r => r[0])")
    assert rows == ["B", LONG]
    header.click()
    assert page.js("openpto.statsTables().leaves.rows.map(r => r[0])") == [LONG, "B"]
    assert page.page.locator("[data-testid=stats-leaves] th[data-sorted=desc]").count() == 1


def test_a_leaf_row_marks_its_tasks_and_a_window_row_zooms(page, html):
    open_stats(page, html)
    page.page.locator("[data-testid=stats-leaves-row]", has_text="B").first.click()
    assert page.page.locator("#pane-swimlane").is_visible()
    marked = page.js("openpto.highlighted()")
    assert len(marked) == 1
    assert page.js(f"openpto.selectTask({marked[0]}).leaf") == "B"
    page.page.locator("[data-testid=tab-stats]").click()
    page.page.locator("[data-testid=stats-windows-row]").nth(1).click()
    view = page.js("openpto.view()")
    assert view["t0"] == pytest.approx(5 - 0.05) and view["t1"] == pytest.approx(6 + 0.05)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_horizontal_overflow(page, html, width):
    open_stats(page, html, width)
    fit = page.js("""(() => { const p = document.querySelector('[data-testid=stats-pane]');
                             return [p.scrollWidth, p.clientWidth]; })()""")
    assert fit[0] <= fit[1], fit
    clipped = page.js("""[...document.querySelectorAll('[data-testid=stats-pane] td.num')]
                         .filter(c => c.scrollWidth > c.clientWidth)
                         .map(c => [c.textContent, c.scrollWidth, c.clientWidth])""")
    assert clipped == []


def test_a_pypto_sample_shows_what_it_has(page, tmp_path):
    """PyPTO's own file: no cost terms or bytes (no such tables), windows without builds, the
    overhead from its ReadyCount counters; a leaf row (named by leafHash) still marks tasks."""
    samples = Path(__file__).parents[1] / "data" / "pypto_samples"
    html = render_view_html(load(samples / "softmax_merged_swimlane.json"), tmp_path / "v.html",
                            title="softmax")
    open_stats(page, html)
    tables = page.js("openpto.statsTables()")
    assert "terms" not in tables and "bytes" not in tables
    assert tables["overhead"]["rows"][0][0] == "AIV"
    page.page.locator("[data-testid=stats-leaves-row]").first.click()
    assert len(page.js("openpto.highlighted()")) == int(tables["leaves"]["rows"][0][3])
