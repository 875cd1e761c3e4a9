"""Every consumer gives the same output from a trace read as columns (`trace.load`) as from the
same trace held as objects (`_object_path`: its columns are then made from the objects): the
viewer page, analyze's text and JSON (the advisor included), the bubble report, PyPTO's stdout
summary and diff - on our writer's traces and PyPTO's samples."""
import json

import pytest

from pypto.profiling.reports import bubbles_from_swimlane, format_bubbles
from pypto.profiling.swimlane import format_summary, summarize
from pypto.toolkit.analyze import analyze, format_text, to_json
from pypto.toolkit.diff import compare
from pypto.toolkit.trace import load
from pypto.toolkit.viewer.pack import pack
from pypto.toolkit.viewer.page import embed_json

from _object_path import OURS, PYPTO, object_path, trace_files

@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return trace_files(tmp_path_factory.mktemp("traces"))


def _both(path):
    """(the trace read as columns, the trace as objects)."""
    return load(path), object_path(json.loads(path.read_text()))


def _outputs(data, name: str) -> dict[str, str]:
    a = analyze(data, name)
    return {"page": embed_json(pack(data, name)),
            "analyze": format_text(a), "json": json.dumps(to_json(a)),
            "bubbles": format_bubbles(bubbles_from_swimlane(data)),
            "summary": format_summary(summarize(data))}


@pytest.mark.parametrize("name", OURS + PYPTO)
def test_outputs_from_columns_equal_outputs_from_objects(traces, name):
    columns, objects = _both(traces[name])
    got, expected = _outputs(columns, name), _outputs(objects, name)
    for what in expected:
        assert got[what] == expected[what], what


def test_advice_fires_the_same_way(traces):
    """The traces exercise the advisor beyond "checked, fine": advice that rests on lanes,
    flows, windows, instances and the AICPU's build events."""
    advice = {a.rule: a.status for a in analyze(load(traces["synthetic"])).advice}
    assert advice["vec_nbuffer"] == advice["root_instances"] == "advise"
    assert {a.rule for a in analyze(load(traces["glm"])).advice if a.status == "advise"} \
        >= {"l1_reuse"}


@pytest.mark.parametrize("pair", [("glm", "synthetic"), ("pypto_softmax", "lines_softmax"),
                                  ("toy", "toy_odd")])
def test_diff_from_columns_equals_diff_from_objects(traces, pair):
    a, b = (_both(traces[name]) for name in pair)
    assert compare(analyze(a[0], pair[0]), analyze(b[0], pair[1])) == \
        compare(analyze(a[1], pair[0]), analyze(b[1], pair[1]))
