"""A browser state's crashes part, and the after-hook that gives a call which ran into one a single code.

:class:`CrashLog` notices a browser that died under the session (not closed by it) and remembers the
tabs lost with it; :class:`CrashWatch`, a layer of the session, keeps the crashes seen (each relaunched
on the next call) and turns whatever error a call met on a dead browser or page into
``BROWSER_CRASHED`` or ``PAGE_CRASHED``.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..audit.notes import note
from ..calls import CallContext, Host
from ..errors import BrowserCrashed, PageCrashed
from ..results import ToolResult
from .tabs import Tab

__all__ = ["CrashLog", "CrashWatch"]


class CrashLog:
    """Whether the browser died under us (not by ``close()``): when, and the tabs lost with it."""

    def __init__(self, on_event: Callable[[str, dict[str, Any]], None]) -> None:
        self._on_event = on_event
        #: Set when the browser died: ``{"ts", "lost_tabs", "remote"}``.
        self.current: dict[str, Any] | None = None
        #: True once a call has been answered ``BROWSER_CRASHED``; the next one relaunches.
        self.reported = False
        self._gone: deque[tuple[float, dict[str, Any]]] = deque(maxlen=100)

    def tab_gone(self, tab: Tab) -> None:
        """A tab closed without being asked to: a crash closes every page a moment before the
        browser reports the disconnect, so the tab is remembered for a few seconds."""
        self._gone.append((time.monotonic(), {"tab_id": tab.id, "url": tab.page.url, "title": tab.title}))

    def closed_under_us(self, tab_id: str) -> dict[str, Any] | None:
        """The last record of ``tab_id`` if it closed without being asked to (by its page, or by a
        browser going away); ``None`` when ocnb never had it or closed it itself."""
        return next((info for _, info in reversed(self._gone) if info["tab_id"] == tab_id), None)

    def disconnected(self, tabs: Iterable[Tab], remote: str | None) -> None:
        """The browser went away: record the crash, with the tabs it took."""
        now = time.monotonic()
        lost = [info for ts, info in self._gone if now - ts < 5.0]
        lost += [{"tab_id": t.id, "url": t.page.url, "title": t.title} for t in tabs]
        lost.sort(key=lambda t: int(t["tab_id"][1:]))
        self.current = {"ts": time.time(), "lost_tabs": lost, "remote": remote}
        self._on_event("browser_crashed", {"lost_tabs": lost, "remote": remote})

    def page_crashed(self, tab: Tab) -> None:
        """A tab's renderer died (Playwright's ``crash`` event): every call on it is ``PAGE_CRASHED``."""
        tab.crashed = True
        self._on_event("page_crash", {"tab_id": tab.id, "url": tab.page.url})

    def error(self, remote: str | None = None) -> BrowserCrashed:
        """The ``BROWSER_CRASHED`` error for this dead browser; marks the crash as reported."""
        crash = self.current or {"lost_tabs": [], "remote": remote}
        self.reported = True
        lost = crash["lost_tabs"]
        what = "the connection to the remote browser dropped" if crash.get("remote") else "the browser process died"
        tabs = ", ".join(f"{t['tab_id']} {t['url']}" for t in lost[:10]) or "none"
        return BrowserCrashed(
            f"{what}; lost {len(lost)} tab(s): {tabs}. The next call starts a new browser",
            details={"lost_tabs": lost, "relaunch": "next call"},
        )

    @staticmethod
    def page_error(tab: Tab) -> PageCrashed:
        return PageCrashed(
            f"the page in tab {tab.id} crashed ({tab.page.url}); close it with tabs_close and open a new one",
            details={"tab_id": tab.id, "url": tab.page.url},
        )


#: What a call that ran into a dead browser or page may have seen instead of the crash itself.
_CRASH_SYMPTOMS = frozenset(
    {"TARGET_CLOSED", "INTERNAL", "SCRIPT_ERROR", "TIMEOUT", "NAVIGATION_FAILED", "TARGET_NAVIGATED_AWAY"}
    | {"STALE_REF", "UNKNOWN_REF", "ELEMENT_NOT_FOUND"}
    # a replay whose page died under a step or its contract's polling
    | {"STEP_TIMEOUT", "CONTRACT_FAILED", "ARTIFACT_RESOLUTION_FAILED"}
)


async def _browser_gone(state: Any) -> bool:
    """Whether the browser stopped answering (one cheap round trip), after a TARGET_CLOSED."""
    if state.browser is None:
        return False
    try:
        cdp = await asyncio.wait_for(state.browser.new_browser_cdp_session(), 2)
        await cdp.detach()
    except Exception:  # noqa: BLE001 - closed, crashed, or no answer
        return True
    return False


class CrashWatch:
    """A session's browser crashes (``crashes``, each relaunched on the next call) and the after-hook
    that gives a call which ran into one a single code."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.crashes: list[dict[str, Any]] = []
        #: The crash whose browser the current call relaunched (said once, in that call's summary).
        self.relaunched: dict[str, Any] | None = None

    def seen(self, crash: dict[str, Any]) -> None:
        """Remember a dead browser's crash record (once)."""
        if not any(c is crash for c in self.crashes):
            self.crashes.append(crash)

    def relaunched_after(self) -> dict[str, Any] | None:
        """A new browser started: the crash it replaces, if that was not relaunched yet (marked now)."""
        if not self.crashes or self.crashes[-1].get("relaunched"):
            return None
        crash = self.crashes[-1]
        crash["relaunched"] = True
        self.relaunched = crash
        return crash

    async def after(self, call: CallContext, result: ToolResult) -> ToolResult | None:
        """After-hook: a call that failed because the browser or its page died gets one code.

        ``BROWSER_CRASHED`` (once, with the lost tabs; the next call relaunches) when the browser went
        away, ``PAGE_CRASHED`` when the tab's renderer died, whatever error the handler happened to see.
        The call that relaunched a crashed browser says so in its journal summary. A replay's report
        (data with a ``failure``) is kept, with the crash's code: its ``step_index`` says where it stopped.
        """
        if self.relaunched is not None:
            self.relaunched = None
            note(call, "browser relaunched after a crash")
        state: Any = self.host.state  # a BrowserState, or None before the browser starts
        if result.ok or state is None or result.error is None:
            return None
        code = result.error.code
        if code not in _CRASH_SYMPTOMS:
            return None  # the call was refused on its own merits (unknown tool, bad arguments …)
        # any of the symptoms, not only TARGET_CLOSED: a call in flight when a remote browser's connection
        # dropped can fail first with a timeout or a failed contract, before the disconnected event
        if state.crashes.current is None and not state.closing and await _browser_gone(state):
            for _ in range(40):  # the disconnected event can trail the error of a call in flight
                if state.crashes.current is not None or state.closing:
                    break
                await asyncio.sleep(0.05)
        if state.crashes.current is not None:
            err: Any = state.crashes.error()
        else:
            tab = state.tabs.get(call.tab_id) if call.tab_id else state.tabs.get(state.active_id or "")
            if tab is None or not tab.crashed:
                return None
            err = CrashLog.page_error(tab)
        out = ToolResult.failure(result.tool, err.code, err.message, err.details)
        data = result.data
        if isinstance(data, dict) and isinstance(data.get("failure"), dict):
            # a replay's report keeps the step the crash interrupted (a batch decides on it), under the one code
            out.data = {**data, "failure": {**data["failure"], "code": err.code, "detail": err.message}}
        return out
