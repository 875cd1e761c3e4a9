"""The viewer page reads well as well as being right: the Range panel's per-leaf table fits its
panel, the details decode dtypes and keep internal ids behind "raw", the Graph tab hides the
swimlane toolbar, and a diff page opens on both swimlanes under a compact summary.

The browser is conftest.py's `browser` fixture (through the `page` fixture, which also fails a
test on any console error).
"""
from __future__ import annotations

import json
import re

import pytest

from pypto.dtypes import DataType
from pypto.profiling.swimlane import Lane, SwimlaneData, TaskEvent
from pypto.cli import main
from pypto.toolkit.trace import load
from pypto.toolkit.viewer import render_view_html

# long leaf names that differ only near their ends, as PyPTO's do
LEAVES = [f"TENSOR_LOOP_KV_Unroll1_PATH{p}_hiddenfunc0_leaf{k}" for p in range(1, 4)
          for k in range(5)]
OPERANDS_IN = ("[{17: {'shape': [1, 24, 128], 'dtype': 8, 'rawmagic': 18}}, "
               "{3: {'shape': [-1, -1, 128], 'dtype': 1, 'rawmagic': 2}}]")
OPERANDS_OUT = "[{25: {'shape': [1, 24, 128], 'dtype': 7, 'rawmagic': 22}}]"
PACKED_ID = (1 << 39) + 12345           # a 40-bit internal id


