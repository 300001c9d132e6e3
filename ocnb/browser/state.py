"""A browser, its one context and its tabs: what a session drives, on the browser thread.

:class:`BrowserState` opens the browser (:func:`~ocnb.browser.launch.open_browser`: launched, or
connected to a Playwright server or a CDP endpoint, or a context in a
:class:`~ocnb.browser.shared.SharedBrowser`), registers each page as a :class:`~ocnb.browser.tabs.Tab`,
and owns one part per concern, each holding its own state: ``network``
(:class:`~ocnb.browser.network.NetworkLog`), ``dialogs`` (:class:`~ocnb.browser.dialogs.Dialogs`),
``crashes`` (:class:`~ocnb.browser.crashes.CrashLog`) and ``downloads``
(:class:`~ocnb.browser.download_store.Downloads`). Everything here runs on the browser thread
(:mod:`ocnb.browser.runtime`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgument, TargetClosed
from ..perception.listeners import install as install_listeners
from ..settings import Settings
from . import policy as origin_policy
from . import proxy_guard
from .crashes import CrashLog
from .dialogs import Dialogs
from .download_store import DOWNLOADS_DIR, Downloads
from .driver import start_playwright
from .fetch_guard import BrowserGuard, open_browser_guard
from .launch import open_browser
from .network import NetworkLog, signed
from .saved_logins import load_state, state_path
from .tabs import Ring, Tab

if TYPE_CHECKING:
    from .shared import SharedBrowser

__all__ = ["CONSOLE_MAX_CHARS", "BrowserState"]

#: Console messages are kept (and traced) cut to this many characters, after masking secrets.
CONSOLE_MAX_CHARS = 2000


class BrowserState:
    """The browser, its one context and its tabs. Create with :meth:`start` on the browser thread."""

    def __init__(
        self,
        config: Settings,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
        clip_text: Callable[[str, int], str] | None = None,
    ) -> None:
        self.config = config
        #: Receives page events for the trace: navigation, console, dialog, download, popup.
        self.on_event = on_event or (lambda kind, body: None)
        #: Cuts console text to a length; the session's masks secrets first (``SecretStore.clip_text``).
        self.clip_text = clip_text or (lambda text, n: text[:n])
        self._pw: Any = None
        self.browser: Any = None
        self.context: Any = None
        self.tabs: dict[str, Tab] = {}
        self.active_id: str | None = None
        self.executable: str | None = None
        self.remote: str | None = None
        self.connected = False
        #: True from the start of :meth:`close`: a disconnect after it is no crash.
        self.closing = False
        self._ids = itertools.count(1)
        #: One sequence for console entries and requests of every tab: a ``mark`` is its last value.
        self._seq = itertools.count(1)
        self.last_seq = 0
        self._by_page: dict[int, Tab] = {}
        #: Requests of every tab, and what network_route and network_conditions set.
        self.network = NetworkLog(self)
        #: Dialogs: answered by the policy, or left open for dialog_answer ("manual").
        self.dialogs = Dialogs(self, self._event)
        #: Whether the browser died under us, and the tabs it took.
        self.crashes = CrashLog(self._event)
        #: Files the pages downloaded (kept under OCNB_HOME/downloads, or refused).
        self.downloads = Downloads(config.home_path / DOWNLOADS_DIR, config.download_max_bytes, self._event)
        #: False when attached (CDP) to a browser's own context: close() leaves it open.
        self._own_context = True
        #: The origin policy's interceptors on the context (None without a policy): :mod:`ocnb.browser.policy`.
        self.origin_guard: origin_policy.OriginGuard | None = None
        #: The browser-level guard this context is registered with, and under which id (ocnb/browser/fetch_guard.py).
        self._browser_guard: tuple[BrowserGuard, str | None] | None = None
        #: The network guard's proxy when it enforces the policy (:mod:`ocnb.browser.proxy_guard`).
        self._proxy: proxy_guard.RefusingProxy | None = None
        #: False when the browser is a :class:`SharedBrowser`'s: close() closes only the context.
        self._own_browser = True

    @property
    def browser_guard(self) -> BrowserGuard | None:
        """The origin policy's browser-level guard this context is registered with (None: none)."""
        return self._browser_guard[0] if self._browser_guard is not None else None

    @property
    def playwright(self) -> Any:
        """The Playwright instance behind this browser (None before :meth:`start` and after close)."""
        return self._pw

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(
        self,
        *,
        executable_path: str | None = None,
        connect: str | None = None,
        cdp: str | None = None,
        shared: SharedBrowser | None = None,
    ) -> None:
        """Launch or connect a browser and open this state's context; with ``shared``, only the context."""
        # A saved login is checked and read before anything starts: a refused one changes nothing.
        initial = load_state(state_path(self.config.storage_state, self.config)) if self.config.storage_state else None
        profile = self.config.user_data_dir
        if profile is not None and (connect or cdp or shared):
            raise InvalidArgument("user_data_dir is for a browser ocnb launches, not with connect, cdp or shared")
        width, height = self.config.viewport
        policy = self.config.origin_policy()
        if shared is None:
            self._pw = await start_playwright()  # its driver outside the kernel's process group
        else:
            await shared.ensure()  # first: it starts the shared Playwright, and says whether it is remote
        try:
            # an allow-list on a browser ocnb launches: the network stack enforces it (ocnb/browser/proxy_guard.py)
            launched = not (cdp or connect or (shared is not None and shared.remote))
            proxy = self._proxy = (
                await proxy_guard.open_proxy() if launched and proxy_guard.USE and proxy_guard.covers(policy) else None
            )
            if shared is not None:  # somebody else's browser: this state owns only its context
                self.browser = await shared.ensure()
                self._pw = shared.playwright
                self.executable, self.remote, self._own_browser = shared.executable, shared.remote, False
            else:
                opened = await open_browser(
                    self._pw,
                    self.config,
                    executable_path=executable_path,
                    connect=connect,
                    cdp=cdp,
                    profile=_private_profile(profile) if profile is not None else None,
                    initial=initial,
                    attach=True,
                    proxy=proxy.options(policy) if proxy is not None else None,
                )
                self.browser, self.context, self._own_context = opened.browser, opened.context, opened.own_context
                self.executable, self.remote = opened.executable, opened.remote
            self.connected = True
            if self.browser is not None:
                self.browser.on("disconnected", self._on_disconnected)
            # the browser-level guard: on a browser ocnb launched, shared (every context registers, so a
            # request's context can be found) or alone (only with a policy the proxy does not enforce);
            # none on one it attached to
            guard, context_id = None, None
            if shared is not None:
                guard = await shared.browser_guard()
            elif policy and proxy is None and not (cdp or connect):
                guard = await open_browser_guard(self.browser)

            def new_context() -> Any:
                options: dict[str, Any] = {"proxy": proxy.options(policy)} if proxy is not None else {}
                return self.browser.new_context(
                    viewport={"width": width, "height": height},
                    accept_downloads=True,
                    storage_state=initial,
                    service_workers="block" if policy else "allow",  # their requests cannot be routed
                    **options,
                )

            if self.context is None and shared is not None and guard is not None:
                self.context, context_id = await guard.new_context(new_context)
                guard = guard if context_id is not None else None  # not found: the per-page guard
            elif self.context is None:
                self.context = await new_context()
            if policy:
                self.origin_guard = await origin_policy.install(
                    self.context,
                    policy,
                    self._event,
                    lambda page: getattr(self._by_page.get(id(page)), "id", None),
                    routes=self.network.routes,
                    per_page=guard is None,
                    browser_cdp=guard.cdp if guard is not None and shared is None else None,  # holds it alone
                    network=proxy,
                )
            if guard is not None:
                context = self.context
                judge = self.origin_guard if proxy is None else None  # the proxy's context: known, never paused
                await guard.register(context_id, judge, lambda: list(context.pages))
                self._browser_guard = (guard, context_id)
            await install_listeners(self.context)  # script-driven controls get refs (perception/listeners.py)
            self.context.on("page", self._on_page)
            self.context.on("request", signed(lambda request: self.network.on_context_request(request)))
            for page in self.context.pages:  # a profile's first page, or the tabs of an attached browser
                self.active_id = self._register(page).id
            if not self.tabs:
                await self.new_tab()
        except BaseException:
            await self.close()
            raise

    def _on_disconnected(self, _browser: Any) -> None:
        self.connected = False
        if self.closing or self.crashes.current is not None:
            return
        self.crashes.disconnected(self.tabs.values(), self.remote)

    async def close(self) -> None:
        """Close context, browser and Playwright; safe to call twice and after a crash."""
        self.closing = True
        context = self.context if self._own_context else None  # an attached browser's own context stays
        browser, pw = (self.browser, self._pw) if self._own_browser else (None, None)
        if self._browser_guard is not None and not self._own_browser:
            guard, context_id = self._browser_guard
            with contextlib.suppress(Exception):  # the shared browser's guard forgets this context
                await guard.unregister(context_id)
        self._browser_guard = None
        if not self._own_browser and self.browser is not None:
            self.browser.remove_listener("disconnected", self._on_disconnected)
        proxy, self._proxy = self._proxy, None
        for obj, method in ((context, "close"), (browser, "close"), (pw, "stop"), (proxy, "close")):
            if obj is None:
                continue
            try:
                await getattr(obj, method)()
            except Exception:  # noqa: BLE001 - already gone is fine
                pass
        self.context = self.browser = self._pw = None
        self.connected = False
        self.tabs.clear()
        self._by_page.clear()
        self.active_id = None

    # -- tabs ---------------------------------------------------------------------------------
    def _register(self, page: Any, opener: str | None = None) -> Tab:
        existing = self._by_page.get(id(page))
        if existing is not None:
            return existing
        tab = Tab(
            id=f"t{next(self._ids)}",
            page=page,
            opener=opener,
            console=Ring(self.config.console_buffer),
            network=Ring(self.config.network_buffer),
        )
        self.tabs[tab.id] = tab
        self._by_page[id(page)] = tab
        page.on("console", signed(lambda msg, t=tab: self._on_console(t, msg)))
        page.on("framenavigated", signed(lambda frame, t=tab: self._on_navigated(t, frame)))
        page.on("download", signed(lambda d, t=tab: self._on_download(t, d)))
        page.on("pageerror", signed(lambda err, t=tab: self._on_page_error(t, err)))
        self.network.watch(tab)
        page.on("dialog", signed(lambda d, t=tab: self.dialogs.on_dialog(t, d)))
        page.on("close", signed(lambda p, t=tab: self._on_close(t)))
        page.on("crash", signed(lambda p, t=tab: self.crashes.page_crashed(t)))
        if self.config.titles_on_load:
            page.on("domcontentloaded", signed(lambda p, t=tab: self._refresh_title(t)))
        return tab

    def _event(self, kind: str, body: dict[str, Any]) -> None:
        self.on_event(kind, body)

    def _on_download(self, tab: Tab, download: Any) -> None:
        """Record a download for the trace and keep its file (or refuse it): see :mod:`~ocnb.browser.download_store`."""
        self.on_event("download", {"tab_id": tab.id, "url": download.url, "filename": download.suggested_filename})
        request = next((r for r in reversed(tab.network) if r.url == download.url), None)
        self.downloads.max_bytes = self.config.download_max_bytes
        self.downloads.start(tab.id, download, request)

    def _refresh_title(self, tab: Tab) -> None:
        """Remember the title of a page that just loaded (only with ``titles_on_load``: ``tabs_context``
        asks the browser for the title of a page that does not answer)."""

        async def read() -> None:
            with contextlib.suppress(Exception):
                tab.title = await asyncio.wait_for(tab.page.title(), 2)

        asyncio.ensure_future(read())

    def next_seq(self) -> int:
        """The next id of a console entry or request (shared by every tab)."""
        self.last_seq = next(self._seq)
        return self.last_seq

    def _on_console(self, tab: Tab, msg: Any) -> None:
        where = ""
        with contextlib.suppress(Exception):
            loc = msg.location
            if loc and loc.get("url"):
                where = self.clip_text(f"{loc['url']}:{loc.get('lineNumber', 0)}", 300)
        self._console_entry(tab, msg.type, msg.text, where)

    def _on_page_error(self, tab: Tab, err: Any) -> None:
        """An uncaught exception in the page: a console entry of type ``pageerror``."""
        name = getattr(err, "name", "") or "Error"
        self._console_entry(tab, "pageerror", f"{name}: {getattr(err, 'message', None) or err}", "")

    def _console_entry(self, tab: Tab, kind: str, text: str, where: str) -> None:
        entry = {
            "id": self.next_seq(),
            "ts": time.time(),
            "type": kind,
            "text": self.clip_text(text, CONSOLE_MAX_CHARS),
        }
        if where:
            entry["url"] = where
        tab.console.append(entry)
        self.on_event("console", {"tab_id": tab.id, "type": entry["type"], "text": entry["text"]})

    def _on_navigated(self, tab: Tab, frame: Any) -> None:
        if frame.parent_frame is None:
            self.on_event("navigation", {"tab_id": tab.id, "url": frame.url})

    def _on_page(self, page: Any) -> None:
        opener = self.active_id
        tab = self._register(page, opener=opener)
        if opener is not None and tab.id != opener:
            self.active_id = tab.id  # a popup the page opened comes to the front, as in a browser
            self.on_event("popup", {"tab_id": tab.id, "opener": opener})

    def _on_close(self, tab: Tab) -> None:
        if tab.id in self.tabs and not tab.closing:
            self.crashes.tab_gone(tab)
        self.tabs.pop(tab.id, None)
        self._by_page.pop(id(tab.page), None)
        self.network.forget(tab)
        if self.active_id == tab.id:
            self.active_id = next(reversed(self.tabs), None) if self.tabs else None

    async def new_tab(self) -> Tab:
        self._check()
        page = await self.context.new_page()
        tab = self._register(page)
        self.active_id = tab.id
        return tab

    async def close_tab(self, tab: Tab) -> None:
        """Close a tab on purpose and forget it; the next most recent tab becomes active."""
        tab.closing = True
        try:
            await tab.page.close()
        finally:
            self._on_close(tab)

    def live_context(self) -> Any:
        """The browser context, or the error a call on a dead or closed browser gets."""
        self._check()
        return self.context

    def _check(self) -> None:
        if self.crashes.current is not None:
            raise self.crashes.error(self.remote)
        if self.context is None or not self.connected:
            raise TargetClosed("the browser is not connected" + (f" ({self.remote})" if self.remote else ""))

    def tab(self, tab_id: str | None = None, *, crashed_ok: bool = False) -> Tab:
        """The tab ``tab_id`` (default: the active one); ``PAGE_CRASHED`` for a crashed one."""
        self._check()
        if tab_id is None:
            if self.active_id is None or self.active_id not in self.tabs:
                raise TargetClosed("no open tab; create one with tabs_create")
            tab = self.tabs[self.active_id]
        else:
            found = self.tabs.get(tab_id)
            if found is None:
                open_tabs = ", ".join(self.tabs) or "none"
                gone = self.crashes.closed_under_us(tab_id)
                if gone is not None:
                    # not a bad argument: the tab was there and closed under the call (its page closed it,
                    # or the browser is going away: a crash closes the pages a moment before the disconnect)
                    raise TargetClosed(
                        f"tab {tab_id!r} was closed, not by ocnb ({gone['url']}); open tabs: {open_tabs}",
                        details={"tab_id": tab_id},
                    )
                raise InvalidArgument(f"no tab {tab_id!r}; open tabs: {open_tabs}", details={"tab_id": tab_id})
            tab = found
        if tab.crashed and not crashed_ok:
            raise CrashLog.page_error(tab)
        return tab

    async def page(self, tab_id: str | None = None) -> Any:
        """The Playwright page of a tab; opens a fresh tab when the last one was closed."""
        self._check()
        if tab_id is None and not self.tabs:
            await self.new_tab()
        return self.tab(tab_id).page

    def tab_of(self, page: Any) -> Tab | None:
        return self._by_page.get(id(page))

    async def version(self) -> str:
        self._check()
        return str(self.browser.version)


def _private_profile(folder: Path) -> str:
    """A profile folder, created 0700 when new (it holds cookies and logins)."""
    from ..files import private_dir

    return str(private_dir(folder))
