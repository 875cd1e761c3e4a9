"""Shared test setup: every test runs in a scratch directory, so `output/` dumps never land in
the checkout; `samples` is PyPTO's own swimlanes, kept in the repository (tests/data)."""
import os
from pathlib import Path

import pytest

PYPTO_SAMPLES = Path(__file__).parent / "data" / "pypto_samples"

# Every kernel call in the suite (and in example subprocesses, which inherit the environment)
# also runs the reference executor and requires the tile executor to agree with it.
os.environ.setdefault("OPENPTO_CHECK_EXECUTORS", "1")


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture(params=["tile", "reference"])
def executor(request, monkeypatch):
    """Each executor alone (no differential check), for tests whose point is what one executor
    does by itself: a named run-time error, a value it must compute on its own."""
    import pypto
    monkeypatch.delenv("OPENPTO_CHECK_EXECUTORS", raising=False)
    with pypto.options(runtime_options={"executor": request.param}):
        yield request.param


@pytest.fixture
def samples() -> Path:
    """Real swimlanes written by PyPTO 0.2.0's simulator (see tests/data/pypto_samples/README.md)."""
    return PYPTO_SAMPLES


@pytest.fixture(params=["python", "compiled"])
def sim_core(request, monkeypatch):
    """Each simulator core in turn (`OPENPTO_SIM`): the Python model and the compiled core
    must give the same timelines. Without the compiled core (not built) its half skips, and
    fails under CI=true, where .ci/run builds it."""
    from pypto.machine import compiled
    if request.param == "compiled" and not compiled.available():
        message = compiled.unavailable_reason()
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    monkeypatch.setenv(compiled.ENV, request.param)
    return request.param
