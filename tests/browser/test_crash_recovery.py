"""Issue 16 (4, 5, 7): a killed browser comes back, a crashed page gives one code, a hung tab does not
block tabs_context, and a failed tabs_create leaves no tab behind."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import ocnb
from tests.conftest import alive, chromium_children

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

pytestmark = pytest.mark.browser


def browser_pid(s: ocnb.Session) -> int:
    """The Chromium browser process of a session (asked over CDP)."""

    async def ask() -> int:
        cdp = await s._state.browser.new_browser_cdp_session()  # type: ignore[union-attr]
        info = await cdp.send("SystemInfo.getProcessInfo")
        await cdp.detach()
        return next(int(p["id"]) for p in info["processInfo"] if p["type"] == "browser")

    return int(s.run(ask(), 10))


def kill_browser(s: ocnb.Session) -> int:
    pid = browser_pid(s)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while s._state is not None and s._state.crashes.current is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return pid


def drivers() -> set[int]:
    """Playwright driver processes (node ... run-driver) descending from this process."""
    me, parents, found = os.getpid(), {}, []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        if b"run-driver" in cmd and stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(int(entry))
    out = set()
    for pid in found:
        p = pid
        while p in parents and p not in (0, 1):
            p = parents[p]
            if p == me:
                out.add(pid)
                break
    return out


def test_killed_browser_is_reported_once_then_relaunched(ocnb_home: Path) -> None:
    before, before_drivers = set(chromium_children()), drivers()
    s = ocnb.Session(headless=True, home=ocnb_home)
    try:
        _killed_then_relaunched(s)
        assert len(drivers() - before_drivers) == 1  # the dead browser's Playwright driver was stopped
    finally:
        s.close()
    assert set(chromium_children()) - before == set()  # neither the dead browser nor the new one is left
    time.sleep(0.5)
    assert drivers() - before_drivers == set()


def _killed_then_relaunched(s: ocnb.Session) -> None:
    assert s.call("navigate", url="data:text/html,<title>One</title>1").ok
    assert s.call("tabs_create", url="data:text/html,<title>Two</title>2").ok
    old = kill_browser(s)

    crashed = s.call("read_page")
    assert crashed.error is not None and crashed.error.code == "BROWSER_CRASHED", crashed
    lost = crashed.error.details["lost_tabs"]
    assert [(t["tab_id"], t["url"]) for t in lost] == [
        ("t1", "data:text/html,<title>One</title>1"),
        ("t2", "data:text/html,<title>Two</title>2"),
    ]
    assert "t1 data:text/html" in crashed.error.message and "next call" in crashed.error.message

    again = s.call("navigate", url="data:text/html,<title>Back</title>b")  # relaunches
    assert again.ok, again
    assert again.data["title"] == "Back"
    assert s.call("read_page").ok
    assert not alive(old)
    assert browser_pid(s) != old
    health = s.call("oc_connection_health").data
    assert health["connected"] is True and health["crashes"] == 1

    rows = s.journal_df()
    codes = list(rows["error_code"].fillna(""))
    assert codes.count("BROWSER_CRASHED") == 1
    after = rows.iloc[codes.index("BROWSER_CRASHED") + 1]
    assert after["tool"] == "navigate" and "browser relaunched after a crash" in after["summary"]
    kinds = [e["kind"] for e in map(json.loads, _trace_lines(s))]
    assert "browser_crashed" in kinds and "browser_relaunched" in kinds


def _trace_lines(s: ocnb.Session) -> list[str]:
    return [line for f in sorted((s.home / "traces" / s.id).glob("*.jsonl")) for line in f.read_text().splitlines()]


def test_browser_killed_during_a_call(fresh_session: ocnb.Session) -> None:
    s = fresh_session
    assert s.call("navigate", url="data:text/html,<p>waiting</p>").ok
    pid = browser_pid(s)
    out: dict[str, Any] = {}
    t = threading.Thread(target=lambda: out.setdefault("r", s.call("wait_for", selector="#never", timeout_ms=20000)))
    t.start()
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    t.join(30)
    r = out["r"]
    assert r.error is not None and r.error.code == "BROWSER_CRASHED", r
    assert r.error.details["lost_tabs"][0]["url"] == "data:text/html,<p>waiting</p>"
    ok = s.call("navigate", url="about:blank")
    assert ok.ok, ok


def test_relaunch_over_the_api_and_health(fresh_session: ocnb.Session) -> None:
    s = fresh_session
    assert s.call("navigate", url="data:text/html,x").ok
    live = s.call("oc_connection_health", relaunch=True)  # a live browser is left alone
    assert live.ok and "relaunched" not in live.data and live.data["pages"] == 1
    assert s.call("tabs_context").data["tabs"][0]["url"] == "data:text/html,x"
    kill_browser(s)
    health = s.call("oc_connection_health")
    assert health.ok and health.data["connected"] is False
    assert health.data["crashed"]["lost_tabs"][0]["url"] == "data:text/html,x"
    relaunched = s.call("oc_connection_health", relaunch=True)
    assert relaunched.ok and relaunched.data["connected"] is True, relaunched
    assert relaunched.data["relaunched"]["after_crash"] is True
    assert s.call("navigate", url="about:blank").ok


def test_page_crash_gives_one_code(fresh_session: ocnb.Session) -> None:
    s = fresh_session
    assert s.call("navigate", url="data:text/html,<title>Crashy</title><button>b</button>").ok
    assert s.call("tabs_create", url="data:text/html,<title>Other</title>o").ok
    assert s.call("tabs_activate", tab_id="t1").ok

    async def crash() -> None:
        import asyncio

        page = s._state.tabs["t1"].page  # type: ignore[union-attr]
        cdp = await page.context.new_cdp_session(page)
        task = asyncio.ensure_future(cdp.send("Page.crash"))  # never answered: the renderer is gone
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        for _ in range(100):
            if s._state.tabs["t1"].crashed:  # type: ignore[union-attr]
                return
            await asyncio.sleep(0.05)

    s.run(crash(), 10)
    calls = [
        ("read_page", {}),
        ("javascript_tool", {"expression": "1 + 1"}),
        ("navigate", {"url": "data:text/html,again"}),
        ("interact", {"query": "b"}),
        ("find", {"query": "b"}),
        ("page_reload", {}),
        ("read_page", {"tab_id": "t1"}),
    ]
    codes = {name: s.call(name, args).error.code for name, args in calls}  # type: ignore[union-attr]
    assert set(codes.values()) == {"PAGE_CRASHED"}, codes
    assert s.call("no_such_tool").error.code == "UNKNOWN_TOOL"  # type: ignore[union-attr]
    assert s.call("read_page", mode="nope").error.code == "INVALID_ARGUMENT"  # type: ignore[union-attr]
    tabs = {t["tab_id"]: t for t in s.call("tabs_context").data["tabs"]}
    assert tabs["t1"].get("crashed") is True and tabs["t2"].get("crashed") is None
    assert s.call("read_page", tab_id="t2").ok  # the other tab is fine
    closed = s.call("tabs_close", tab_id="t1")
    assert closed.ok, closed
    assert s.call("navigate", url="data:text/html,fine").ok


def test_hung_tab_does_not_block_tabs_context(fresh_session: ocnb.Session) -> None:
    s = fresh_session
    assert s.call("navigate", url="data:text/html,<title>Calm</title>c").ok
    hang = "data:text/html,<title>Hang</title><script>setTimeout(() => { while (true) {} }, 200)</script>"
    assert s.call("tabs_create", url=hang).ok
    time.sleep(0.6)
    started = time.monotonic()
    r = s.call("tabs_context")
    took = time.monotonic() - started
    assert r.ok, r
    assert took < 3, took
    tabs = {t["tab_id"]: t for t in r.data["tabs"]}
    assert tabs["t1"]["responsive"] is True and tabs["t1"]["title"] == "Calm"
    assert tabs["t2"]["responsive"] is False
    assert tabs["t2"]["title"] == "Hang"  # the title known from tabs_create
    assert tabs["t2"]["url"] == hang
    assert s.call("tabs_close", tab_id="t2").ok
    assert s.call("tabs_context").data["tabs"][0]["responsive"] is True


def test_hung_tab_shows_the_title_of_the_page_it_loaded_by_itself(fresh_session: ocnb.Session, site) -> None:
    """The title of a page that navigated by itself (no ocnb call saw it) and then hung: the browser's."""
    s = fresh_session
    link = f"data:text/html,<title>First</title><a href='{site.page('index.html')}'>go</a>"
    assert s.call("navigate", url=link).ok
    assert s.call("javascript_tool", expression="() => { document.querySelector('a').click(); return 1; }").ok
    time.sleep(1.5)  # no ocnb call in between: only the page's own load event can tell the new title
    title = s.call(
        "javascript_tool", expression="() => { setTimeout(() => { while (true) {} }, 300); return document.title; }"
    )
    assert title.ok and title.data["result"] not in ("", "First"), title
    time.sleep(0.8)
    tabs = s.call("tabs_context").data["tabs"]
    assert tabs[0]["responsive"] is False
    assert tabs[0]["title"] == title.data["result"] and tabs[0]["url"] == site.page("index.html")


