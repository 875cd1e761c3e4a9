"""The viewer page in headless Chromium: lanes, click → details, search, range utilisation,
graph-tab messages, diff mode, names shown as text, and a 200k-task load. Every test also
requires zero console errors (the `page` fixture)."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
import torch

import pypto
from pypto.profiling.swimlane import Lane, SwimlaneData, TaskEvent
from pypto.toolkit.trace import load
from pypto.toolkit.viewer import render_diff_html, render_view_html


@pytest.fixture(scope="session")
def own_run(tmp_path_factory) -> Path:
    """A run folder of our own: y = exp(x) then z = 2y in 64-row blocks (128 AIV tasks, each
    block of the second loop depending on the same block of the first)."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1})
    def two_loops(x: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_FP32),
                  y: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_FP32),
                  z: pypto.Tensor([pypto.DYNAMIC, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 512)
        for i in pypto.loop(x.shape[0] // 64):
            y[i * 64:(i + 1) * 64] = pypto.exp(x[i * 64:(i + 1) * 64])
        for j in pypto.loop(x.shape[0] // 64):
            z[j * 64:(j + 1) * 64] = y[j * 64:(j + 1) * 64] * 2.0
    cwd = Path.cwd()
    work = tmp_path_factory.mktemp("own_run")
    try:
        os.chdir(work)
        x = torch.rand(1024, 512)
        two_loops(x, torch.zeros_like(x), torch.zeros_like(x))
    finally:
        os.chdir(cwd)
    (folder,) = (work / "output").glob("output_*")
    return folder


def trace_json(path: Path) -> dict:
    return json.loads(path.read_text())


def core_lanes(doc: dict, kind: str) -> set[int]:
    """tids of the lanes named <kind>_<n>, read straight from the trace's metadata."""
    return {e["tid"] for e in doc["traceEvents"] if e.get("ph") == "M"
            and e.get("name") == "thread_name" and re.fullmatch(rf"{kind}_\d+", e["args"]["name"])}


def utilisation(doc: dict, kind: str, t0: float, t1: float) -> float:
    """Busy time of <kind> lanes inside [t0, t1] over lanes x span, from the raw events."""
    tids = core_lanes(doc, kind)
    busy = sum(max(0.0, min(e["ts"] + e["dur"], t1) - max(e["ts"], t0))
               for e in doc["traceEvents"] if e.get("ph") == "X" and e["tid"] in tids)
    return 100 * busy / (len(tids) * (t1 - t0))


def click_task(page, name: str) -> None:
    """A real mouse click in the middle of the task's box on the canvas."""
    r = page.js("n => openpto.taskRect(openpto.findTask(n))", name)
    page.page.mouse.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)


def check_page(page, trace: Path, html: Path, name: str) -> dict:
    """The checks shared by a PyPTO sample and our own run; returns the trace JSON."""
    doc = trace_json(trace)
    page.open(html)
    lanes = page.js("openpto.lanes()")
    cores = core_lanes(doc, "AIC") | core_lanes(doc, "AIV")
    assert len([ln for ln in lanes if ln["kind"] in ("aic", "aiv")]) == len(cores)
    declared = [e for e in doc["traceEvents"] if e.get("name") == "thread_name"]
    assert len(lanes) == len(declared)
    assert page.js("openpto.taskCount") == sum(e.get("ph") == "X" for e in doc["traceEvents"])

    click_task(page, name)
    assert page.page.get_by_test_id("details-name").inner_text() == name
    assert page.js("openpto.selected().name") == name

    page.js("openpto.selectTask(-1)")
    assert page.js("q => openpto.search(q)", name) >= 1
    assert page.js("openpto.selected().name") == name
    assert re.match(r"1 / \d+", page.page.get_by_test_id("search-count").inner_text())

    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e["tid"] in cores]
    lo = min(e["ts"] for e in xs)
    hi = max(e["ts"] + e["dur"] for e in xs)
    t0, t1 = lo + 0.2 * (hi - lo), lo + 0.7 * (hi - lo)
    stats = page.js("([a, b]) => openpto.rangeSelect(a, b)", [t0, t1])
    assert stats["aivUtil"] == pytest.approx(utilisation(doc, "AIV", t0, t1), abs=1e-6)
    shown = page.page.get_by_test_id("range-aiv-util").inner_text()
    assert shown == f"{utilisation(doc, 'AIV', t0, t1):.2f}%"
    assert sum(r["count"] for r in stats["leaves"]) > 0
    return doc


def test_pypto_sample(page, samples, tmp_path):
    """A real PyPTO trace: lanes = the trace's cores, click and search find the task, the range
    utilisation and the summary match PyPTO's own numbers (71.13 us, 38.11 %)."""
    trace = samples / "softmax_merged_swimlane.json"
    html = render_view_html(load(trace), tmp_path / "v.html", title="softmax")
    check_page(page, trace, html, "0-0-1-7-0()")
    (summary,) = page.js("openpto.summary()")
    assert summary["kernelUs"] == pytest.approx(71.1278, abs=1e-3)
    assert summary["utilPct"] == pytest.approx(38.11, abs=0.01)
    assert page.page.get_by_test_id("summary-tasks").inner_text() == "320"


def test_own_run(page, own_run):
    """Our run's automatic swimlane.html: the same checks, plus dependency buttons and the
    highlight depth."""
    doc = check_page(page, own_run / "merged_swimlane.json", own_run / "swimlane.html",
                     "0-0-0-0-0()")
    assert len(core_lanes(doc, "AIV")) == 48
    i = page.js("openpto.selectTaskByName('0-0-0-0-0()')")
    task = page.js("i => openpto.task(i)", i)
    assert task["args"]["leaf"] and task["args"]["sim_task_id"] == 0
    succs = task["succs"]
    assert succs and task["preds"] == []
    page.js("openpto.setDepth(1)")
    assert set(page.js("openpto.highlighted()")) == set(succs) | {i}
    page.page.get_by_test_id("succ-button").first.click()
    assert page.js("openpto.selected().index") == succs[0]
    assert page.js("openpto.selected().preds") == [i]
    page.js("openpto.setDepth(-1)")
    assert len(page.js("openpto.highlighted()")) >= 1


def test_ruler_drag_measures_a_range(page, samples, tmp_path):
    """Dragging on the time ruler opens the range panel with utilisation figures."""
    html = render_view_html(load(samples / "ffn_dynamic_gelu_merged_swimlane.json"),
                            tmp_path / "v.html")
    page.open(html)
    box = page.page.get_by_test_id("swimlane-canvas").bounding_box()
    y = box["y"] + 26
    page.page.mouse.move(box["x"] + 300, y)
    page.page.mouse.down()
    page.page.mouse.move(box["x"] + 700, y, steps=5)
    page.page.mouse.up()
    assert page.page.get_by_test_id("range-panel").is_visible()
    assert page.page.get_by_test_id("range-aic-util").inner_text().endswith("%")


def test_graph_tab_messages(page, own_run, tmp_path):
    """A graph.html beside the trace becomes the Graph tab; its highlight message marks tasks
    by sim_task_id, and a task click is posted to it."""
    graph = tmp_path / "graph.html"
    graph.write_text("""<!DOCTYPE html><script>
      window.got = [];
      addEventListener("message", (e) => window.got.push(e.data));
      parent.postMessage({type: "openpto-highlight-tasks", sim_task_ids: [0, 1]}, "*");
    </script>""")
    html = render_view_html(load(own_run), tmp_path / "swimlane.html", graph=graph)
    page.open(html)
    assert page.page.get_by_test_id("tab-graph").is_visible()
    page.page.wait_for_function("openpto.highlighted().length === 2")
    click_task(page, "0-0-0-0-0()")
    child = next(f for f in page.page.frames if f.url.endswith("graph.html"))
    child.wait_for_function("window.got.length > 0")
    msg = child.evaluate("window.got[0]")
    assert msg["type"] == "openpto-select-task" and msg["task"]["sim_task_id"] == 0
    n = page.js("openpto.highlight({type: 'openpto-highlight-tasks', match: {call: 0}})")
    # (the args as the reader restores them: the file gives `call` through the task name)
    assert n == sum(1 for t in load(own_run).tasks if t.args.get("call") == 0)


def test_diff_mode(page, samples, own_run, tmp_path):
    """Two runs on one time axis under the report: both runs' lanes, summaries and report rows."""
    a, b = load(samples / "softmax_merged_swimlane.json"), load(own_run)
    report = {"totals": {"kernel_us": {"a": 71.13, "b": 4.44, "delta": -66.69, "ratio": 0.062}},
              "leaves": [{"leaf": "L0", "a_us": 1.0, "b_us": 2.0, "delta_us": 1.0}],
              "notes": ["<b>not bold</b>"]}
    html = render_diff_html(a, b, report, tmp_path / "diff.html", titles=("pypto", "ours"))
    page.open(html)
    lanes = page.js("openpto.lanes()")
    assert len(lanes) == len(a.lanes) + len(b.lanes)
    assert {ln["run"] for ln in lanes} == {"pypto", "ours"}
    assert page.page.get_by_test_id("summary-run").count() == 2
    assert page.page.get_by_test_id("report-total-row").count() == 1
    assert page.page.get_by_test_id("report-leaf-row").count() == 1
    page.page.get_by_text("more: every total").click()     # (unknown keys fold away)
    assert "<b>not bold</b>" in page.page.get_by_test_id("report-json").inner_text()
    stats = page.js("openpto.rangeSelect(0, 20)")
    assert [s["run"] for s in stats["runs"]] == ["pypto", "ours"]


def test_names_are_text_not_markup(page, tmp_path):
    """Task names and args holding HTML or a closing script tag are shown literally."""
    evil = "<img src=x onerror=alert(1)>"
    doc = {"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1002, "args": {"name": "AIV_1"}},
        {"ph": "X", "name": evil, "pid": 1, "tid": 1002, "ts": 1.0, "dur": 2.0,
         "args": {"leaf": "</script><script>alert(2)</script>", "note": "\u2028&amp;"}}]}
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(doc))
    html = render_view_html(load(trace), tmp_path / "v.html", title="<script>alert(3)</script>")
    page.open(html)
    click_task(page, evil)
    assert page.page.get_by_test_id("details-name").inner_text() == evil
    assert page.js("document.querySelectorAll('img').length") == 0
    assert page.js("openpto.selected().leaf") == "</script><script>alert(2)</script>"
    assert page.js("document.title") == "<script>alert(3)</script>"
    page.page.wait_for_timeout(100)
    assert page.dialogs == []


