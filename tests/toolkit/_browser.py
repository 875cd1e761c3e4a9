"""Which browser the page tests drive, and what happens when there is none.

Tests never install anything: installing a browser is `.ci/run`'s job (or the user's). The
search order is OPENPTO_BROWSER (when set, the only one tried, so a test run can pin a browser
or, pointing nowhere, simulate having none), then Chromium/Chrome on PATH, then playwright's
own chromium (`python -m playwright install chromium`). Without a browser the page tests skip,
saying how to install one; under CI (CI=true) they fail with the same message.
"""
from __future__ import annotations

import os
import shutil
from typing import Callable, Mapping

import pytest

ENV_VAR = "OPENPTO_BROWSER"
PATH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PLAYWRIGHT_OWN = None   # candidate meaning "playwright's own installed chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]
INSTALL_HINT = ("install one with `apt-get install chromium` (Debian/Ubuntu, as root) or "
                "`python -m playwright install chromium`, or set OPENPTO_BROWSER to a "
                "Chromium/Chrome executable")


def candidates(environ: Mapping[str, str] = os.environ,
               which: Callable[[str], str | None] = shutil.which) -> list[tuple[str | None, str]]:
    """(executable or PLAYWRIGHT_OWN, where it came from), in the order to try them."""
    chosen = environ.get(ENV_VAR)
    if chosen:
        return [(chosen, f"{ENV_VAR}={chosen}")]
    on_path = [(which(name), f"`{name}` on PATH") for name in PATH_NAMES]
    return [c for c in on_path if c[0]] + [(PLAYWRIGHT_OWN, "playwright's own chromium")]


def unusable(executable: str | None) -> str | None:
    """Why a named executable cannot be launched, or None if it may be."""
    if executable is PLAYWRIGHT_OWN:
        return None
    if not os.path.isfile(executable) or not os.access(executable, os.X_OK):
        return "not an executable file"
    return None


def no_browser(why: str, environ: Mapping[str, str] = os.environ) -> None:
    """Skip the calling test (fail it under CI) because no browser could be launched."""
    message = f"no browser for the page tests ({why}); {INSTALL_HINT}"
    if environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} [CI=true: a missing browser is a failure]", pytrace=False)
    pytest.skip(message)


def launch(playwright, environ: Mapping[str, str] = os.environ):
    """The first candidate that launches headless, or no_browser() with every reason."""
    reasons = []
    for executable, source in candidates(environ):
        problem = unusable(executable)
        if problem is None:
            try:
                return playwright.chromium.launch(executable_path=executable, headless=True,
                                                  args=LAUNCH_ARGS)
            except Exception as exc:  # playwright raises its own Error for a browser that won't start
                problem = str(exc).strip().splitlines()[0]
        reasons.append(f"{source}: {problem}")
    no_browser("; ".join(reasons), environ)
