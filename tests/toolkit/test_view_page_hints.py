"""The viewer's Hints panel (issue 30, item 7): the advisor's findings as perf_hints.log lists
them; a hint's summary zooms to and marks its tasks, its line opens the Source tab there.

The kernel stitches one root instance per window, so the stitch hint fires, and every task runs
the exp on one line, so that is the line the hint names. Each layout check runs at 1400, 1000
and 800 px; the `page` fixture (conftest.py) fails a test on any console error.
"""
from __future__ import annotations

import os

import pytest
import torch

import pypto

from _traces import build, task, write
from marker_lines import marker_line
from pypto.toolkit.viewer import render_view_html
from pypto.toolkit import trace

WIDTHS = [1400, 1000, 800]


@pypto.frontend.jit(runtime_options={"stitch_function_max_num": 1},
                    debug_options={"runtime_debug_mode": 1})
def _windows(x: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32),
             y: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 32, 512)
    for i in pypto.loop(x.shape[0]):
        y[i:i + 1] = pypto.exp(x[i:i + 1])          # EXP_LINE


@pytest.fixture(scope="module")
def run_html(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("hints"))
        x = torch.rand(8, 64, 512)
        _windows(x, torch.empty_like(x))
        folder = os.path.abspath(_windows.last_run.folder)
    return os.path.join(folder, "swimlane.html")


def _open(page, html, width=1400):
    page.page.set_viewport_size({"width": width, "height": 800})
    return page.open(html)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_panel_lists_each_hint_with_knob_and_line_and_fits(page, run_html, width):
    _open(page, run_html, width)
    tab = page.page.locator('.side-tab[data-panel="hints"]')
    assert tab.is_visible()
    tab.click()
    hints = page.js("openpto.hints()")
    log = open(os.path.join(os.path.dirname(run_html), "perf_hints.log")).read()
    assert len(hints) == len([x for x in log.splitlines() if not x.startswith("#")]) >= 1
    stitch = next(h for h in hints if h["knob"] == "stitch_function_max_num")
    assert stitch["line"] == f"{__file__}:{marker_line(__file__, 'EXP_LINE')}"
    assert page.page.get_by_test_id("hint-item").count() == len(hints)
    panel = page.js("(() => { const p = document.getElementById('panel-hints');"
                    " return [p.scrollWidth, p.clientWidth]; })()")
    assert panel[0] <= panel[1], f"the Hints panel overflows at {width} px: {panel}"


def test_a_hint_marks_its_tasks_and_its_line_opens_the_source_tab(page, run_html):
    _open(page, run_html)
    page.page.locator('.side-tab[data-panel="hints"]').click()
    k = next(i for i, h in enumerate(page.js("openpto.hints()"))
             if h["knob"] == "stitch_function_max_num")
    item = page.page.locator(f'[data-testid="hint-item"][data-hint="{k}"]')
    item.locator(".hint-summary").click()
    assert len(page.js("openpto.highlighted()")) >= 2
    item.get_by_test_id("hint-line").click()
    assert page.page.get_by_test_id("source-pane").is_visible()
    assert page.js("openpto.currentLine()") == {"file": __file__,
                                                "line": marker_line(__file__, "EXP_LINE")}


def test_a_pypto_trace_lists_hints_with_an_unknown_line(page, tmp_path):
    tasks = [task(f"AIV_{25 + k}", w * 5, 2, window=w, instance=0, call=k)
             for w in range(8) for k in range(4)]
    html = tmp_path / "p.html"
    render_view_html(trace.load(write(tmp_path / "t.json", build(tasks, ours=False))), html)
    _open(page, html)
    hints = page.js("openpto.hints()")
    assert hints and {h["line"] for h in hints} == {"?"}
    assert page.page.get_by_test_id("hint-line").count() == 0
