"""`pypto-toolkit graph`: the page model against the dumps it reads, the diff, the command.

The browser tests (headless Chromium) live in test_graph_page.py; this module checks the
Python side, which the page only draws.
"""
import argparse
import glob
import json
import os

import pytest

from _graph_runs import run_exp_add, run_matmul_exp, run_softmax
from pypto.profiling.swimlane_reader import read_swimlane
from pypto.toolkit import graph
from pypto.toolkit.errors import ToolkitError
from pypto.toolkit.graphview.diff import diff_runs
from pypto.toolkit.graphview.model import load_run
from pypto.toolkit.graphview.tasks import task_index

def dumps(directory: str, prefix: str) -> list[dict]:
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(directory, prefix + "*")))]


def test_every_level_has_the_dumps_node_and_edge_counts():
    """Each graph holds exactly the dump's ops and edges, for the tensor, tile, execute and
    block levels (block edges: one per distinct local producer of an op)."""
    run = run_matmul_exp()
    root = load_run(run)["roots"][0]
    (tensor,) = dumps(run, "Before_004")
    (tile,) = dumps(run, "Before_027")
    (execute,) = dumps(run, "After_036_CodegenPreproc_TENSOR_default_loop_1_Unroll1_PATH0_"
                            "hiddenfunc0_ROOT")
    lv = root["levels"]
    assert (len(lv["tensor"]["nodes"]), len(lv["tensor"]["edges"])) == \
        (tensor["op_count"], tensor["edge_count"])
    assert (len(lv["tile"]["nodes"]), len(lv["tile"]["edges"])) == \
        (tile["op_count"], tile["edge_count"])
    assert (len(lv["execute"]["nodes"]), len(lv["execute"]["edges"])) == \
        (execute["call_count"], execute["edge_count"])
    blocks = [d for d in dumps(run, "After_036") if d["graph_type"] == "BLOCK"]
    assert sorted(root["blocks"]) == sorted(str(b["leaf"]) for b in blocks)
    for b in blocks:
        g = root["blocks"][str(b["leaf"])]
        local = {(r["producer"], op["index"]) for op in b["ops"] for r in op["inputs"]
                 if r["producer"] is not None}
        assert (len(g["nodes"]), len(g["edges"])) == (b["op_count"], len(local))
    assert {b["core"] for b in blocks} == {"AIC", "AIV"}


def test_tile_ops_are_coloured_by_subgraph_and_call_ops_by_leaf():
    run = run_matmul_exp()
    root = load_run(run)["roots"][0]
    (tile,) = dumps(run, "Before_027")
    assert [n["group"] for n in root["levels"]["tile"]["nodes"]] == \
        [op["subgraph"] for op in tile["ops"]]
    calls = root["levels"]["execute"]["nodes"]
    assert [n["group"] for n in calls] == [n["leaf"] for n in calls] == [0, 0, 1, 1, 1, 1]
    assert all(n["loc"].endswith(".py:" + n["loc"].rsplit(":", 1)[1]) for n in calls)


def test_block_graph_shows_pipes_and_buffers():
    """The cube leaf's matmul is drawn under the cube pipe M, with its L1/L0 buffers listed."""
    run = run_matmul_exp()
    blocks = load_run(run)["roots"][0]["blocks"]
    cube = next(g for g in blocks.values() if any(n["label"] == "MATMUL" for n in g["nodes"]))
    mm = next(n for n in cube["nodes"] if n["label"] == "MATMUL")
    assert mm["group"] == "M" and mm["sub"] == "FIX·M·MTE1·MTE2"
    assert {b[0] for b in cube["buffers"]} == {"L1", "L0A", "L0B", "L0C"}


def test_dependencies_between_subgraphs_are_classed_with_counts():
    """Matched producer/consumer TileShapes fuse (no cross-subgraph data edge); mismatched ones
    give M:N dependencies, each call-op edge carrying its tile-edge counts (§6.3 S17)."""
    matched = load_run(run_exp_add((32, 512)))["roots"][0]["levels"]["execute"]
    mismatched = load_run(run_exp_add((64, 256)))["roots"][0]["levels"]["execute"]
    assert (len(matched["nodes"]), matched["edges"]) == (8, [])
    assert len(mismatched["nodes"]) == 16
    assert {e["k"] for e in mismatched["edges"]} == {"M:N"}
    assert all(e["n"] == "gm 1" for e in mismatched["edges"])
    assert ["M:N deps", "16 (16 tile edges)"] in mismatched["summary"]


