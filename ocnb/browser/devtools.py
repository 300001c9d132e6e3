"""One question to a page's DevTools target, answered without waiting on the page to let go.

A page's renderer can hold a DevTools session's detach for as long as it is busy: a script in an
endless loop, or a navigation whose request the origin guard has paused (measured: until that
request is answered). So :func:`ask_target` waits for its answer at most ``wait_s`` and lets the
session go in the background. Questions of the ``Target`` domain (``Target.getTargetInfo``: the
page's target id, its title and URL as the browser shows them) are answered by the browser even
while the renderer is hung; ``Page`` questions need the renderer.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["ask_target", "browser_title"]

#: The sessions being let go (held so that their tasks are not collected before they end).
_LETTING_GO: set[asyncio.Task[Any]] = set()


async def ask_target(page: Any, method: str, wait_s: float) -> dict[str, Any] | None:
    """``method``'s answer on a new DevTools session of ``page``'s target, waited for at most
    ``wait_s``; None when the page is closed, is not Chromium's, or did not answer in time."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    try:
        session = await asyncio.wait_for(page.context.new_cdp_session(page), wait_s)
    except Exception:  # noqa: BLE001 - closed, no DevTools (a remote browser that refuses it), or slow
        return None
    try:
        return await asyncio.wait_for(session.send(method), max(deadline - loop.time(), 0.001))
    except Exception:  # noqa: BLE001 - busy or closed
        return None
    finally:
        task = asyncio.ensure_future(_detach(session))
        _LETTING_GO.add(task)
        task.add_done_callback(_LETTING_GO.discard)


async def browser_title(page: Any, wait_s: float) -> str | None:
    """``page``'s title as the browser holds it (the page's last ``document.title``, hung or not); ""
    for a page without one (the browser shows its URL instead); None when the browser did not say."""
    reply = await ask_target(page, "Target.getTargetInfo", wait_s)
    if not reply:
        return None
    info = reply.get("targetInfo") or {}
    title, url = str(info.get("title", "")), str(info.get("url", ""))
    return "" if title in (url, url.split("://", 1)[-1]) else title


async def _detach(session: Any) -> None:
    with contextlib.suppress(Exception):
        await session.detach()
