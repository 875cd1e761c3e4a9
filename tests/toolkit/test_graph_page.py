"""The graph page in headless Chromium: what it draws equals the dumps, tasks and call ops link
both ways, a diff marks the extra subgraphs, and a 20k-node graph stays responsive.

The browser is conftest.py's `browser` fixture (skipped, saying how to install one, when there is
none).
"""
import argparse
import json
import os
import time

import pytest

from _graph_runs import run_exp_add, run_matmul_exp, run_softmax, write_chains
from pypto.profiling.swimlane_reader import read_swimlane
from pypto.toolkit import graph


def _task_events(run: str) -> list[dict]:
    """The run's task events with their args as the reader restores them (the file shares
    `call`, `root`, `core_type`, ... through the task name, lane and tables)."""
    trace = read_swimlane(os.path.join(run, "merged_swimlane.json"))
    return [{"name": t.name, "args": t.args} for t in trace.tasks]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every run the tests look at, compiled once: {name: run folder with graph.html}."""
    home = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("graph_runs"))
    try:
        out = {"softmax": run_softmax(), "mm": run_matmul_exp(),
               "matched": run_exp_add((32, 512)), "mismatched": run_exp_add((64, 256))}
        for name in ("softmax", "mm"):
            build(out[name])
        build(out["matched"], diff=out["mismatched"], output="diff.html")
        out["diff"] = os.path.abspath("diff.html")
        write_chains("big", chains=200, length=100)
        build("big")
        out["big"] = os.path.abspath("big")
        yield {k: os.path.abspath(v) for k, v in out.items()}
    finally:
        os.chdir(home)


def build(run, diff=None, output=None):
    args = argparse.Namespace(output_dir=run, output=output, diff=diff, source=True)
    assert graph.run(args) == 0


class Page:
    """One open page, collecting console errors and uncaught exceptions."""

    def __init__(self, browser, url):
        self.page = browser.new_page(viewport={"width": 1400, "height": 800})
        self.errors = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else 0)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url)

    def js(self, expr, arg=None):
        return self.page.evaluate(expr, arg)

    def g(self, call):
        return self.page.evaluate(f"openptoGraph.{call}")


@pytest.fixture
def open_page(browser):
    pages = []

    def opener(path):
        url = path if path.startswith("file:") else "file://" + path
        pages.append(Page(browser, url))
        return pages[-1]

    yield opener
    for p in pages:
        assert p.errors == []
        p.page.close()


def html(run):
    return os.path.join(run, "graph.html")


def dump(run, prefix):
    (path,) = [p for p in os.listdir(run) if p.startswith(prefix) and p.endswith(".json")]
    return json.load(open(os.path.join(run, path)))


@pytest.mark.parametrize("name", ["softmax", "mm"])
def test_drawn_nodes_and_edges_equal_the_dumps(runs, open_page, name):
    """Every level of every root draws exactly the dump's ops/calls and edges."""
    run = runs[name]
    p = open_page(html(run))
    p.g("setGrouping('ops')")         # every tile op (a big tile graph opens one node/subgraph)
    tensor, tile = dump(run, "Before_004"), dump(run, "Before_027")
    execute = dump(run, "After_036_CodegenPreproc_" + tensor["function"] + "_ROOT")
    for level, n, e in (("tensor", tensor["op_count"], tensor["edge_count"]),
                        ("tile", tile["op_count"], tile["edge_count"]),
                        ("execute", execute["call_count"], execute["edge_count"])):
        p.js("level => openptoGraph.show(level)", level)
        assert (p.g("nodeCount()"), p.g("edgeCount()")) == (n, e), level
        assert (p.g("renderedNodeCount()"), p.g("renderedEdgeCount()")) == (n, e), level
    for leaf in execute["leaves"]:
        block = dump(run, f"After_036_CodegenPreproc_{tensor['function']}_LEAF_{leaf['index']}_")
        p.js("leaf => openptoGraph.show('block', {leaf})", leaf["index"])
        assert p.g("renderedNodeCount()") == block["op_count"]
        assert p.page.locator("table.buffers tr").count() == 1 + len(block["buffers"])


