"""`benchmarks/calibration_speed.py --size reduced`: every kernel's evaluation paths are timed
and written as a table (the full size is the benchmark's)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_reduced_calibration_speed_table(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "calibration_speed.py"),
                           "--size", "reduced", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (md,) = [p for p in os.listdir(tmp_path) if p.endswith("_calibration_reduced.md")]
    rows = [line for line in (tmp_path / md).read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| kernel")]
    assert len(rows) == 6 and rows[-1].startswith("| gated_deltanet (reduced) |")
    assert all(float(r.split("|")[-2]) > 0 for r in rows)
