"""runtime_debug_mode=1: a kernel call writes its simulated run in PyPTO's layout, and the
numbers in the files are the ones on kernel.last_run."""
import glob
import json
import os

import torch

import pypto
from pypto.profiling.swimlane_reader import read_swimlane


def _kernel(add_tile):
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1})
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        e = pypto.exp(x)
        pypto.set_vec_tile_shapes(*add_tile)
        y[:] = e + 1.0
    return k


def test_files_and_numbers(capsys):
    k = _kernel((32, 512))
    x = torch.rand(128, 1024)
    k(x, torch.zeros_like(x))
    folder = glob.glob("output/output_*")
    assert len(folder) == 1
    files = sorted(os.listdir(folder[0]))
    assert {"merged_swimlane.json", "program.json", "stat.report.txt",
            "bubble_analysis.log"} <= set(files)
    data = read_swimlane(os.path.join(folder[0], "merged_swimlane.json"))
    core_tasks = [t for t in data.tasks if data.lanes[t.lane].kind in ("aic", "aiv")]
    assert len(core_tasks) == k.last_run.stats["tasks"] == 8
    events = json.load(open(os.path.join(folder[0], "merged_swimlane.json")))["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert {"Machine View", "AIC_1", "AIV_25", "AIV_72", "AICPU_CTRL"} <= names
    err = capsys.readouterr().err
    assert "8 tasks" in err and "merged_swimlane.json" in err


def test_workspace_counts_intermediates_that_go_through_gm():
    """Matched tiles keep exp's result on chip (no workspace); mismatched tiles send it
    through GM workspace (the whole 512 KiB intermediate)."""
    x = torch.rand(128, 1024)
    fused, split = _kernel((32, 512)), _kernel((64, 256))
    fused(x, torch.zeros_like(x))
    split(x, torch.zeros_like(x))
    assert fused.last_run.stats["workspace_bytes"] == 0
    assert split.last_run.stats["workspace_bytes"] == 128 * 1024 * 4


def test_compile_and_run_dumps_share_one_folder():
    """With both debug modes on, one call writes one output folder (as PyPTO does)."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1, "compile_debug_mode": 1})
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        y[:] = pypto.exp(x)

    x = torch.rand(64, 512)
    k(x, torch.zeros_like(x))
    folders = glob.glob("output/output_*")
    assert len(folders) == 1
    names = os.listdir(folders[0])
    assert "merged_swimlane.json" in names and any(n.endswith("_ROOT.json") for n in names)


def test_both_modes_write_the_graph_page_the_swimlane_links():
    """compile_debug_mode + runtime_debug_mode: graph.html is written beside swimlane.html and
    the viewer's Graph tab points at it, with no toolkit command run."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1, "compile_debug_mode": 1})
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        y[:] = pypto.exp(x)

    x = torch.rand(64, 512)
    k(x, torch.zeros_like(x))
    folder, = glob.glob("output/output_*")
    graph = open(os.path.join(folder, "graph.html"), encoding="utf-8").read()
    assert 'id="graph-data"' in graph and '"k"' in graph
    swimlane = open(os.path.join(folder, "swimlane.html"), encoding="utf-8").read()
    assert '"graph":"graph.html"' in swimlane


def test_runtime_mode_alone_writes_no_graph_page():
    k = _kernel((32, 512))
    x = torch.rand(128, 1024)
    k(x, torch.zeros_like(x))
    folder, = glob.glob("output/output_*")
    assert not os.path.exists(os.path.join(folder, "graph.html"))
    swimlane = open(os.path.join(folder, "swimlane.html"), encoding="utf-8").read()
    assert '"graph":null' in swimlane


def test_latest_names_the_newest_run():
    k = _kernel((32, 512))
    x = torch.rand(128, 1024)
    k(x, torch.zeros_like(x))
    first = os.path.realpath("output/latest")
    k(x, torch.zeros_like(x))
    folders = sorted(glob.glob("output/output_*"))
    assert len(folders) == 2 and first == os.path.realpath(folders[0])
    assert os.path.realpath("output/latest") == os.path.realpath(folders[1])
    assert os.path.isfile("output/latest/swimlane.html")