def test_hung_tab_shows_the_title_its_script_set_and_an_untitled_one_none(fresh_session: ocnb.Session) -> None:
    """A title a script sets after the load, then hangs: the title the page last had (a title read at
    load would say "Loaded"); a hung page with no title shows none, not its URL (which the browser
    shows in its place)."""
    s = fresh_session
    retitle = "() => { setTimeout(() => { document.title = 'Renamed'; setTimeout(() => { while (true) {} }, 100) }, 100); return 1; }"
    assert s.call("navigate", url="data:text/html,<title>Loaded</title>x").ok
    assert s.call("javascript_tool", expression=retitle).ok
    assert s.call("tabs_create", url="data:text/html,<p>untitled</p>").ok
    hang = "() => { setTimeout(() => { while (true) {} }, 100); return 1; }"
    assert s.call("javascript_tool", expression=hang).ok
    time.sleep(0.6)
    tabs = {t["tab_id"]: t for t in s.call("tabs_context").data["tabs"]}
    assert tabs["t1"]["responsive"] is False and tabs["t1"]["title"] == "Renamed", tabs
    assert tabs["t2"]["responsive"] is False and tabs["t2"]["title"] == "", tabs


@pytest.mark.parametrize(
    ("url", "code"),
    [("back", "INVALID_ARGUMENT"), ("forward", "INVALID_ARGUMENT"), ("http://127.0.0.1:9/", "NAVIGATION_FAILED")],
)
def test_failed_tabs_create_leaves_no_tab(session: ocnb.Session, url: str, code: str) -> None:
    s = session
    before = s.call("tabs_context").data
    r = s.call("tabs_create", url=url)
    assert r.error is not None and r.error.code == code, r
    after = s.call("tabs_context").data
    assert [t["tab_id"] for t in after["tabs"]] == [t["tab_id"] for t in before["tabs"]]
    assert after["active"] == before["active"]


