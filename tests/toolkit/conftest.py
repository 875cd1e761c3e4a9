"""Headless Chromium for the toolkit's page tests, installed by the project if missing.

The browser is Debian's `chromium` (/usr/bin/chromium) driven by Python playwright. When it is
missing and we run as root, the session tries `apt-get install -y chromium` once, as
`.ci/run` does; if there is still no browser the browser tests FAIL, saying why. Set
OPENPTO_SKIP_BROWSER_TESTS=1 to skip them explicitly instead. One browser serves the whole
session; each test gets a fresh page whose console errors and uncaught exceptions fail it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
SAMPLES = Path(__file__).parents[3] / "shared" / "reference" / "samples"


def _install_chromium() -> str:
    """Try the apt install (root only); returns what happened, for the failure message."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "not root or no apt-get, so no install was attempted"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if done.returncode:
            return f"`{' '.join(cmd)}` failed: {done.stderr.strip()[-300:]}"
    return "apt-get install -y chromium ran"


@pytest.fixture(scope="session")
def browser():
    if os.environ.get("OPENPTO_SKIP_BROWSER_TESTS") == "1":
        pytest.skip("browser tests skipped: OPENPTO_SKIP_BROWSER_TESTS=1")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("browser tests need the playwright Python package: "
                    "pip install -e '.[dev]' (or set OPENPTO_SKIP_BROWSER_TESTS=1 to skip)")
    note = ""
    if not CHROMIUM.exists():
        note = _install_chromium()
    if not CHROMIUM.exists():
        pytest.fail(f"browser tests need Debian's chromium at {CHROMIUM} ({note}); install it "
                    "with `apt-get install -y chromium`, or set OPENPTO_SKIP_BROWSER_TESTS=1")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


class Page:
    """A browser page that records console errors, page errors and dialogs."""

    def __init__(self, page):
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", self._dialog)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, html: Path) -> "Page":
        """Load a viewer page from disk and wait for its first frame."""
        self.page.goto(Path(html).resolve().as_uri())
        self.page.wait_for_function("window.openpto && window.openpto.frames() > 0",
                                    timeout=30000)
        return self

    def js(self, expression: str, arg=None):
        return self.page.evaluate(expression, arg)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 800})
    p = Page(context.new_page())
    yield p
    context.close()
    assert p.errors == [], f"console errors: {p.errors}"


@pytest.fixture
def samples() -> Path:
    if not SAMPLES.is_dir():
        pytest.skip(f"PyPTO samples not found at {SAMPLES}")
    return SAMPLES
