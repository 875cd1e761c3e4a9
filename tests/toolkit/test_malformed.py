"""Malformed traces through the toolkit's commands: every file that cannot be a trace is ONE
stderr line naming the file and the problem, exit code 2, no traceback; events with unusable
times are left out with one warning that counts them by reason; lone surrogates in strings
are shown as U+FFFD instead of crashing an output. (Issue 13, item 4.)"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.cli import main

from _traces import build, task

GOOD = build([task("AIV_25", 0.0, 2.0), task("AIV_26", 3.0, 2.0, leaf="L1"),
              task("AIV_25", 6.0, 1.0, leaf="L1")], flows=[(0, 1)])
_X0 = next(i for i, e in enumerate(GOOD["traceEvents"]) if e["ph"] == "X")


def _text(obj) -> str:
    return json.dumps(obj)


def _first_x(**fields) -> str:
    """GOOD with fields of its first X event replaced."""
    obj = json.loads(json.dumps(GOOD))
    obj["traceEvents"][_X0].update(fields)
    return _text(obj)


def _nested(depth: int) -> str:
    """GOOD with one args value nested `depth` lists deep."""
    obj = json.loads(json.dumps(GOOD))
    obj["traceEvents"][_X0]["args"]["deep"] = "@@"
    return _text(obj).replace('"@@"', "[" * depth + "]" * depth)


# name -> (file text, or bytes; words the one-line error must hold)
MALFORMED = {
    "deep_args": (_nested(5000), "nested too deeply"),
    "deep_top": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "ts_string": (_first_x(ts="abc"), "'ts' is 'abc', not a number"),
    "dur_string": (_first_x(dur="1.5"), "'dur' is '1.5', not a number"),
    "args_number": (_first_x(args=5), "'args' is 5, not an object"),
    "tid_null": (_first_x(tid=None), "'tid' is None, not an integer"),
    "id_list": (_first_x(id=[1]), "'id' is [1], not an integer"),
    "events_not_list": ('{"traceEvents": 5}', "not a Chrome trace"),
    "top_number": ("42", "not valid JSON"),
    "top_string": ('"trace"', "not valid JSON"),
    "truncated": (_text(GOOD)[:2000], "truncated JSON"),
    "empty": ("", "empty file"),
    "blank": ("  \n\t ", "empty file"),
    "binary": (bytes(range(256)) * 8, "not UTF-8"),
    "nul_bytes": (b"\x00" * 64, "not valid JSON"),
    "counter_string": ('[{"ph": "C", "name": "c", "ts": 1, "args": {"size": "x"}}]',
                       "counter 'size' is 'x', not a number"),
    "thread_tid_missing": ('[{"ph": "M", "name": "thread_name", "args": {"name": "AIV_1"}}]',
                           "'tid' is missing, not an integer"),
    "no_tasks": ('{"traceEvents": []}', "no task events"),
    "counter_huge_int": ('[{"ph": "C", "name": "c", "ts": 1, "args": {"size": 1' + "0" * 400
                         + '}}]', "OverflowError"),
    "int_too_long": (_first_x(id=0).replace('"id": 0', '"id": 1' + "0" * 5000),
                     "integer string conversion"),
}


def _write(path: Path, content) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _argv(command: str, trace: Path, tmp_path: Path) -> list[str]:
    good = _write(tmp_path / "good.json", _text(GOOD))
    return {"view": ["view", str(trace), "-o", str(tmp_path / "v.html")],
            "analyze": ["analyze", str(trace)],
            "analyze-json": ["analyze", "--json", str(trace)],
            "diff": ["diff", str(good), str(trace), "-o", str(tmp_path / "d.html")]}[command]


def _one_line_error(capsys, argv: list[str], culprit: Path, problem: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err and str(culprit) in err and problem in err, err


@pytest.mark.parametrize("command", ["view", "analyze", "analyze-json", "diff"])
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_file_is_one_line_naming_it(tmp_path, capsys, name, command):
    content, problem = MALFORMED[name]
    bad = _write(tmp_path / f"{name}.json", content)
    _one_line_error(capsys, _argv(command, bad, tmp_path), bad, problem)


@pytest.mark.parametrize("command", ["view", "analyze", "diff"])
def test_folder_without_a_trace(tmp_path, capsys, command):
    folder = tmp_path / "run"
    folder.mkdir()
    _one_line_error(capsys, _argv(command, folder, tmp_path), folder, "no such file")


def test_nesting_the_reader_accepts_is_processed_by_every_command():
    """Just under the reader's depth limit (about 1,000 levels, Python's recursion limit) the
    commands work; just over it, it is the one-line error. In a fresh process: the limit
    depends on the stack depth, which pytest's own frames would change."""
    script = r"""
import json, sys, tempfile, os
sys.path.insert(0, sys.argv[1])
from pypto.cli import main
from test_malformed import _nested
tmp = tempfile.mkdtemp()
for depth in (200, 300, 900, 1100):
    p = os.path.join(tmp, f"d{depth}.json")
    open(p, "w").write(_nested(depth))
    codes = [main(["view", p, "-o", os.path.join(tmp, "v.html")]), main(["analyze", p]),
             main(["diff", p, p, "-o", os.path.join(tmp, "d.html")])]
    print("CODES", depth, codes, file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    codes = {int(w[1]): w[2] for w in (line.split(" ", 2) for line in done.stderr.splitlines()
                                        if line.startswith("CODES"))}
    assert codes == {200: "[0, 0, 0]", 300: "[0, 0, 0]", 900: "[0, 0, 0]",
                     1100: "[2, 2, 2]"}, done.stderr
    assert done.stderr.count("nested too deeply") == 3


def test_bad_times_are_dropped_with_one_counting_warning(tmp_path, capsys):
    """NaN / inf / negative / 1e300 times leave their events out: one warning line counting
    them by reason; the analysis sees only the good tasks (no "expected gain ~7.9e299 us")."""
    obj = json.loads(json.dumps(GOOD))
    x = [e for e in obj["traceEvents"] if e["ph"] == "X"]
    bad = [dict(x[0], ts=float("nan")), dict(x[0], dur=float("inf")), dict(x[0], ts=-5.0),
           dict(x[0], dur=-1.0), dict(x[0], ts=1e300), dict(x[0], dur=2e12),
           {"ph": "s", "id": 7, "tid": 1050, "ts": float("-inf"), "name": "f", "cat": "f"},
           {"ph": "C", "name": "ReadyCount_AIV", "ts": 1e13, "args": {"size": 3}}]
    obj["traceEvents"] += bad
    path = _write(tmp_path / "times.json", json.dumps(obj))
    assert main(["analyze", "--json", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and str(path) in err and "warning" in err
    assert "left out 8 event(s)" in err
    assert "3 beyond 1e+12 us, 2 negative, 3 not finite" in err
    report = json.loads(out)
    assert report["tasks"]["total"] == 3 and report["span"]["end_us"] == 7.0
    assert "e+" not in out                          # no absurd number anywhere
    assert main(["view", str(path), "-o", str(tmp_path / "v.html")]) == 0
    assert capsys.readouterr().err.count("left out 8 event(s)") == 1


def test_good_times_give_no_warning(tmp_path, capsys):
    path = _write(tmp_path / "good.json", _text(GOOD))
    assert main(["analyze", str(path)]) == 0
    assert capsys.readouterr().err == ""


def _surrogate_trace(tmp_path: Path) -> Path:
    """A trace whose task name, args key and args value hold lone surrogates (as JSON escapes,
    the only way a UTF-8 file can hold them)."""
    obj = json.loads(json.dumps(GOOD))
    obj["traceEvents"][_X0]["name"] = "@NAME@"
    obj["traceEvents"][_X0]["args"]["@KEY@"] = "@VALUE@"
    obj["otherData"]["kernel"] = "@KERNEL@"
    text = (json.dumps(obj).replace("@NAME@", "a\\ud800b(\\udfff)")
            .replace("@KEY@", "k\\udc00").replace("@VALUE@", "v\\ud83d")
            .replace("@KERNEL@", "kern\\ud800"))
    return _write(tmp_path / "surrogate.json", text)


def test_lone_surrogates_are_shown_as_replacement_characters(tmp_path):
    """view, analyze (text and --json) and diff (text and HTML) of names holding lone
    surrogates: U+FFFD where they were, exit code 0. In a fresh process with stdout a pipe:
    that is where an unencodable character used to crash the output."""
    path = _surrogate_trace(tmp_path)
    good = _write(tmp_path / "good.json", _text(GOOD))
    runs = {"view": ["view", str(path), "-o", str(tmp_path / "v.html")],
            "analyze": ["analyze", str(path)], "json": ["analyze", "--json", str(path)],
            "diff": ["diff", str(path), str(good), "-o", str(tmp_path / "d.html")]}
    outs = {}
    for key, argv in runs.items():
        done = subprocess.run([sys.executable, "-m", "pypto.cli", *argv],
                              capture_output=True, timeout=300)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
        outs[key] = done.stdout.decode("utf-8")
    assert "a\ufffdb(\ufffd)" in outs["analyze"] and "a\ufffdb(\ufffd)" in outs["diff"]
    assert json.loads(outs["json"])["critical_path"]["steps"][0]["name"] == "a\ufffdb(\ufffd)"
    page = (tmp_path / "v.html").read_text(encoding="utf-8")
    for shown in ("a\ufffdb(\ufffd)", "k\ufffd", "v\ufffd", "kern\ufffd"):
        assert shown in page
    assert "a\ufffdb(\ufffd)" in (tmp_path / "d.html").read_text(encoding="utf-8")


def test_escaped_surrogate_pairs_stay_one_character(tmp_path):
    """A valid pair written as escapes (ensure_ascii writers) is the character it encodes."""
    from pypto.toolkit.trace import load
    obj = json.loads(json.dumps(GOOD))
    obj["traceEvents"][_X0]["name"] = "smile \U0001F600"
    path = _write(tmp_path / "pair.json", json.dumps(obj, ensure_ascii=True))
    assert "\\ud83d\\ude00" in path.read_text()
    assert load(path).tasks[0].name == "smile \U0001F600"


def test_graph_of_a_run_with_a_malformed_or_odd_trace(tmp_path, capsys, monkeypatch):
    """`graph` reads the run's swimlane through the same reader: a broken one is the same
    one-line error, one with lone surrogates gives a page."""
    from _graph_runs import run_softmax
    monkeypatch.chdir(tmp_path)
    run = Path(run_softmax())
    trace = run / "merged_swimlane.json"
    original = trace.read_text()
    capsys.readouterr()
    trace.write_text(original[: len(original) // 2])
    _one_line_error(capsys, ["graph", str(run)], trace, "truncated JSON")
    trace.write_text(original.replace('"name": "0-0-', '"name": "\\ud800-0-0-', 1))
    assert main(["graph", str(run)]) == 0
    assert os.path.exists(run / "graph.html")
    shutil.rmtree(run)


@pytest.mark.parametrize("chunk", [64, 4096, 1 << 20])
@pytest.mark.parametrize("layout", ["ours", "pretty", "one line"])
def test_batched_reading_equals_json_load(tmp_path, monkeypatch, chunk, layout):
    """Events are decoded many at a time, cut where one event ends and the next begins; a cut
    that lands inside a string (a name holding "}, {" or "},\\n{"), a NaN, a non-object event
    or a list of objects inside args makes that batch fall back to one event at a time. The
    result is always what `json.load` + `parse_swimlane` gives, for every read chunk size."""
    from pypto.profiling.swimlane_reader import parse_swimlane
    from pypto.toolkit import trace as trace_module
    monkeypatch.setattr(trace_module, "_CHUNK", chunk)
    tasks = [task("AIV_25" if i % 2 else "AIV_26", 3.0 * i, 2.0, leaf=f"L{i % 3}", call=i,
                  rows=[{"a": i}, {"b": [i, {"c": None}]}], note="x}, {y" if i % 5 else "},\n{")
             for i in range(60)]
    obj = build(tasks, flows=[(i, i + 1) for i in range(59)])
    obj["traceEvents"].insert(80, 7)
    obj["traceEvents"].append({"ph": "C", "name": "c", "ts": 1.0, "args": {"size": float("nan")}})
    obj["traceEvents"][100]["name"] = "odd }, { name"
    text = {"ours": "{\"traceEvents\": [\n" + ",\n".join(json.dumps(e) for e in
                                                         obj["traceEvents"]) + "\n]}",
            "pretty": json.dumps(obj, indent=4), "one line": json.dumps(obj)}[layout]
    path = _write(tmp_path / "t.json", text)
    a = trace_module.load(path)
    b = parse_swimlane(json.loads(text))
    assert a.tasks == b.tasks and a.flows == b.flows and a.lanes == b.lanes
    assert a.other == b.other and len(a.tasks) == 60 and len(a.flows) == 59
    assert str(a.counters) == str(b.counters)           # (NaN != NaN)