def synthetic(n: int, lanes: int = 72) -> SwimlaneData:
    """n back-to-back tasks spread round-robin over 24 AIC and 48 AIV lanes, no flows."""
    lane_map = {1000 + 2 * k: Lane(1000 + 2 * k, f"{'AIC' if k <= 24 else 'AIV'}_{k}",
                                   "aic" if k <= 24 else "aiv", k) for k in range(1, lanes + 1)}
    tids = list(lane_map)
    tasks = [TaskEvent(i, i, tids[i % lanes], f"t{i}", (i // lanes) * 1.0, 0.8,
                       {"leaf": f"leaf{i % 13}", "sim_task_id": i}) for i in range(n)]
    return SwimlaneData(lane_map, tasks, [], [], {})


def test_200k_tasks_render(page, tmp_path):
    """200k tasks load and draw a first frame within seconds; zoomed frames keep coming."""
    html = render_view_html(synthetic(200_000), tmp_path / "big.html")
    t = time.perf_counter()
    page.open(html)
    assert time.perf_counter() - t < 15
    assert page.js("openpto.taskCount") == 200_000
    frames = page.js("openpto.frames()")
    page.js("openpto.setView(100, 200)")
    page.page.wait_for_function(f"openpto.frames() > {frames}", timeout=5000)
    assert page.js("openpto.search('/^t19999[0-9]$/')") == 10