def test_unresolvable_host_tabs_create_leaves_no_tab(session: ocnb.Session) -> None:
    before = session.call("tabs_context").data["tabs"]
    r = session.call("tabs_create", url="http://no-such-host.invalid/")
    assert r.error is not None and r.error.code == "NAVIGATION_FAILED"
    assert "closed" in r.error.message
    assert len(session.call("tabs_context").data["tabs"]) == len(before)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_killed_browser_over_mcp(ocnb_home: Path, anyio_backend: str) -> None:
    from mcp_shim_helpers import http_client, payload

    from ocnb.mcp import serve

    s = ocnb.Session(headless=True, home=ocnb_home)
    s.start()
    handle = serve(s, quiet=True)
    try:
        async with http_client(handle) as client:

            async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
                res = await client.call_tool(name, args)
                return dict(payload(res))

            assert (await call("navigate", {"url": "data:text/html,<title>M</title>m"}))["ok"]
            kill_browser(s)
            first = await call("navigate", {"url": "data:text/html,next"})
            assert first["ok"] is False and first["error"]["code"] == "BROWSER_CRASHED", first
            assert first["error"]["details"]["lost_tabs"][0]["url"] == "data:text/html,<title>M</title>m"
            second = await call("navigate", {"url": "data:text/html,<title>N</title>n"})
            assert second["ok"] is True and second["data"]["title"] == "N", second
            # and the explicit way, with no BROWSER_CRASHED in between
            kill_browser(s)
            health = await call("oc_connection_health", {"relaunch": True})
            assert health["ok"] and health["data"]["connected"] is True, health
            assert health["data"]["relaunched"]["lost_tabs"][0]["title"] == "N"
            assert (await call("navigate", {"url": "about:blank"}))["ok"]
    finally:
        handle.stop()
        s.close()


