"""The one browser every page test drives (test_view_page.py, test_graph_page.py).

Which browser, and the skip (or, under CI=true, failure) when there is none: _browser.py. No
test installs anything. One browser serves the whole session; each test gets a fresh page whose
console errors and uncaught exceptions fail it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import _browser


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser.no_browser("the playwright Python package is missing: pip install -e '.[dev]'")
    with sync_playwright() as p:
        b = _browser.launch(p)
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
