"""Rough edges a new user hit (issue 30, item 8): the viewer opens on the kernel span (E toggles
end-to-end), the ruler's last label fits the canvas, a diff names its lanes and calls its runs A
and B (full names on hover), and the Range panel's numbers (its `%` column) never clip.

Each test runs at 1400, 1000 and 800 px; the `page` fixture (conftest.py) fails a test on any
console error, and skips it (with the reason) where there is no browser.
"""
from __future__ import annotations

import pytest

from pypto.cli import main
from pypto.profiling.swimlane import Lane, SwimlaneData, TaskEvent
from pypto.toolkit.viewer import render_view_html

WIDTHS = [1400, 1000, 800]
BUILD_END = 85.0            # the first window's build (AICPU) ends here; the kernel starts
KERNEL_END = 100.0


def small_kernel_run() -> SwimlaneData:
    """A small kernel behind a long AICPU build: 85 us of build, then 15 us of 16 AIV tasks."""
    lanes = {1: Lane(1, "AICPU_0", "aicpu", 0), **{10 + k: Lane(10 + k, f"AIV_{k}", "aiv", k)
                                                     for k in range(4)}}
    build = [TaskEvent(0, 0, 1, "build window 0", 0.0, BUILD_END, {})]
    tasks = [TaskEvent(i, i, 10 + i % 4, f"t{i}", BUILD_END + (i // 4) * 3.75, 3.75,
                       {"leaf": "only_leaf"}) for i in range(16)]
    return SwimlaneData(lanes, tasks, build, [], {})


@pytest.fixture(scope="module")
def small_kernel_html(tmp_path_factory):
    return render_view_html(small_kernel_run(), tmp_path_factory.mktemp("span") / "v.html",
                            title="small kernel")


def open_at(page, html, width: int, height: int = 800):
    page.page.set_viewport_size({"width": width, "height": height})
    return page.open(html)


@pytest.mark.parametrize("width", WIDTHS)
def test_opens_on_the_kernel_span_and_e_toggles_end_to_end(page, small_kernel_html, width):
    """The first screen is the kernel (first to last AICore task, a small margin), not the
    build before it; E shows end to end, E again the kernel; the help says so."""
    open_at(page, small_kernel_html, width)
    span = KERNEL_END - BUILD_END
    view = page.js("openpto.view()")
    assert page.js("openpto.span()") == "kernel"
    assert BUILD_END - 0.1 * span <= view["t0"] < BUILD_END
    assert KERNEL_END < view["t1"] <= KERNEL_END + 0.1 * span
    page.page.get_by_test_id("swimlane-canvas").click(position={"x": 5, "y": 5})
    page.page.keyboard.press("e")
    full = page.js("openpto.full()")
    view = page.js("openpto.view()")
    assert page.js("openpto.span()") == "e2e"
    assert (view["t0"], view["t1"]) == pytest.approx(tuple(full))
    assert full[0] <= 0 and full[1] >= KERNEL_END
    page.page.keyboard.press("e")
    view = page.js("openpto.view()")
    assert page.js("openpto.span()") == "kernel"
    assert (view["t0"], view["t1"]) == pytest.approx(tuple(page.js("openpto.kernel()")))
    page.page.get_by_test_id("fit").click()          # fit is end to end, as "0" is
    assert page.js("openpto.span()") == "e2e"
    help_text = page.page.get_by_test_id("help")
    assert "E: kernel / end-to-end" in help_text.inner_text()
    assert "E: kernel span / end to end" in help_text.get_attribute("title")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_last_ruler_label_fits_the_canvas(page, small_kernel_html, width):
    """Whatever the view, every tick label is whole inside the canvas: one that would run past
    the right edge ("10 u") sits left of its tick instead."""
    open_at(page, small_kernel_html, width)
    for t1 in (10.0, 10.01, 10.05, 10.1, 10.3, 1000.0):
        frames = page.js("openpto.frames()")
        page.js(f"openpto.setView(0, {t1})")
        page.page.wait_for_function("n => openpto.frames() > n", arg=frames)
        ticks, w = page.js("openpto.ticks()"), page.js("openpto.canvasWidth()")
        assert ticks, t1
        for tick in ticks:
            assert 0 <= tick["x"] and tick["x"] + tick["w"] <= w, (t1, tick, w)
        assert ticks[-1]["text"].endswith(" us"), ticks


def diff_page(samples, tmp_path):
    a, b = samples / "softmax_merged_swimlane.json", samples / "glm_moe_fusion_merged_swimlane.json"
    out = tmp_path / "diff.html"
    assert main(["diff", str(a), str(b), "-o", str(out)]) == 0
    return out, (a.name, b.name)


@pytest.mark.parametrize("width", WIDTHS)
def test_diff_labels_lanes_and_names_runs_a_and_b(page, samples, tmp_path, width, capsys):
    """The stacked (thin) lanes of a diff are named in the label column, a line apart; the
    group headers say A and B, and hovering one shows the run's full name (title)."""
    out, names = diff_page(samples, tmp_path)
    capsys.readouterr()
    open_at(page, out, width, 900)
    groups = page.js("openpto.groups()")
    assert {g["label"][:4] for g in groups} == {"A \u00b7 ", "B \u00b7 "}, groups
    assert not any(n in g["label"] for g in groups for n in names)
    labels = page.js("openpto.laneLabels()")
    lanes = page.js("openpto.lanes()")
    assert {lanes[lb["lane"]]["run"] for lb in labels} == set(names)
    assert all(lb["name"] == lanes[lb["lane"]]["name"] for lb in labels)
    shown = [ln for ln in lanes if ln["visible"]]
    lane_h = page.js("openpto.laneHeight()")
    assert lane_h < 10                              # (thin lanes: the case this is about)
    assert len(labels) >= len(shown) * lane_h / 20, (len(labels), len(shown), lane_h)
    ys = sorted(lb["y"] for lb in labels)
    assert all(b - a >= 6 for a, b in zip(ys, ys[1:])), ys        # (never drawn over another)

    canvas = page.page.get_by_test_id("swimlane-canvas")
    box = canvas.bounding_box()
    for letter, name in zip("AB", names):
        g = next(g for g in groups if g["label"].startswith(letter) and g["visible"])
        page.page.mouse.move(box["x"] + 40, box["y"] + g["y"] + g["h"] / 2)
        assert canvas.get_attribute("title") == f"{letter}: {name}"
    first = labels[0]
    page.page.mouse.move(box["x"] + 30, box["y"] + first["top"] + first["rowH"] / 2)
    assert canvas.get_attribute("title").startswith(first["name"] + "\n")


def one_leaf_run() -> SwimlaneData:
    """One leaf of long tasks: its share is 100.0 %, its busy time has five digits."""
    lanes = {1: Lane(1, "AIV_0", "aiv", 0), 2: Lane(2, "AIV_1", "aiv", 1)}
    tasks = [TaskEvent(i, i, 1 + i % 2, f"t{i}", i * 3000.0, 2500.0, {"leaf": "only_leaf"})
             for i in range(20)]
    return SwimlaneData(lanes, tasks, [], [], {})


@pytest.mark.parametrize("width", [1280, *WIDTHS])
def test_range_numbers_never_clip(page, tmp_path, width):
    """Range over a one-leaf run: no number in the Range panel (the `%` column's 100.0, a
    60000.000 us span) is cut at its cell's edge, and the panel does not scroll sideways."""
    html = render_view_html(one_leaf_run(), tmp_path / "v.html", title="one leaf")
    open_at(page, html, width)
    page.js("openpto.rangeSelect(0, 60000)")
    panel = page.page.get_by_test_id("range-panel")
    assert panel.is_visible()
    clipped = page.js("""[...document.querySelectorAll('[data-testid=range-panel] td, '
                          + '[data-testid=range-panel] th')]
                         .filter(c => c.scrollWidth > c.clientWidth)
                         .map(c => [c.textContent, c.scrollWidth, c.clientWidth])""")
    assert clipped == []
    row = page.js("""[...document.querySelector('[data-testid=range-leaf-row]').children]
                     .map(c => c.textContent)""")
    assert row[3] == "100.0"
    fit = page.js("""(() => { const p = document.querySelector('[data-testid=range-panel]');
                             return [p.scrollWidth, p.clientWidth]; })()""")
    assert fit[0] <= fit[1], fit
