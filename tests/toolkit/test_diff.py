"""`pypto-toolkit diff A B`: totals, per-leaf deltas and task-count changes match what the two
synthetic runs were built with; run folders work as inputs; -o writes the viewer's page."""
import json

import pytest

from pypto.cli import main

from _traces import build, task, write


def _pair(tmp_path):
    a = [task(f"AIV_{25 + i}", 0, 4, leaf="L0", call=i) for i in range(4)] + \
        [task("AIV_25", 5, 2, leaf="L1", call=4)]
    b = [task(f"AIV_{25 + i}", 0, 2, leaf="L0", call=i) for i in range(8)] + \
        [task("AIV_25", 3, 1, leaf="L9", call=8)]
    pa = write(tmp_path / "a" / "merged_swimlane.json", build(a, [(0, 4)]))
    pb = write(tmp_path / "b" / "merged_swimlane.json", build(b))
    return pa, pb


def test_totals_and_leaf_deltas(tmp_path, capsys):
    pa, pb = _pair(tmp_path)
    assert main(["diff", str(pa.parent), str(pb.parent), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    t = r["totals"]
    assert t["span_us"] == {"a": 7.0, "b": 4.0, "delta": -3.0, "ratio": pytest.approx(4 / 7)}
    assert (t["tasks"]["a"], t["tasks"]["b"], t["tasks"]["delta"]) == (5, 9, 4)
    assert (t["busy_us"]["a"], t["busy_us"]["b"]) == (18.0, 17.0)
    assert (t["flows"]["a"], t["flows"]["b"]) == (1, 0)
    rows = {row["leaf"]: row for row in r["leaves"]}
    assert rows["L0"]["status"] == "both" and rows["L0"]["tasks_delta"] == 4
    assert rows["L0"]["total_us_delta"] == 0.0
    assert rows["L1"]["status"] == "only A" and rows["L1"]["total_us_delta"] == -2.0
    assert rows["L9"]["status"] == "only B" and rows["L9"]["tasks_b"] == 1
    assert [row["leaf"] for row in r["leaves"]] == ["L1", "L9", "L0"]
    cp = r["critical_path"]
    assert cp["a"]["names"] == ["0-0-0-0-0()", "0-0-4-0-1()"] and cp["a"]["busy_us"] == 6.0
    assert cp["b"]["tasks"] == 2


def test_text_report(tmp_path, capsys):
    pa, pb = _pair(tmp_path)
    assert main(["diff", str(pa), str(pb)]) == 0
    out = capsys.readouterr().out
    assert "Totals" in out and "Leaves" in out and "Critical path" in out
    assert "only B" in out


def test_bad_input_names_the_file(tmp_path, capsys):
    pa, _ = _pair(tmp_path)
    assert main(["diff", str(pa), str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert "nope.json" in err and err.count("\n") == 1


def test_html_output(tmp_path, capsys):
    """-o writes the viewer's diff page (its layout is test_view_page_layout.py's) and says so."""
    pa, pb = _pair(tmp_path)
    out = tmp_path / "diff.html"
    assert main(["diff", str(pa), str(pb), "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    page = out.read_text()
    assert '"mode":"diff"' in page and "span_us" in page
