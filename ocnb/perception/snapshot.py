"""``read_page``: the page as compact text an LLM can act on.

Modes:

- ``ax`` (default): an accessibility outline, one element per line, e.g.
  ``- button "Sign up" [ax_7]``, ``- textbox "Email" [ax_3] value="a@b" required``,
  ``- heading "Results" [level=2]``, ``- link "Docs" [ax_9] → /docs``; text is a plain line (``- text: …`` when it
  starts with ``-``), a link inside it inline: ``see [the docs](ax_9 → /docs) now``. Wrappers
  without a role vanish, whitespace collapses, invisible nodes are left out; every visible
  interactive element carries a ref. A field's value over 200 characters is cut, its length said
  (``value="…" (1203 chars)``); ``ref_id`` on the field reads it whole. A link's target is shortened
  (host and path cut at 40 characters, tracking parameters such as ``utm_*`` left out, a longer query
  shown as ``?…``) and said the first time only: a later link to the same target shows its ref without it.
- ``text``: the readable text of the page (``innerText``), frames included.
- ``dom``: a compact element outline (tag#id and a few telling attributes).

Frames (same- and cross-origin) are read one by one with the same script and stitched in under
their ``<iframe>`` line.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from ..errors import InvalidArgument, StaleRef, Timeout
from ..tokens import count_text
from .refs import call, frame_ref, page_refs, parse_ref, unknown_ref

__all__ = ["MODES", "read_page"]

MODES = ("ax", "text", "dom")
#: The most text one read returns (about 125k tokens, more than a model's context holds): a longer page is
#: cut at a line with the truncation marker and ``truncated: true``. ``max_tokens`` cuts shorter.
MAX_CONTENT_CHARS = 500_000
#: No cl100k token of an outline is longer than this many characters (runs of spaces are the longest):
#: only that much of the text can fit in ``max_tokens``, so only that much is tokenized.
_CHARS_PER_TOKEN_MAX = 24
_FRAME_MARK = re.compile(r"^( *)\x00frame:(\d+)$")
_REF_IN_TEXT = re.compile(r"(?:\[|\]\()ax_\d+")


async def _read_frame(page: Any, frame: Any, opts: dict[str, Any], ref: int | None, depth_left: int) -> dict[str, Any]:
    """Snapshot one frame and, recursively, the frames shown inside it."""
    req: dict[str, Any] = {"op": "snapshot", "opts": opts}
    if ref is not None:
        req["ref"] = ref
    try:
        out = await call(frame, page, req)
    except Exception as exc:  # noqa: BLE001 - a frame that died mid-read shows as empty
        if frame is page.main_frame or ref is not None:
            raise
        return {"content": "", "frames": [], "error": str(exc)}
    if out.get("stale"):
        return out
    wanted = set(out.get("frames") or [])
    children: dict[int, str] = {}
    if wanted and depth_left > 0:
        kids = list(frame.child_frames)
        ids = await asyncio.gather(*(frame_ref(page, child) for child in kids))  # read-only: parallel
        for child, fid in zip(kids, ids, strict=True):
            if fid is None or fid not in wanted:
                continue
            child_out = await _read_frame(page, child, opts, None, depth_left - 1)
            text = child_out.get("content") or ""
            if opts.get("mode") == "text" and text:
                text = f"[frame {child_out.get('url', '')}]\n{text}"
            children[fid] = text
    content = out.get("content") or ""
    if opts.get("mode") == "text":
        extra = [children[k] for k in out.get("frames") or [] if children.get(k)]
        out["content"] = "\n".join([content, *extra]).strip()
        return out
    lines: list[str] = []
    for line in content.split("\n"):
        m = _FRAME_MARK.match(line)
        if not m:
            lines.append(line)
            continue
        sub = children.get(int(m.group(2)))
        if not sub:
            if lines and lines[-1].rstrip().endswith(":") and "- iframe" in lines[-1]:
                lines.pop()  # an empty or unreadable frame: drop its header line
            continue
        pad = m.group(1)
        lines.extend(pad + s for s in sub.split("\n"))
    out["content"] = "\n".join(lines)
    return out


def _cap(content: str, max_chars: int = MAX_CONTENT_CHARS) -> tuple[str, bool]:
    """Keep whole lines within ``max_chars`` characters and end with the marker."""
    if len(content) <= max_chars:
        return content, False
    cut = content.rfind("\n", 0, max_chars)
    if cut < max_chars // 2:  # one very long line (a text block): cut inside it
        cut = max_chars
    kept = content[:cut]
    rest = content.count("\n", cut) + (0 if content[cut] == "\n" else 1)
    return kept + "\n" + _marker(rest), True


def _truncate(content: str, max_tokens: int) -> tuple[str, bool]:
    """Keep whole lines within ``max_tokens`` and end with an explicit marker.

    Only the prefix that could fit is tokenized, so a huge page costs no more than a small one.
    """
    if len(content) <= max_tokens:
        return content, False  # a token holds at least one character
    window = max_tokens * _CHARS_PER_TOKEN_MAX
    if len(content) <= window and count_text(content) <= max_tokens:
        return content, False
    total = content.count("\n") + 1
    if len(content) > window:
        cut = content.rfind("\n", 0, window)
        content = content[: cut if cut > 0 else window]
    lines = content.split("\n")
    lo, hi = 0, len(lines)
    while lo < hi:  # largest prefix that fits together with the marker
        mid = (lo + hi + 1) // 2
        text = "\n".join(lines[:mid]) + "\n" + _marker(total - mid)
        if count_text(text) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:  # not even the first line fits: keep as much of it as does
        first, a, b = lines[0], 0, len(lines[0])
        while a < b:
            mid = (a + b + 1) // 2
            if count_text(first[:mid] + "…\n" + _marker(total)) <= max_tokens:
                a = mid
            else:
                b = mid - 1
        return (first[:a] + "…\n" if a else "") + _marker(total), True
    return "\n".join([*lines[:lo], _marker(total - lo)]), True


def _marker(n: int) -> str:
    return f"… [truncated: {n} more lines; use ref_id or depth]"


async def read_page(
    page: Any,
    *,
    mode: str = "ax",
    filter: str = "all",  # noqa: A002 - the public argument name
    depth: int | None = None,
    ref_id: str | None = None,
    max_tokens: int | None = None,
    timeout_s: float | None = None,
) -> dict[str, Any]:
    """Read ``page`` as text: ``{url, title, mode, content, truncated, ref_count}``.

    ``filter="interactive"`` keeps only elements with refs; ``depth`` limits nesting; ``ref_id``
    reads one element's subtree (``STALE_REF`` if it is gone); ``max_tokens`` caps the output
    (cl100k tokens) and ends it with a ``… [truncated: …]`` marker, and so does any text longer
    than :data:`MAX_CONTENT_CHARS`. A snapshot that takes longer than ``timeout_s`` is ``TIMEOUT``
    (a page too large to read whole: read part of it with ``ref_id``, or ``mode="text"``).
    """
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {', '.join(MODES)}", details={"mode": mode})
    if filter not in ("all", "interactive"):
        raise InvalidArgument("filter must be 'all' or 'interactive'", details={"filter": filter})
    if depth is not None and depth < 0:
        raise InvalidArgument("depth must be ≥ 0", details={"depth": depth})
    if max_tokens is not None and max_tokens < 1:
        raise InvalidArgument("max_tokens must be ≥ 1", details={"max_tokens": max_tokens})
    opts = {"mode": mode, "filter": filter, "depth": depth}
    state = page_refs(page)
    async with state.lock:
        frame, ref = page.main_frame, None
        if ref_id is not None:
            ref = parse_ref(ref_id)
            frame = state.frames.get(ref)
            if frame is None or ref >= state.next:
                raise unknown_ref(ref_id)
            if frame.is_detached():
                raise StaleRef(f"{ref_id} is stale; call read_page for fresh refs", details={"ref": ref_id})
        try:
            out = await asyncio.wait_for(_read_frame(page, frame, opts, ref, depth_left=8), timeout_s)
        except TimeoutError:
            raise Timeout(
                f"the page's {mode} snapshot did not finish within {timeout_s:.1f} s: the page is too large "
                "to read whole; read one part with ref_id, or try mode=text",
                details={"url": page.url, "mode": mode},
            ) from None
    if out.get("stale"):
        raise StaleRef(
            f"{ref_id} is stale: its element is gone; call read_page for fresh refs", details={"ref": ref_id}
        )
    content, truncated = _cap(out.get("content") or "")
    if max_tokens is not None:
        content, cut = _truncate(content, max_tokens)
        truncated = truncated or cut
    return {
        "url": page.url,
        "title": out.get("title", "") if frame is page.main_frame else await page.title(),
        "mode": mode,
        "content": content,
        "truncated": truncated,
        "ref_count": len(_REF_IN_TEXT.findall(content)),
    }