def browser_processes() -> set[int]:
    """Chromium browser processes (not renderers or helpers) descending from this process."""
    out = set()
    for pid in chromium_children():
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        argv0 = cmd.split(b"\0", 1)[0].rsplit(b"/", 1)[-1]
        if b"chrom" in argv0 and b"--type=" not in cmd:  # not a launcher script, a renderer or a helper
            out.add(pid)
    return out


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_killed_browser_over_mcp_stdio(tmp_path: Path, anyio_backend: str) -> None:
    """The stand-alone stdio server (``ocnb mcp``): its Chromium killed, it answers once and comes back."""
    from mcp.client import Client
    from mcp_shim_helpers import payload, server_params

    before = browser_processes()
    async with Client(server_params(tmp_path / "home")) as client:

        async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
            res = await client.call_tool(name, args)
            return dict(payload(res))

        assert (await call("navigate", {"url": "data:text/html,<title>S</title>s"}))["ok"]
        new = browser_processes() - before
        assert len(new) == 1, new
        os.kill(new.pop(), signal.SIGKILL)
        time.sleep(0.5)
        first = await call("read_page", {})
        assert first["ok"] is False and first["error"]["code"] == "BROWSER_CRASHED", first
        assert first["error"]["details"]["lost_tabs"] == [
            {"tab_id": "t1", "url": "data:text/html,<title>S</title>s", "title": "S"}
        ]
        second = await call("navigate", {"url": "data:text/html,<title>T</title>t"})
        assert second["ok"] is True and second["data"]["title"] == "T", second
        health = await call("oc_connection_health", {})
        assert health["data"]["connected"] is True and health["data"]["crashes"] == 1
    assert browser_processes() - before == set()


def test_a_tab_closed_under_a_call_is_target_closed_not_a_bad_argument(fresh_session: ocnb.Session) -> None:
    """A tab that closed without ocnb closing it (its page's ``window.close()``, or a dying browser,
    which closes every page a moment before it reports the disconnect) answers ``TARGET_CLOSED``, which a
    batch row retries on a new browser; only a tab id ocnb never had, or closed itself, is a bad argument."""
    s = fresh_session
    assert s.call("navigate", url="data:text/html,<p>one</p>").ok
    assert s.call("tabs_create", url="data:text/html,<p>two</p>").ok
    assert s.call("tabs_create", url="data:text/html,<p>three</p>").ok
    state: Any = s._state
    s.run(state.tabs["t2"].page.close(), 10)  # closed behind ocnb's back, as a crash or the page does
    deadline = time.monotonic() + 5
    while "t2" in state.tabs and time.monotonic() < deadline:
        time.sleep(0.02)
    gone = s.call("navigate", url="data:text/html,x", tab_id="t2")
    assert gone.error is not None and gone.error.code == "TARGET_CLOSED", gone
    assert "not by ocnb" in gone.error.message and "t1" in gone.error.message
    assert s.call("tabs_close", tab_id="t3").ok  # closed by ocnb: its id is simply not a tab any more
    for tab_id in ("t3", "t9"):
        bad = s.call("navigate", url="data:text/html,x", tab_id=tab_id)
        assert bad.error is not None and bad.error.code == "INVALID_ARGUMENT", bad
    assert s.call("navigate", url="data:text/html,<p>still here</p>", tab_id="t1").ok  # the browser is fine
