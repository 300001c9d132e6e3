"""Origin patterns and the origin policy (DESIGN §6, issue 30 §1): which origins a session may reach.

A pattern is an origin, ``scheme://host[:port]``, where ``*`` may stand for the port
(``http://localhost:*``) or for one or more leading host labels (``https://*.example.com`` matches
``a.example.com`` and ``a.b.example.com``, not ``example.com``)::

    >>> p = OriginPolicy(allowed=["https://*.example.com", "http://127.0.0.1:*"], blocked=["https://bad.example.com"])
    >>> p.check("https://www.example.com/a"), p.check("http://127.0.0.1:8080/")
    (None, None)
    >>> p.check("https://bad.example.com/x")
    'blocked_origins: https://bad.example.com'
    >>> p.check("https://example.org/")
    'not in allowed_origins'

A blocked match wins over an allowed one; an empty allow-list allows every origin not blocked. The
policy judges where a request goes (its URL), whoever makes it. How a URL maps to an origin:

- ``http``/``https``: scheme, host and port, as the browser writes them. Hosts are compared in ASCII
  (IDNA: ``bücher.de`` is ``xn--bcher-kva.de``), lower case, without a trailing dot (``example.com.``
  reaches the same server as ``example.com``); IPv4 in any form the browser accepts (``2130706433``,
  ``0x7f.1``) is read as its dotted form, IPv6 in its compressed form; default ports are folded
  (``https://x`` is ``https://x:443``); userinfo is not part of the host (``http://ok@evil`` is ``evil``);
  ``\\`` is ``/`` and tabs and newlines are dropped, as the browser does.
- ``ws``/``wss``: a WebSocket goes to the server of the same host and port: it is checked as
  ``http``/``https``.
- ``blob:`` and ``filesystem:`` URLs carry their creator's origin (``blob:https://a.com/uuid`` is
  ``https://a.com``) and are checked as it; one with an opaque creator (``blob:null/…``) names no
  server and sends nothing.
- ``data:``, ``about:blank``, ``about:srcdoc`` and ``javascript:`` load nothing from a server: they
  are not checked. A document they make has an opaque origin, and every request *it* makes is
  checked by its own URL like any other.
- Any other scheme (``file:``, ``chrome:`` …) names no network origin; what ``navigate`` may open is
  decided by the scheme rule (:mod:`ocnb.urls`), and the browser keeps web pages from loading them.

A malformed pattern is :class:`~ocnb.errors.InvalidArgument` naming it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import InvalidArgument

__all__ = [
    "Origin",
    "OriginPattern",
    "OriginPolicy",
    "origin_of",
    "parse_origin",
    "parse_pattern",
    "parse_patterns",
    "split_patterns",
]

_SCHEMES_OF = {"http": "(?:http|ws)", "https": "(?:https|wss)"}

DEFAULT_PORTS = {"http": 80, "https": 443}
#: WebSocket schemes are checked as the HTTP scheme of the same server.
_FOLD_SCHEME = {"ws": "http", "wss": "https", "http": "http", "https": "https"}
#: URLs that load nothing from a server (their documents' own requests are checked one by one).
NO_ORIGIN_SCHEMES = frozenset({"data", "about", "javascript"})
_PATTERN = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>\[[^\]]*\]|[^:/?#\[\]@]+)(?::(?P<port>[^/?#]*))?/?$")
#: What the browser strips from both ends of a URL.
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$")


@dataclass(frozen=True)
class Origin:
    """A network origin: scheme (``http`` or ``https``), ASCII host, port."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    @property
    def serialized(self) -> str:
        """As a browser writes it (``Origin`` header): the scheme's default port left out."""
        default = DEFAULT_PORTS.get(self.scheme)
        return f"{self.scheme}://{self.host}" if self.port == default else str(self)


@dataclass(frozen=True)
class OriginPattern:
    """One parsed pattern: ``text`` as written; ``host`` without its ``*.`` when ``subdomains``."""

    text: str
    scheme: str
    host: str
    subdomains: bool
    port: int | None  # None: any port

    def matches(self, origin: Origin | str | None) -> bool:
        """Whether ``origin`` (an :class:`Origin`, or any URL or origin string) is one this covers."""
        if isinstance(origin, str):
            origin = parse_origin(origin)
        if origin is None:
            return False
        if origin.scheme != self.scheme or (self.port is not None and origin.port != self.port):
            return False
        if self.subdomains:
            return origin.host.endswith("." + self.host)
        return origin.host == self.host

    def __str__(self) -> str:
        return self.text


