"""BrowserView: the live page with URL bar, history buttons, tabs, and clicks on the screenshot."""

from __future__ import annotations

import base64
import struct
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.results import ToolResult
from ocnb.widgets import BrowserView, ScriptedCaller, watcher_for


def png_size(src: str) -> tuple[int, int]:
    assert src.startswith("data:image/png;base64,")
    data = base64.b64decode(src.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def page_url(s: ocnb.Session) -> str:
    return s.call("javascript_tool", expression="location.href").data["result"]


# -- real Chromium ---------------------------------------------------------------------------------


@pytest.mark.browser
def test_view_shows_the_active_page_as_a_png_with_its_url_and_tab(session: ocnb.Session, site: Any) -> None:
    session.navigate(url=site.page("form.html"))
    view = BrowserView(session, auto_refresh=False)
    try:
        width, height = png_size(view.screen.src)
        assert width >= 200 and height >= 100
        assert view.url_bar.value == site.page("form.html") == view.url
        assert view.title == "Sign up"
        assert [label for label, _ in view.tabs.options] == ["t1: Sign up"] or len(view.tabs.options) == 1
        assert view.tabs.value == session.call("tabs_context").data["active"]
    finally:
        view.close()


@pytest.mark.browser
def test_url_bar_and_buttons_act_through_journaled_widget_calls(
    session: ocnb.Session, site: Any, spy: list[dict[str, Any]]
) -> None:
    view = BrowserView(session, auto_refresh=False)
    try:
        view.url_bar.value = site.page("form.html")  # what pressing Enter in the URL bar syncs
        assert page_url(session) == site.page("form.html")
        view.url_bar.value = site.page("index.html")
        view.back_button.click()
        assert page_url(session) == site.page("form.html") == view.url_bar.value
        view.forward_button.click()
        assert page_url(session) == site.page("index.html") == view.url
        session.call("javascript_tool", expression="document.body.dataset.mark = 'x'")
        view.reload_button.click()
        assert session.call("javascript_tool", expression="document.body.dataset.mark || null").data["result"] is None
        acted = [(c["tool"], c["args"].get("url")) for c in spy if c["source"] == "widget" and c["record"]]
        assert acted == [
            ("navigate", site.page("form.html")),
            ("navigate", site.page("index.html")),
            ("navigate", "back"),
            ("navigate", "forward"),
            ("page_reload", None),
        ]
        # showing the page is quiet: screenshots and tab lists are marked not to be journaled
        quiet = {c["tool"] for c in spy if c["source"] == "widget" and not c["record"]}
        assert quiet == {"page_screenshot", "tabs_context"}
    finally:
        view.close()


@pytest.mark.browser
def test_tabs_list_new_tab_and_switching(session: ocnb.Session, site: Any) -> None:
    session.navigate(url=site.page("form.html"))
    view = BrowserView(session, auto_refresh=False)
    try:
        first = view.tabs.value
        view.new_tab_button.click()
        assert len(view.tabs.options) == 2 and view.tabs.value != first
        view.tabs.value = first  # picking a tab in the list activates it
        assert session.call("tabs_context").data["active"] == first
        assert view.url == site.page("form.html")
    finally:
        view.close()


@pytest.mark.browser
def test_view_refreshes_after_calls_from_code_throttled(session: ocnb.Session, site: Any) -> None:
    view = BrowserView(session, auto_refresh=True, interval=2.0)
    watcher = watcher_for(session)
    try:
        assert watcher.wait_idle(10)
        before = view.refreshes
        for name in ("index.html", "search.html", "login.html", "form.html"):
            session.navigate(url=site.page(name))  # a call from code, not from the widget
        assert watcher.wait_idle(20)
        assert view.url == site.page("form.html")
        assert 1 <= view.refreshes - before <= 2  # four calls, coalesced
    finally:
        view.close()


def on_screen(session: ocnb.Session, xy: str) -> tuple[float, float]:
    """Where the point ``xy`` (a JavaScript expression giving viewport pixels) shows on the screenshot,
    as fractions of it. (The test measures with JavaScript; the widget has none.)"""
    r = session.call("javascript_tool", expression=f"(([x, y]) => [x / innerWidth, y / innerHeight])({xy})")
    assert r.ok, r.error
    fx, fy = r.data["result"]
    return fx, fy


def center_of(session: ocnb.Session, selector: str) -> tuple[float, float]:
    return on_screen(
        session,
        f"(el => {{ el.scrollIntoView({{block: 'nearest'}}); const r = el.getBoundingClientRect();"
        f" return [r.left + r.width / 2, r.top + r.height / 2]; }})(document.querySelector({selector!r}))",
    )


def clicked_ref(session: ocnb.Session) -> tuple[str, Any]:
    acted = [e for e in session.journal.entries if e["tool"] == "interact"][-1]
    return acted["source"], acted["args"].get("ref")


@pytest.mark.browser
def test_click_on_the_screenshot_clicks_the_element_under_the_pointer(
    journaled: ocnb.Session, site: Any, spy: list[dict[str, Any]]
) -> None:
    session = journaled
    session.navigate(url=site.page("dynamic.html"))
    fx, fy = center_of(session, "#counter")
    view = BrowserView(session, auto_refresh=False)
    try:
        view.screen.click(fx, fy)  # what the front end sends on a click
        counter = session.call("query_dom", selector="#counter").data["matches"][0]
        assert counter["name"] == "Clicked 1 times"
        assert view.last_result is not None and view.last_result.ok
        assert view.last_hit is not None and view.last_hit["ref"] == counter["ref"]
        assert view.screen.highlight["label"] == f"button “Clicked 0 times” ({counter['ref']})"
        assert 0 < view.screen.highlight["x"] < fx < view.screen.highlight["x"] + view.screen.highlight["w"] < 1
        assert counter["ref"] in view.status.value
        assert clicked_ref(session) == ("widget", counter["ref"])
        # finding the element is a display call: quiet, and no JavaScript tool
        widget_calls = [(c["tool"], c["record"]) for c in spy if c["source"] == "widget"]
        assert ("query_dom", False) in widget_calls and ("interact", True) in widget_calls
        assert "javascript_tool" not in {tool for tool, _ in widget_calls}
    finally:
        view.close()


@pytest.mark.browser
def test_click_on_the_screenshot_works_with_javascript_switched_off(
    session: ocnb.Session, ocnb_home: Any, site: Any
) -> None:
    session.navigate(url=site.page("form.html"))
    fx, fy = center_of(session, "button[type=submit]")  # measured where JavaScript is on; same viewport
    with ocnb.Session(headless=True, home=ocnb_home, allow_javascript=False) as s:
        assert s.call("javascript_tool", expression="1").error.code == "DISABLED"
        s.navigate(url=site.page("form.html"))
        view = BrowserView(s, auto_refresh=False)
        try:
            view.screen.click(fx, fy)
            assert view.last_result is not None and view.last_result.ok, view.status.value
            assert view.last_hit is not None and (view.last_hit["role"], view.last_hit["name"]) == ("button", "Sign up")
            assert "Sign up" in view.status.value
        finally:
            view.close()


@pytest.mark.browser
def test_click_on_the_screenshot_reaches_into_a_cross_origin_frame(journaled: ocnb.Session, site: Any) -> None:
    session = journaled
    session.navigate(url=site.page("frames.html"))
    session.call("wait_for", selector="#cross-origin-frame")
    # the cross-origin frame shows the same page as the same-origin one: its button sits at the same offset
    fx, fy = on_screen(
        session,
        "(() => { const f = document.getElementById('cross-origin-frame'); f.scrollIntoView({block: 'center'});"
        " const o = f.getBoundingClientRect(), b = document.getElementById('same-origin-frame')"
        ".contentDocument.getElementById('frame-button').getBoundingClientRect();"
        " return [o.left + f.clientLeft + b.left + b.width / 2, o.top + f.clientTop + b.top + b.height / 2]; })()",
    )
    view = BrowserView(session, auto_refresh=False)
    try:
        view.screen.click(fx, fy)
        assert view.last_result is not None and view.last_result.ok, view.status.value
        assert view.last_hit is not None and view.last_hit["name"] == "Frame button"
        assert view.last_hit["frame_ordinal"] > 0
        status = session.call("read_page", mode="text").data["content"]
        assert "frame clicked" in status
    finally:
        view.close()


def test_the_widget_carries_no_javascript_of_its_own() -> None:
    from ocnb.widgets import browser_view

    source = Path(browser_view.__file__).read_text(encoding="utf-8")
    for sign in ("javascript_tool", "=>", "document.", "elementFromPoint", "innerWidth"):
        assert sign not in source


# -- pure Python (scripted tools) --------------------------------------------------------------------


def scripted(**extra: Any) -> ScriptedCaller:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )

    def shot(_args: dict[str, Any]) -> dict[str, Any]:
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as f:
            f.write(png)
        return {"path": f.name, "width": 1, "height": 1, "url": "http://127.0.0.1/x"}

    responses: dict[str, Any] = {
        "page_screenshot": shot,
        "tabs_context": {"tabs": [{"tab_id": "t1", "url": "http://127.0.0.1/x", "title": "X", "active": True}]},
    }
    responses.update(extra)
    return ScriptedCaller(responses)


