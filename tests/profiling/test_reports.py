"""Statistics report, bubble analysis and one-line summary of a simulated run; the bubble
analysis reproduces PyPTO's bubble_analysis.log on its softmax sample."""
import re

import pytest

from pypto.profiling.reports import (LaneTask, analyze_bubbles, bubble_report,
                                     bubbles_from_result, bubbles_from_swimlane, format_bubbles,
                                     one_line_summary, run_numbers, stats_report, write_reports)
from pypto.profiling.swimlane import summarize
from pypto.profiling.swimlane_reader import read_swimlane
from pypto.profiling.swimlane_writer import write_swimlane


def _rows(text):
    """label -> the fields after ':' of each `label....: value [pct%]` row."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(.*?)\.*:\s*(.*)$", line)
        if m and not line.startswith("="):
            out[m.group(1)] = m.group(2).split()
    return out


def test_stats_report_numbers(result):
    text = stats_report(result)
    rows = _rows(text)
    assert text.splitlines()[0] == "OpenPTO MachineModel Report".center(60, "=")
    assert rows["Total Cycles"] == ["11000"] and rows["Kernel Cycles"] == ["9500"]
    assert rows["End-to-End Time (us)"] == ["11.00"] and rows["Kernel Time (us)"] == ["9.50"]
    assert rows["AICPU Thread Count"] == ["4"]
    assert rows["Core Machine Count"] == ["6"] and rows["|--Cube Count"] == ["2"]
    assert rows["Stitch Windows"] == ["1"] and rows["Root Instances"] == ["2"]
    assert rows["Total Submit Tasks"] == ["4"]
    assert rows["  |--Cube Tasks"] == ["1", "25.00%"]
    assert rows["  |--Vector Tasks"] == ["3", "75.00%"]
    assert rows["Average Task Cycles"] == ["2375.00"]
    assert rows["  |--Max Task Cycles"] == ["5000"] and rows["  |--Min Task Cycles"] == ["500"]
    assert rows["Total Resolve Times"] == ["3"]
    assert rows["  |--vadd [AIV]"] == ["2", "2000.00"] and rows["  |--mm [AIC]"] == ["1", "5000.00"]
    # busy 2000 + 2000 + 5000 + 500 cycles over 6 cores x 9500 kernel cycles
    assert rows["AICore Busy Cycles"] == ["9500.00", "16.67%"]
    assert rows["Cube Core Busy Cycles (avg)"] == ["2500.00", "26.32%"]
    assert rows["Vector Core Busy Cycles (avg)"] == ["1125.00", "11.84%"]
    assert rows["Used Vector Cores"] == ["2"] and rows["Used Cube Cores"] == ["1"]
    assert rows["GM Read Bytes"] == ["4096"] and rows["GM Write Bytes"] == ["2048"]
    assert rows["L2 Hit Bytes"] == ["1024", "25.00%"] and rows["Workspace Bytes"] == ["512"]
    # stats the report does not know are still listed
    assert rows["hbm_peak_gbps"] == ["1.50"] and rows["aicpu_busy.ctrl"] == ["800"]
    assert all(len(line) <= 100 for line in text.splitlines())


def test_stats_report_layout_matches_pypto_columns(result):
    """Label and dots end at column 49, then ':' and a 10-wide value, then a 9-wide percent."""
    line = next(ln for ln in stats_report(result).splitlines() if "|--Cube Tasks" in ln)
    assert line == "  |--Cube Tasks" + "." * 34 + ":" + f"{1:>10}" + f"{25.0:>8.2f}%"


def test_missing_stats_are_derived_or_na(result):
    """Without stats the numbers come from the tasks; what cannot be derived prints n/a."""
    result.stats = {}
    n = run_numbers(result)
    assert n.kernel_cycles == 9500 and n.e2e_cycles == 10500     # last event end from cycle 0
    assert (n.gm_read_bytes, n.gm_write_bytes, n.l2_hit_bytes) == (4096, 2048, 1024)
    assert (n.windows, n.instances) == (1, 2)
    rows = _rows(stats_report(result))
    assert rows["Workspace Bytes"] == ["n/a"] and rows["AICPU Thread Count"] == ["n/a"]
    assert rows["HBM Bytes"] == ["4096"]


def test_report_of_empty_run(result):
    result.tasks, result.aicpu, result.flows, result.stats = [], [], [], {}
    rows = _rows(stats_report(result))
    assert rows["Total Submit Tasks"] == ["0"] and rows["Kernel Cycles"] == ["0"]
    assert "0 tasks" in one_line_summary(result)
    assert bubble_report(result).count("Execute task num:0") == 6


def test_one_line_summary(result):
    line = one_line_summary(result)
    assert "\n" not in line
    assert line == ("toy: kernel 9.50 us, e2e 11.00 us, 4 tasks (1 AIC / 3 AIV), "
                    "AICore util 16.67% (AIC 26.32%, AIV 11.84%), 1 window(s), "
                    "2 instance(s), L2 hit 25.0%")


def test_report_utilisation_equals_swimlane_summary(result, tmp_path):
    """The report's AICore utilisation is PyPTO's formula applied to the written swimlane."""
    s = summarize(read_swimlane(write_swimlane(result, tmp_path / "s.json")))
    n = run_numbers(result)
    assert n.util_pct == pytest.approx(s.utilization_pct)
    assert result.us(n.kernel_cycles) == pytest.approx(s.e2e_us)


def test_bubbles_split_gaps_at_ready_time(result):
    """Gap before a task: the part before its last predecessor ends is predecessor wait, the
    rest schedule wait; a task without predecessors only waits for scheduling."""
    lanes = {b.lane: b for b in bubbles_from_result(result)}
    assert list(lanes) == ["AIC_1", "AIC_2", "AIV_3", "AIV_4", "AIV_5", "AIV_6"]
    aic = lanes["AIC_1"]        # run starts at 1.0; mm ready at 3.2, starts at 4.0
    assert (aic.task_count, aic.busy, aic.work) == (1, 5.0, 8.0)
    assert aic.wait_predecessor == pytest.approx(2.2)
    assert aic.wait_schedule == pytest.approx(0.8)
    aiv = lanes["AIV_3"]        # vadd 1.0-3.0, then gap to 10.0; vexp ready at 9.0
    assert (aiv.wait_predecessor, aiv.wait_schedule, aiv.busy) == (6.0, 1.0, 2.5)
    assert aiv.idle == pytest.approx(9.5 - 2.5)
    assert lanes["AIV_4"].wait_schedule == pytest.approx(0.2)
    assert lanes["AIV_4"].wait_predecessor == 0.0
    idle = lanes["AIV_5"]
    assert (idle.task_count, idle.work, idle.busy, idle.idle) == (0, 0.0, 0.0, 9.5)


def test_gap_after_predecessors_is_all_schedule_wait():
    lanes = [("L", [LaneTask(1, "a", 0.0, 1.0, None), LaneTask(2, "b", 5.0, 6.0, 0.5)]),
             ("M", [LaneTask(3, "c", 0.0, 0.5, None)])]
    b = analyze_bubbles(lanes)[0]
    assert (b.wait_schedule, b.wait_predecessor, b.total_wait, b.work) == (4.0, 0.0, 4.0, 6.0)


def test_bubble_report_text(result):
    text = bubble_report(result)
    lines = text.splitlines()
    assert lines[0] == "Top 10 tasks in waiting schedule"
    assert lines[1] == "    Task:1048576, label:0-1-0-3-2(), wait:" + " " * 17 + "1.0"
    assert lines[5:7] == ["", ""]
    block = lines[lines.index("[AIV_3] Execute task num:2"):][:10]
    assert block[1:7] == ["    Core Total Work Time: 9.5", "    Total Wait Time: 7.0",
                          "    Wait Schedule Time: 1.0", "    Wait Predecessor Time: 6.0",
                          "    Busy Time: 2.5", "    Idle Time: 7.0"]
    assert block[7] == "    Top 3 tasks in waiting schedule time"
    assert block[8] == "    Task:1048576, label:0-1-0-3-2(), wait:" + " " * 21 + "1.0"
    assert "[AIV_6] Execute task num:0\n    Core Total Work Time: 0.0\n" in text


def test_write_reports(result, tmp_path):
    stat, bubble = write_reports(result, tmp_path / "out")
    assert stat.read_text() == stats_report(result)
    assert bubble.read_text() == bubble_report(result)


def _numbers(line):
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", line)]


def test_reproduces_pypto_softmax_bubble_log(samples):
    """Analysing PyPTO's softmax swimlane gives its bubble_analysis.log, line for line (our two
    extra lines per lane aside; floats to 1e-9)."""
    data = read_swimlane(samples / "softmax_merged_swimlane.json")
    ours = [ln for ln in format_bubbles(bubbles_from_swimlane(data)).splitlines()
            if not ln.startswith(("    Busy Time", "    Idle Time"))]
    ref = (samples / "softmax_bubble_analysis.log").read_text().splitlines()
    assert len(ours) == len(ref) == 579
    for a, b in zip(ours, ref):
        assert re.sub(r"[\d.e-]+", "#", a) == re.sub(r"[\d.e-]+", "#", b)
        assert _numbers(a) == pytest.approx(_numbers(b), abs=1e-9)
    lanes = {b.lane: b for b in bubbles_from_swimlane(data)}
    assert lanes["AIV_25"].wait_schedule == pytest.approx(18.61)
    assert lanes["HUB_80"].wait_predecessor == pytest.approx(42.962777777777774)
