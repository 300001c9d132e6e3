"""One browser that several sessions share, each in a context of its own (``ocnb.Pool(browsers=K)``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..errors import TargetClosed
from ..settings import Settings
from .driver import start_playwright
from .fetch_guard import BrowserGuard, open_browser_guard
from .launch import open_browser


class Lender(Protocol):
    """What a :class:`HostedBrowser` reads of the running state whose browser it lends
    (a :class:`~ocnb.browser.state.BrowserState`)."""

    @property
    def browser(self) -> Any: ...
    @property
    def playwright(self) -> Any: ...
    @property
    def executable(self) -> str | None: ...
    @property
    def remote(self) -> str | None: ...
    @property
    def connected(self) -> bool: ...
    @property
    def browser_guard(self) -> BrowserGuard | None: ...


__all__ = ["HostedBrowser", "SharedBrowser"]


class SharedBrowser:
    """One browser that several sessions share, each with its own context.

    It runs on one :class:`~ocnb.browser.runtime.Runtime` that those sessions share (Playwright objects
    belong to one event loop). :meth:`ensure` launches it (or connects: ``connect=`` a Playwright
    server, ``cdp=`` an endpoint) on first use and again after it died; a session's ``close()``
    closes only its context, and :meth:`close` closes the browser.

    A browser it launched has one origin-policy guard on the browser's own DevTools session
    (:meth:`browser_guard`) that judges each context's requests by that context's policy; a browser it
    connected to (``connect=``, ``cdp=``) has none: each context's guard arms its own pages, since the
    browser's other contexts are not ocnb's to pause (docs/security.md).
    """

    def __init__(
        self,
        runtime: Any,
        config: Settings,
        *,
        executable_path: str | None = None,
        connect: str | None = None,
        cdp: str | None = None,
    ) -> None:
        self.runtime = runtime
        self.config = config
        self.executable_path = executable_path
        self.connect, self.cdp = connect, cdp
        self.playwright: Any = None
        self.browser: Any = None
        self.executable: str | None = None
        self.remote = connect or cdp
        self._lock: asyncio.Lock | None = None
        self._guard: tuple[Any, BrowserGuard | None] | None = None  # (browser, its guard)

    async def ensure(self) -> Any:
        """The live browser: launched or connected now if it is not (first use, or it died)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.browser is not None and self.browser.is_connected():
                return self.browser
            if self.playwright is None:
                self.playwright = await start_playwright()  # its driver outside the kernel's process group
            opened = await open_browser(
                self.playwright, self.config, executable_path=self.executable_path, connect=self.connect, cdp=self.cdp
            )
            self.browser, self.executable = opened.browser, opened.executable
            return self.browser

    async def browser_guard(self) -> BrowserGuard | None:
        """The origin-policy guard of the live browser, opened on first use (None when connected, or not Chromium)."""
        browser = await self.ensure()
        if self.remote:
            return None
        assert self._lock is not None
        async with self._lock:
            if self._guard is None or self._guard[0] is not browser:  # first use, or a new browser
                self._guard = (browser, await open_browser_guard(browser))
            return self._guard[1]

    async def close(self) -> None:
        """Close the browser (every context on it) and stop Playwright; safe to call twice."""
        for obj, method in ((self.browser, "close"), (self.playwright, "stop")):
            if obj is not None:
                with contextlib.suppress(Exception):  # already gone is fine
                    await getattr(obj, method)()
        self.browser = self.playwright = None
        self._guard = None


class HostedBrowser(SharedBrowser):
    """The browser of a running :class:`~ocnb.browser.state.BrowserState`, lent to other sessions, each
    opening a context of its own in it (``ocnb mcp --isolated``: one per MCP client).

    ``start()`` is the owner's way to its state (``Session.ensure_browser``): it starts the browser
    if it has not started, and relaunches it after a crash; this object never launches, and
    :meth:`close` leaves the browser to its owner. A context opened here registers with the owner's
    origin-policy guard on the browser's DevTools session when it has one (one ``Fetch`` client per
    browser), else with a guard of its own; on a browser ocnb attached to, none (as for a
    :class:`SharedBrowser` that connected).
    """

    def __init__(self, runtime: Any, config: Settings, start: Callable[[], Awaitable[Lender]]) -> None:
        super().__init__(runtime, config)
        self._start = start
        self._owner: Lender | None = None

    async def ensure(self) -> Any:
        if self._lock is None:
            self._lock = asyncio.Lock()  # for the guard this object may open (SharedBrowser.browser_guard)
        state = await self._start()
        if state.browser is None or not state.connected:
            raise TargetClosed("the browser this context would open in is not connected")
        self.browser, self.playwright = state.browser, state.playwright
        self.executable, self.remote = state.executable, state.remote
        self._owner = state
        return self.browser

    async def browser_guard(self) -> BrowserGuard | None:
        await self.ensure()
        owned = self._owner.browser_guard if self._owner is not None else None
        if owned is not None:
            return owned
        return await super().browser_guard()

    async def close(self) -> None:
        """Close the guard this object opened, if any; the browser is its owner's."""
        self.browser = self.playwright = None
        self._guard = None
