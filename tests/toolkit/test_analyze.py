"""`pypto-toolkit analyze`: its numbers match a brute-force recomputation from the raw JSON
events (real PyPTO samples and our own simulated runs), PyPTO's own bubble log, and bad input
gives a one-line error with exit code 2."""
import glob
import json
import re
import time
from collections import defaultdict
from pathlib import Path

import pytest
import torch

import pypto
from pypto.toolkit.analyze import analyze
from pypto.cli import main
from pypto.toolkit.trace import load

from _traces import build, task, write

SAMPLES = Path(__file__).parents[1] / "data" / "pypto_samples"     # PyPTO 0.2.0's own files
SAMPLE_FILES = [str(SAMPLES / f"{name}_merged_swimlane.json") for name in
                ("softmax", "ffn_dynamic_gelu", "glm_moe_fusion", "ds32_sparse_flash_attention_quant")]


def _cli_json(capsys, *argv):
    assert main(["analyze", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _raw(path):
    """Lanes, X events and flow edges straight from the file, without the toolkit's parser."""
    events = json.loads(Path(path).read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    xs = [e for e in events if e["ph"] == "X" and not names[e["tid"]].startswith("AICPU")]
    s = {e["id"]: e for e in events if e["ph"] == "s"}
    f = {e["id"]: e for e in events if e["ph"] == "f"}
    return names, xs, [(s[i], f[i]) for i in s if i in f]


def _core(names, e):
    return re.match(r"AI[CV]_\d+$", names[e["tid"]]) is not None


def _check_against_raw(path, report):
    names, xs, pairs = _raw(path)
    core = [e for e in xs if _core(names, e)]
    start = min(e["ts"] for e in core)
    end = max(e["ts"] + e["dur"] for e in core)
    assert report["span"]["us"] == pytest.approx(end - start, abs=1e-5)
    last = max(e["ts"] + e["dur"] for e in xs)       # end-to-end: launch (0) to the last event
    assert report["end_to_end"]["us"] == pytest.approx(last - min(0, *(e["ts"] for e in xs)),
                                                       abs=1e-5)
    n_lanes = sum(1 for n in names.values() if re.match(r"AI[CV]_\d+$", n))
    util = 100 * sum(e["dur"] for e in core) / (n_lanes * (end - start))
    assert report["utilization_pct"]["all"] == pytest.approx(util, abs=1e-4)
    assert report["tasks"]["total"] == len(xs)
    busy = defaultdict(float)
    count = defaultdict(int)
    for e in xs:
        busy[names[e["tid"]]] += e["dur"]
        count[names[e["tid"]]] += 1
    for ln in report["lanes"]:
        assert ln["busy"] == pytest.approx(busy[ln["lane"]], abs=1e-5)
        assert ln["tasks"] == count[ln["lane"]]
        assert ln["idle"] == pytest.approx(max(0.0, end - start - busy[ln["lane"]]), abs=1e-5)
    # leaves: group by our leaf name, else PyPTO's leafHash, by regex over the raw hint
    leaves = defaultdict(list)
    for e in xs:
        key = e["args"].get("leaf") or re.search(r"leafHash:(\d+)", e["args"]["event-hint"])[1]
        leaves[key].append(e["dur"])
    assert sorted((len(v), round(sum(v), 4)) for v in leaves.values()) == sorted(
        (lf["tasks"], round(lf["total"], 4)) for lf in report["leaves"])
    # critical path: ends at the last core task; every step is the latest-ending among all
    # its predecessors (flow sources and the previous task on its lane), found by brute force
    steps = report["critical_path"]["steps"]
    assert steps[-1]["end"] == pytest.approx(end, abs=1e-6)
    by_pos = {(names[e["tid"]], round(e["ts"], 6)): e for e in xs}
    for prev, cur in zip(steps, steps[1:]):
        c = by_pos[(cur["lane"], round(cur["start"], 6))]
        preds = [e for e in xs if e["tid"] == c["tid"] and e["ts"] < c["ts"]]
        preds = [max(preds, key=lambda e: e["ts"])] if preds else []
        for s, f in pairs:
            if f["tid"] == c["tid"] and abs(f["ts"] - c["ts"]) < 1e-9:
                preds += [e for e in xs if e["tid"] == s["tid"]
                          and e["ts"] - 2e-4 <= s["ts"] <= e["ts"] + e["dur"] + 2e-4]
        latest = max(e["ts"] + e["dur"] for e in preds)
        assert prev["end"] == pytest.approx(latest, abs=1e-6)
    assert report["critical_path"]["busy"] == pytest.approx(
        sum(s["end"] - s["start"] for s in steps), abs=1e-5)
    return names, xs


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: Path(p).name.split("_merged")[0])
def test_samples_match_a_brute_force_recount(path, capsys):
    """Span, utilisation, per-lane busy/idle, per-leaf totals and the critical path of PyPTO's
    own files, recomputed from the raw events."""
    report = _cli_json(capsys, path)
    _check_against_raw(path, report)
    assert report["critical_path"]["basis"] == "flows and lane order"
    statuses = {a["rule"]: a["status"] for a in report["advice"]}
    assert statuses["l1_reuse"] in ("no-info", "ok")     # no offsets in PyPTO's hints


def test_softmax_sample_matches_pyptos_report_and_bubble_log(capsys):
    """E2E and utilisation as PyPTO printed them (71.13 us, 38.11 %); the wait split of
    AIV_25 and HUB_80 as in PyPTO's bubble_analysis.log."""
    report = _cli_json(capsys, str(SAMPLES / "softmax_merged_swimlane.json"))
    assert round(report["span"]["us"], 2) == 71.13
    assert round(report["utilization_pct"]["all"], 2) == 38.11
    log = (SAMPLES / "softmax_bubble_analysis.log").read_text()
    lanes = {ln["lane"]: ln for ln in report["lanes"]}
    for lane in ("AIV_25", "HUB_80"):
        block = log.split(f"[{lane}]")[1]
        sched = float(re.search(r"Wait Schedule Time: ([\d.e-]+)", block)[1])
        pred = float(re.search(r"Wait Predecessor Time: ([\d.e-]+)", block)[1])
        assert lanes[lane]["wait_schedule"] == pytest.approx(sched, abs=1e-3)
        assert lanes[lane]["wait_predecessor"] == pytest.approx(pred, abs=1e-3)


def test_own_run_matches_a_brute_force_recount(capsys):
    """A simulated kernel of ours: the same recount holds on our extended layout."""
    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1},
                        runtime_options={"stitch_function_max_num": 4})
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16, 512)
        for i in pypto.loop(x.shape[0]):
            t = pypto.exp(x[i:i + 1])
            y[i:i + 1] = t + pypto.amax(t, -1, keepdim=True)
    x = torch.rand(12, 64, 512)
    k(x, torch.zeros_like(x))
    path = glob.glob("output/*/merged_swimlane.json")[-1]
    report = _cli_json(capsys, str(Path(path).parent))
    _check_against_raw(path, report)
    assert report["windows"] == 3 and report["instances"] == 12


