"""The first tools against the demo site, including bad input (error code, no side effect)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ocnb

pytestmark = pytest.mark.browser


def title(s: ocnb.Session) -> str:
    return s.javascript_tool(expression="document.title").data["result"]


def test_navigate_back_forward_and_reload(session, site) -> None:
    r = session.navigate(url=site.page("index.html"))
    assert r.ok and r.data["status"] == 200 and r.data["tab_id"]
    form = session.navigate(url=site.page("form.html"), wait_until="domcontentloaded")
    assert form.data["url"].endswith("form.html")
    assert session.navigate(url="back").data["url"].endswith("index.html")
    assert session.navigate(url="forward").data["url"].endswith("form.html")
    session.javascript_tool(expression="window.__marker = 1")
    assert session.page_reload().ok
    assert session.javascript_tool(expression="window.__marker === undefined").data["result"] is True


def test_navigate_http_error_status_is_reported_not_failed(session, site) -> None:
    r = session.navigate(url=site.url + "status/404")
    assert r.ok and r.data["status"] == 404


def test_unreachable_host_fails_and_session_stays_usable(session, site) -> None:
    r = session.navigate(url="http://127.0.0.1:1/")
    assert not r.ok and r.error.code == "NAVIGATION_FAILED" and "ERR_" in r.error.message
    assert session.navigate(url=site.page("index.html")).ok


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "chrome://version", "javascript:alert(1)", "view-source:http://x"]
)
def test_blocked_schemes_do_nothing(session, site, url) -> None:
    session.navigate(url=site.page("index.html"))
    r = session.call("navigate", url=url)
    assert r.error.code == "BLOCKED_URL"
    assert session.tabs_context().data["tabs"][0]["url"].endswith("index.html")


def test_file_urls_allowed_by_configuration(ocnb_home, tmp_path) -> None:
    page = tmp_path / "local.html"
    page.write_text("<title>Local</title>")
    with ocnb.Session(home=ocnb_home, allowed_schemes=("file",)) as s:
        assert s.navigate(url=page.as_uri()).data["title"] == "Local"


def test_wait_for_each_condition(session, site) -> None:
    session.navigate(url=site.page("dynamic.html"))
    assert session.wait_for(selector="h1").ok
    assert session.wait_for(load_state="load").ok
    assert session.wait_for(url="**/dynamic.html").ok
    assert session.wait_for(time_ms=50).data["waited_ms"] >= 40
    r = session.wait_for(text="this text never appears", timeout_ms=300)
    assert r.error.code == "TIMEOUT"
    assert session.wait_for(selector="h1", text="x").error.code == "INVALID_ARGUMENT"
    assert session.wait_for().error.code == "INVALID_ARGUMENT"


def test_wait_for_text_that_appears_later(session, site) -> None:
    session.navigate(url=site.page("search.html") + "?q=chromium")
    r = session.wait_for(text='Results for "chromium"', timeout_ms=5000)
    assert r.ok, r


def test_javascript_tool_results_errors_and_disable(session, site, ocnb_home) -> None:
    session.navigate(url=site.page("index.html"))
    assert session.javascript_tool(expression="({a: [1, 2], b: 'x'})").data["result"] == {"a": [1, 2], "b": "x"}
    assert session.javascript_tool(expression="() => 6 * 7").data["result"] == 42
    err = session.javascript_tool(expression="throw new Error('boom')")
    assert err.error.code == "SCRIPT_ERROR" and "boom" in err.error.message
    with ocnb.Session(home=ocnb_home, allow_javascript=False) as s:
        r = s.javascript_tool(expression="document.title = 'changed'")
        assert r.error.code == "DISABLED"


def test_screenshot_is_a_png_under_home(session, site, module_home) -> None:
    session.navigate(url=site.page("long.html"))
    r = session.page_screenshot()
    p = Path(r.data["path"])
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and r.data["bytes"] == p.stat().st_size
    assert module_home in p.parents
    full = session.page_screenshot(full_page=True)
    assert full.data["height"] > r.data["height"]


def test_tabs_lifecycle_and_tab_id(session, site) -> None:
    session.navigate(url=site.page("index.html"))
    first = session.tabs_context().data["active"]
    created = session.tabs_create(url=site.page("form.html"))
    assert created.ok and created.data["tabs"] == 2
    second = created.data["tab_id"]
    assert session.tabs_context().data["active"] == second
    # page tools take tab_id; default is the active tab
    assert session.javascript_tool(expression="location.pathname", tab_id=first).data["result"].endswith("index.html")
    assert session.javascript_tool(expression="location.pathname").data["result"].endswith("form.html")
    assert session.tabs_activate(tab_id=first).data["tab_id"] == first
    assert session.tabs_close(tab_id=second).data["tabs"] == 1
    assert session.tabs_activate(tab_id=second).error.code == "INVALID_ARGUMENT"
    assert session.javascript_tool(expression="1", tab_id="t999").error.code == "INVALID_ARGUMENT"
    assert session.tabs_create(url="file:///etc/passwd").error.code == "BLOCKED_URL"
    assert len(session.tabs_context().data["tabs"]) == 1


def test_popup_becomes_active_tab(session, site) -> None:
    session.navigate(url=site.page("popup.html"))
    session.javascript_tool(expression="document.querySelector('button').click()")
    session.wait_for(time_ms=500)
    tabs = session.tabs_context().data
    assert len(tabs["tabs"]) == 2
    popup = [t for t in tabs["tabs"] if t["tab_id"] == tabs["active"]][0]
    assert "popup-child.html" in popup["url"] and popup["opener"]


def test_cookies_get_set_clear(session, site) -> None:
    session.navigate(url=site.page("storage.html"))
    assert session.cookies(action="set", name="flavour", value="oat").ok
    got = session.cookies(action="get", name="flavour").data["cookies"]
    assert [c["value"] for c in got] == ["oat"]
    assert session.javascript_tool(expression="document.cookie").data["result"].count("flavour=oat") == 1
    session.cookies(action="clear")
    assert session.cookies(action="get").data["cookies"] == []
    assert session.cookies(action="set", name="x").error.code == "INVALID_ARGUMENT"
    assert session.cookies(action="eat").error.code == "INVALID_ARGUMENT"
    # a URL the cookie jar cannot be asked about is the caller's mistake, and sets nothing
    for url in ("x" * 300, "ftp://example.test/", "http://[::1", "https://"):
        r = session.cookies(action="set", name="bad", value="1", url=url)
        assert r.error.code == "INVALID_ARGUMENT", (url, r.error)
        assert session.cookies(action="get", url=url).error.code == "INVALID_ARGUMENT"
    assert session.cookies(action="get", name="bad").data["cookies"] == []
    # without url, a page that is not http(s) is no cookie URL either: the error says to pass one
    session.navigate(url="about:blank")
    r = session.cookies(action="set", name="bad", value="1")
    assert r.error.code == "INVALID_ARGUMENT" and "pass url" in r.error.message, r.error
    session.navigate(url=site.page("storage.html"))
    assert session.cookies(action="get", name="bad").data["cookies"] == []


def test_local_and_session_storage(session, site) -> None:
    session.navigate(url=site.page("storage.html"))
    assert session.storage(action="set", key="k", value="v").data["items"]["k"] == "v"
    assert session.storage(action="set", storage_type="session", key="s", value="1").data["items"] == {"s": "1"}
    assert session.javascript_tool(expression="localStorage.getItem('k')").data["result"] == "v"
    assert session.storage(action="get", key="k").data["items"] == {"k": "v"}
    assert session.storage(action="clear").data["items"] == {}
    r = session.storage(action="set", key="only-key")
    assert r.error.code == "INVALID_ARGUMENT"
    assert session.storage(action="get").data["items"] == {}


def test_health_and_expand_tools(session) -> None:
    h = session.oc_connection_health().data
    assert h["connected"] and h["version"] and h["pages"] >= 1
    cats = session.expand_tools().data["categories"]
    names = {t["name"] for tools in cats.values() for t in tools}
    assert {"navigate", "tabs_create", "cookies"} <= names
    assert all(t["summary"] for tools in cats.values() for t in tools)


def test_dialogs_are_handled_not_left_hanging(session, site) -> None:
    session.navigate(url=site.page("dialogs.html"))
    r = session.javascript_tool(expression="(() => { document.querySelectorAll('button')[1].click(); return 1 })()")
    assert r.ok
    text = session.javascript_tool(expression="document.querySelector('#dialog-result').textContent").data["result"]
    assert "confirm: true" in text
