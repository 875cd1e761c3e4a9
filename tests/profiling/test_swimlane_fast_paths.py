"""The swimlane writer's and reader's fast paths give what the plain ones would: the text of
`json.dumps` per event (no spaces), the viewer page of the parsed file from the run's columns, and the
same parse whether lanes are declared before or after their tasks, streamed or in memory."""
import json

import pytest

from pypto.toolkit.run_pages import write_viewer
from pypto.profiling.run_columns import run_columns
from pypto.profiling.swimlane_reader import parse_swimlane, read_swimlane
from pypto.profiling.swimlane_writer import swimlane_events, write_swimlane
from pypto.profiling.task_edges import latest_pred_ends
from pypto.toolkit.viewer.pack import JsonText, pack, pack_run
from pypto.toolkit.viewer.page import embed_json

# the conftest runs: plain, in reverse input order, and one with every rare case
RESULTS = ["result", "shuffled", "odd_result"]


def _expected_text(doc):
    """The file text of a trace object, event by event through json.dumps without spaces."""
    def dumps(obj):
        return json.dumps(obj, separators=(",", ":"))
    events = ",\n".join(map(dumps, doc["traceEvents"]))
    return f'{{"traceEvents":[\n{events}\n],"otherData":{dumps(doc["otherData"])}}}\n'


@pytest.mark.parametrize("name", RESULTS)
def test_written_text_is_json_dumps_of_each_event(name, request, tmp_path):
    """The templates give exactly the encoder's text of every event."""
    path = write_swimlane(request.getfixturevalue(name), tmp_path / "s.json")
    text = path.read_text()
    doc = json.loads(text)
    assert {e["ph"] for e in doc["traceEvents"]} >= {"M", "X", "s", "f", "C"}
    assert text == _expected_text(doc)


@pytest.mark.parametrize("name", RESULTS)
def test_page_from_columns_equals_page_of_the_file(name, request, tmp_path):
    """pack_run of the columns is pack of the parsed file, as the page embeds them."""
    cols = run_columns(request.getfixturevalue(name))
    data = read_swimlane(write_swimlane(cols, tmp_path / "s.json"))
    assert embed_json(pack_run(cols, "t")) == embed_json(pack(data, "t"))


def test_latest_pred_ends_take_flows_and_own_preds(result):
    result.flows = [(0, 2)]                         # t1 -> t2 only in t2's own preds
    result.tasks[2].task.preds.append(99)           # not a task of the run: ignored
    assert latest_pred_ends(result) == {2: 3200.0, 3: 9000.0}


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


def test_viewer_from_columns_data_or_file_is_one_page(result, tmp_path):
    pages = []
    path = write_swimlane(result, tmp_path / "s.json")
    for name, data in (("a", path), ("b", parse_swimlane(swimlane_events(result))),
                       ("c", run_columns(result))):
        (tmp_path / name).mkdir()
        write_viewer(data, str(tmp_path / name))
        pages.append((tmp_path / name / "swimlane.html").read_text())
    assert pages[0] == pages[1] == pages[2]


def test_embedded_json_texts_and_a_string_like_their_placeholder():
    """JsonText values go in as they are, even next to a data string equal to the
    placeholder that stands for them while encoding."""
    from pypto.toolkit.viewer.page import _PLACEHOLDER
    obj = {"a": JsonText("[1.5,2]"), "b": [JsonText("3")], "c": "<x>"}
    assert json.loads(embed_json(obj)) == {"a": [1.5, 2], "b": [3], "c": "<x>"}
    assert json.loads(embed_json({**obj, "d": _PLACEHOLDER}))["d"] == _PLACEHOLDER
    assert json.loads(embed_json({**obj, "e": float("nan")}))["e"] == "nan"
