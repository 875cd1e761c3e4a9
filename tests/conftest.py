"""Shared test setup: every test runs in a scratch directory, so `output/` dumps never land in
the checkout."""
import pytest


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield
