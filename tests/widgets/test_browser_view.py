"""BrowserView: the live page with URL bar, history buttons, tabs, and clicks on the screenshot."""

from __future__ import annotations

import base64
import struct
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


@pytest.mark.browser
def test_click_on_the_screenshot_clicks_the_element_under_the_pointer(
    journaled: ocnb.Session, site: Any, spy: list[dict[str, Any]]
) -> None:
    session = journaled
    if "interact" not in session.registry or "query_dom" not in session.registry:
        pytest.skip("needs the perception tools interact and query_dom")
    session.navigate(url=site.page("dynamic.html"))
    box = session.call(
        "javascript_tool",
        expression="(() => { const r = document.getElementById('counter').getBoundingClientRect();"
        " return [(r.left + r.width / 2) / innerWidth, (r.top + r.height / 2) / innerHeight]; })()",
    ).data["result"]
    view = BrowserView(session, auto_refresh=False)
    try:
        view.screen.click(*box)  # what the front end sends on a click
        text = session.call("javascript_tool", expression="document.getElementById('counter').textContent")
        assert text.data["result"] == "Clicked 1 times"
        assert view.last_result is not None and view.last_result.ok
        assert "Clicked 0 times" in view.screen.highlight["label"] and view.screen.highlight["w"] > 0
        assert view.last_hit["ref"] in view.status.value
        acted = [e for e in session.journal.entries if e["tool"] == "interact"][-1]
        assert (acted["source"], acted["args"].get("ref")) == ("widget", view.last_hit["ref"])
    finally:
        view.close()


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


HIT = {"tag": "button", "role": None, "name": "Send", "xpath": "/html[1]/body[1]/button[1]", "frame": False,
       "rect": {"x": 0.1, "y": 0.2, "w": 0.3, "h": 0.05}}  # fmt: skip


def test_click_maps_to_query_dom_then_interact_on_that_ref() -> None:
    caller = scripted(
        javascript_tool={"result": HIT},
        query_dom={"matches": [{"ref": "ax_7", "role": "button", "name": "Send"}]},
        interact={"acted_on": {"ref": "ax_7"}},
    )
    view = BrowserView(caller=caller, auto_refresh=False, refresh_now=False)
    view.screen.click(0.25, 0.22)
    acted = [(c.tool, c.quiet) for c in caller.calls if c.tool != "page_screenshot" and c.tool != "tabs_context"]
    assert acted == [("javascript_tool", True), ("query_dom", True), ("interact", False)]
    assert "0.25" in caller.calls[0].args["expression"] and "0.22" in caller.calls[0].args["expression"]
    assert caller.calls[1].args == {"selector": HIT["xpath"], "method": "xpath"}
    assert caller.calls[2].args == {"ref": "ax_7", "action": "click"}
    assert view.screen.highlight == {**HIT["rect"], "label": "button “Send” (ax_7)"}
    assert "ax_7" in view.status.value
    assert view.screen.src.startswith("data:image/png")  # refreshed after the action


def test_click_on_empty_space_acts_on_nothing() -> None:
    caller = scripted(javascript_tool={"result": None}, interact={})
    view = BrowserView(caller=caller, auto_refresh=False, refresh_now=False)
    assert view.click_at(0.9, 0.9) is None
    assert "interact" not in caller.tools_called()
    assert "nothing" in view.status.value


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
    assert watcher._before not in s.pipeline.before and watcher._after not in s.pipeline.after
    assert watcher._thread is not None
    watcher._thread.join(5)
    assert not watcher._thread.is_alive()
    view.reload_button.click()  # a closed session answers with a code, shown in the view
    assert "SESSION_CLOSED" in view.status.value
