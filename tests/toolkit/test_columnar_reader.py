"""The reader's columns hold exactly what reading the trace one event at a time into objects
gives (`_object_path`), for our writer's traces and PyPTO's samples, whichever way the text is
decoded: by our layout's line templates, by the JSON decoder, in large or tiny windows. Lines
in our layout that a template does not take (an escape, an extra key, NaN, a float id) go the
JSON way and read as they did, warnings included."""
import json

import pytest

from pypto.profiling import swimlane_lines
from pypto.profiling.swimlane_reader import read_swimlane
from pypto.toolkit import trace as trace_module
from pypto.toolkit.trace import load

from _object_path import OURS, PYPTO, object_path, trace_files

@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return trace_files(tmp_path_factory.mktemp("traces"))


def _as_objects(data) -> list[str]:
    """Everything a parsed trace holds, as text (NaN args compare equal; key order counts)."""
    return [repr(x) for x in (data.lanes, data.tasks, data.aicpu, data.flows, data.counters,
                              data.process, data.other, data.dropped)]


@pytest.mark.parametrize("name", OURS + PYPTO)
def test_reader_columns_are_the_object_path(traces, name):
    expected = _as_objects(object_path(json.loads(traces[name].read_text())))
    assert _as_objects(load(traces[name])) == expected
    assert _as_objects(read_swimlane(traces[name])) == expected


@pytest.mark.parametrize("name", OURS + PYPTO)
def test_every_decoding_reads_the_same(traces, name, monkeypatch):
    """Templates or JSON, one window or hundreds: the same trace."""
    with_templates = _as_objects(load(traces[name]))
    monkeypatch.setattr(trace_module, "_CHUNK", 2048)
    assert _as_objects(load(traces[name])) == with_templates
    monkeypatch.setattr(trace_module, "decode_lines", lambda text: None)
    assert _as_objects(load(traces[name])) == with_templates


def test_our_layout_is_read_by_the_templates(traces, monkeypatch):
    """AICPU events, flows and counters of our writer's file (all but windows that straddle
    two blocks) never become a dict each."""
    taken = []

    def counting(text):
        run = swimlane_lines.decode_lines(text)
        taken.append(run.count if run else 0)
        return run
    monkeypatch.setattr(trace_module, "_CHUNK", 8192)
    monkeypatch.setattr(trace_module, "decode_lines", counting)
    data = load(traces["synthetic"])
    events = json.loads(traces["synthetic"].read_text())["traceEvents"]
    untasked = sum(e["ph"] in "sfC" for e in events) + len(data.aicpu)
    assert sum(taken) >= 0.9 * untasked


# each: (what marks the line of the synthetic trace to change, the text in it, what it becomes)
ODD_LINES = {
    "escaped AICPU name": ('"name":"dispatch"', '"name":"dispatch"', '"name":"dis\\u0070atch"'),
    "newline in an AICPU name": ('"name":"resolve"', '"name":"resolve"', '"name":"re\\nsolve"'),
    "NaN AICPU duration": ('"name":"dispatch"', ',"dur":', ',"dur":NaN,"was":'),
    "huge AICPU arg": ('"name":"dispatch"', '{"count":1}', '{"count":1' + "0" * 400 + "}"),
    "flow with an extra key": ('"ph":"s"', '"ph":"s"', '"ph":"s","extra":[1]'),
    "float flow id": ('"ph":"f"', '{"bp":"e","id":', '{"bp":"e","id":0.0,"was":'),
    "counter with two samples": ('"ph":"C"', '{"size":', '{"other":1.5,"size":'),
    "negative counter time": ('"ph":"C"', '"ts":', '"ts":-1,"was":'),
}


@pytest.mark.parametrize("odd", sorted(ODD_LINES))
def test_odd_lines_in_our_layout_read_as_json(traces, odd, tmp_path, monkeypatch, capsys):
    mark, find, replace = ODD_LINES[odd]
    lines = traces["synthetic"].read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if mark in line)
    lines[at] = lines[at].replace(find, replace, 1)
    path = tmp_path / "odd.json"
    path.write_text("\n".join(lines))
    with_templates = _as_objects(load(path))
    warned = capsys.readouterr().err
    monkeypatch.setattr(trace_module, "decode_lines", lambda text: None)
    assert _as_objects(load(path)) == with_templates
    assert capsys.readouterr().err == warned
    assert ("left out 1 event" in warned) == (odd in ("NaN AICPU duration",
                                                      "negative counter time"))
