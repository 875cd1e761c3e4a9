"""How the page tests find their browser (_browser.py), without launching one: the search order,
OPENPTO_BROWSER overriding PATH, and skip-or-fail (CI=true) with the install command."""
import pytest

import _browser


def fake_which(*present):
    return lambda name: f"/opt/bin/{name}" if name in present else None


def test_path_names_in_order_then_playwrights_own():
    found = _browser.candidates({}, fake_which("google-chrome", "chromium"))
    assert found == [("/opt/bin/chromium", "`chromium` on PATH"),
                     ("/opt/bin/google-chrome", "`google-chrome` on PATH"),
                     (None, "playwright's own chromium")]


def test_nothing_on_path_leaves_playwrights_own():
    assert _browser.candidates({}, fake_which()) == [(None, "playwright's own chromium")]


def test_env_var_is_the_only_candidate():
    """OPENPTO_BROWSER pins the browser: PATH and playwright's own are not tried."""
    found = _browser.candidates({"OPENPTO_BROWSER": "/nowhere/chrome"}, fake_which("chromium"))
    assert found == [("/nowhere/chrome", "OPENPTO_BROWSER=/nowhere/chrome")]


def test_unusable_names_a_missing_or_non_executable_file(tmp_path):
    plain = tmp_path / "chrome"
    plain.write_text("")
    assert _browser.unusable(str(tmp_path / "missing")) == "not an executable file"
    assert _browser.unusable(str(plain)) == "not an executable file"
    plain.chmod(0o755)
    assert _browser.unusable(str(plain)) is None
    assert _browser.unusable(_browser.PLAYWRIGHT_OWN) is None


def test_no_browser_skips_with_the_install_command():
    with pytest.raises(pytest.skip.Exception) as info:
        _browser.no_browser("OPENPTO_BROWSER=/x: not an executable file", {})
    assert "apt-get install chromium" in str(info.value)
    assert "python -m playwright install chromium" in str(info.value)
    assert "OPENPTO_BROWSER=/x" in str(info.value)


@pytest.mark.parametrize("ci", ["true", "TRUE"])
def test_no_browser_fails_under_ci(ci):
    with pytest.raises(pytest.fail.Exception) as info:
        _browser.no_browser("none on PATH", {"CI": ci})
    assert "apt-get install chromium" in str(info.value) and "CI=true" in str(info.value)


def test_other_ci_values_still_skip():
    with pytest.raises(pytest.skip.Exception):
        _browser.no_browser("none on PATH", {"CI": "false"})
