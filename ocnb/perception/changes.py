"""What an action changed on the page: :class:`ChangeWatch`, taken around every acting tool's action.

Before the action it notes the URL, the open tabs and the document's mutation count (and whether the
element is a link or form that opens another tab); :meth:`ChangeWatch.changes` afterwards reports
``navigated`` (+ ``url``), ``new_tab``, ``dialogs``, ``dom_changed``, ``message`` (what a live region —
``role=status``/``alert``, ``aria-live``, ``<output>`` — says that it did not say before: a form's
answer) and ``downloads``.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from .refs import call

if TYPE_CHECKING:
    from ..browser.state import BrowserState

__all__ = ["ChangeWatch"]

#: Seconds an action's effects are given to show before they are read.
SETTLE_S = 0.1
#: Seconds a clicked link that targets another tab is given to open it.
OPENS_TAB_WAIT_S = 3.0

#: A click on this element opens a new tab by itself: a link or form whose target is not this one.
_OPENS_TAB_JS = """el => {
  const link = el.closest('a[href], area[href]');
  let target = link ? link.getAttribute('target') : null;
  if (!link && el.form && (el.type === 'submit' || el.type === 'image'))
    target = el.getAttribute('formtarget') || el.form.getAttribute('target');
  return !!target && !/^_(self|parent|top)$/i.test(target);
}"""


#: The texts of the page's live regions (a form's answer, an alert): what an action made the page say.
_LIVE_JS = """() => Array.from(document.querySelectorAll(
  '[role=status],[role=alert],[aria-live]:not([aria-live=off]),output')).slice(0, 20)
  .map(e => (e.innerText || e.textContent || '').trim().slice(0, 300))"""


class ChangeWatch:
    """What a page looks like before an action, to report what the action changed.

    ``async with ChangeWatch(browser, page, frame, element, timeout_ms=…) as watch:`` act, then
    ``await watch.changes()``. ``element`` (the one clicked or pressed) lets it wait for a tab a link
    opens; ``timeout_ms`` bounds the waits for a navigation's load and an announced popup.
    """

    def __init__(self, browser: BrowserState, page: Any, frame: Any, element: Any = None, *, timeout_ms: int) -> None:
        self.browser, self.page, self.frame, self.element = browser, page, frame, element
        self.timeout_ms = timeout_ms
        self.navigated = False
        self.popups: list[Any] = []
        self.started = time.time()

    async def __aenter__(self) -> ChangeWatch:
        self.url = self.page.url
        self.tabs = set(self.browser.tabs)
        # read at once: each is one round trip to the page, and every act waits for them
        self.mutations, self.live, self.opens_tab = await asyncio.gather(
            self._mutations(), self._live(), self._opens_tab()
        )
        self.page.on("framenavigated", self._on_nav)
        self.page.on("popup", self._on_popup)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.page.remove_listener("framenavigated", self._on_nav)
        self.page.remove_listener("popup", self._on_popup)

    def _on_nav(self, frame: Any) -> None:
        if frame is self.page.main_frame:
            self.navigated = True

    def _on_popup(self, page: Any) -> None:
        self.popups.append(page)

    async def _opens_tab(self) -> bool:
        """Whether the element is (inside) a link or form that targets another browsing context."""
        if self.element is None:
            return False
        try:
            return bool(await self.element.evaluate(_OPENS_TAB_JS))
        except Exception:  # noqa: BLE001 - detached or in a closed frame: nothing to wait for
            return False

    async def _new_tabs(self) -> list[str]:
        """Tabs opened since the action. A popup the page announced (a ``popup`` event, or a
        ``target=_blank`` link that was clicked) is waited for until it is registered as a tab, so a
        slow machine does not report ``new_tab: null`` for a link that opened one."""
        started = time.monotonic()
        while True:
            new = [t for t in self.browser.tabs if t not in self.tabs]
            # An announced popup is waited for up to the call's timeout; a clicked link whose page
            # may have cancelled the navigation, for at most OPENS_TAB_WAIT_S.
            limit = self.timeout_ms / 1000 if self.popups else OPENS_TAB_WAIT_S if self.opens_tab else 0
            if new or time.monotonic() - started >= limit:
                return new
            await asyncio.sleep(0.05)

    async def _mutations(self) -> int | None:
        try:
            return int(await call(self.frame, self.page, {"op": "mutations"}))
        except Exception:  # noqa: BLE001 - the frame navigated or went away
            return None

    async def _live(self) -> list[str]:
        try:
            found = await self.frame.evaluate(_LIVE_JS)
            return [str(t) for t in found][:20] if isinstance(found, list) else []
        except Exception:  # noqa: BLE001 - the frame navigated or went away
            return []

    async def changes(self) -> dict[str, Any]:
        await asyncio.sleep(SETTLE_S)
        if self.navigated:
            try:
                await self.page.wait_for_load_state("domcontentloaded", timeout=self.timeout_ms)
            except Exception:  # noqa: BLE001 - report what we have
                pass
        out: dict[str, Any] = {"navigated": self.navigated or self.page.url != self.url}
        if out["navigated"]:
            out["url"] = self.page.url
        new = await self._new_tabs()
        out["new_tab"] = new[0] if new else None
        tab = self.browser.tab_of(self.page)
        dialogs = [dict(d) for d in (tab.dialogs if tab else []) if d.get("ts", 0) >= self.started]
        out["dialogs"] = [{k: d.get(k) for k in ("type", "message", "action")} for d in dialogs]
        if not out["navigated"]:
            after = await self._mutations()
            out["dom_changed"] = bool(after is not None and self.mutations is not None and after > self.mutations)
            if out["dom_changed"]:  # what a live region says now that it did not say before
                said = [t for i, t in enumerate(await self._live()) if t and t not in self.live[i : i + 1]]
                if said:
                    out["message"] = " | ".join(said)[:500]
        else:
            out["dom_changed"] = True
        downloads = await self.browser.downloads.since(self.started)  # saved (or refused) by now
        if downloads:
            out["downloads"] = downloads
        return out
