"""`pypto-toolkit view` and the viewer's Python side: the command, its one-line errors, the
streaming trace reader, safe embedding and the automatic swimlane.html of a run."""
from __future__ import annotations

import json
import re

import pytest

import pypto.toolkit.trace as trace_module
from pypto.toolkit.run_pages import write_viewer
from pypto.profiling.swimlane_reader import read_swimlane
from pypto.cli import main
from pypto.toolkit.trace import load
from pypto.toolkit.viewer.page import embed_json

LANE = {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1002, "args": {"name": "AIV_1"}}


def task(name="t", ts=1.0, dur=2.0, **extra):
    return {"ph": "X", "name": name, "pid": 1, "tid": 1002, "ts": ts, "dur": dur,
            "args": {}, **extra}


def embedded(html: str) -> dict:
    text = re.search(r'<script type="application/json" id="openpto-data">(.*?)</script>',
                     html, re.S).group(1)
    return json.loads(text)


def test_view_writes_page_next_to_trace(samples, tmp_path, capsys):
    """`view TRACE` writes swimlane.html beside a copy of the trace, with every task embedded."""
    trace = tmp_path / "merged_swimlane.json"
    trace.write_text((samples / "softmax_merged_swimlane.json").read_text())
    assert main(["view", str(trace)]) == 0
    page = (tmp_path / "swimlane.html").read_text()
    data = embedded(page)
    (run,) = data["runs"]
    assert len(run["start"]) == 320 and len(run["lanes"]) == 74
    assert data["graph"] is None
    assert "http://" not in page and "https://" not in page      # no CDN, no network
    assert "320 tasks" in capsys.readouterr().out


def test_graph_html_beside_trace_becomes_a_tab(samples, tmp_path):
    """A graph.html next to the trace is linked (relative URL); --graph overrides it."""
    trace = tmp_path / "merged_swimlane.json"
    trace.write_text((samples / "ffn_dynamic_gelu_merged_swimlane.json").read_text())
    (tmp_path / "graph.html").write_text("<p>graph</p>")
    assert main(["view", str(tmp_path), "-o", str(tmp_path / "out" / "v.html")]) == 0
    assert embedded((tmp_path / "out" / "v.html").read_text())["graph"] == "../graph.html"
    assert main(["view", str(trace), "--graph", str(tmp_path / "missing.html")]) == 2


@pytest.mark.parametrize("text, problem", [
    ('{"traceEvents": [{"ph": "X", "tid": 1, "ts": 0, "dur"', "truncated JSON"),
    ('{"traceEvents": [{"ph": "X"} @ ]}', "not valid JSON"),
    ('{"hello": "world"}', "not a Chrome trace"),
    ("", "empty file"),
    ('{"traceEvents": [{"ph": "M", "name": "thread_name", "tid": 1, "args": {}}]}',
     "no task events"),
])
def test_bad_files_give_one_line_errors(tmp_path, capsys, text, problem):
    """A broken trace is one stderr line naming the file and the problem, exit code 2."""
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    assert main(["view", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and problem in err


def test_missing_file(tmp_path, capsys):
    assert main(["view", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_unknown_fields_and_events_are_ignored(tmp_path):
    """Extra keys, unknown phases, non-object events and a missing final ']' still load."""
    doc = ('[' + json.dumps(LANE) + ', 7, {"ph": "Z", "foo": 1}, '
           + json.dumps(task(colour="red", extra={"a": 1})) + ',')
    path = tmp_path / "t.json"
    path.write_text(doc)
    data = load(path)
    assert [t.name for t in data.tasks] == ["t"]


def test_streaming_reader_matches_json_load(samples, monkeypatch):
    """Tiny read chunks (values split anywhere) parse to exactly what json.load gives."""
    monkeypatch.setattr(trace_module, "_CHUNK", 13)
    for name in ("softmax", "ffn_dynamic_gelu"):
        path = samples / f"{name}_merged_swimlane.json"
        a, b = load(path), read_swimlane(path)
        assert a.tasks == b.tasks and a.flows == b.flows and a.lanes == b.lanes
        assert a.counters == b.counters and a.other == b.other


def test_embedded_json_cannot_end_the_script():
    """<, >, & and U+2028/9 are escaped, and the text still decodes to the same value."""
    value = {"name": "</script><script>alert(1)</script>&\u2028\u2029", "nan": float("nan")}
    text = embed_json(value)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == {"name": value["name"], "nan": "nan"}


def test_run_writes_swimlane_html(samples, tmp_path):
    """A run folder gets swimlane.html (its cost is in the benchmarks' `write` column)."""
    trace = tmp_path / "merged_swimlane.json"
    trace.write_text((samples / "softmax_merged_swimlane.json").read_text())
    write_viewer(trace, str(tmp_path))
    assert len(embedded((tmp_path / "swimlane.html").read_text())["runs"][0]["start"]) == 320


def test_args_of_mixed_keys_and_labels_that_are_objects(tmp_path):
    """Events with different args keys (in runs and alternating) give one column per key in
    first-seen order, null/-1 where an event lacks it; a `color` label that is a JSON array or
    object is keyed by its JSON text instead of failing the page."""
    events = [LANE, task("a", args={"k": 1, "color": [1, "x"]}),
              task("b", args={"s": "v", "k": 2.5}), task("c", args={"k": None}),
              task("d", args={"color": {"b": 1, "a": 2}, "s": {"z": [1]}}), task("e")]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert main(["view", str(path), "-o", str(tmp_path / "v.html")]) == 0
    run = embedded((tmp_path / "v.html").read_text())["runs"][0]
    strings = run["strings"]
    cols = {c["k"]: c.get("num", c.get("str")) for c in run["args"]}
    assert list(cols) == ["k", "color", "s"]
    assert cols["k"] == [1, 2.5, None, None, None]
    assert [strings[i] if i >= 0 else None for i in cols["s"]] == \
        [None, "v", None, '{"z": [1]}', None]
    assert [strings[i] for i in run["label"]] == \
        ['[1, "x"]', "", "", '{"a": 2, "b": 1}', ""]