def test_diff_marks_the_extra_subgraphs_of_mismatched_tile_shapes():
    """8 fused subgraphs → 16: every exp subgraph is the same one changed (it lost its add),
    and the 8 add subgraphs are added; in the tensor graph only TileShapes changed."""
    a, b = load_run(run_exp_add((32, 512))), load_run(run_exp_add((64, 256)))
    diff_runs(a, b)
    ea, eb = a["roots"][0]["levels"]["execute"], b["roots"][0]["levels"]["execute"]
    assert ea["diff"] == {"added": 8, "removed": 0, "changed": 8, "same": 0}
    added = [n for n in eb["nodes"] if n.get("diff") == "added"]
    assert len(added) == 8 and all(n["group"] == 1 for n in added)   # the add's leaf
    assert all(e.get("diff") == "added" for e in eb["edges"])
    tensor = b["roots"][0]["levels"]["tensor"]
    # the add and the assemble into y were both recorded under the new TileShape
    assert [n["label"] for n in tensor["nodes"] if n.get("diff") == "changed"] == \
        ["ADDS", "ASSEMBLE"]


def test_retiled_tile_ops_pair_by_source_line_and_op_kind():
    """A TileShape edit renames every tile (regions change), yet each op of a line stays the
    same op changed; only the surplus of a line that now has fewer tiles is removed."""
    a, b = load_run(run_exp_add((32, 512))), load_run(run_exp_add((64, 256)))
    diff_runs(a, b)
    tile_b = b["roots"][0]["levels"]["tile"]
    assert tile_b["diff"] == {"added": 0, "removed": 0, "changed": 24, "same": 0}
    twins = {n["id"]: n["twin"] for n in tile_b["nodes"]}
    by_id = {n["id"]: n for n in a["roots"][0]["levels"]["tile"]["nodes"]}
    assert all((by_id[t]["label"], by_id[t]["loc"]) == (n["label"], n["loc"])
               for n in tile_b["nodes"] for t in [twins[n["id"]]])
    a, c = load_run(run_exp_add((32, 512))), load_run(run_exp_add((64, 512)))
    diff_runs(a, c)
    tile_a = a["roots"][0]["levels"]["tile"]
    # 8 EXP (their subgraphs lost the add), 4 of 8 ADDS and 4 of 8 ASSEMBLE tiles kept
    assert tile_a["diff"] == {"added": 0, "removed": 8, "changed": 16, "same": 0}
    assert sorted(n["label"] for n in tile_a["nodes"] if n.get("diff") == "removed") == \
        ["ADDS"] * 4 + ["ASSEMBLE"] * 4


def test_a_run_diffed_with_itself_is_all_same():
    run = run_softmax()
    a, b = load_run(run), load_run(run)
    diff_runs(a, b)
    for level in ("tensor", "tile", "execute"):
        d = a["roots"][0]["levels"][level]["diff"]
        assert d["same"] == len(a["roots"][0]["levels"][level]["nodes"])
        assert d["added"] == d["removed"] == d["changed"] == 0


def test_task_index_lists_every_task_with_its_call():
    run = run_softmax()
    tasks = task_index(run)
    # the args as the reader restores them (the file shares `call` through the task name)
    trace = read_swimlane(os.path.join(run, "merged_swimlane.json"))
    xs = [t.args for t in trace.tasks if "sim_task_id" in t.args]
    assert len(tasks["rows"]) == len(xs) == 32
    assert sorted((r[0], r[2]) for r in tasks["rows"]) == \
        sorted((a["sim_task_id"], a["call"]) for a in xs)


def test_command_writes_the_page_into_the_run_folder(capsys):
    run = run_softmax()
    assert graph.run(_args(run)) == 0
    page = os.path.join(run, "graph.html")
    assert capsys.readouterr().out.strip() == f"wrote {os.path.abspath(page)}"
    html = open(page).read()
    assert "dagre" in html and 'id="graph-data"' in html and "sourceMappingURL" not in html


def test_source_option_embeds_the_kernel_file():
    run = run_softmax()
    graph.run(_args(run, output="g.html", source=True))
    html = open("g.html").read()
    assert "pypto.set_vec_tile_shapes(1, 4, 1, 64)" in html


def test_user_errors_name_the_path():
    os.makedirs("empty")
    with pytest.raises(ToolkitError, match="^empty: no compile dumps"):
        graph.run(_args("empty"))
    with pytest.raises(ToolkitError, match="^missing: no such run folder"):
        graph.run(_args("missing"))


def _args(path, output=None, diff=None, source=False):
    return argparse.Namespace(output_dir=path, output=output, diff=diff, source=source)