HIT = {"ref": "ax_7", "role": "button", "name": "Send", "tag": "button", "visible": True,
       "rect": {"x": 128, "y": 160, "width": 384, "height": 40}, "point": {"x": 320, "y": 176},
       "viewport": {"width": 1280, "height": 800}, "frame_ordinal": 0}  # fmt: skip


def test_click_asks_query_dom_for_the_point_then_interacts_with_that_ref() -> None:
    caller = scripted(
        query_dom={"selector": "25.0000%,22.0000%", "method": "point", "total": 1, "matches": [HIT]},
        interact={"acted_on": {"ref": "ax_7"}},
    )
    view = BrowserView(caller=caller, auto_refresh=False, refresh_now=False)
    view.screen.click(0.25, 0.22)
    acted = [(c.tool, c.quiet) for c in caller.calls if c.tool != "page_screenshot" and c.tool != "tabs_context"]
    assert acted == [("query_dom", True), ("interact", False)]
    assert caller.calls[0].args == {"selector": "25.0000%,22.0000%", "method": "point"}
    assert caller.calls[1].args == {"ref": "ax_7", "action": "click"}
    assert view.screen.highlight == {"x": 0.1, "y": 0.2, "w": 0.3, "h": 0.05, "label": "button “Send” (ax_7)"}
    assert "ax_7" in view.status.value
    assert view.screen.src.startswith("data:image/png")  # refreshed after the action


