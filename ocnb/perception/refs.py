"""Refs: short opaque names (``ax_12``) for elements, stable while the element lives.

The in-page script keeps, per document, a WeakMap element → number. The counter is owned here,
per page, and only ever grows; so a ref handed out before a navigation or a removal can never be
given to another element. The registry also remembers which frame holds each ref, so a ref in a
(cross-origin) iframe is resolved in that frame. A ref whose element is gone raises ``STALE_REF``; a ref
this page never issued (a made-up number, another tab's ref) raises ``UNKNOWN_REF``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidArgument, StaleRef, UnknownRef, from_playwright
from .bundle import bundle

__all__ = [
    "REF_PATTERN",
    "PageRefs",
    "call",
    "call_handle",
    "call_script",
    "frame_ref",
    "page_refs",
    "parse_ref",
    "resolve_ref",
    "script",
    "unknown_ref",
]

REF_PATTERN = re.compile(r"^ax_(\d+)$")


def script() -> str:
    """The in-page perception script (an expression evaluating to ``(req) => {result, next}``), the
    ``perception`` bundle of :mod:`.bundle` (joined once per process)."""
    return bundle("perception")


@dataclass
class PageRefs:
    """Per-page ref state: the next ref number, and which frame each ref lives in.

    ``primed`` holds the frames whose current document already keeps the script (forgotten when the
    frame navigates), so a call there sends a few bytes instead of the script's source.
    """

    next: int = 1
    frames: dict[int, Any] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    primed: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)
    #: The element handles handed out (newest last); the oldest beyond :data:`HANDLES_KEPT` are disposed.
    handles: deque[Any] = field(default_factory=deque)


#: Refs whose frame a page remembers: the newest this many (an older ref reads as ``STALE_REF``).
REFS_KEPT = 10_000
#: Element handles a page keeps alive: enough for every target of one call (``fill_form``).
HANDLES_KEPT = 256


_REGISTRY: weakref.WeakKeyDictionary[Any, PageRefs] = weakref.WeakKeyDictionary()


def page_refs(page: Any) -> PageRefs:
    """The ref state of ``page`` (created on first use, dropped with the page)."""
    state = _REGISTRY.get(page)
    if state is None:
        state = PageRefs()
        _REGISTRY[page] = state
        on = getattr(page, "on", None)
        if callable(on):
            on("framenavigated", state.primed.discard)
    return state


def parse_ref(ref: str) -> int:
    """``"ax_12"`` → 12; anything else is ``INVALID_ARGUMENT``."""
    m = REF_PATTERN.match(str(ref).strip())
    if not m:
        raise InvalidArgument(
            f"{ref!r} is not a ref (refs look like ax_12; read_page shows them)", details={"ref": ref}
        )
    return int(m.group(1))


def _record(state: PageRefs, frame: Any, before: int, after: int) -> None:
    for n in range(before, after):
        state.frames[n] = frame
    while len(state.frames) > REFS_KEPT:  # refs are added in increasing order: drop the oldest
        del state.frames[next(iter(state.frames))]


async def _keep(state: PageRefs, handle: Any) -> None:
    """Remember ``handle``; dispose the oldest beyond :data:`HANDLES_KEPT` (Playwright keeps every
    handle, and the browser its object, until the page closes)."""
    state.handles.append(handle)
    while len(state.handles) > HANDLES_KEPT:
        with contextlib.suppress(Exception):  # its document may be gone: nothing left to free
            await state.handles.popleft().dispose()


#: Calls the script a document already holds (the perception bundle keeps itself there), or answers null.
_CACHED = """(req) => {
  const f = window[Symbol.for("ocnb.perception.fn")];
  return f ? f(req) : null;
}"""


async def call(frame: Any, page: Any, req: dict[str, Any]) -> Any:
    """Run one op of the script in ``frame``; new refs it assigns are recorded against the frame.

    The script's source (about 40 kB) is sent once per document; later calls reuse the copy it kept.
    """
    state = page_refs(page)
    req = dict(req)
    req["next"] = state.next
    try:
        out = await frame.evaluate(_CACHED, req) if frame in state.primed else None
        if out is None:
            out = await frame.evaluate(script(), req)
            state.primed.add(frame)
    except Exception as exc:  # noqa: BLE001 - translated at the seam
        raise from_playwright(exc) from exc
    return _settle(state, frame, out)


def _settle(state: Any, frame: Any, out: dict[str, Any]) -> Any:
    """Record the refs an in-page run assigned in ``frame`` (``out["next"]`` past the state's) and
    return its result."""
    before, after = state.next, int(out["next"])
    if after > before:
        _record(state, frame, before, after)
        state.next = after
    return out["result"]


async def call_script(frame: Any, page: Any, source: str, req: dict[str, Any]) -> Any:
    """Run another in-page script (the ``extract`` bundle) in ``frame``: one that takes ``{…, next}``, answers
    ``{result, next}`` and names elements through this script's ``refs`` op, so they get refs of this
    registry (the ones read_page shows), recorded against the frame like :func:`call`'s."""
    await call(frame, page, {"op": "mutations"})  # this script is in the document (it keeps the refs)
    state = page_refs(page)
    req = dict(req)
    req["next"] = state.next
    try:
        out = await frame.evaluate(source, req)
    except Exception as exc:  # noqa: BLE001 - translated at the seam
        raise from_playwright(exc) from exc
    return _settle(state, frame, out)


async def frame_ref(page: Any, frame: Any) -> int | None:
    """The ref number of the ``<iframe>`` showing ``frame`` in its parent's document (never assigns one),
    or ``None`` for the main frame or a frame that went away."""
    parent = frame.parent_frame
    if parent is None:
        return None
    try:
        el = await frame.frame_element()
    except Exception:  # noqa: BLE001 - detached meanwhile
        return None
    try:
        found = await call(parent, page, {"op": "frameRef", "el": el})
        return None if found is None else int(found)
    except Exception:  # noqa: BLE001
        return None
    finally:
        await el.dispose()


async def call_handle(frame: Any, page: Any, req: dict[str, Any]) -> Any:
    """Like :func:`call` but returns the result as an ElementHandle (or ``None``)."""
    state = page_refs(page)
    req = dict(req)
    req["next"] = state.next
    try:
        handle = await frame.evaluate_handle(script(), req)
        next_handle = await handle.get_property("next")
        nxt = await next_handle.json_value()
        await next_handle.dispose()
        res = await handle.get_property("result")
        await handle.dispose()
    except Exception as exc:  # noqa: BLE001
        raise from_playwright(exc) from exc
    if int(nxt) > state.next:
        _record(state, frame, state.next, int(nxt))
        state.next = int(nxt)
    el = res.as_element()
    if el is None:
        await res.dispose()
    else:
        await _keep(state, el)
    return el


def unknown_ref(ref: str) -> UnknownRef:
    """The ``UNKNOWN_REF`` error for a ref this tab never issued."""
    return UnknownRef(
        f"{ref} was never issued on this tab: take refs from read_page, find or query_dom (of this tab)",
        details={"ref": ref},
    )


async def resolve_ref(page: Any, ref: str) -> tuple[Any, Any]:
    """``(frame, element_handle)`` of a live ref; ``UNKNOWN_REF`` for a ref this page never issued,
    ``STALE_REF`` for one whose element is gone (nothing is acted on either way)."""
    n = parse_ref(ref)
    state = page_refs(page)
    if n >= state.next:  # the page's counter never reached it
        raise unknown_ref(ref)
    stale = StaleRef(
        f"{ref} is stale: its element is gone (removed or the page navigated); call read_page for fresh refs",
        details={"ref": ref},
    )
    frame = state.frames.get(n)
    if frame is None:  # issued here, then forgotten (the newest REFS_KEPT are remembered): never guessed
        raise stale
    try:
        if frame.is_detached():
            raise stale
    except StaleRef:
        raise
    except Exception:  # noqa: BLE001
        raise stale from None
    try:
        el = await call_handle(frame, page, {"op": "resolve", "id": n})
    except Exception as exc:  # noqa: BLE001 - a frame that navigated mid-call, etc.
        code = getattr(exc, "code", "")
        if code == "TARGET_CLOSED":
            raise
        raise stale from exc
    if el is None:
        raise stale
    return frame, el
