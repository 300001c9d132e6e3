"""The network guard (``ocnb/browser/proxy_guard.py``): an allow-list enforced by Chromium's proxy rules.

Read from the server's side: what a page's requests reached, for URL spellings whose answer depends
on how Chromium matches the bypass rules (subdomains, case, a trailing dot, numeric IPv4, WebSocket
schemes), compared with :meth:`OriginPolicy.check`; and from a raw client's side, what ocnb's proxy
reads of each kind of request and that it answers none of them.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

import ocnb
from ocnb.browser import launch
from ocnb.browser.proxy_guard import RefusingProxy, bypass_rules, covers
from ocnb.origins import OriginPolicy

from .origin_site import OriginSite

HTML = "text/html"


def test_the_proxy_enforces_an_allow_list_with_no_blocked_origin_inside_it() -> None:
    assert covers(OriginPolicy(["https://example.com"]))
    assert covers(OriginPolicy(["https://*.example.com"], ["https://example.org", "http://a.example.com"]))
    assert covers(OriginPolicy(["https://example.com:8443"], ["https://example.com:443"]))
    assert not covers(OriginPolicy(blocked=["https://example.com"]))  # a block-list alone: DevTools
    assert not covers(OriginPolicy())
    for blocked in ("https://a.example.com", "https://*.b.example.com", "https://*.com", "https://a.example.com:*"):
        assert not covers(OriginPolicy(["https://*.example.com"], [blocked])), blocked
    assert not covers(OriginPolicy(["http://127.0.0.1:*"], ["http://127.0.0.1:9"]))
    assert not covers(OriginPolicy(["http://localhost:8080"], ["http://localhost:*"]))


def test_bypass_rules_name_each_allowed_origin_for_every_scheme_that_reaches_its_server() -> None:
    rules = bypass_rules(OriginPolicy(["https://*.example.com", "http://127.0.0.1:*", "http://[::1]:8080"])).split(",")
    assert rules[0] == "<-loopback>"  # first: Chromium reads later rules first, loopback is proxied too
    assert set(rules[1:]) == {
        "https://*.example.com:443",
        "wss://*.example.com:443",
        "https://*.example.com.:443",
        "wss://*.example.com.:443",
        "http://127.0.0.1",
        "ws://127.0.0.1",
        "http://[::1]:8080",
        "ws://[::1]:8080",
    }


#: Every ``.test`` name reaches the loopback site when the browser resolves it (a refused one it never does).
RESOLVE = "--host-resolver-rules=MAP *.test 127.0.0.1, MAP *.test. 127.0.0.1"
launch_args_before = launch.launch_args


@pytest.mark.browser
def test_chromium_sends_straight_only_what_the_policy_allows(
    origin_site: OriginSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each spelling goes to the server exactly when :meth:`OriginPolicy.check` allows it: the browser's
    bypass matching and ocnb's policy agree (else an allowed request would be refused, or worse)."""
    monkeypatch.setattr(launch, "launch_args", lambda: [*launch_args_before(), RESOLVE])
    p = origin_site.port
    allowed = [f"http://127.0.0.1:{p}", f"http://*.example.test:{p}", "https://secure.test"]
    policy = OriginPolicy(allowed)
    urls = [
        f"http://a.example.test:{p}/s/sub",
        f"http://a.b.example.test:{p}/s/deep",
        f"http://A.Example.TEST:{p}/s/case",
        f"http://a.example.test.:{p}/s/dot",
        f"http://2130706433:{p}/s/numeric",
        f"http://0x7f.1:{p}/s/hex",
        f"http://example.test:{p}/s/bare",
        f"http://aexample.test:{p}/s/glued",
        f"http://a.example.test.evil.test:{p}/s/suffix",
        f"http://localhost:{p}/s/localhost",
        f"http://secure.test:{p}/s/scheme",
        f"http://a.example.test@evil.test:{p}/s/userinfo",
    ]
    sockets = [f"ws://a.example.test:{p}/s/ws_sub", f"ws://example.test:{p}/s/ws_bare"]
    loads = "".join(f"<img src='{u}'>" for u in urls)
    opens = "".join(f"try{{new WebSocket('{u}')}}catch(e){{}}" for u in sockets)
    origin_site.pages["/v/spellings"] = (HTML, f"{loads}<script>{opens}</script><img src='{{A}}/ok/spellings'>")
    s = ocnb.Session(headless=True, home=tmp_path, allowed_origins=allowed)
    try:
        s.call("navigate", url=f"{origin_site.allowed}/v/spellings")
        assert s.browser_state().origin_guard.network  # the proxy enforces it, no DevTools guard
        assert s.browser_state().browser_guard is None
        assert origin_site.wait_for("127.0.0.1:", "/ok/spellings")
        time.sleep(1.5)
        reached = {h.path for h in origin_site.log if h.path.startswith("/s/")}
        for url in urls + sockets:
            path = "/s/" + url.rsplit("/s/", 1)[1]
            assert (path in reached) == (policy.check(url) is None), (url, policy.check(url))
        refused = {b.url.rsplit("/s/", 1)[-1] for b in s.browser_state().origin_guard.log}
        assert refused >= {"bare", "glued", "suffix", "localhost", "scheme", "ws_bare"}
        assert not refused & {"sub", "deep", "case", "dot", "numeric", "hex", "ws_sub"}
    finally:
        s.close()