def test_click_on_empty_space_acts_on_nothing() -> None:
    caller = scripted(query_dom={"matches": [], "total": 0}, interact={})
    view = BrowserView(caller=caller, auto_refresh=False, refresh_now=False)
    assert view.click_at(0.9, 0.9) is None
    assert "interact" not in caller.tools_called()
    assert "nothing" in view.status.value


def test_a_refused_hit_test_is_shown_and_nothing_is_acted_on() -> None:
    caller = scripted(query_dom=ToolResult.failure("query_dom", "TIMEOUT", "the page did not answer"), interact={})
    view = BrowserView(caller=caller, auto_refresh=False, refresh_now=False)
    result = view.click_at(0.5, 0.5)
    assert result is not None and result.error is not None and result.error.code == "TIMEOUT"
    assert "interact" not in caller.tools_called() and "TIMEOUT" in view.status.value


def test_failed_navigation_shows_its_code() -> None:
    caller = scripted(navigate=ToolResult.failure("navigate", "BLOCKED_URL", "file: URLs are blocked"))
    view = BrowserView(caller=caller, auto_refresh=False, refresh_now=False)
    view.url_bar.value = "file:///etc/passwd"
    assert caller.calls[0].tool == "navigate" and caller.calls[0].quiet is False
    assert "BLOCKED_URL" in view.status.value


def test_refreshing_does_not_navigate() -> None:
    caller = scripted()
    view = BrowserView(caller=caller, auto_refresh=False)
    assert view.url_bar.value == "http://127.0.0.1/x"  # set by the refresh, not typed
    assert caller.tools_called() == ["page_screenshot", "tabs_context"]
    assert all(c.quiet for c in caller.calls)


@pytest.mark.browser
def test_closing_the_session_stops_the_refresher_and_unhooks(fresh_session: ocnb.Session, site: Any) -> None:
    s = fresh_session
    s.navigate(url=site.page("index.html"))
    view = BrowserView(s, interval=0.1)
    watcher = watcher_for(s)
    s.navigate(url=site.page("form.html"))
    assert watcher.wait_idle(10) and view.url == site.page("form.html")
    s.close()
    assert watcher._before not in s.pipeline.before_hooks() and watcher._after not in s.pipeline.after_hooks()
    assert watcher._thread is not None
    watcher._thread.join(5)
    assert not watcher._thread.is_alive()
    view.reload_button.click()  # a closed session answers with a code, shown in the view
    assert "SESSION_CLOSED" in view.status.value
