"""Origins and origin patterns: ``scheme://host[:port]``, with ``*`` for leading host labels or the port.

A pattern is an origin (``https://example.com``, ``http://127.0.0.1:8080``) in which ``*`` may stand
for one or more leading host labels (``https://*.example.com`` matches ``https://a.b.example.com``,
not ``https://example.com``) or for the port (``http://localhost:*`` matches every port, the default
one too). Hosts compare in lower case; a default port (80 for http, 443 for https) is folded away, so
``https://example.com:443`` is ``https://example.com``. A URL whose origin is opaque (``data:``,
``about:blank``, ``blob:`` of an opaque origin, ``file:``) has no origin and matches no pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from .errors import InvalidArgument

__all__ = ["OriginPattern", "origin_of", "parse_pattern", "parse_patterns"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_SCHEMES = ("http", "https", "ws", "wss")
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOST_RE = re.compile(rf"(?:\*\.)?(?:{_LABEL}\.)*{_LABEL}\.?|\[[0-9a-f:.]+\]")
_PATTERN_RE = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>\[[^\]]*\]|[^:/]*)(?::(?P<port>\*|\d{1,5}))?/?$")


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of ``url`` (lower-case host, default port left out), or ``None``
    when its origin is opaque (``data:``, ``about:``, ``file:``, no host) or it cannot be parsed.

    A ``blob:`` URL has the origin of the URL inside it (``blob:https://a.example/…``).
    """
    text = url.strip()
    if text.lower().startswith("blob:"):
        text = text[5:]
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _SCHEMES or not host:
        return None
    host = f"[{host}]" if ":" in host else host.rstrip(".")
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


@dataclass(frozen=True)
class OriginPattern:
    """One parsed pattern (see the module docstring); ``text`` is how it was written."""

    text: str
    scheme: str
    #: The host, or the suffix after ``*.`` when ``wildcard_host``.
    host: str
    #: The port (``None``: the scheme's default), or ``"*"`` for any.
    port: int | str | None
    wildcard_host: bool = False

    def matches(self, origin: str | None) -> bool:
        """Whether ``origin`` (as :func:`origin_of` gives it, or any URL) is one this pattern covers."""
        if origin is None:
            return False
        folded = origin_of(origin)
        if folded is None:
            return False
        parts = urlsplit(folded)
        if parts.scheme != self.scheme:
            return False
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        if self.wildcard_host:
            if not host.endswith("." + self.host):
                return False
        elif host != self.host:
            return False
        if self.port == "*":
            return True
        return parts.port == self.port  # both None when the origin is on the default port

    def __str__(self) -> str:
        return self.text


def parse_pattern(text: str) -> OriginPattern:
    """Parse one origin pattern; a malformed one is ``INVALID_ARGUMENT`` naming it."""

    if not isinstance(text, str):
        raise InvalidArgument(f"an origin pattern must be a string, not {type(text).__name__}")
    raw = text.strip()

    def bad(why: str) -> InvalidArgument:
        return InvalidArgument(f"malformed origin pattern {raw!r}: {why}", details={"pattern": raw})

    m = _PATTERN_RE.match(raw.lower())
    if m is None:
        raise bad("write scheme://host[:port], e.g. https://*.example.com or http://localhost:*")
    scheme, host, port_text = m.group("scheme"), m.group("host"), m.group("port")
    if scheme not in _SCHEMES:
        raise bad(f"the scheme must be one of {', '.join(_SCHEMES)}")
    if not _HOST_RE.fullmatch(host) or host == "*.":
        raise bad("the host must be a hostname or IP address; * may stand only for leading labels (*.example.com)")
    wildcard = host.startswith("*.")
    host = host[2:] if wildcard else host
    host = host.rstrip(".")
    port: int | str | None
    if port_text is None:
        port = None
    elif port_text == "*":
        port = "*"
    else:
        number = int(port_text)
        if not 0 < number < 65536:
            raise bad("the port must be 1 to 65535 or *")
        port = None if number == _DEFAULT_PORTS[scheme] else number
    return OriginPattern(raw, scheme, host, port, wildcard)


def parse_patterns(text: str | list[str] | tuple[str, ...]) -> tuple[OriginPattern, ...]:
    """Patterns from a ``;``-separated string (as Playwright MCP writes them) or a list; empty items skipped."""
    items = text.split(";") if isinstance(text, str) else list(text)
    return tuple(parse_pattern(item) for item in items if not isinstance(item, str) or item.strip())
