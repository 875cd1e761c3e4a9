"""What-if (`kernel.whatif`, `pypto-toolkit whatif`): the last call again with knobs changed,
without editing the kernel; the caller's call, tensors and run are left as they were, and a
knob that matches nothing is an error, not a silent no-op."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import pypto
from pypto.errors import PyptoValueError

from marker_lines import marker_line

HERE = os.path.basename(__file__)


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


@pypto.frontend.jit(runtime_options={"stitch_function_max_num": 16})
def _scale_rows(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    for i in pypto.loop(4, name="LOOP_ROWS", idx_name="i"):
        pypto.set_vec_tile_shapes(16, 64)   # TILE_SITE
        y[i * 32:(i + 1) * 32, :] = pypto.exp(x[i * 32:(i + 1) * 32, :]) * 2.0


def _called():
    x, y = torch.rand(128, 256), torch.zeros(128, 256)
    _scale_rows(x, y)
    return x, y


def test_a_tile_site_changes_the_tasks_and_leaves_the_callers_call_alone():
    x, y = _called()
    before, expected = _scale_rows.last_run, y.clone()
    site = f"vec_tile@{HERE}:{_line('TILE_SITE')}"
    w = _scale_rows.whatif({site: (32, 256)})
    assert w.before is before and w.timing_only
    # 4 iterations of a [32, 256] slice: 8 tiles (tasks) each at [16, 64], 1 at [32, 256]
    assert (w.before.stats["tasks"], w.after.stats["tasks"]) == (32, 4)
    assert _scale_rows.last_run is before          # the caller's call is still the last one
    assert torch.equal(y, expected)                # timing only: the outputs untouched
    assert w.knobs == [f"{site}=(32, 256)"] and "kernel speedup" in str(w)


def test_an_option_knob_overrides_the_decorators_value():
    _called()
    w = _scale_rows.whatif(stitch_function_max_num=1)
    assert (w.before.stats["windows"], w.after.stats["windows"]) == (1, 4)
    assert w.speedup < 1   # more windows: slower


def test_a_knob_that_matches_nothing_is_an_error():
    _called()
    with pytest.raises(PyptoValueError, match=r"'vec_tile@test_whatif.py:3' matched no "
                                              r"set_vec_tile_shapes call"):
        _scale_rows.whatif({f"vec_tile@{HERE}:3": (32, 256)})
    with pytest.raises(PyptoValueError, match="did you mean 'stitch_function_max_num'"):
        _scale_rows.whatif(stitch_function_max_nun=8)
    with pytest.raises(PyptoValueError, match="cube tile 'm'"):
        _scale_rows.whatif({f"cube_tile@{HERE}:7": [[128], [64, 64], [64, 64]]})


def test_whatif_needs_a_call_first():
    @pypto.frontend.jit
    def never(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        y[:] = x
    with pytest.raises(PyptoValueError, match="call it once first"):
        never.whatif(stitch_function_max_num=8)


def test_write_gives_both_runs_and_the_diff_page(tmp_path):
    _called()
    w = _scale_rows.whatif(stitch_function_max_num=1)
    page = w.write(str(tmp_path))
    assert os.path.isfile(page) and page.endswith("diff.html")
    for name in ("before", "after"):
        assert os.path.isfile(tmp_path / name / "merged_swimlane.json")


def test_the_command_line_compares_a_script_as_written_and_with_knobs(tmp_path):
    script = tmp_path / "kernel_script.py"
    script.write_text(textwrap.dedent('''
        import torch
        import pypto

        @pypto.frontend.jit
        def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 128)
            y[:] = x * 3.0

        def main():
            x, y = torch.rand(64, 512), torch.zeros(64, 512)
            k(x, y)
            torch.testing.assert_close(y, x * 3.0)

        if __name__ == "__main__":
            main()
    '''))
    for target in (str(script), f"{script}::main"):
        out = tmp_path / ("out_" + str(len(target)))
        proc = subprocess.run([sys.executable, "-m", "pypto.cli", "whatif", target,
                               "--set", "vec_tile@kernel_script.py:7=64,512", "-o", str(out)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "what-if k: vec_tile@kernel_script.py:7=(64, 512)" in proc.stdout
        assert os.path.isfile(out / "0_k" / "diff.html")
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "whatif", str(script),
                           "--set", "vec_tile@kernel_script.py:8=64,512"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "matched no set_vec_tile_shapes call" in proc.stderr
