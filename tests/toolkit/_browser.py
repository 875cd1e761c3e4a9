"""What the page tests do when there is no browser: skip, saying how to install one; under CI
(CI=true) fail with the same message. Which browser, in which order: `pypto.toolkit.browser`.
Tests never install anything: installing a browser is `.ci/run`'s job (or the user's).
"""
from __future__ import annotations

import os
from typing import Mapping

import pytest

from pypto.toolkit.browser import (ENV_VAR, INSTALL_HINT, LAUNCH_ARGS, PATH_NAMES,  # noqa: F401
                                   PLAYWRIGHT_OWN, candidates, launch_headless, unusable)


def no_browser(why: str, environ: Mapping[str, str] = os.environ) -> None:
    """Skip the calling test (fail it under CI) because no browser could be launched."""
    message = f"no browser for the page tests ({why}); {INSTALL_HINT}"
    if environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} [CI=true: a missing browser is a failure]", pytrace=False)
    pytest.skip(message)


def launch(playwright, environ: Mapping[str, str] = os.environ):
    """The first candidate that launches headless, or no_browser() with every reason."""
    browser, reasons = launch_headless(playwright, environ)
    if browser is None:
        no_browser("; ".join(reasons), environ)
    return browser
