"""The viewer's Blockers panel (issue 30, items 2 and 3) on the planted trace of
test_blockers_paths.py: the side tab shows, its per-cause table and path decomposition hold the
analysis' numbers, the overlay colours the gaps on the swimlane (and its checkbox hides them),
a gap click zooms to the gap and selects the task it held back, and the panel never scrolls
sideways at 1400, 1000 and 800 px. The `page` fixture fails a test on any console error."""
from __future__ import annotations

import pytest

from pypto.toolkit.analyses import blockers
from pypto.toolkit.trace import load
from pypto.toolkit.viewer import render_view_html

from _traces import write
from test_blockers_paths import planted

WIDTHS = [1400, 1000, 800]


@pytest.fixture(scope="module")
def planted_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("blockers")
    data = load(write(folder / "planted.json", planted()))
    return render_view_html(data, folder / "v.html", title="planted"), blockers.report(data)


def _drawn_after(page, action):
    """Do `action`, then draw a frame after it; the overlay stretches that frame drew. (A
    frame asked for before the action may be drawn while the action's input events are still
    arriving, so the frame waited for is asked for once the action is done.)"""
    action()
    frames = page.js("openpto.frames()")
    page.js("(() => { const v = openpto.view(); openpto.setView(v.t0, v.t1); })()")
    page.page.wait_for_function("n => openpto.frames() > n", arg=frames)
    return page.js("openpto.overlayDrawn()")


@pytest.mark.parametrize("width", WIDTHS)
def test_blockers_panel_overlay_and_gap_click(page, planted_page, width):
    html, record = planted_page
    page.page.set_viewport_size({"width": width, "height": 800})
    page.open(html)
    tab = page.page.locator('.side-tab[data-panel="blockers"]')
    assert tab.is_visible() and not page.js("openpto.overlayShown()")   # until it opens
    assert _drawn_after(page, tab.click) >= 1 and page.js("openpto.overlayShown()")
    panel = page.page.get_by_test_id("blockers-panel")
    assert panel.is_visible()
    causes = page.js("""[...document.querySelectorAll('[data-testid=blockers-cause]')]
                        .map(r => r.dataset.cause)""")
    assert causes == [c for c, v in record.by_cause.items() if v > 0]
    got = page.js("openpto.blockers()")
    assert got["by_cause"] == pytest.approx(record.by_cause)
    assert got["paths"]["sum_us"] == pytest.approx(14) and got["gaps"] == 3
    # the overlay is on and draws the gaps in view; the checkbox turns it off
    assert _drawn_after(page, lambda: page.js("openpto.setView(0, 20)")) >= 8
    assert page.js("openpto.overlayShown()")
    box = page.page.get_by_test_id("blockers-overlay")
    assert _drawn_after(page, box.uncheck) == 0 and not page.js("openpto.overlayShown()")
    assert _drawn_after(page, box.check) >= 8
    # a click on the largest gap (AIC_2, 4 -> 16 before E) zooms to it and selects E
    page.page.get_by_test_id("blockers-gap").first.locator(".hint-summary").click()
    view = page.js("openpto.view()")
    assert view["t0"] < 4 and view["t1"] > 16 and view["t1"] - view["t0"] < 30
    assert page.js("openpto.selected()")["name"] == record.rows[0]["name"]
    assert panel.is_visible() and page.js("openpto.overlayShown()")
    fit = page.js("""(() => { const p = document.querySelector('[data-testid=blockers-panel]');
                             return [p.scrollWidth, p.clientWidth]; })()""")
    assert fit[0] <= fit[1], fit
    # another side panel hides the overlay
    details = page.page.locator('.side-tab[data-panel="details"]')
    assert _drawn_after(page, details.click) == 0 and not page.js("openpto.overlayShown()")
