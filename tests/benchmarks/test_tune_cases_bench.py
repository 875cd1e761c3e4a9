"""`benchmarks/tune_cases.py`: a knob case tuned from its "before" within a small budget, and the
generated page (the full run over every case is the committed docs/tune_results.md)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_knob_case_is_tuned_from_its_before(tmp_path):
    page = tmp_path / "tune_results.md"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "tune_cases.py"),
                           "--only", "10b_cube_nbuffer", "--budget", "50", "--results", str(page)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = page.read_text()
    assert "**1 of 1** knob cases" in text and "| 10b_cube_nbuffer | kernel_us |" in text
    assert "| yes |" in text and "- 01_static_axis_for: pypto.loop vs a Python for" in text
    # the same call searched with Optuna too, in the strategy table
    assert "## The search strategies" in text and "| 10b_cube_nbuffer | " in text.split(
        "## The search strategies")[1]
    assert "`optuna` against auto: better on" in text
