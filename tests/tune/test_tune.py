"""The tuner (`kernel.tune`, `tune.space`, `tune.search`): the search space is
found from the kernel's own call sites, every setting is simulated timing only, settings the
compiler refuses are recorded as infeasible, and a search is deterministic for its seed."""
import os

import pytest
import torch

import pypto
from pypto.errors import PyptoValueError
from pypto.tune.space import Dimension, search_space

from marker_lines import marker_line

HERE = os.path.basename(__file__)


def _line(marker: str) -> int:
    return marker_line(__file__, marker)


@pypto.frontend.jit
def _rows(x: pypto.Tensor([], pypto.DT_FP32), w: pypto.Tensor([], pypto.DT_FP16),
          y: pypto.Tensor([], pypto.DT_FP32), z: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)                              # VEC_SITE
    y[:] = pypto.exp(x) * 2.0
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])      # CUBE_SITE
    z[:] = pypto.matmul(pypto.cast(x, pypto.DT_FP16), w, pypto.DT_FP32)


def _call():
    x, w = torch.rand(128, 256), torch.rand(256, 128).half()
    _rows(x, w, torch.zeros(128, 256), torch.zeros(128, 128))


def test_the_space_is_the_kernels_call_sites_and_options():
    _call()
    dims = {d.knob: d for d in search_space(_rows)}
    vec, cube = f"vec_tile@{HERE}:{_line('VEC_SITE')}", f"cube_tile@{HERE}:{_line('CUBE_SITE')}"
    assert set(dims) == {vec, cube, "stitch_function_max_num", "device_sched_mode",
                         "cube_l1_reuse_setting", "cube_nbuffer_setting", "vec_nbuffer_setting"}
    assert dims[vec].current == (16, 64) and dims[vec].candidates[0] == (16, 64)
    assert all(c[1] % 16 == 0 for c in dims[vec].candidates) and (64, 256) in dims[vec].candidates
    assert dims[cube].current == ((64, 64), (64, 64, 64), (64, 64), False)
    assert ((128, 128), (64, 256), (256, 256), False) in dims[cube].candidates
    assert dims["stitch_function_max_num"].current == 128


def test_a_small_space_is_searched_whole_and_the_best_is_the_fastest():
    _call()
    before, cache = _rows.last_run, _rows.compile_cache.snapshot()
    vec = f"vec_tile@{HERE}:{_line('VEC_SITE')}"
    dims = [Dimension(vec, (16, 64), ((16, 64), (4, 64), (64, 256)), "test")]
    result = _rows.tune(dimensions=dims, progress=False)
    assert result.strategy.startswith("exhaustive over 3,") and len(result.evaluations) == 3
    values = {repr(e.config): e.value_us for e in result.evaluations}
    assert result.best.value_us == min(values.values())
    assert result.baseline.config == {} and result.speedup >= 1.0
    assert _rows.last_run is before and _rows.compile_cache.snapshot() == cache   # as it was
    assert "tune _rows: 3 evaluations (exhaustive over 3" in result.table()


@pypto.frontend.jit
def _wide(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 256)                             # WIDE_SITE
    y[:] = pypto.exp(x)


def test_a_setting_the_compiler_refuses_is_infeasible_not_fatal():
    _wide(torch.rand(1024, 1024), torch.zeros(1024, 1024))
    vec = f"vec_tile@{HERE}:{_line('WIDE_SITE')}"
    dims = [Dimension(vec, (16, 256), ((16, 256), (1024, 1024)), "test")]   # 4 MiB of UB
    result = _wide.tune(dimensions=dims, progress=False)
    bad = result.evaluations[1]
    assert bad.value_us is None and "UB" in bad.error
    assert result.best is result.baseline


def test_descent_keeps_its_budget_and_is_deterministic_for_a_seed():
    _call()
    runs = [_rows.tune(budget=12, seed=3, progress=False) for _ in range(2)]
    assert [len(r.evaluations) for r in runs] == [12, 12]
    assert runs[0].strategy.startswith("coordinate descent over")
    assert [e.config for e in runs[0].evaluations] == [e.config for e in runs[1].evaluations]
    assert [e.value_us for e in runs[0].evaluations] == [e.value_us for e in runs[1].evaluations]
    assert runs[0].best.value_us <= runs[0].baseline.value_us
    w = runs[0].whatif()
    assert w.after.us(w.after.stats["kernel_cycles"]) == pytest.approx(runs[0].best.value_us)


def test_bad_requests_are_named():
    @pypto.frontend.jit
    def never(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
        y[:] = x
    with pytest.raises(PyptoValueError, match="call it once first"):
        never.tune()
    _call()
    with pytest.raises(PyptoValueError, match="metric must be one of"):
        _rows.tune(metric="latency")
    with pytest.raises(PyptoValueError, match="budget must be an int >= 1"):
        _rows.tune(budget=0)


def test_the_command_line_tunes_a_scripts_kernels_into_reports(tmp_path):
    import subprocess
    import sys
    import textwrap
    script = tmp_path / "tune_me.py"
    script.write_text(textwrap.dedent('''
        import torch
        import pypto

        @pypto.frontend.jit
        def k(x: pypto.Tensor([], pypto.DT_FP32), y: pypto.Tensor([], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4, 128)
            y[:] = pypto.exp(x)

        def main():
            k(torch.rand(64, 512), torch.zeros(64, 512))
    '''))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "tune", f"{script}::main",
                           "--budget", "6", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "tune k: 6 evaluations" in proc.stdout
    assert "tuning k(x: float32[64, 512], y: float32[64, 512])" in proc.stdout   # the call
    page = (out / "0_k" / "report.html").read_text()
    assert "<h1>tune k(x: float32[64, 512], y: float32[64, 512])</h1>" in page
    assert "The tuner minimised kernel_us" in page
    assert "Sensitivity" in page and "vec_tile@tune_me.py:7" in page
    assert "The advisor on the best run" in page and (out / "0_k" / "diff.html").is_file()
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "tune", str(empty)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "called no kernel" in proc.stderr
