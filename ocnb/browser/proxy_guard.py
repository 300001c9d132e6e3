"""An allow-list enforced by Chromium's own network stack: a proxy that refuses every request sent to it.

A context whose policy has an allow-list (and no blocked pattern inside it: :func:`covers`) is created
with a proxy — Playwright's per-context ``proxy``, or a persistent profile's at launch — whose
**bypass rules are the allowed origins** (:func:`bypass_rules`). Chromium's network service decides
per request, inside the browser: a request to an allowed origin goes straight to its server; every
other one, whoever makes it — a page, popup or frame, a ``data:`` or ``blob:`` document, a dedicated,
shared or service worker, a WebSocket, a beacon, a prefetch, a download, each redirect hop — goes to
the proxy instead. The proxy is ocnb's own (:class:`RefusingProxy`), on loopback, in the browser
thread's loop: it reads the request's head, logs the refusal with the context's
:class:`~ocnb.browser.policy.OriginGuard` (what the call that caused it reports) and closes the
connection. Nothing is forwarded: no byte reaches the refused origin, whose name the browser does not
even resolve (a proxied request's host is the proxy's to resolve).

Why a proxy rather than DevTools ``Fetch`` (:mod:`ocnb.browser.fetch_guard`): DevTools patterns
cannot say "not these origins", so an allow-list pauses every request of the browser, and Chromium
puts an interceptor in every request's path once ``Fetch`` is on at all (``bench/bench_policy_pieces.py``:
1.08–1.15× a page load with nothing paused). Chromium's bypass rules are matched in the network
service at no measurable cost (``proxy_direct``: 0.98–1.00×); only refused requests cost a connection to
the proxy. WebSockets, workers and service workers need no gate of their own here: the network stack
sees them all.

What it reads of a refused request: a plain ``http:`` request arrives whole (``GET http://host/path``)
and its ``Sec-Fetch-Dest`` header (sent to loopback and ``https:`` origins) gives its kind; the
browser tunnels ``https:``, ``wss:`` and ``ws:`` through ``CONNECT host:port``. A tunnel to port 443 is
refused at once (``403``: TLS would tell no more than the origin); to another port the proxy accepts
it so as to read what comes first: a WebSocket handshake over ``ws:`` (its path) or a TLS hello (only
the origin is known). The browser sees the refused request fail (``net::ERR_EMPTY_RESPONSE``,
``net::ERR_TUNNEL_CONNECTION_FAILED``, or a TLS or connection error);
:class:`~ocnb.browser.policy.OriginReport` makes a refused navigation ``BLOCKED_URL`` by the log, not
by the error's text.

Where it does not apply, the DevTools guard does, as before: a browser ocnb attached to (its
contexts' proxies are not ocnb's to set), a policy with a blocked pattern inside an allowed one (the
bypass rules cannot carve it out), a block-list alone (bypass rules cannot say "all but these").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from ..origins import OriginPattern, OriginPolicy

__all__ = ["RefusingProxy", "bypass_rules", "covers", "open_proxy"]

#: False: every policy is enforced by the DevTools guard (tests of that guard; the bench's comparison).
USE = True
#: Bytes of a request's head the proxy reads at most, and how long it waits for them.
HEAD_MAX = 64 * 1024
READ_S = 5.0
#: ``Sec-Fetch-Dest`` as Playwright names a request's resource type.
_KIND_OF_DEST = {
    "document": "document",
    "iframe": "document",
    "frame": "document",
    "embed": "document",
    "object": "document",
    "style": "stylesheet",
    "image": "image",
    "font": "font",
    "audio": "media",
    "video": "media",
    "track": "texttrack",
    "manifest": "manifest",
    "empty": "fetch",
    "script": "script",
    "worker": "script",
    "sharedworker": "script",
    "serviceworker": "script",
    "audioworklet": "script",
    "paintworklet": "script",
    "xslt": "script",
    "report": "fetch",
}
_WS_OF = {"http": "ws", "https": "wss"}


def _overlap(a: OriginPattern, b: OriginPattern) -> bool:
    """Whether some origin matches both patterns."""
    if a.scheme != b.scheme or (a.port is not None and b.port is not None and a.port != b.port):
        return False
    if not a.subdomains and not b.subdomains:
        return a.host == b.host
    if a.subdomains and b.subdomains:
        return a.host == b.host or a.host.endswith("." + b.host) or b.host.endswith("." + a.host)
    exact, sub = (a, b) if b.subdomains else (b, a)
    return exact.host.endswith("." + sub.host)


def covers(policy: OriginPolicy) -> bool:
    """Whether the proxy alone enforces ``policy``: it has an allow-list, and no blocked pattern matches
    an origin an allowed one does (those the bypass rules would let go straight to their server)."""
    return bool(policy.allowed) and not any(_overlap(a, b) for a in policy.allowed for b in policy.blocked)


def bypass_rules(policy: OriginPolicy) -> str:
    """Chromium's proxy bypass list for ``policy``'s allowed origins: the requests sent straight to their server.

    Each pattern gives a rule per scheme that reaches its server (``http`` and ``ws``, ``https`` and
    ``wss``), with its port when the pattern names one (Chromium compares the URL's effective port:
    ``https://x`` is ``https://x:443``), its host as the browser writes it (ASCII, lower case; a
    ``*.`` pattern as Chromium's ``*.host``: subdomains only) and, for a name, with a trailing dot too
    (``http://x./`` reaches ``x``). ``<-loopback>`` comes first: loopback and link-local hosts, which
    Chromium otherwise never proxies, pass the rules like any other."""
    rules = ["<-loopback>"]
    for p in policy.allowed:
        port = "" if p.port is None else f":{p.port}"
        hosts = [p.host]
        if not p.host.startswith("[") and not p.host.replace(".", "").isdigit():
            hosts.append(p.host + ".")
        for host in hosts:
            host = f"*.{host}" if p.subdomains else host
            for scheme in (p.scheme, _WS_OF[p.scheme]):
                rule = f"{scheme}://{host}{port}"
                if rule not in rules:
                    rules.append(rule)
    return ",".join(rules)


def _head(data: bytes) -> tuple[str, str, dict[str, str]] | None:
    """The method, target and headers (lower-case names) of an HTTP request head; None if it is not one."""
    lines = data.decode("latin-1").split("\r\n")  # latin-1 decodes any bytes
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return parts[0].upper(), parts[1], headers


def _kind(headers: dict[str, str]) -> str:
    if "websocket" in headers.get("upgrade", "").lower():
        return "websocket"
    return _KIND_OF_DEST.get(headers.get("sec-fetch-dest", "").lower(), "other")


class RefusingProxy:
    """ocnb's proxy for one context: every request that reaches it is refused and reported.

    ``report(url, kind)`` is called once per refused request (the context's guard, set once it exists:
    :attr:`report`). :meth:`start` listens on a free loopback port; :meth:`options` is the context's
    Playwright ``proxy`` setting for a policy."""

    def __init__(self, report: Callable[[str, str], object] | None = None) -> None:
        self.report = report
        self.server: asyncio.AbstractServer | None = None
        self.port = 0
        #: Requests refused so far (the bench's count).
        self.refused = 0
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> RefusingProxy:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_MAX)
        self.port = int(self.server.sockets[0].getsockname()[1])
        return self

    def options(self, policy: OriginPolicy) -> dict[str, str]:
        """Playwright's ``proxy`` setting: this proxy, bypassed by ``policy``'s allowed origins."""
        return {"server": f"http://127.0.0.1:{self.port}", "bypass": bypass_rules(policy)}

    async def close(self) -> None:
        if self.server is None:
            return
        self.server.close()
        for writer in list(self._writers):
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.server.wait_closed(), 2)
        self.server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            url, kind = await self._read(reader, writer)
            if url:
                self.refused += 1
                if self.report is not None:
                    self.report(url, kind)
        except Exception:  # noqa: BLE001 - a broken or slow request: refused all the same
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[str, str]:
        """The refused request's URL and kind, read from its head (and, for a tunnel, what comes first in it)."""
        head = _head(await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_S))
        if head is None:
            return "", ""
        method, target, headers = head
        if method != "CONNECT":  # a plain http: request, whole (absolute-form)
            if target.startswith("http://") and _kind(headers) == "websocket":
                target = "ws://" + target[len("http://") :]
            return target, _kind(headers)
        host, _, port = target.rpartition(":")
        if port == "443":  # https: or wss: — TLS would tell no more than the origin: refused at once
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return f"https://{host}/", "other"
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")  # to see what the tunnel carries
        await writer.drain()
        first = b""
        with contextlib.suppress(Exception):
            first = await asyncio.wait_for(reader.read(HEAD_MAX), READ_S)
        inner = _head(first.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n") if first[:1] not in (b"", b"\x16") else None
        if inner is not None:  # ws: (or http:) through the tunnel: its path and kind
            kind = _kind(inner[2])
            scheme = "ws" if kind == "websocket" else "http"
            suffix = "" if port == "80" else f":{port}"
            return f"{scheme}://{host}{suffix}{inner[1]}", kind
        return f"https://{host}:{port}/", "other"  # TLS (https: or wss:): only the origin is known


async def open_proxy() -> RefusingProxy | None:
    """A started :class:`RefusingProxy`; None when no loopback port can be had (the DevTools guard then)."""
    try:
        return await RefusingProxy().start()
    except OSError:
        return None