def multi_leaf_run() -> SwimlaneData:
    """15 leaf functions over 4 AIC and 8 AIV lanes, back to back; task 0 carries PyPTO-style
    operand hints and internal ids."""
    lanes = {1000 + 2 * k: Lane(1000 + 2 * k, f"{'AIC' if k <= 4 else 'AIV'}_{k}",
                                "aic" if k <= 4 else "aiv", k) for k in range(1, 13)}
    tids = list(lanes)
    tasks = []
    for i in range(240):
        args = {"leaf": LEAVES[i % len(LEAVES)], "root": "TENSOR_LOOP_KV_Unroll1",
                "sim_task_id": i, "taskId": (i << 20) + 1, "window": 0, "instance": i // 12,
                "call": 0}
        if i == 0:
            args.update({"ioperand-hint": OPERANDS_IN, "ooperand-hint": OPERANDS_OUT,
                         "event-hint": "Task:[0-0-1], rootHash:7478291272186099252, "
                                       "callOpMagic:10000, leafHash:18126883585712838739, "
                                       "TaskId:1",
                         "packed_id": PACKED_ID, "core_type": "AIC", "hbm_bytes": 65536})
        tasks.append(TaskEvent(i, i, tids[i % len(tids)], f"t{i}", (i // len(tids)) * 2.0, 1.5,
                               args))
    return SwimlaneData(lanes, tasks, [], [], {})


@pytest.fixture(scope="module")
def multi_leaf_html(tmp_path_factory):
    return render_view_html(multi_leaf_run(), tmp_path_factory.mktemp("layout") / "v.html",
                            title="multi-leaf")


def shift_drag(page, x0: float, x1: float) -> None:
    """A real Shift+drag across the lanes, from x0 to x1 (fractions of the plot width)."""
    box = page.page.get_by_test_id("swimlane-canvas").bounding_box()
    plot_left = box["x"] + 130                  # (the lane labels' column)
    width = box["width"] - 130
    y = box["y"] + 80
    page.page.keyboard.down("Shift")
    page.page.mouse.move(plot_left + x0 * width, y)
    page.page.mouse.down()
    page.page.mouse.move(plot_left + x1 * width, y, steps=6)
    page.page.mouse.up()
    page.page.keyboard.up("Shift")


@pytest.mark.parametrize("width", [1400, 1000, 800])
def test_range_leaf_table_fits_the_panel(page, multi_leaf_html, width):
    """Shift+drag over a 15-leaf run: one row per leaf, and neither the table nor the panel
    scrolls sideways at the default width or narrower ones; names cut in the middle keep the
    full name as their tooltip, the abbreviated heads say what they mean."""
    page.page.set_viewport_size({"width": width, "height": 900})
    page.open(multi_leaf_html)
    shift_drag(page, 0.05, 0.95)
    panel = page.page.get_by_test_id("range-panel")
    assert panel.is_visible()
    rows = page.page.get_by_test_id("range-leaf-row")
    assert rows.count() == len(LEAVES)
    fit = page.js("""() => {
        const t = document.querySelector('[data-testid=range-leaves]');
        const p = document.querySelector('[data-testid=range-panel]');
        return {table: t.scrollWidth, box: t.parentElement.clientWidth,
                panel: p.scrollWidth, panelBox: p.clientWidth,
                cells: [...t.querySelectorAll('td, th')].filter(c => c.scrollWidth > c.clientWidth + 1).length};
    }""")
    assert fit["table"] <= fit["box"], fit
    assert fit["panel"] <= fit["panelBox"], fit
    assert fit["cells"] == 0, fit                  # no cell's text runs past its edge
    names = page.js("""[...document.querySelectorAll('[data-testid=range-leaf-row] td:first-child')]
                       .map(td => [td.textContent, td.title])""")
    assert sorted(title for _, title in names) == sorted(LEAVES)
    prefix = page.page.get_by_test_id("range-leaf-prefix").inner_text()
    assert "TENSOR_LOOP_KV_Unroll1_" in prefix           # (said once, above the table)
    for text, title in names:
        head, _, tail = text.partition("\u2026")
        assert title.endswith(tail) and head in title.removeprefix("TENSOR_LOOP_KV_Unroll1_")
        assert re.search(r"leaf\d$", text)                 # the distinguishing end is kept
    heads = page.js("""[...document.querySelectorAll('[data-testid=range-leaves] th')]
                       .map(th => [th.textContent, th.title])""")
    assert [h for h, _ in heads] == ["leaf", "tasks", "busy \u00b5s", "%", "avg \u00b5s"]
    assert all(title for _, title in heads)
    numeric = page.js("""[...document.querySelectorAll('[data-testid=range-leaf-row]')][0]
                         .querySelectorAll('td.num').length""")
    assert numeric == 4


def details_text(page) -> str:
    return page.page.get_by_test_id("details-panel").inner_text()


def test_details_decode_dtypes_and_hide_internal_ids(page, multi_leaf_html):
    """The operands read "BF16 [1, 24, 128]" with dynamic dims as "?"; hashes, magics, packed
    task ids and 40-bit ids are hidden until "raw" is ticked, which shows every arg verbatim
    and stays ticked for the next task."""
    page.open(multi_leaf_html)
    page.js("openpto.selectTaskByName('t0')")
    name = {code: DataType(code).name.removeprefix("DT_") for code in (1, 7, 8)}
    assert page.page.get_by_test_id("details-inputs").inner_text() == \
        f"{name[8]} [1, 24, 128]\n{name[1]} [?, ?, 128]"
    assert page.page.get_by_test_id("details-outputs").inner_text() == f"{name[7]} [1, 24, 128]"
    assert (name[8], name[1], name[7]) == ("BF16", "INT8", "FP32")
    text = details_text(page)
    for internal in ("rawmagic", "rootHash", "leafHash", "callOpMagic", "taskId",
                     "sim_task_id", "packed_id", str(PACKED_ID), "'dtype'"):
        assert internal not in text, internal
    assert "core_type" in text and "64.0 KiB" in text      # user-facing args stay
    assert "internal ids hidden" in page.page.get_by_test_id("details-hidden").inner_text()

    page.page.get_by_test_id("details-raw").check()
    text = details_text(page)
    for raw in ("rawmagic", "'dtype': 8", "rootHash:7478291272186099252", "taskId",
                "sim_task_id", str(PACKED_ID), "65536"):
        assert raw in text, raw
    assert page.page.get_by_test_id("details-hidden").count() == 0
    page.js("openpto.selectTaskByName('t1')")
    assert page.page.get_by_test_id("details-raw").is_checked()
    assert "sim_task_id" in details_text(page)
    page.page.get_by_test_id("details-raw").uncheck()
    assert "sim_task_id" not in details_text(page)


def test_details_decode_a_pypto_trace(page, samples, tmp_path):
    """PyPTO's own trace: operand hints decode the same way (softmax is FP32 throughout); its
    event hint (hashes, call magic, packed task id) is hidden, but a leaf function keeps its
    hash as its name, the only one such a trace gives it."""
    html = render_view_html(load(samples / "softmax_merged_swimlane.json"), tmp_path / "v.html")
    page.open(html)
    page.js("openpto.selectTaskByName('0-0-1-7-0()')")
    assert page.page.get_by_test_id("details-inputs").inner_text() == "FP32 [?, 32, 1, 256]"
    text = details_text(page)
    assert "rawmagic" not in text and "callOpMagic" not in text and "TaskId:" not in text
    assert "leafHash:10500417826580458804" in text


def test_graph_tab_hides_the_swimlane_toolbar(page, multi_leaf_html, tmp_path):
    """Search, colour-by, depth, fit and the key hints belong to the swimlane: the Graph tab
    hides them, the Swimlane tab brings them back."""
    graph = tmp_path / "graph.html"
    graph.write_text("<!DOCTYPE html><p>graph</p>")
    html = render_view_html(multi_leaf_run(), tmp_path / "swimlane.html", graph=graph)
    page.open(html)
    toolbar = ["search-input", "color-by", "depth", "fit"]
    assert all(page.page.get_by_test_id(t).is_visible() for t in toolbar)
    page.page.get_by_test_id("tab-graph").click()
    assert page.page.get_by_test_id("graph-frame").is_visible()
    assert not any(page.page.get_by_test_id(t).is_visible() for t in toolbar)
    assert not page.page.locator("#help").is_visible()
    page.page.get_by_test_id("tab-swimlane").click()
    assert all(page.page.get_by_test_id(t).is_visible() for t in toolbar)
    assert page.page.get_by_test_id("swimlane-canvas").is_visible()


def test_header_tooltips_say_what_kernel_and_end_to_end_mean(page, multi_leaf_html):
    page.open(multi_leaf_html)
    kernel = page.page.get_by_test_id("summary-kernel-label").get_attribute("title")
    e2e = page.page.get_by_test_id("summary-e2e-label").get_attribute("title")
    assert "AIC/AIV span" in kernel and "AICore End-to-End Time" in kernel
    assert "launch (time 0 of the run)" in e2e and "AICPU included" in e2e


def test_diff_page_opens_on_both_swimlanes_and_tables(page, samples, tmp_path, capsys):
    """`pypto-toolkit diff A B -o`: at 1400x900 the first screen holds the summary (kernel,
    end-to-end, tasks, utilisation; B's better figures green, worse red) and every lane group
    of both runs; the critical paths and per-leaf deltas are tables; no JSON dump, no schema."""
    a, b = samples / "softmax_merged_swimlane.json", samples / "glm_moe_fusion_merged_swimlane.json"
    out = tmp_path / "diff.html"
    assert main(["diff", str(a), str(b), "--json", "-o", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    page.page.set_viewport_size({"width": 1400, "height": 900})
    page.open(out)

    groups = page.js("openpto.groups()")
    assert {g["run"] for g in groups} == {"softmax_merged_swimlane.json",
                                          "glm_moe_fusion_merged_swimlane.json"}
    assert all(g["visible"] for g in groups), groups
    canvas = page.page.get_by_test_id("swimlane-canvas").bounding_box()
    assert canvas["y"] + canvas["height"] <= 900 and canvas["height"] >= 300

    summary = page.page.get_by_test_id("diff-summary")
    box = summary.bounding_box()
    assert summary.is_visible() and box["y"] + box["height"] <= 900
    rows = page.js("""[...document.querySelectorAll('[data-testid=diff-summary-row]')]
                      .map(r => [...r.children].map(c => c.textContent))""")
    assert [r[0] for r in rows] == ["kernel \u00b5s", "end-to-end \u00b5s", "tasks", "AICore util %"]
    sa, sb = page.js("openpto.summary()")
    assert float(rows[0][1]) == pytest.approx(sa["kernelUs"], abs=1e-3)
    assert float(rows[0][2]) == pytest.approx(sb["kernelUs"], abs=1e-3)
    assert float(rows[0][2]) == pytest.approx(report["totals"]["span_us"]["b"], abs=1e-3)
    assert float(rows[1][1]) == pytest.approx(sa["e2eUs"], abs=1e-3)
    assert [int(rows[2][1]), int(rows[2][2])] == [sa["tasks"], sb["tasks"]]
    verdicts = page.js("""[...document.querySelectorAll('[data-testid=diff-summary-row]')]
                          .map(r => r.dataset.verdict || '')""")
    assert verdicts[0] == ("better" if sb["kernelUs"] < sa["kernelUs"] else "worse")
    assert verdicts[3] == ("better" if sb["utilPct"] > sa["utilPct"] else "worse")
    kernel_tip = page.js("document.querySelector('[data-testid=diff-summary-row] th').title")
    assert kernel_tip == page.page.get_by_test_id("summary-kernel-label").first.get_attribute("title")

    assert page.page.get_by_test_id("report-critical-row").count() == 2
    assert page.page.get_by_test_id("report-leaf-row").count() == len(report["leaves"])
    assert page.page.get_by_test_id("report-leaves").is_visible()
    body = page.js("document.body.innerText")
    assert report["schema"] not in body and "schema" not in body
    assert page.page.get_by_test_id("report-json").count() == 0

    page.page.get_by_test_id("report-panel").locator("summary").first.click()   # fold it
    assert not summary.is_visible()
    page.page.wait_for_function("openpto.laneHeight() > 2")
    assert page.js("openpto.groups()")[0]["visible"]