def _ascii_host(host: str) -> str | None:
    """The host as the browser compares it: IDNA ASCII, lower case, no trailing dot; None if invalid."""
    host = host.strip().lower().rstrip(".")
    if not host:
        return None
    if host.startswith("["):
        if not host.endswith("]"):
            return None
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            return None
    if re.fullmatch(r"\d+|0x[0-9a-f]*", host.split(".")[-1]):
        # The browser reads a host whose last label is numeric as IPv4 (decimal, octal or hex parts).
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None
    return host


def parse_origin(url: str) -> Origin | None:
    """The network origin a request to ``url`` goes to, or None when it goes to no server.

    Raises :class:`InvalidArgument` for an http(s) URL without a readable host.
    """
    text = re.sub(r"[\t\n\r]", "", url).strip(_C0_AND_SPACE)
    scheme, sep, rest = text.partition(":")
    scheme = scheme.lower()
    if not sep or not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme):
        return None
    if scheme in ("blob", "filesystem"):
        return parse_origin(rest) if _FOLD_SCHEME.get(rest.partition(":")[0].lower()) else None
    if scheme not in _FOLD_SCHEME:
        return None
    folded = _FOLD_SCHEME[scheme]
    rest = rest.replace("\\", "/").lstrip("/")  # special schemes: any run of slashes, and \ as /
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    authority = authority.rpartition("@")[2]  # userinfo is not the host
    match = re.fullmatch(r"(\[[^\]]*\]|[^:]*)(?::(\d*))?", authority)
    host = _ascii_host(match.group(1)) if match else None
    if host is None:
        raise InvalidArgument(f"url {url!r} has no valid host", details={"url": url})
    port_text = match.group(2) if match else None
    port = int(port_text) if port_text else DEFAULT_PORTS[folded]
    if port > 65535:
        raise InvalidArgument(f"url {url!r} has an invalid port", details={"url": url})
    return Origin(folded, host, port)


def parse_pattern(text: str) -> OriginPattern:
    """Parse one origin pattern; a malformed one is :class:`InvalidArgument` naming it."""
    raw = str(text).strip()

    def bad(why: str) -> InvalidArgument:
        return InvalidArgument(
            f"origin pattern {raw!r} is malformed: {why}; write scheme://host[:port], e.g. "
            "https://example.com, https://*.example.com or http://localhost:*",
            details={"pattern": raw},
        )

    m = _PATTERN.match(raw.lower())
    if not m:
        if "@" in raw:
            raise bad("it has userinfo (user@)")
        if "://" in raw and re.search(r"://[^/]*/.", raw):
            raise bad("an origin has no path, query or fragment")
        raise bad("it is not scheme://host[:port]")
    scheme = _FOLD_SCHEME.get(m.group("scheme"))
    if scheme is None:
        raise bad("the scheme must be http, https, ws or wss")
    host_text, port_text = m.group("host"), m.group("port")
    subdomains = host_text.startswith("*.")
    if subdomains:
        host_text = host_text[2:]
    if "*" in host_text:
        raise bad("* may stand only for leading host labels (*.example.com) or the port (:*)")
    host = _ascii_host(host_text)
    if host is None or (
        not host.startswith("[")
        and not re.fullmatch(r"[\d.]+", host)
        and not all(_LABEL.match(label) for label in host.split("."))
    ):
        raise bad(f"{host_text!r} is not a host name")
    if subdomains and (host.startswith("[") or re.fullmatch(r"[\d.]+", host)):
        raise bad("*. goes only before a host name, not an IP address")
    port: int | None
    if port_text is None or port_text == "":
        if port_text == "":
            raise bad("the port is empty")
        port = DEFAULT_PORTS[scheme]
    elif port_text == "*":
        port = None
    elif port_text.isdigit() and 0 < int(port_text) <= 65535:
        port = int(port_text)
    else:
        raise bad(f"port {port_text!r} is not 1-65535 or *")
    return OriginPattern(raw, scheme, host, subdomains, port)