@pytest.mark.browser
def test_allowed_requests_never_reach_the_proxy_and_nothing_is_paused(origin_site: OriginSite, tmp_path: Path) -> None:
    """30 allowed images reach the server and none of them the proxy; the one refused image reaches
    only the proxy, which reports it to the call; no DevTools interceptor is on."""
    origin_site.pages["/v/direct"] = (
        HTML,
        "".join(f"<img src='{{A}}/ok/direct{i}.png'>" for i in range(30)) + "<img src='{B}/hit/direct.png'>",
    )
    s = ocnb.Session(headless=True, home=tmp_path, allowed_origins=["http://127.0.0.1:*"])
    try:
        result = s.call("navigate", url=f"{origin_site.allowed}/v/direct")
        state = s.browser_state()
        assert state.browser_guard is None and state._proxy is not None
        assert len({h.path for h in origin_site.hits("127.0.0.1:", "/ok/direct")}) == 30
        assert state._proxy.refused == 1 and origin_site.refused_hits("/hit/direct") == []
        assert [b["url"] for b in result.data["blocked"]] == [f"{origin_site.refused}/hit/direct.png"]
    finally:
        s.close()


@pytest.mark.browser
def test_a_persistent_profile_gets_the_proxy_at_launch(origin_site: OriginSite, tmp_path: Path) -> None:
    origin_site.pages["/v/profile"] = (HTML, "<img src='{B}/hit/profile'><img src='{A}/ok/profile'>")
    s = ocnb.Session(
        headless=True, home=tmp_path, user_data_dir=tmp_path / "profile", allowed_origins=["http://127.0.0.1:*"]
    )
    try:
        result = s.call("navigate", url=f"{origin_site.allowed}/v/profile")
        assert origin_site.wait_for("127.0.0.1:", "/ok/profile")
        assert s.browser_state().origin_guard.network
        assert origin_site.refused_hits("/hit/profile") == []
        assert [b["rule"] for b in result.data["blocked"]] == ["not in allowed_origins"]
    finally:
        s.close()


def test_the_proxy_reads_each_kind_of_request_and_answers_none() -> None:
    """A raw client's view: a plain request, a WebSocket through a tunnel, a tunnel to port 443, a TLS
    hello through a tunnel to another port, and garbage — each refused connection closes with no
    response (a tunnel's ``200``, or a ``403`` for port 443, aside), and the proxy reports the URL and
    kind it read."""

    async def scenario() -> tuple[list[tuple[str, str]], list[bytes]]:
        seen: list[tuple[str, str]] = []
        proxy = await RefusingProxy(lambda url, kind: seen.append((url, kind))).start()
        replies = []

        async def send(*chunks: bytes) -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            for chunk in chunks:
                writer.write(chunk)
                await writer.drain()
                await asyncio.sleep(0.05)
            replies.append(await asyncio.wait_for(reader.read(), 10))
            writer.close()

        await send(b"GET http://evil.test:81/a?b HTTP/1.1\r\nHost: evil.test:81\r\nSec-Fetch-Dest: image\r\n\r\n")
        await send(
            b"CONNECT evil.test:81 HTTP/1.1\r\nHost: evil.test:81\r\n\r\n",
            b"GET /sock HTTP/1.1\r\nHost: evil.test:81\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        )
        await send(b"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
        await send(b"CONNECT evil.test:8443 HTTP/1.1\r\nHost: evil.test:8443\r\n\r\n", b"\x16\x03\x01\x02\x00\x01")
        await send(b"not http at all\r\n\r\n")
        await proxy.close()
        return seen, replies

    seen, replies = asyncio.run(scenario())
    assert seen == [
        ("http://evil.test:81/a?b", "image"),
        ("ws://evil.test:81/sock", "websocket"),
        ("https://evil.test/", "other"),
        ("https://evil.test:8443/", "other"),
    ]
    assert replies[0] == b"" and replies[4] == b""  # nothing answered: the browser sees the request fail
    assert replies[1] == replies[3] == b"HTTP/1.1 200 Connection established\r\n\r\n"  # then closed
    assert replies[2].startswith(b"HTTP/1.1 403 ")  # port 443: TLS would tell no more, refused at once


@pytest.mark.browser
@pytest.mark.parametrize("target", ["https://refused.test/hit/tls", "https://refused.test:8443/hit/tls"])
def test_a_redirect_to_a_refused_https_origin_is_blocked_url(
    origin_site: OriginSite, tmp_path: Path, target: str
) -> None:
    """A tunnel is refused with what the proxy can know of it, the origin: the navigation is still
    ``BLOCKED_URL`` naming the rule and that origin."""
    s = ocnb.Session(headless=True, home=tmp_path, allowed_origins=["http://127.0.0.1:*"])
    try:
        result = s.call("navigate", url=f"{origin_site.allowed}/r302?to={target}")
        assert result.error is not None and result.error.code == "BLOCKED_URL", result
        assert result.error.details["rule"] == "not in allowed_origins"
        assert result.error.details["url"] == target.split("/hit/")[0] + "/"
        assert s.browser_state().origin_guard.network
    finally:
        s.close()


@pytest.mark.browser
def test_without_a_loopback_port_the_devtools_guard_takes_over(
    origin_site: OriginSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proxy cannot listen (no port to be had): the session still starts, its allow-list enforced
    by the DevTools guard — read from the server's log."""

    async def no_port(self: RefusingProxy) -> RefusingProxy:
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(RefusingProxy, "start", no_port)
    origin_site.pages["/v/no_port"] = (HTML, "<img src='{B}/hit/no_port'><img src='{A}/ok/no_port'>")
    s = ocnb.Session(headless=True, home=tmp_path, allowed_origins=["http://127.0.0.1:*"])
    try:
        result = s.call("navigate", url=f"{origin_site.allowed}/v/no_port")
        assert origin_site.wait_for("127.0.0.1:", "/ok/no_port")
        assert not s.browser_state().origin_guard.network and s.browser_state().browser_guard is not None
        assert origin_site.refused_hits("/hit/no_port") == []
        assert [b["rule"] for b in result.data["blocked"]] == ["not in allowed_origins"]
    finally:
        s.close()
