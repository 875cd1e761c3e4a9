"""The shared example command line: selection by id, --list, exit codes, run-mode peek,
--swimlane and --open."""
import glob
import os

import torch

import pypto
from pypto.toolkit import example_cli
from pypto.toolkit.example_cli import peek_run_mode, run_examples


def test_exit_codes_list_and_selection(capsys):
    ran = []
    examples = {"demo::test_ok": lambda: ran.append("ok"),
                "demo::test_bad": lambda: 1 / 0}
    assert run_examples(examples, "Demo.", ["test_ok"]) == 0 and ran == ["ok"]
    assert run_examples(examples, "Demo.", []) == 1
    assert run_examples(examples, "Demo.", ["nope"]) == 2
    assert run_examples(examples, "Demo.", ["--list"]) == 0
    out = capsys.readouterr().out
    assert "✓ demo::test_ok passed" in out and "✗ demo::test_bad failed" in out
    assert "demo::test_ok\ndemo::test_bad" in out


def test_default_runs_only_listed_ids(capsys):
    """`default` limits the run without an id; a named slow example still runs; --list shows
    every id."""
    ran = []
    examples = {"demo::small": lambda: ran.append("small"),
                "demo::full": lambda: ran.append("full")}
    assert run_examples(examples, None, [], default=["demo::small"]) == 0 and ran == ["small"]
    assert run_examples(examples, None, ["full"], default=["demo::small"]) == 0
    assert ran == ["small", "full"]
    assert run_examples(examples, None, ["--list"], default=["demo::small"]) == 0
    assert "demo::small\ndemo::full" in capsys.readouterr().out


def test_setup_result_reaches_every_example():
    seen = []
    run_examples({"d::t": seen.append}, None, ["--run_mode", "npu"], setup=lambda m: m)
    assert seen == ["npu"]


def test_peek_run_mode():
    assert peek_run_mode(["x.py", "--run_mode", "npu"]) == pypto.RunMode.NPU
    assert peek_run_mode(["x.py", "--run_mode=sim"]) == pypto.RunMode.SIM
    assert peek_run_mode(["x.py"]) == pypto.RunMode.SIM


@pypto.frontend.jit
def _exp(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32, 512)
    y[:] = pypto.exp(x)


def _call_exp():
    x = torch.rand(64, 512)
    _exp(x, torch.zeros_like(x))


def test_swimlane_writes_and_prints_each_run_folder(capsys):
    assert run_examples({"d::one": _call_exp, "d::two": _call_exp}, None, ["--swimlane"]) == 0
    folders = sorted(glob.glob("output/output_*"))
    assert len(folders) == 2
    out = capsys.readouterr().out.splitlines()
    assert out == ["✓ d::one passed", f"wrote {folders[0]}",
                   "✓ d::two passed", f"wrote {folders[1]}"]
    for f in folders:       # both debug modes: the swimlane and the Graph tab's page
        assert {"swimlane.html", "graph.html", "merged_swimlane.json"} <= set(os.listdir(f))
    assert os.path.realpath("output/latest") == os.path.realpath(folders[1])
    # the debug modes end with the examples
    assert pypto.get_debug_options()["runtime_debug_mode"] == 0
    assert pypto.get_debug_options()["compile_debug_mode"] == 0


def test_without_swimlane_no_run_folder(capsys):
    assert run_examples({"d::one": _call_exp}, None, []) == 0
    assert not os.path.exists("output") and "wrote" not in capsys.readouterr().out


def test_open_opens_the_last_swimlane(monkeypatch, capsys):
    opened = []
    monkeypatch.setattr(example_cli.webbrowser, "open", opened.append)
    assert run_examples({"d::one": _call_exp}, None, ["--open"]) == 0   # implies --swimlane
    folder, = glob.glob("output/output_*")
    assert opened == [pathlib_uri(os.path.join(folder, "swimlane.html"))]
    assert f"wrote {folder}" in capsys.readouterr().out


def test_open_with_no_kernel_says_so(monkeypatch, capsys):
    opened = []
    monkeypatch.setattr(example_cli.webbrowser, "open", opened.append)
    assert run_examples({"d::none": lambda: None}, None, ["--open"]) == 0
    assert opened == [] and "no swimlane.html was written" in capsys.readouterr().err


def pathlib_uri(path):
    from pathlib import Path
    return Path(path).resolve().as_uri()


def test_full_size_entries_are_marked_and_run_timing_only(capsys):
    from pypto.frontend.options import lookup
    from pypto.toolkit.example_cli import checking, run_examples

    seen = {}

    def full():
        seen["checking"] = checking()
        seen["numerics"] = lookup("runtime.numerics")

    examples = {"m::small": lambda: None, "m::full": full}
    assert run_examples(examples, "doc", ["--list"], default=["m::small"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0] == "m::small" and listed[1].startswith("m::full  (full size")
    assert run_examples(examples, "doc", ["full", "--timing-only"], default=["m::small"]) == 0
    assert seen == {"checking": False, "numerics": "timing_only"}
    assert checking()   # only while the examples run
    assert run_examples(examples, "doc", ["small", "--timing-only"], default=["m::small"]) == 2
    assert "--timing-only is for the full-size entries" in capsys.readouterr().err
