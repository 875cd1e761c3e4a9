"""`benchmarks/run.py --suite smoke` runs every section end to end and writes its results (the
real suites are not part of the test run: they take minutes)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_smoke_suite_writes_json_and_markdown(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"),
                           "--suite", "smoke", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (js,) = [p for p in os.listdir(tmp_path) if p.endswith(".json")]
    res = json.loads((tmp_path / js).read_text())
    assert [r["ours"] > 0 for r in res["loop"]] == [True]
    # the compiler's structural counts are exact; how far a ratio or a time lands from the
    # board is the fidelity table's to report (docs/calibration.md), not this test's
    rows = res["fidelity"]
    assert all(r["ok"] for r in rows if r["kind"] == "count") and any(
        r["kind"] == "count" for r in rows)
    assert all(r["ours"] > 0 for r in rows if r["kind"] in ("ratio", "us"))
    assert res["scaling"][0]["tasks"] == 1000
    assert [r["tile_ops"] for r in res["compile_scaling"]] == [240, 960]
    assert res["numerics"][0]["tile_s"] > 0
    assert all(max(r["cube"], r["vector"], r["gm"], r["hbm"]) <= 1.0 for r in res["roofline"])
    md = (tmp_path / js.replace(".json", ".md")).read_text()
    assert "## 3. Simulator scaling" in md
