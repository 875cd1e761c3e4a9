"""`output/latest` marks the newest run; `newest_run` finds the run a user meant by `output/`
or by no argument, and names the folder when there is none."""
import os

import pytest

from pypto.toolkit import run_folder
from pypto.toolkit.errors import ToolkitError
from pypto.toolkit.run_folder import has_compile_dumps, mark_latest, newest_run


def _run(name, *files):
    folder = os.path.join("output", name)
    os.makedirs(folder, exist_ok=True)
    for f in files:
        open(os.path.join(folder, f), "w").close()
    return folder


def test_latest_is_a_symlink_replaced_by_each_run():
    a = _run("output_20260101_000000_000001_1")
    b = _run("output_20260101_000000_000002_1")
    assert mark_latest(a) == os.path.abspath("output/latest")
    assert os.path.realpath("output/latest") == os.path.realpath(a)
    mark_latest(b)
    assert os.path.realpath("output/latest") == os.path.realpath(b)
    assert sorted(os.listdir("output")) == ["latest", os.path.basename(a), os.path.basename(b)]


def test_latest_text_file_where_symlinks_are_not_possible(monkeypatch):
    a = _run("custom_a", "merged_swimlane.json")
    b = _run("custom_b", "merged_swimlane.json")

    def no_symlink(*args, **kwargs):
        raise OSError("symlinks not permitted")
    monkeypatch.setattr(os, "symlink", no_symlink)
    assert mark_latest(a) == os.path.abspath("output/LATEST")
    mark_latest(b)
    assert open("output/LATEST").read() == "custom_b\n"
    assert sorted(os.listdir("output")) == ["LATEST", "custom_a", "custom_b"]
    os.utime(a, None)           # a is now the newer by time: LATEST still names b
    assert newest_run("output") == os.path.normpath(b)


def test_newest_run_by_name_that_holds_what_the_command_reads():
    old = _run("output_20260101_000000_000001_1", "merged_swimlane.json",
               "Before_004_ExpandFunction_f.json")
    new = _run("output_20260102_000000_000001_1", "merged_swimlane.json")
    _run("output_20260103_000000_000001_1")            # a compile_stage stop: nothing in it
    assert newest_run("output") == newest_run("output/") == newest_run(None) == new
    assert newest_run(None, has_compile_dumps) == old


def test_a_run_folder_or_file_is_meant_as_given():
    run = _run("output_20260101_000000_000001_1", "merged_swimlane.json")
    trace = os.path.join(run, "merged_swimlane.json")
    assert newest_run(run) == run and newest_run(trace) == trace
    assert newest_run("missing.json") == "missing.json"     # the command names it
    only_dumps = _run("output_20260102_000000_000001_1", "Before_004_ExpandFunction_f.json")
    assert newest_run(only_dumps) == only_dumps              # the command names what is missing


def test_no_run_is_a_one_line_error_naming_the_folder():
    with pytest.raises(ToolkitError, match=r"no \./output folder here.*--swimlane"):
        newest_run(None)
    os.makedirs("output")
    with pytest.raises(ToolkitError, match=r"^output: no run folder holding "
                                           r"merged_swimlane\.json; .*--swimlane`$"):
        newest_run(None)
    assert newest_run("output") == "output"     # given, it is a run folder: view names the file
    os.makedirs("output/output_20260101_000000_000000_1")      # a compile_stage stop
    with pytest.raises(ToolkitError, match="^output/: no run folder holding merged_swimlane"):
        newest_run("output/")
    _run("output_20260101_000000_000001_1", "merged_swimlane.json")
    with pytest.raises(ToolkitError, match="no run folder holding compile dumps"):
        newest_run(None, has_compile_dumps)
    assert "\n" not in run_folder._MAKE_ONE


def test_kernel_picks_the_newest_run_of_that_kernel():
    for n, kernel in enumerate(["softmax_kernel", "softmax_bf16_kernel", "builtin_softmax_kernel"]):
        run = _run(f"output_20260101_000000_00000{n}_1", "merged_swimlane.json")
        with open(os.path.join(run, "program.json"), "w") as f:
            f.write('{"format_version": 1, "kernel": "%s", "type": "program"}' % kernel)
    assert newest_run(None).endswith("_000002_1")                 # the newest, whatever kernel
    assert newest_run("output", kernel="softmax_kernel").endswith("_000000_1")
    assert run_folder.kernel_of(newest_run(None)) == "builtin_softmax_kernel"
    with pytest.raises(ToolkitError, match="no run of kernel 'nope' .kernels there: "
                                           "builtin_softmax_kernel, softmax_bf16_kernel"):
        newest_run(None, kernel="nope")
