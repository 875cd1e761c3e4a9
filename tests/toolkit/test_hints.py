"""perf_hints.log: the advisor's findings, one line each with knob, source line, evidence and
gain, written beside the swimlane by a run and by `view`; the viewer's Hints panel lists them."""
import torch

import pypto
from pypto.cli import main
from pypto.toolkit.analyses import hints
from pypto.toolkit.trace import load

from _traces import build, task, write
from marker_lines import marker_line


def _stitch_kernel():
    """Windows of one root instance each: the stitch rule fires; every task runs the exp."""
    @pypto.frontend.jit(runtime_options={"stitch_function_max_num": 1},
                        debug_options={"runtime_debug_mode": 1})
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32),
          y: pypto.Tensor([pypto.DYNAMIC, 64, 512], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 512)
        for i in pypto.loop(x.shape[0]):
            y[i:i + 1] = pypto.exp(x[i:i + 1])      # EXP_LINE
    return k


def _run(kernel, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = torch.rand(8, 64, 512)
    kernel(x, torch.empty_like(x))
    return kernel.last_run.folder


def test_a_run_writes_one_line_per_finding_naming_knob_and_line(tmp_path, monkeypatch):
    folder = _run(_stitch_kernel(), tmp_path, monkeypatch)
    log = (tmp_path / folder / hints.LOG_NAME).read_text().splitlines()
    body = [ln for ln in log if not ln.startswith("#")]
    found = hints.hints(load(folder))
    assert len(body) == len(found) >= 1
    stitch = next(ln for ln in body if ln.startswith("stitch_function_max_num | "))
    knob, line, summary, evidence, gain = stitch.split(" | ")
    assert line == f"{__file__}:{marker_line(__file__, 'EXP_LINE')}"
    assert "window" in summary and evidence != "-" and gain.startswith("up to ~")


def test_without_line_data_the_line_is_unknown_and_the_finding_stays(tmp_path):
    tasks = [task(f"AIV_{25 + k}", w * 5, 2, window=w, instance=0, call=k)
             for w in range(8) for k in range(4)]
    found = hints.hints(load(write(tmp_path / "t.json", build(tasks))))
    assert "stitch_function_max_num" in [h.knob for h in found]
    assert {h.line for h in found} == {hints.UNKNOWN_LINE}
    assert {h.log_line().split(" | ")[1] for h in found} == {"?"}


def test_fields_never_hold_the_separator_or_a_newline():
    h = hints.Hint("r", "knob", "f.py:3", "a | b\nc", ("x | y", "z"), None, (), None)
    assert h.log_line() == "knob | f.py:3 | a / b c | x / y; z | -"


def test_view_writes_the_log_beside_the_page(tmp_path, capsys):
    tasks = [task(f"AIV_{25 + k}", w * 5, 2, window=w, instance=0, call=k)
             for w in range(8) for k in range(4)]
    trace = write(tmp_path / "merged_swimlane.json", build(tasks))
    assert main(["view", str(trace)]) == 0
    text = (tmp_path / hints.LOG_NAME).read_text()
    assert text.startswith("# perf_hints.log") and "stitch_function_max_num | ? | " in text
    assert str(tmp_path / hints.LOG_NAME) in capsys.readouterr().out