def test_without_flows_the_critical_path_follows_lanes_and_says_so(tmp_path):
    """No flow events: the chain is lane order only, and the basis names that."""
    obj = build([task("AIV_25", 0, 2), task("AIV_25", 3, 2), task("AIV_26", 0, 1)], ours=False)
    a = analyze(load(write(tmp_path / "t.json", obj)))
    cp = a.critical_path
    assert "lane order only" in cp.basis
    assert [s.start for s in cp.steps] == [0, 3]
    assert cp.busy == 4 and cp.wait == 1 and cp.busy_share_pct == pytest.approx(80.0)


def test_critical_path_follows_the_latest_predecessor(tmp_path):
    """A task waiting on two flows is held back by the one that ends last."""
    tasks = [task("AIV_25", 0, 1), task("AIV_26", 0, 4), task("AIV_27", 5, 1)]
    a = analyze(load(write(tmp_path / "t.json", build(tasks, flows=[(0, 2), (1, 2)]))))
    assert [(s.lane, s.via) for s in a.critical_path.steps] == [("AIV_26", ""), ("AIV_27", "flow")]


def test_text_report_names_the_sections(tmp_path, capsys):
    path = write(tmp_path / "t.json", build([task("AIV_25", 0, 2)]))
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    for head in ("kernel: 2.000 us", "end-to-end: 2.000 us", "Cores", "Critical path", "Leaves", "Advice"):
        assert head in out
    assert "idle lanes: AIC_1..AIC_24, AIV_26..AIV_72" in out


@pytest.mark.parametrize("content,problem", [
    (None, "no such file"),
    ('{"traceEvents": [{"ph": "X"', "truncated JSON"),
    ('{"foo": 1}', "not a Chrome trace"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, content, problem):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(path) in err and problem in err


def test_100k_tasks_in_seconds(tmp_path):
    """Sanity check that the analysis stays near-linear: 100k tasks with chained flows."""
    tasks = [task(f"AIV_{25 + i % 48}", (i // 48) * 2.0, 1.5, leaf=f"L{i % 3}", window=i // 5000,
                  instance=i // 50) for i in range(100_000)]
    flows = [(i, i + 48) for i in range(0, 100_000 - 48, 7)]
    data = load(write(tmp_path / "big.json", build(tasks, flows)))
    t0 = time.perf_counter()
    a = analyze(data)
    assert time.perf_counter() - t0 < 30
    assert a.tasks["total"] == 100_000 and len(a.critical_path.steps) > 1000
