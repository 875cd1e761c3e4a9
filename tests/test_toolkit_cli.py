"""The pypto-toolkit console script is installed and reports the version; view, analyze and
graph take `output/` or no argument as the newest run there."""
import glob
import os
import subprocess
import sys

import pytest
import torch

import pypto
from pypto.cli import main


def test_version_flag(capsys):
    try:
        main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert pypto.__version__ in capsys.readouterr().out


def test_module_runs_as_script():
    out = subprocess.run([sys.executable, "-m", "pypto.cli", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "pypto-toolkit" in out.stdout


def _two_runs():
    """Two runs with both debug modes, the second one newer; their folders, oldest first."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1, "compile_debug_mode": 1})
    def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 512)
        y[:] = pypto.exp(x)

    for rows in (64, 128):
        x = torch.rand(rows, 512)
        k(x, torch.zeros_like(x))
    folders = sorted(glob.glob("output/output_*"))
    assert len(folders) == 2
    return folders


@pytest.mark.parametrize("where", [["output/"], ["output"], []])
def test_view_analyze_graph_take_the_newest_run(where, capsys):
    old, new = _two_runs()
    capsys.readouterr()
    os.remove(os.path.join(new, "swimlane.html"))
    os.remove(os.path.join(new, "graph.html"))
    assert main(["view", *where]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {os.path.join(new, 'swimlane.html')} (")
    assert os.path.isfile(os.path.join(new, "swimlane.html"))
    assert main(["analyze", *where]) == 0
    assert capsys.readouterr().out.startswith(f"Analysis of {new}\n")
    assert main(["graph", *where]) == 0
    assert capsys.readouterr().out == f"wrote {os.path.abspath(os.path.join(new, 'graph.html'))}\n"


def test_newest_run_even_when_latest_is_gone(capsys):
    old, new = _two_runs()
    os.remove("output/latest")
    capsys.readouterr()
    assert main(["analyze", "output"]) == 0
    assert capsys.readouterr().out.startswith(f"Analysis of {new}\n")


@pytest.mark.parametrize("command", ["view", "analyze", "graph"])
def test_no_run_is_one_line_error(command, capsys):
    assert main([command]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no ./output folder here" in err and "--swimlane" in err
    os.makedirs("output/output_20260101_000000_000001_1")
    assert main([command, "output/"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pypto-toolkit {command}: error: output/: no run folder holding ")
    assert err.count("\n") == 1
