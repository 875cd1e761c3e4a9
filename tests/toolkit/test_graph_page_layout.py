"""The graph page is readable at "fit": independent parts of a graph are packed to the canvas
shape, a big tile graph opens one node per subgraph (a click expands one), a TileShape diff
pairs retiled ops, and long source lines wrap in the side panel.

The browser is conftest.py's `browser` fixture.
"""
import argparse
import json
import os
from collections import Counter

import pytest

from _graph_runs import run_exp_add, run_matmul_exp, run_softmax
from pypto.toolkit import graph


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{name: run folder with graph.html}, plus "diff": the matched-vs-mismatched page."""
    home = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("graph_layout_runs"))
    try:
        out = {"softmax": run_softmax(), "mm": run_matmul_exp(),
               "matched": run_exp_add((32, 512)), "mismatched": run_exp_add((64, 256))}
        for name in ("softmax", "mm"):
            _build(out[name])
        _build(out["matched"], diff=out["mismatched"], output="diff.html")
        out = {k: os.path.join(os.path.abspath(v), "graph.html") for k, v in out.items()}
        out["diff"] = os.path.abspath("diff.html")
        yield out
    finally:
        os.chdir(home)


def _build(run, diff=None, output=None):
    args = argparse.Namespace(output_dir=run, output=output, diff=diff, source=True)
    assert graph.run(args) == 0


@pytest.fixture
def open_graph(browser):
    pages = []

    def opener(path):
        page = browser.new_page(viewport={"width": 1400, "height": 800})
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("file://" + path)
        pages.append((page, errors))
        return page

    yield opener
    for page, errors in pages:
        assert errors == []
        page.close()


def _tile_dump(page_path):
    run = os.path.dirname(page_path)
    (name,) = [n for n in os.listdir(run) if n.startswith("Before_027") and n.endswith(".json")]
    return json.load(open(os.path.join(run, name)))


def _nodes_inside_their_canvas(page, pane):
    """Whether every drawn node of pane `pane` lies within that pane's drawing surface."""
    return page.evaluate("""i => {
        const pane = document.querySelector(`[data-testid=pane-${i}]`);
        const c = pane.querySelector('svg.canvas').getBoundingClientRect();
        return [...pane.querySelectorAll('[data-testid=node]')].every(n => {
            const r = n.getBoundingClientRect();
            return r.left >= c.left - 1 && r.right <= c.right + 1 &&
                   r.top >= c.top - 1 && r.bottom <= c.bottom + 1;
        });
    }""", pane)


def test_execute_view_fills_the_canvas_at_fit(runs, open_graph):
    """8 independent call ops (A) and 8 producer pairs with crossing M:N edges (B) were one
    row 0.36x their size; packed to the pane's shape they are drawn at full size or larger."""
    page = open_graph(runs["diff"])
    page.evaluate("openptoGraph.show('execute')")
    for i in (0, 1):
        assert page.evaluate(f"openptoGraph.fitScale({i})") >= 1, i
        assert _nodes_inside_their_canvas(page, i), i
    assert page.evaluate("openptoGraph.renderedNodeCount(1)") == 16


def test_tile_view_opens_one_node_per_subgraph_and_expands_on_click(runs, open_graph):
    tile = _tile_dump(runs["softmax"])
    per_sg = Counter(op["subgraph"] for op in tile["ops"])
    page = open_graph(runs["softmax"])
    page.evaluate("openptoGraph.show('tile')")
    assert page.evaluate("openptoGraph.grouping()") == "subgraphs"
    assert page.evaluate("openptoGraph.renderedNodeCount()") == len(per_sg) == 8
    assert page.evaluate("openptoGraph.fitScale()") >= 1
    label = page.locator("[data-testid=node][data-id=s3] .label").text_content()
    assert label == f"subgraph 3 · {per_sg[3]} ops"
    kinds = Counter(op["opcode"] for op in tile["ops"] if op["subgraph"] == 3)
    top = kinds.most_common(1)[0]
    assert page.locator("[data-testid=node][data-id=s3] .sub").text_content() \
        .startswith(f"{top[0]} {top[1]}")
    page.click("[data-testid=node][data-id=s3]")
    inner = [e for e in tile["edges"]
             if {op["subgraph"] for op in tile["ops"] if op["id"] in (e["src"], e["dst"])} == {3}]
    assert page.evaluate("openptoGraph.renderedNodeCount()") == 7 + per_sg[3]
    assert page.evaluate("openptoGraph.renderedEdgeCount()") == len(inner)
    assert page.evaluate("openptoGraph.collapsedIds()") == [f"s{k}" for k in range(8) if k != 3]
    # a search shows every hit: the subgraphs holding one are expanded
    amax = [op for op in tile["ops"] if op["opcode"] == "REDUCE_MAX"]
    assert page.evaluate("openptoGraph.search('reduce_max')") == len(amax)
    assert page.locator("[data-testid=node].hit").count() == len(amax)
    page.select_option("[data-testid=grouping-select]", "ops")
    assert page.evaluate("openptoGraph.renderedNodeCount()") == len(tile["ops"])


def test_a_small_tile_graph_shows_every_op(runs, open_graph):
    page = open_graph(runs["mm"])
    page.evaluate("openptoGraph.show('tile')")
    assert page.evaluate("openptoGraph.grouping()") == "ops"
    assert page.evaluate("openptoGraph.renderedNodeCount()") == _tile_dump(runs["mm"])["op_count"]


def test_a_retiled_diff_marks_tile_ops_changed(runs, open_graph):
    page = open_graph(runs["diff"])
    page.evaluate("openptoGraph.show('tile')")
    assert page.evaluate("openptoGraph.diffSummary()")[1] == \
        {"added": 0, "removed": 0, "changed": 24, "same": 0}
    assert page.locator("[data-testid=pane-1] .node.diff-changed").count() == 24


def test_long_source_lines_wrap_in_the_side_panel(runs, open_graph):
    """The softmax kernel's lines are wider than the panel: they wrap instead of scrolling."""
    page = open_graph(runs["softmax"])
    page.evaluate("openptoGraph.show('execute')")
    page.evaluate("openptoGraph.select('c3')")
    source = page.locator("[data-testid=source]")
    widths = source.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert widths[0] <= widths[1]
    heights = source.evaluate("e => [...e.children].map(r => r.getBoundingClientRect().height)")
    assert max(heights) >= 2 * min(heights)                 # some line took several rows
    aside = page.locator("aside").evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert aside[0] <= aside[1]
