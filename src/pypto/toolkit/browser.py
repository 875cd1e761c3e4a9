"""Which headless browser the toolkit's page screenshots and the page tests drive.

The search order is OPENPTO_BROWSER (when set, the only one tried, so a run can pin a browser
or, pointing nowhere, simulate having none), then Chromium/Chrome on PATH, then playwright's own
chromium (`python -m playwright install chromium`). Nothing here installs a browser: that is
`.ci/run`'s job or the user's (INSTALL_HINT says how).
"""
from __future__ import annotations

import os
import shutil
from typing import Any, Callable, Mapping

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


def launch_headless(playwright: Any, environ: Mapping[str, str] = os.environ
                    ) -> tuple[Any | None, list[str]]:
    """(the first candidate that launches headless, or None; why each one before it failed)."""
    reasons = []
    for executable, source in candidates(environ):
        problem = unusable(executable)
        if problem is None:
            try:
                return playwright.chromium.launch(executable_path=executable, headless=True,
                                                  args=LAUNCH_ARGS), reasons
            except Exception as exc:  # playwright's own Error: a browser that won't start
                problem = str(exc).strip().splitlines()[0]
        reasons.append(f"{source}: {problem}")
    return None, reasons


def screenshot(html: str | os.PathLike, png: str | os.PathLike, width: int = 1400,
               height: int = 800, wait_ms: int = 1500) -> str | None:
    """A picture of a viewer page in the headless browser; None, or why there is none (no
    playwright, no browser: the docs scripts then leave their pictures as they were)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "the playwright package is missing (pip install -e '.[dev]')"
    from pathlib import Path
    with sync_playwright() as p:
        browser, reasons = launch_headless(p)
        if browser is None:
            return f"no browser ({'; '.join(reasons)}); {INSTALL_HINT}"
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(Path(html).resolve().as_uri())
            page.wait_for_timeout(wait_ms)
            page.screenshot(path=str(png))
        finally:
            browser.close()
    return None
