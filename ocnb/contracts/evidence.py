"""Evidence bundles: what a page looked like when a contract or a replay step failed.

A bundle is a folder ``OCNB_HOME/evidence/<bundle_id>/`` holding

- ``bundle.json``: ``schema_version``, ``bundle_id``, ``created`` (UTC ISO 8601), ``reason``,
  ``url``, ``title``, recent ``console`` messages, network ``responses`` and ``dialogs``, the
  caller's ``extra`` details, ``files`` (name → file in the folder) and ``capture_errors`` (what
  could not be captured, e.g. a closed page);
- ``dom.html``: a compact DOM snapshot of the main frame (scripts, styles, comments and inline
  event handlers stripped, long attribute values cut, whitespace collapsed, at most
  :data:`MAX_DOM_BYTES`);
- ``screenshot.png``: the viewport.

Every text goes through the caller's ``mask`` (normally ``SecretStore.mask``, which knows a secret's
URL-encoded, HTML-escaped and JSON-escaped spellings) before it reaches the disk — the DOM before it
is cut, so the cut never leaves part of a secret. Files are ``0600`` and folders ``0700``. The screenshot is pixels and cannot be masked: password fields show dots, but a secret shown
in clear text on the page would be visible in it. A bundle is assembled in a hidden temporary folder
and renamed into place, so a reader never sees half a bundle.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets as _random
import shutil
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ocnb.errors import InvalidArgument
from ocnb.files import PRIVATE_FILE, CorruptFile, ocnb_home, private_dir
from ocnb.jsonsafe import fix_text, strict_dumps

from .assertions import PageObservations
from .validation import dumps_canonical

if TYPE_CHECKING:  # pragma: no cover - typing only
    from playwright.async_api import Page

__all__ = [
    "BUNDLE_SCHEMA_VERSION",
    "MAX_DOM_BYTES",
    "MAX_ENTRIES",
    "Masker",
    "bundle_dir",
    "compact_dom",
    "create_bundle",
    "read_bundle",
]

BUNDLE_SCHEMA_VERSION = 1
#: The DOM snapshot is cut at this many UTF-8 bytes.
MAX_DOM_BYTES = 200_000
#: At most this many console messages, responses and dialogs (the most recent ones) are kept.
MAX_ENTRIES = 200
#: Attribute values longer than this (inline images as data: URLs…) are cut.
MAX_ATTR_CHARS = 500
SCREENSHOT_TIMEOUT_MS = 5_000

_BUNDLE_ID_RE = re.compile(r"ev-\d{8}T\d{6}Z-[0-9a-f]{8}")

#: A ``mask(obj) -> obj`` callable, or an object with such a ``mask`` method (``SecretStore``).
Masker = Callable[[Any], Any]

# Runs in the page: a clone of the document without what a reader of the evidence does not need.
_COMPACT_JS = """
(maxAttr) => {
  const root = document.documentElement.cloneNode(true);
  root.querySelectorAll('script, style, noscript, template, link[rel="stylesheet"], link[rel="preload"]')
      .forEach((el) => el.remove());
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_COMMENT);
  const comments = [];
  while (walker.nextNode()) comments.push(walker.currentNode);
  comments.forEach((c) => c.remove());
  root.querySelectorAll('*').forEach((el) => {
    for (const attr of Array.from(el.attributes)) {
      if (attr.name.startsWith('on') || attr.name === 'style') el.removeAttribute(attr.name);
      else if (attr.value.length > maxAttr) el.setAttribute(attr.name, attr.value.slice(0, maxAttr) + '…');
    }
  });
  return '<!DOCTYPE html>' + root.outerHTML;
}
"""


def compact_dom(
    html: str, max_bytes: int = MAX_DOM_BYTES, mask: Callable[[str], str] | None = None
) -> tuple[str, bool]:
    """Collapse runs of whitespace to one space and cut at ``max_bytes``; returns (html, truncated).

    ``mask`` (secrets → placeholders) runs on the whole text, before the cut.
    """
    text = fix_text(re.sub(r"\s+", " ", html).strip())  # a page may hold lone surrogates
    if mask is not None:
        text = mask(text)
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text, False
    cut = data[:max_bytes].decode("utf-8", errors="ignore")
    return f"{cut}<!-- ocnb: truncated at {max_bytes} of {len(data)} bytes -->", True


def _as_mask(secrets: Masker | Any | None) -> Callable[[Any], Any]:
    if secrets is None:
        return lambda obj: obj
    mask = getattr(secrets, "mask", None)
    if callable(mask):
        return mask
    if callable(secrets):
        return secrets
    raise TypeError("secrets must be a mask(obj) callable or an object with a mask method")


def bundle_dir(home: str | os.PathLike[str] | None = None) -> Path:
    """The folder that holds every evidence bundle: ``OCNB_HOME/evidence``."""
    return ocnb_home(home) / "evidence"


def _new_bundle_id(now: datetime) -> str:
    return f"ev-{now.strftime('%Y%m%dT%H%M%SZ')}-{_random.token_hex(4)}"


def _fsync_write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), PRIVATE_FILE)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


async def create_bundle(
    page: Page,
    observations: PageObservations | None,
    *,
    home: str | os.PathLike[str] | None = None,
    reason: str,
    secrets: Masker | Any | None = None,
    extra: Mapping[str, Any] | None = None,
    screenshot: bool = True,
) -> Path:
    """Capture the page into a new evidence bundle and return its folder (``screenshot=False``: no PNG).

    ``reason`` says why (e.g. ``"contract checkout-done failed"``); ``extra`` adds JSON-able details
    (failed assertions, a replay step index). What cannot be captured (a crashed page) is listed in
    ``capture_errors`` rather than raised: evidence of a broken page is still evidence.
    """
    mask = _as_mask(secrets)
    obs = observations or PageObservations()
    now = datetime.now(timezone.utc)
    bundle_id = _new_bundle_id(now)
    errors: list[str] = []

    url = title = None
    dom: str | None = None
    truncated = False
    shot: bytes | None = None
    try:
        url = page.url
        title = await page.title()
    except Exception as exc:  # noqa: BLE001 - what cannot be captured is listed, not raised
        errors.append(f"title: {_first_line(exc)}")
    try:
        dom, truncated = compact_dom(await page.evaluate(_COMPACT_JS, MAX_ATTR_CHARS), mask=mask)
    except Exception as exc:  # noqa: BLE001 - what cannot be captured is listed, not raised
        errors.append(f"dom: {_first_line(exc)}")
    try:
        shot = await page.screenshot(type="png", timeout=SCREENSHOT_TIMEOUT_MS) if screenshot else None
    except Exception as exc:  # noqa: BLE001 - what cannot be captured is listed, not raised
        errors.append(f"screenshot: {_first_line(exc)}")

    files: dict[str, str] = {}
    if dom is not None:
        files["dom"] = "dom.html"
    if shot is not None:
        files["screenshot"] = "screenshot.png"
    meta = {
        "schema_version": BUNDLE_SCHEMA_VERSION,
        "bundle_id": bundle_id,
        "created": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "reason": reason,
        "url": url,
        "title": title,
        "console": obs.console[-MAX_ENTRIES:],
        "responses": obs.responses[-MAX_ENTRIES:],
        "dialogs": obs.dialogs[-MAX_ENTRIES:],
        "extra": dict(extra or {}),
        "files": files,
        "dom_truncated": truncated,
        "capture_errors": errors,
    }
    meta = mask(json.loads(strict_dumps(meta)))  # plain, strict JSON first (page text may not be), then masked

    root = private_dir(bundle_dir(home), tighten=True)
    tmp = root / f".tmp-{bundle_id}"
    final = root / bundle_id
    tmp.mkdir(mode=0o700)
    os.chmod(tmp, 0o700)  # whatever the umask
    try:
        _fsync_write(tmp / "bundle.json", dumps_canonical(meta).encode("utf-8"))
        if dom is not None:
            _fsync_write(tmp / "dom.html", dom.encode("utf-8"))  # masked before it was cut
        if shot is not None:
            _fsync_write(tmp / "screenshot.png", shot)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    with contextlib.suppress(OSError):  # make the rename durable where the platform allows it
        fd = os.open(root, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return final


def read_bundle(bundle: str | os.PathLike[str], *, home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The ``bundle.json`` of a bundle, given its id or its folder."""
    text = os.fspath(bundle)
    if _BUNDLE_ID_RE.fullmatch(text):
        folder = bundle_dir(home) / text
    else:
        folder = Path(text)
    path = folder / "bundle.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidArgument(f"no evidence bundle at {folder}") from None
    except json.JSONDecodeError as exc:
        raise CorruptFile(f"{path} is not valid JSON ({exc})") from None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
