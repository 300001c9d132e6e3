"""``--isolated``: each MCP client (over HTTP, the SDK's own client) gets a browser context of its own.

What a client can see is read from the client side (``tabs_context``) and at the server (the
``Cookie`` header each request carried, and which requests arrived at all), never from what ocnb says.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import mcp_types as types
import pytest
from mcp_shim_helpers import http_client, payload

import ocnb
from ocnb.mcp import serve

pytestmark = pytest.mark.anyio


@dataclass
class CookieSite:
    """A loopback site answering as 127.0.0.1 and localhost that logs each request with its Cookie header."""

    port: int
    log: list[dict[str, Any]] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def hits(self, path: str) -> list[dict[str, Any]]:
        return [r for r in list(self.log) if r["path"].split("?")[0] == path]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        site = self.server.site
        site.log.append({"host": self.headers.get("Host"), "path": self.path, "cookie": self.headers.get("Cookie")})
        path, _, query = self.path.partition("?")
        body = f"<title>{path}</title><p>{path}</p>"
        self.send_response(302 if path == "/hop" else 200)
        if path == "/login":  # ?who=NAME: the server sets the cookie
            self.send_header("Set-Cookie", f"who={query.partition('=')[2]}; Path=/")
        if path == "/hop":  # a redirect to the other origin: no route sees its second hop, only the guards
            self.send_header("Location", f"http://localhost:{site.port}/leak-by-redirect.png")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path == "/embed":  # subresources from the other origin (refused under the policy)
            body += f'<img src="http://localhost:{site.port}/leak.png"><img src="/hop">'
        data = body.encode()
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: CookieSite


@contextmanager
def cookie_site() -> Iterator[CookieSite]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.site = CookieSite(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.site
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def site_log() -> Iterator[CookieSite]:
    with cookie_site() as site:
        yield site


def named(name: str) -> dict[str, Any]:
    return {"client_info": types.Implementation(name=name, version="1")}


async def call(client: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await client.call_tool(tool, args))


def contexts(session: ocnb.Session) -> int:
    return session.run(_contexts(session))


async def _contexts(session: ocnb.Session) -> int:
    return len(session.browser_state().browser.contexts)


async def test_two_isolated_clients_see_neither_tabs_nor_cookies_of_the_other(
    fresh_session: ocnb.Session, site_log: CookieSite
) -> None:
    s = fresh_session
    handle = serve(s, quiet=True, isolated=True)
    try:
        s.navigate(url=site_log.url("/person"))  # the person's own tab, in the kernel's context
        assert contexts(s) == 1
        async with http_client(handle, **named("agent-a")) as a, http_client(handle, **named("agent-b")) as b:
            assert (await call(a, "navigate", url=site_log.url("/login?who=alice")))["ok"]
            assert (await call(b, "navigate", url=site_log.url("/login?who=bob")))["ok"]
            assert (await call(a, "tabs_create", url=site_log.url("/a-second-tab")))["ok"]
            assert contexts(s) == 3  # the person's, a's and b's: one browser

            # the tabs each client sees are its own
            tabs_a = [t["url"] for t in (await call(a, "tabs_context"))["data"]["tabs"]]
            tabs_b = [t["url"] for t in (await call(b, "tabs_context"))["data"]["tabs"]]
            assert sorted(tabs_a) == sorted([site_log.url("/login?who=alice"), site_log.url("/a-second-tab")])
            assert tabs_b == [site_log.url("/login?who=bob")]
            assert [t["url"] for t in s.tabs_context().data["tabs"]] == [site_log.url("/person")]

            # the cookies each client's requests carry, read at the server
            assert (await call(a, "navigate", url=site_log.url("/whoami-a")))["ok"]
            assert (await call(b, "navigate", url=site_log.url("/whoami-b")))["ok"]
            s.navigate(url=site_log.url("/whoami-person"))
            assert [h["cookie"] for h in site_log.hits("/whoami-a")] == ["who=alice"]
            assert [h["cookie"] for h in site_log.hits("/whoami-b")] == ["who=bob"]
            assert [h["cookie"] for h in site_log.hits("/whoami-person")] == [None]

            status = handle.status()
            assert status["isolated"] is True
            assert sorted(c["client"] for c in status["clients"]) == ["agent-a", "agent-b"]

        # both clients gone (their HTTP sessions deleted): their contexts are closed
        for _ in range(100):
            if contexts(s) == 1:
                break
            await asyncio.sleep(0.1)
        assert contexts(s) == 1
        assert handle.status()["clients"] == []
        assert [t["url"] for t in s.tabs_context().data["tabs"]] == [site_log.url("/whoami-person")]

        # each client's calls are in the journal on disk, under its own name
        df = ocnb.journal_df(home=s.home)
        mcp = df[df["source"] == "mcp"]
        by_client = mcp.groupby("client")["tool"].apply(list).to_dict()
        assert by_client["agent-a"] == ["navigate", "tabs_create", "tabs_context", "navigate"]
        assert by_client["agent-b"] == ["navigate", "tabs_context", "navigate"]
        assert mcp[mcp["client"] == "agent-a"]["session_id"].nunique() == 1
        assert set(mcp["session_id"]).isdisjoint({s.id})  # each client's context is a session of its own
        person = df[df["session_id"] == s.id]
        assert person["client"].isna().all()
    finally:
        handle.stop()


async def test_a_client_disconnecting_closes_its_context_and_the_server_stop_closes_the_rest(
    fresh_session: ocnb.Session, site_log: CookieSite
) -> None:
    s = fresh_session
    handle = serve(s, quiet=True, isolated=True)
    try:
        async with http_client(handle, **named("stays")) as stays:
            async with http_client(handle, **named("leaves")) as leaves:
                assert (await call(leaves, "navigate", url=site_log.url("/leaves")))["ok"]
                assert (await call(stays, "navigate", url=site_log.url("/stays")))["ok"]
                assert contexts(s) == 3
            for _ in range(100):
                if contexts(s) == 2:
                    break
                await asyncio.sleep(0.1)
            assert contexts(s) == 2
            assert [c["client"] for c in handle.status()["clients"]] == ["stays"]
            handle.stop()  # the server stops while "stays" is connected
            assert contexts(s) == 1
    finally:
        handle.stop()
    assert not s.closed  # the served session stays the person's


@pytest.mark.parametrize("policy", ["allowed_origins", "blocked_origins"])
async def test_the_origin_policy_holds_for_an_isolated_client(
    ocnb_home: Any, site_log: CookieSite, policy: str
) -> None:
    """Both guards: an allow-list is enforced by the context's proxy, a block-list by the browser-level
    DevTools guard (which the client's context joins); nothing reaches the refused origin."""
    rule = f"http://127.0.0.1:{site_log.port}" if policy == "allowed_origins" else f"http://localhost:{site_log.port}"
    with ocnb.Session(**{policy: [rule]}) as s:
        s.start()
        handle = serve(s, quiet=True, isolated=True)
        try:
            async with http_client(handle, **named("fenced")) as agent:
                site_log.log.clear()
                refused = await call(agent, "navigate", url=site_log.url("/secret", host="localhost"))
                assert not refused["ok"] and refused["error"]["code"] == "BLOCKED_URL"
                embed = await call(agent, "navigate", url=site_log.url("/embed"))
                assert embed["ok"]
                await call(agent, "wait_for", time_ms=500)
                assert site_log.hits("/embed") and site_log.hits("/hop")  # the allowed origin was reached ...
                assert [h for h in site_log.log if str(h["host"]).startswith("localhost")] == []  # ... the other never
                journal = ocnb.journal_df(home=s.home)
                mine = journal[(journal["client"] == "fenced") & (journal["tool"] == "navigate")]
                assert list(mine["error_code"].fillna("")) == ["BLOCKED_URL", ""]
        finally:
            handle.stop()


async def test_a_sessionless_client_is_sent_to_the_handshake(fresh_session: ocnb.Session) -> None:
    """A 2026-era client has no session to key a context on: ``mode="auto"`` falls back to the
    handshake (as the default client does above); a client pinned to the 2026 protocol is refused."""
    handle = serve(fresh_session, quiet=True, isolated=True)
    try:
        async with http_client(handle, mode="2026-07-28") as modern:
            with pytest.raises(Exception, match="isolated"):
                await modern.list_tools()
        assert fresh_session.state is None or contexts(fresh_session) <= 1
    finally:
        handle.stop()


async def test_the_live_view_watches_an_isolated_client_and_comes_back(
    fresh_session: ocnb.Session, site_log: CookieSite
) -> None:
    from ocnb.widgets import BrowserView

    s = fresh_session
    s.navigate(url=site_log.url("/person-view"))
    handle = serve(s, quiet=True, isolated=True)
    view = BrowserView(s, auto_refresh=False)
    try:
        with pytest.raises(LookupError, match="no client"):
            handle.client_session()
        async with http_client(handle, **named("watched")) as agent:
            assert (await call(agent, "navigate", url=site_log.url("/agent-view")))["ok"]
            await asyncio.to_thread(view.watch, handle.client_session("watched"))
            assert view.url == site_log.url("/agent-view") and view.session_id != s.id
            await asyncio.to_thread(view.watch)  # back to the person's session
            assert view.url == site_log.url("/person-view") and view.session_id == s.id
            await asyncio.to_thread(view.watch, handle.client_session())  # the only client connected
        for _ in range(100):  # the client left: its session closed, the view is back on the person's
            if view.session_id == s.id:
                break
            await asyncio.sleep(0.1)
        assert view.session_id == s.id and view.attached
        assert "closed; showing" in view.status.value
    finally:
        view.close()
        handle.stop()


async def test_ocnb_mcp_isolated_over_stdio(tmp_path: Any, site_log: CookieSite) -> None:
    from mcp.client import Client
    from mcp_shim_helpers import server_params

    async with Client(server_params(tmp_path, "--isolated"), **named("stdio-agent")) as agent:
        assert (await call(agent, "navigate", url=site_log.url("/stdio")))["ok"]
        assert [t["url"] for t in (await call(agent, "tabs_context"))["data"]["tabs"]] == [site_log.url("/stdio")]
    journal = ocnb.journal_df(home=tmp_path)
    assert journal["client"].tolist() == ["stdio-agent", "stdio-agent"]
