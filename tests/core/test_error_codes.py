"""Issue 16 (6): specific codes instead of INTERNAL or SCRIPT_ERROR, from one translation seam."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright._impl._errors import Error as PlaywrightError
from playwright._impl._errors import TargetClosedError
from playwright.async_api import TimeoutError as PlaywrightTimeout

import ocnb
from ocnb.errors import InContext, InvalidValue, PageCrashed, from_playwright


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (PlaywrightTimeout("Page.click: Timeout 500ms exceeded."), "TIMEOUT"),
        (TimeoutError(), "TIMEOUT"),
        (TargetClosedError(), "TARGET_CLOSED"),
        (PlaywrightError("Frame.evaluate: Target crashed"), "PAGE_CRASHED"),
        (PlaywrightError("Page.goto: Page crashed"), "PAGE_CRASHED"),
        (PlaywrightError("Page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/"), "NAVIGATION_FAILED"),
        (
            PlaywrightError("Page.evaluate: Execution context was destroyed, most likely because of a navigation"),
            "TARGET_NAVIGATED_AWAY",
        ),
        (
            PlaywrightError("Locator.count: SyntaxError: The string '//[' is not a valid XPath expression."),
            "INVALID_ARGUMENT",
        ),
        (PlaywrightError('Page.click: Unexpected token "" while parsing css selector "div[".'), "INVALID_ARGUMENT"),
        (PlaywrightError('Page.click: Unknown engine "foo" while parsing selector foo=bar'), "INVALID_ARGUMENT"),
        (ValueError("embedded null byte"), "INVALID_ARGUMENT"),
        # no guessing from words in a message: a script error that mentions a timeout stays unknown
        (PlaywrightError("Page.evaluate: Error: Timeout while loading data"), "INTERNAL"),
        (PlaywrightError("Page.evaluate: SyntaxError: Unexpected token ')'"), "INTERNAL"),
    ],
)
def test_from_playwright_by_type(exc: BaseException, code: str) -> None:
    assert from_playwright(exc).code == code


def test_page_crashed_is_a_target_closed() -> None:
    assert isinstance(from_playwright(PlaywrightError("Target crashed")), PageCrashed)
    assert "BROWSER_CRASHED" in ocnb.errors.ERROR_CODES and "PAGE_CRASHED" in ocnb.errors.ERROR_CODES


def test_a_failure_in_context_keeps_its_code_and_gains_the_context() -> None:
    """A tool names what it was doing (fill_form: the field) and leaves the translation to the seam."""
    err = from_playwright(
        InContext(PlaywrightTimeout("Locator.fill: Timeout 500ms exceeded."), "field 'Age'", field="Age")
    )
    assert (err.code, err.message, err.details) == (
        "TIMEOUT",
        "field 'Age': Locator.fill: Timeout 500ms exceeded.",
        {"field": "Age"},
    )
    ours = InvalidValue("not a date", details={"expected": "YYYY-MM-DD"})
    err = from_playwright(InContext(ours, "field 'Born'", field="Born", put_back=True))
    assert err is ours and err.code == "INVALID_VALUE"
    assert err.details == {"expected": "YYYY-MM-DD", "field": "Born", "put_back": True}


@pytest.mark.browser
def test_codes_in_a_live_session(session: ocnb.Session, site, tmp_path: Path) -> None:
    s = session
    assert s.call("navigate", url=site.page("dynamic.html")).ok

    r = s.call("wait_for", selector="xpath=//[", timeout_ms=1000)
    assert r.error is not None and r.error.code == "INVALID_ARGUMENT" and "xpath=//[" in r.error.message
    r = s.call("query_dom", selector="//[", method="xpath")
    assert r.error is not None and r.error.code == "INVALID_ARGUMENT" and "//[" in r.error.message

    r = s.call("oc_secrets_load", path=str(tmp_path / "a\x00b.env"))
    assert r.error is not None and r.error.code == "INVALID_ARGUMENT" and "NUL" in r.error.message
    r = s.call("file_upload", query="upload", paths=["a\x00b.txt"])
    assert r.error is not None and r.error.code in ("INVALID_ARGUMENT", "FILE_NOT_ALLOWED"), r
    assert "null" not in r.error.message.lower() or "NUL" in r.error.message

    r = s.call("javascript_tool", expression="() => { throw new Error('boom') }")
    assert r.error is not None and r.error.code == "SCRIPT_ERROR"
    r = s.call("javascript_tool", expression="(")
    assert r.error is not None and r.error.code == "SCRIPT_ERROR"

    away = site.page("index.html")
    r = s.call("javascript_tool", expression=f"() => {{ location.href = {away!r}; return new Promise(() => {{}}); }}")
    assert r.error is not None and r.error.code == "TARGET_NAVIGATED_AWAY", r
    assert s.call("wait_for", url="**/index.html", timeout_ms=5000).ok


@pytest.mark.browser
def test_nul_byte_in_an_export_path(fresh_session: ocnb.Session, site, ocnb_home: Path) -> None:
    from tests.skills.helpers import form_skill

    skill_id = form_skill(site, ocnb_home)
    r = fresh_session.call("oc_skill_export", skill_id=skill_id, path=str(ocnb_home / "out\x00.py"))
    assert r.error is not None and r.error.code in ("INVALID_ARGUMENT", "FILE_NOT_ALLOWED"), r
    assert "NUL" in r.error.message or "\\x00" in r.error.message
    assert fresh_session.call("oc_skill_export", skill_id=skill_id, path=str(ocnb_home / "out.py")).ok
