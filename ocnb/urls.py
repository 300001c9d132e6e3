"""URL policy for navigation (DESIGN §6): http(s), about:blank and data: by default, and the origin policy."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from .errors import BlockedUrl, InvalidArgument
from .origins import OriginPolicy

__all__ = ["check_origin", "check_url"]

ALWAYS_ALLOWED = ("http", "https", "data")
#: ``host:port…`` typed without a scheme (``localhost:8771/form.html``): urlsplit reads ``host`` as one.
_HOST_PORT = re.compile(r"^[A-Za-z0-9.-]+:\d{1,5}(?:[/?#]|$)")
_LOCAL = re.compile(r"^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0)(?::|$)", re.I)


def check_url(url: str, allowed_extra: tuple[str, ...] = ()) -> str:
    """Return ``url`` if navigation to it is allowed, else raise ``BLOCKED_URL`` (or ``INVALID_ARGUMENT``)."""
    text = url.strip()
    if not text:
        raise InvalidArgument("url is empty")
    if text == "about:blank":
        return text
    scheme = urlsplit(text).scheme.lower()
    if not scheme or _HOST_PORT.match(text):
        full = ("http://" if _LOCAL.match(text) else "https://") + text
        raise InvalidArgument(f"url {text!r} has no scheme; write it in full, e.g. {full}", details={"url": text})
    if scheme in ALWAYS_ALLOWED or scheme in allowed_extra:
        if scheme in ("http", "https") and not urlsplit(text).netloc:
            raise InvalidArgument(f"url {text!r} has no host")
        return text
    raise BlockedUrl(
        f"{scheme}: URLs are blocked; allowed are http(s), about:blank and data:"
        + (
            " (allow file: with Session(allowed_schemes=('file',)) or OCNB_ALLOW_FILE_URLS=1)"
            if scheme == "file"
            else ""
        ),
        details={"url": text, "scheme": scheme},
    )


def check_origin(url: str, policy: OriginPolicy) -> None:
    """Raise ``BLOCKED_URL`` naming the rule when the origin policy refuses ``url`` (nothing is sent)."""
    rule = policy.check(url)
    if rule is not None:
        raise BlockedUrl(
            f"{url.strip()[:300]} is refused by the origin policy ({rule}); nothing was sent to it",
            details={"url": url.strip()[:300], "rule": rule},
        )
