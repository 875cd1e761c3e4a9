"""Time by source line (issue 30, item 6): each leaf's source-line shares kept in the trace
(`runtime.line_shares`), the per-line times of `analyses.by_line` (`analyze --by-line`), and
the per-line delta of `pypto-toolkit diff`.

The kernels are built so the answer is known: one line holds 30 exps and the others one op
each (the bulk of the time is on that line), and two lines whose cycles the cost model gives
directly (an exp reading its tile from GM, an add writing it back).
"""
from __future__ import annotations

import json
import os

import pytest
import torch

import pypto
from pypto.cli import main
from pypto.runtime.transfer_shape import Path, transfer_bytes
from pypto.toolkit import trace
from pypto.toolkit.analyses import by_line
from pypto.tune.whatif import by_line_delta

from _traces import build, task, write
from marker_lines import marker_line

ROWS, COLS, TILE_ROWS = 64, 512, 16
DEBUG = {"runtime_debug_mode": 1}


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


@pypto.frontend.jit(debug_options=DEBUG)
def _heavy(x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
           y: pypto.Tensor([ROWS, COLS], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(TILE_ROWS, COLS)
    t = x + 1.0                                 # LIGHT_IN
    for _ in range(30):
        t = pypto.exp(t)                        # HEAVY_LINE
    y[:] = t * 0.5                              # LIGHT_OUT


@pypto.frontend.jit(debug_options=DEBUG)
def _two(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(TILE_ROWS, COLS)  # TILE_SITE
    t = pypto.exp(x)                            # EXP_LINE
    y[:] = t + 1.0                              # ADD_LINE


def _run(kernel, rows: int = ROWS):
    x = torch.rand(rows, COLS)
    kernel(x, torch.zeros_like(x))
    kernel.last_run
    return os.path.abspath(kernel.last.folder)


@pytest.fixture(scope="module")
def heavy_folder(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("heavy"))
        return _run(_heavy)


def _times(folder: str) -> tuple[by_line.ByLine, dict[int, by_line.LineTime]]:
    record = by_line.report(trace.load(folder), folder)
    assert record.reason is None
    return record, {x.line: x for x in record.lines if x.file == __file__}


def test_the_line_that_does_the_work_gets_the_time_and_the_lines_sum_to_the_task_time(
        heavy_folder):
    data = trace.load(heavy_folder)
    record, lines = _times(heavy_folder)
    total = float(data.task_columns.dur.sum())
    assert record.total_us == pytest.approx(total, rel=1e-12)
    assert record.unattributed_us == 0.0
    assert sum(x.us for x in record.lines) == pytest.approx(total, rel=1e-12)
    heavy, light_in, light_out = (lines[_line(m)] for m in ("HEAVY_LINE", "LIGHT_IN",
                                                            "LIGHT_OUT"))
    assert set(lines) == {heavy.line, light_in.line, light_out.line}
    assert record.lines[0] is heavy and heavy.pct > 70
    assert heavy.pct > 5 * max(light_in.pct, light_out.pct)
    # all of it on vector cores, the exps only computing (their tiles stay on chip); the
    # GM read is the first op's, the write the last line's
    assert heavy.aic_us == 0 and heavy.aiv_us == pytest.approx(heavy.us)
    assert set(heavy.terms) == {"vector"}
    assert "mte2" in light_in.terms and "mte3" in light_out.terms
    assert heavy.tasks == len(data.task_columns.dur) == ROWS // TILE_ROWS


def test_two_lines_split_as_the_cost_model_charges_them():
    folder = _run(_two)
    spec = _two.last.compiled.spec
    nbytes = TILE_ROWS * COLS * 4
    # the bytes a tile's GM transfer occupies (a little over what it carries: bursts)
    moved = transfer_bytes((TILE_ROWS, COLS), (ROWS, COLS), 4, Path.CONTIGUOUS,
                           spec.dma["shape"])
    assert nbytes <= moved < 1.01 * nbytes
    read, write = moved / spec.dma["gm_to_ub"]["bw"], moved / spec.dma["ub_to_gm"]["bw"]
    exp_cycles = read + spec.vector_cycles("exp_fp32", nbytes)
    add_cycles = spec.vector_cycles("binary", nbytes) + write
    record, lines = _times(folder)
    exp, add = lines[_line("EXP_LINE")], lines[_line("ADD_LINE")]
    assert exp.us / add.us == pytest.approx(exp_cycles / add_cycles, rel=1e-9)
    assert exp.us + add.us == pytest.approx(record.total_us, rel=1e-12)
    assert exp.terms["mte2"] / exp.terms["vector"] == pytest.approx(
        read / spec.vector_cycles("exp_fp32", nbytes), rel=1e-9)
    assert add.terms["mte3"] / exp.terms["mte2"] == pytest.approx(write / read, rel=1e-9)


def test_a_pypto_trace_has_no_lines_and_says_why(tmp_path):
    path = write(tmp_path / "pypto.json", build([task("AIV_25", 0, 5), task("AIV_26", 1, 4)],
                                                ours=False))
    data = trace.load(path)
    record = by_line.report(data, str(tmp_path))
    assert record.lines == [] and "no source lines" in record.reason
    assert by_line.page_data(data, str(tmp_path)) is None
    assert "not available" in by_line.format_text(record)
    assert by_line.delta(record, record) is None


def test_analyze_by_line_text_and_json(heavy_folder, capsys):
    assert main(["analyze", heavy_folder, "--by-line"]) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[2]                # the title, the header, the biggest line
    assert f":{_line('HEAVY_LINE')}" in first and "t = pypto.exp(t)" in first
    assert main(["analyze", heavy_folder, "--by-line", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["by_line"]
    assert out["reason"] is None
    assert out["lines"][0]["line"] == _line("HEAVY_LINE")
    assert sum(x["us"] for x in out["lines"]) == pytest.approx(out["total_us"], abs=1e-5)


def test_page_data_has_the_times_and_the_source_text(heavy_folder, tmp_path):
    d = by_line.page_data(trace.load(heavy_folder), heavy_folder)
    assert d["files"][__file__][_line("HEAVY_LINE") - 1].strip() == \
        "t = pypto.exp(t)                        # HEAVY_LINE"
    assert [x["line"] for x in d["lines"]] == sorted(x["line"] for x in d["lines"])
    # a file that cannot be read: no text, the times still listed by file:line
    data = trace.load(heavy_folder)
    table = data.other["shared_args"]["lines"]
    for rows in table.values():
        for row in rows:
            row[0] = str(tmp_path / "gone.py")
    d = by_line.page_data(data, heavy_folder)
    assert d["files"] == {str(tmp_path / "gone.py"): None} and len(d["lines"]) == 3


def test_diff_shows_the_per_line_delta(capsys):
    a, b = _run(_two, 64), _run(_two, 128)
    assert main(["diff", a, b, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {r["line"]: r for r in report["lines"]}
    _, ta = _times(a)
    _, tb = _times(b)
    for marker in ("EXP_LINE", "ADD_LINE"):
        n = _line(marker)
        assert rows[n]["a_us"] == pytest.approx(ta[n].us, abs=1e-6)
        assert rows[n]["b_us"] == pytest.approx(tb[n].us, abs=1e-6)
        assert rows[n]["delta_us"] == pytest.approx(tb[n].us - ta[n].us, abs=1e-6)
        assert rows[n]["delta_us"] > 0                   # twice the rows, twice the tasks
    assert main(["diff", a, b]) == 0
    assert "Time by source line" in capsys.readouterr().out


def test_whatif_prints_the_per_line_change(tmp_path):
    _run(_two)
    w = _two.whatif({f"vec_tile@{os.path.basename(__file__)}:{_line('TILE_SITE')}":
                     (2 * TILE_ROWS, COLS)})
    w.write(str(tmp_path / "whatif"))
    _, before = _times(w.folders["before"])
    _, after = _times(w.folders["after"])
    text = by_line_delta(w.folders)
    for marker in ("EXP_LINE", "ADD_LINE"):
        n = _line(marker)
        assert before[n].tasks == 2 * after[n].tasks          # half the tiles, twice as big
        row = next(t for t in text.splitlines() if t.split()[0].endswith(f":{n}"))
        assert row.split()[1:] == [f"{before[n].us:.3f}", f"{after[n].us:.3f}",
                                   f"{after[n].us - before[n].us:+.3f}"]