def test_tensor_op_view_adds_tensor_nodes(runs, open_page):
    p = open_page(html(runs["softmax"]))
    p.g("show('tensor')")
    ops = p.g("nodeCount()")
    p.g("setTensorView(true)")
    tensors = {t["id"] for op in dump(runs["softmax"], "Before_004")["ops"]
               for t in op["inputs"] + op["outputs"]}
    assert p.g("renderedNodeCount()") == ops + len(tensors)
    p.g("setLayout('LR')")
    assert p.g("state().rankdir") == "LR" and p.g("renderedNodeCount()") == ops + len(tensors)


def test_a_swimlane_task_selects_its_call_op(runs, open_page):
    """The viewer's message for a task selects that task's call op in the execute graph; the
    call op lists the run's tasks that executed it and opens its leaf's block graph."""
    run = runs["mm"]
    p = open_page(html(run))
    events = _task_events(run)
    task = next(e["args"] for e in events if e.get("args", {}).get("call") == 3)
    p.g("show('tensor')")
    p.js("t => window.postMessage({type: 'openpto-select-task', task: t}, '*')",
         {k: task[k] for k in ("sim_task_id", "root", "leaf", "call", "instance", "window")})
    p.page.wait_for_function("openptoGraph.selected() !== null")
    assert p.g("selected()") == {"pane": 0, "id": "c3"}
    assert p.g("state().level") == "execute"
    assert p.g("tasksOf('c3')") == [e["args"]["sim_task_id"] for e in events
                                    if e.get("args", {}).get("call") == 3]
    assert p.page.locator("[data-testid=tasks-list] li").count() == 1
    p.page.click("[data-testid=open-block]")
    assert p.g("state()")["level"] == "block"
    p.page.locator("[data-testid=node]").first.click()
    assert p.page.locator("[data-testid=loc]").inner_text().endswith("_graph_runs.py:" + str(
        _line_of("_graph_runs.py", "pypto.exp(c) + 1.0")))
    assert "pypto.exp(c) + 1.0" in p.page.locator("[data-testid=source]").inner_text()


def _line_of(name, text):
    path = os.path.join(os.path.dirname(__file__), name)
    return next(i for i, line in enumerate(open(path), 1) if text in line)


def test_clicking_a_call_op_asks_the_embedding_viewer_to_highlight_its_tasks(runs, open_page,
                                                                          tmp_path):
    """Embedded in an iframe, a click on a call op posts {root, call} to the parent; a click
    on a tensor op posts the sim_task_ids of every task that ran one of its tiles."""
    run = runs["mm"]
    host = tmp_path / "host.html"
    host.write_text("<script>window.got = []; addEventListener('message', e => got.push(e.data))"
                    f"</script><iframe src='file://{html(run)}' width=1300 height=700></iframe>")
    p = open_page(str(host))
    frame = p.page.frames[1]
    frame.wait_for_function("window.openptoGraph !== undefined")
    frame.click("[data-testid=node][data-id=c2]")
    p.page.wait_for_function("window.got.length === 1")
    root = dump(run, "Before_004")["function"]
    assert p.js("got[0]") == {"type": "openpto-highlight-tasks",
                              "match": {"root": root, "call": 2}}
    frame.evaluate("openptoGraph.show('tensor')")
    mm = next(op["id"] for op in dump(run, "Before_004")["ops"] if op["opcode"] == "MATMUL")
    frame.click(f"[data-testid=node][data-id=o{mm}]")
    p.page.wait_for_function("window.got.length === 2")
    events = _task_events(run)
    cube = sorted(e["args"]["sim_task_id"] for e in events
                  if e.get("args", {}).get("core_type") == "AIC" and "call" in e["args"])
    assert sorted(p.js("got[1].sim_task_ids")) == cube and len(cube) == 2


def test_search_and_only_this_path(runs, open_page):
    """Search by op name and by file:line marks exactly the dump's matching tile ops; "only
    this path" draws an op with all its ancestors and descendants; Esc draws everything."""
    tile = dump(runs["softmax"], "Before_027")
    p = open_page(html(runs["softmax"]))
    p.g("show('tile')")
    amax = [op for op in tile["ops"] if op["opcode"] == "REDUCE_MAX"]
    assert p.g("search('reduce_max')") == len(amax) > 0
    loc = amax[0]["loc"]
    on_line = [op for op in tile["ops"] if op["loc"] == loc]
    assert p.g(f"search('{os.path.basename(loc)}')") == len(on_line)
    assert p.page.locator("[data-testid=node].hit").count() == len(on_line)
    div = next(op["id"] for op in tile["ops"] if op["opcode"] == "DIV")
    p.js("id => openptoGraph.select(id)", f"t{div}")
    p.page.click("[data-testid=path-button]")
    assert p.g("renderedNodeCount()") == len(_lineage(tile["edges"], div))
    p.page.keyboard.press("Escape")
    assert p.g("renderedNodeCount()") == len(tile["ops"])


