"""The swimlane writer's and reader's fast paths give what the plain ones would: the text of
`json.dumps` per event, and the same parse whether lanes are declared before or after their
tasks, streamed or in memory."""
import json

from pypto.profiling.output import _write_viewer
from pypto.profiling.swimlane import (_event_json, parse_swimlane, read_swimlane, swimlane_events,
                                      write_swimlane)


def test_fast_event_text_is_json_dumps(result):
    """Flow and counter events are formatted directly; the text equals json.dumps."""
    events = swimlane_events(result)["traceEvents"]
    assert {e["ph"] for e in events} >= {"M", "X", "s", "f", "C"}
    odd = [{"ph": "C", "name": "n", "pid": 1, "tid": 1, "ts": float("nan"), "args": {"size": 2}},
           {"cat": "x", "id": 1, "name": "x", "ph": "s", "pid": 1, "tid": 3, "ts": 1.5},
           {"ph": "C", "name": "n", "pid": 1, "tid": 1, "ts": 1, "args": {"size": 1.5}}]
    for e in events + odd:
        assert _event_json(e) == json.dumps(e)


def test_parse_in_memory_equals_file(result, tmp_path):
    path = write_swimlane(result, tmp_path / "s.json")
    assert parse_swimlane(swimlane_events(result)) == read_swimlane(path)


def test_lanes_declared_after_their_tasks(result):
    """A file that names its lanes last parses as one that names them first."""
    events = swimlane_events(result)["traceEvents"]
    meta = [e for e in events if e["ph"] == "M"]
    rest = [e for e in events if e["ph"] != "M"]
    first = parse_swimlane(meta + rest)
    last = parse_swimlane(iter(rest + meta))
    assert last == first and last.aicpu == first.aicpu and len(first.tasks) == 4


def test_viewer_from_data_equals_viewer_from_file(result, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = write_swimlane(result, tmp_path / "s.json")
    _write_viewer(path, str(tmp_path / "a"))
    _write_viewer(parse_swimlane(swimlane_events(result)), str(tmp_path / "b"))
    assert (tmp_path / "a" / "swimlane.html").read_text() == \
        (tmp_path / "b" / "swimlane.html").read_text()


def test_parts_write_and_parse_as_the_whole_document(result, tmp_path):
    """write_run's path (swimlane_parts -> write_parts, swimlane_data) gives the bytes and the
    parse of the plain one (swimlane_events -> write_trace, parse_swimlane)."""
    from pypto.profiling.swimlane import swimlane_data, swimlane_parts, write_parts, write_trace
    a = write_parts(swimlane_parts(result), tmp_path / "a.json")
    b = write_trace(swimlane_events(result), tmp_path / "b.json")
    assert a.read_bytes() == b.read_bytes()
    assert swimlane_data(swimlane_parts(result)) == read_swimlane(b)