def split_patterns(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """Patterns as a tuple of strings: a ``;``-separated string (as Playwright MCP writes them) or a list."""
    if value is None:
        return ()
    items = value.split(";") if isinstance(value, str) else [str(v) for v in value]
    return tuple(item.strip() for item in items if item.strip())


class OriginPolicy:
    """Allowed and blocked origin patterns, and the one :meth:`check` every request passes."""

    def __init__(self, allowed: Iterable[str] = (), blocked: Iterable[str] = ()) -> None:
        self.allowed = tuple(parse_pattern(p) for p in split_patterns(allowed))
        self.blocked = tuple(parse_pattern(p) for p in split_patterns(blocked))

    def __bool__(self) -> bool:
        """True when the policy refuses anything (some pattern is set)."""
        return bool(self.allowed or self.blocked)

    def __repr__(self) -> str:
        return f"OriginPolicy(allowed={[p.text for p in self.allowed]}, blocked={[p.text for p in self.blocked]})"

    def check(self, url: str) -> str | None:
        """None when a request to ``url`` may go; else the rule that refuses it, as text.

        ``blocked_origins: <pattern>`` names the blocked pattern that matched; ``not in allowed_origins``
        says no allowed pattern did. A URL whose host cannot be read is refused (``invalid host``).
        """
        if not self:
            return None
        try:
            origin = parse_origin(url)
        except InvalidArgument:
            return "invalid host"
        if origin is None:
            return None
        for pattern in self.blocked:
            if pattern.matches(origin):
                return f"blocked_origins: {pattern.text}"
        if self.allowed and not any(p.matches(origin) for p in self.allowed):
            return "not in allowed_origins"
        return None

    def suspects(self) -> re.Pattern[str]:
        """A regex (JavaScript-compatible) matching every URL :meth:`check` might refuse, and more.

        A URL it does not match is allowed for sure: it starts with an allowed origin, written as the
        browser writes it (no userinfo, the exact host or a subdomain, the port), and names no blocked
        host anywhere in its authority. The browser-side route asks :meth:`check` only about the
        others, so allowed requests cost no round trip to Python.
        """
        allowed = []
        for p in self.allowed:
            host = re.escape(p.host)
            host = rf"(?:[a-z0-9_-]+\.)+{host}" if p.subdomains else host
            if p.port is None:
                port = r"(?::\d+)?"
            elif p.port == DEFAULT_PORTS[p.scheme]:
                port = rf"(?::{p.port})?"
            else:
                port = rf":{p.port}"
            allowed.append(rf"{_SCHEMES_OF[p.scheme]}://{host}{port}(?:[/?#]|$)")
        blocked = [
            rf"(?:blob:|filesystem:)?[a-z][a-z0-9+.-]*://(?:[^/?#]*[@.])?{re.escape(p.host)}" for p in self.blocked
        ]
        parts = []
        if blocked:
            parts.append("(?:" + "|".join(blocked) + ")")
        if allowed:
            parts.append("(?!" + "|".join(allowed) + ")")
        return re.compile("^(?:" + "|".join(parts) + ")" if parts else "^(?!)", re.IGNORECASE)

    def origin_regexes(self) -> tuple[str | None, str | None]:
        """JavaScript regexes of the allowed and the blocked origins, for code that cannot ask Python.

        Each matches an origin written ``scheme://host:port`` — the scheme folded to ``http:`` /
        ``https:``, the host as :func:`parse_origin` writes it (a URL parser's host without its
        trailing dot), the port always written. :meth:`check` refuses exactly the origins that match
        the blocked one, or (when an allow-list is set) do not match the allowed one; None stands for
        an empty list. A worker's WebSocket gate uses them (:mod:`ocnb.browser.ws_guard`).
        """

        def union(patterns: tuple[OriginPattern, ...]) -> str | None:
            if not patterns:
                return None
            each = []
            for p in patterns:
                host = re.escape(p.host)
                host = rf"[^/]+\.{host}" if p.subdomains else host
                port = r"\d+" if p.port is None else str(p.port)
                each.append(rf"{p.scheme}://{host}:{port}")
            return "^(?:" + "|".join(each) + ")$"

        return union(self.allowed), union(self.blocked)


def origin_of(url: str) -> str | None:
    """The origin of ``url`` as a browser writes it (``https://ex.com``, ``http://localhost:8080``), or
    ``None`` when it reaches no server (``data:``, ``about:``, ``file:``…). See :func:`parse_origin`."""
    try:
        origin = parse_origin(url)
    except InvalidArgument:  # an http(s) URL without a readable host reaches no server
        return None
    return None if origin is None else origin.serialized


def parse_patterns(value: str | Iterable[str] | None) -> tuple[OriginPattern, ...]:
    """``;``-separated patterns (or a list of them), each parsed; the first malformed one is
    ``INVALID_ARGUMENT`` naming it."""
    return tuple(parse_pattern(p) for p in split_patterns(value))