def _lineage(edges, node):
    out = {node}
    for a, b in (("src", "dst"), ("dst", "src")):
        todo = [node]
        while todo:
            n = todo.pop()
            for e in edges:
                if e[b] == n and e[a] not in out:
                    out.add(e[a])
                    todo.append(e[a])
    return out


def test_diff_marks_the_extra_subgraphs(runs, open_page):
    """Matched (A) vs mismatched (B) producer/consumer TileShapes: B's 8 extra subgraphs are
    marked added, its M:N edges too, and the 8 kept ones changed on both sides."""
    p = open_page(runs["diff"])
    p.g("show('execute')")
    assert (p.g("nodeCount(0)"), p.g("nodeCount(1)")) == (8, 16)
    assert p.g("diffSummary()")[1] == {"added": 8, "removed": 0, "changed": 8, "same": 0}
    assert p.page.locator("[data-testid=pane-1] .node.diff-added").count() == 8
    assert p.page.locator("[data-testid=pane-1] .node.diff-changed").count() == 8
    assert p.page.locator("[data-testid=pane-1] .edge.k-many.diff-added").count() == 16
    assert p.page.locator("[data-testid=pane-0] .node.diff-changed").count() == 8
    assert "+8 added" in p.page.locator("[data-testid=diff-counts-1]").inner_text()
    kept = p.g("diffIds('changed', 0)")[0]
    p.js("id => openptoGraph.select(id, 0)", kept)
    assert p.page.locator("[data-testid=pane-1] .node.selected").count() == 1


def test_a_20k_node_graph_renders_a_searched_neighbourhood(runs, open_page):
    p = open_page(html(runs["big"]))
    assert p.g("state().level") == "tile"
    assert p.g("nodeCount()") == 20000 and p.g("isPartial()")
    assert p.g("renderedNodeCount()") == 0
    assert "search" in p.page.locator("[data-testid=notice-0]").inner_text()
    t0 = time.monotonic()
    assert p.g("search('x199')") == 100
    assert p.g("renderedNodeCount()") == 100 and p.g("renderedEdgeCount()") == 99
    p.js("openptoGraph.select('t19950')")
    p.page.click("[data-testid=path-button]")
    assert p.g("renderedNodeCount()") == 100
    assert time.monotonic() - t0 < 10
    p.page.mouse.move(500, 400)
    p.page.mouse.wheel(0, -300)
    assert p.js("1 + 1") == 2                               # still responsive


def test_inside_the_swimlane_viewer_tasks_and_call_ops_follow_each_other(runs, open_page):
    """`pypto-toolkit view` on a run folder holding graph.html: selecting a task selects its
    call op in the Graph tab (drawn while hidden, fitted once shown), and clicking a call op
    there highlights that call's tasks in the swimlane."""
    from pypto.cli import main
    run = runs["mm"]
    assert main(["view", run]) == 0
    p = open_page(os.path.join(run, "swimlane.html"))
    events = _task_events(run)
    name = next(e["name"] for e in events if e.get("args", {}).get("call") == 4)
    frame = p.page.frame_locator("iframe")
    graph = next(f for f in p.page.frames if f.url.endswith("graph.html"))
    graph.wait_for_function("window.openptoGraph !== undefined")
    p.js("n => openpto.selectTaskByName(n)", name)
    graph.wait_for_function("openptoGraph.selected() !== null")
    assert graph.evaluate("openptoGraph.selected()") == {"pane": 0, "id": "c4"}
    p.page.click("[data-testid=tab-graph]")
    frame.locator("[data-testid=node][data-id=c2]").click()
    p.page.wait_for_function("document.querySelector('[data-testid=status]').textContent")
    assert p.page.locator("[data-testid=status]").inner_text().startswith("1 task highlighted")
