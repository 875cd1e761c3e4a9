"""The pypto-toolkit console script is installed and reports the version."""
import subprocess
import sys

import pypto
from pypto.toolkit.cli import main


def test_version_flag(capsys):
    try:
        main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert pypto.__version__ in capsys.readouterr().out


def test_module_runs_as_script():
    out = subprocess.run([sys.executable, "-m", "pypto.toolkit.cli", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "pypto-toolkit" in out.stdout
