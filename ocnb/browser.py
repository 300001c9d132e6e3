"""Finding, launching or connecting to Chromium, and the tabs of one browser context.

Everything here runs on the browser thread (see :mod:`ocnb.runtime`). Discovery order (DESIGN §2):
an explicit path (argument or ``OCNB_CHROMIUM``) → Playwright's own installed Chromium → a system
Chromium/Chrome on PATH. Failing all, :class:`~ocnb.errors.BrowserUnavailable` says what was tried.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .downloads import DOWNLOADS_DIR, Downloads
from .errors import (
    BrowserCrashed,
    BrowserUnavailable,
    DialogOpen,
    InvalidArgument,
    OcnbError,
    PageCrashed,
    TargetClosed,
)
from .logins import load_state, state_path
from .perception.listeners import install as install_listeners
from .settings import Settings

__all__ = [
    "BrowserState",
    "NetworkControls",
    "RequestRecord",
    "Ring",
    "SharedBrowser",
    "Tab",
    "find_chromium",
    "launch_args",
    "playwright_headless_shell",
]

SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Chromium's old headless mode as its own small binary: what Playwright itself runs for headless
#: launches. Same engine, no browser UI machinery: about 30% less CPU per page (bench_pool).
SYSTEM_HEADLESS_SHELLS = ("chromium-headless-shell", "chrome-headless-shell")
INSTALL_HINT = (
    "install one with `python -m playwright install chromium`, or on Debian/Ubuntu as root "
    "`apt-get install -y chromium`, or point OCNB_CHROMIUM at a Chromium/Chrome executable"
)


def playwright_headless_shell(playwright_path: str | None) -> str | None:
    """Playwright's own headless shell of the same revision as its Chromium at ``playwright_path``.

    ``playwright install chromium`` puts ``chromium-REV/…/chrome`` and
    ``chromium_headless_shell-REV/…/(chrome-)headless(_|-)shell`` side by side.
    """
    if not playwright_path:
        return None
    for parent in Path(playwright_path).parents:
        if parent.name.startswith("chromium-"):
            rev = parent.name.split("-", 1)[1]
            hits = sorted((parent.parent / f"chromium_headless_shell-{rev}").glob("*/*headless*shell"))
            return str(hits[0]) if hits else None
    return None


def find_chromium(
    explicit: str | os.PathLike[str] | None = None,
    playwright_path: str | None = None,
    *,
    headless: bool = True,
    configured: str | None = None,
) -> tuple[str | None, list[str]]:
    """Return ``(path, tried)``: the first usable browser executable and what was looked at.

    Order: the argument, ``configured`` (``Settings.chromium``: ``OCNB_CHROMIUM``), Playwright's own
    build, then the system's. Headless
    sessions prefer a headless shell at each level (Playwright's default for headless, too).
    """
    tried: list[str] = []
    candidates: list[tuple[str, str | None]] = []
    if explicit:
        candidates.append(("argument", str(explicit)))
    if configured:
        candidates.append(("OCNB_CHROMIUM", configured))
    if headless:
        candidates.append(("playwright-headless-shell", playwright_headless_shell(playwright_path)))
    candidates.append(("playwright", playwright_path))
    for name in (SYSTEM_HEADLESS_SHELLS if headless else ()) + SYSTEM_BROWSERS:
        candidates.append((f"PATH:{name}", shutil.which(name)))
    for label, path in candidates:
        if not path:
            tried.append(f"{label} (not found)")
            continue
        if Path(path).is_file() and os.access(path, os.X_OK):
            return path, tried
        tried.append(f"{label}={path} (missing)")
        if label in {"argument", "OCNB_CHROMIUM"}:
            return None, tried  # an explicit choice that fails is an error, not a silent fallback
    return None, tried


def launch_args() -> list[str]:
    """Chromium flags for a closed network; ``--no-sandbox`` only when running as root."""
    args = [
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--no-first-run",
        "--disable-dev-shm-usage",
        # No --disable-features here: Chromium keeps only the last one, and Playwright passes its
        # own list (MediaRouter, OptimizationHints, PaintHolding, ...), which ours would replace.
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


#: Console messages are kept (and traced) cut to this many characters, after masking secrets.
CONSOLE_MAX_CHARS = 2000

T = TypeVar("T")


class Ring(deque[T]):
    """A bounded log: keeps the last ``maxlen`` entries and counts those that rolled off (``dropped``)."""

    def __init__(self, maxlen: int) -> None:
        super().__init__((), maxlen)
        self.dropped = 0

    def append(self, item: T) -> None:
        if len(self) == self.maxlen:
            self.dropped += 1
        super().append(item)


@dataclass(eq=False)
class RequestRecord:
    """One request of a tab as ocnb saw it: filled in as its response, end or failure arrive.

    ``request`` and ``response`` are the Playwright objects, held to read headers and bodies later;
    ``response`` is let go once the tab's newest ``network_bodies`` responses no longer include it.
    """

    id: int
    ts: float
    method: str
    url: str
    resource_type: str
    request: Any = field(repr=False)
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    status: int | None = None
    status_text: str = ""
    response_headers: dict[str, str] = field(default_factory=dict, repr=False)
    response_ts: float | None = None
    end_ts: float | None = None
    failure: str | None = None
    response: Any = field(default=None, repr=False)
    #: The response was seen but its object let go (older than the newest ``network_bodies``).
    body_released: bool = False

    @property
    def state(self) -> str:
        """``failed``, ``done`` (finished), ``responded`` (headers in, body still coming) or ``pending``."""
        if self.failure is not None:
            return "failed"
        if self.end_ts is not None:
            return "done"
        return "responded" if self.status is not None else "pending"

    @property
    def duration_ms(self) -> float | None:
        end = self.end_ts if self.end_ts is not None else self.response_ts
        return None if end is None else round((end - self.ts) * 1000, 1)


@dataclass
class NetworkControls:
    """What ``network_route`` and ``network_conditions`` set on the context: routes and conditions.

    A route is ``{"url", "action", "status"?, "handler"}`` (the handler is the Playwright route callback);
    ``throttle`` is ``{"latency_ms", "download_kbps", "upload_kbps"}`` applied to every tab through CDP.
    """

    routes: list[dict[str, Any]] = field(default_factory=list)
    offline: bool = False
    throttle: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: ``{"username", "origin", "send"}`` of the HTTP credentials (the password is held by Playwright's
    #: context and, with ``send: always``, by the route only).
    http_auth: dict[str, str] | None = None
    #: The route that sends Basic credentials unasked (``(matcher, handler)``), to remove it on change.
    auth_route: tuple[Any, Any] | None = None
    cdp: dict[int, Any] = field(default_factory=dict)


#: How long ``dialog_answer`` waits for the calls a dialog interrupted to finish once it is answered.
RESUME_WAIT_S = 5.0


@dataclass(eq=False)
class PendingDialog:
    """A dialog left open under ``dialog_policy="manual"``: its page is frozen until it is answered.

    ``record`` is its entry in ``Tab.dialogs`` (``action`` is ``pending`` until answered);
    ``interrupted`` holds the calls that were running when it opened and returned at once
    (``(tool, seq, task)``): they finish once it is answered.
    """

    dialog: Any
    record: dict[str, Any]
    interrupted: list[tuple[str, int, Any]] = field(default_factory=list)

    def describe(self, tab_id: str) -> dict[str, Any]:
        """What a result shows: ``{"tab_id", "type", "message", "default"}``."""
        return {
            "tab_id": tab_id,
            "type": self.record["type"],
            "message": self.record["message"],
            "default": self.record.get("default_value") or "",
        }


@dataclass
class Tab:
    """One page of the context plus what ocnb observed on it (bounded ring buffers)."""

    id: str
    page: Any
    #: Console messages and page errors, each ``{"id", "ts", "type", "text", "url"}`` (text masked, cut).
    console: Ring[dict[str, Any]] = field(default_factory=lambda: Ring(200))
    #: Requests, oldest first; ``id`` shares the browser's sequence with console entries.
    network: Ring[RequestRecord] = field(default_factory=lambda: Ring(500))
    dialogs: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))
    #: Steps captured with ``capture_artifact: true`` (skill recording), at most 100.
    capture: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=100))
    opener: str | None = None
    created: float = field(default_factory=time.time)
    #: Closed on purpose (tabs_close, a failed tabs_create), not lost to a crash.
    closing: bool = False
    #: The last title read from the page: what ``tabs_context`` shows for a page too busy to answer.
    title: str = ""
    #: The renderer died (Playwright's ``crash`` event): every call on the tab is ``PAGE_CRASHED``.
    crashed: bool = False
    #: A dialog waiting for ``dialog_answer`` (``dialog_policy="manual"``).
    pending_dialog: PendingDialog | None = None
    #: Emulation the ``emulate`` tool set on this tab (re-applied after each call: Playwright's own
    #: screenshots reset device metrics); any object with ``async refresh()``.
    emulation: Any = None
    #: Requests still waiting for their end, by ``id()`` of the Playwright request.
    open_requests: dict[int, RequestRecord] = field(default_factory=dict, repr=False)

    @property
    def closed(self) -> bool:
        return bool(self.page.is_closed())

    @property
    def responses(self) -> list[dict[str, Any]]:
        """The responses among the kept requests: ``{"id", "ts", "url", "status", "method"}`` (ts: response time)."""
        return [
            {"id": r.id, "ts": r.response_ts, "url": r.url, "status": r.status, "method": r.method}
            for r in self.network
            if r.status is not None
        ]


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
        self.requests: deque[dict[str, Any]] = deque(maxlen=2000)
        self._ids = itertools.count(1)
        #: One sequence for console entries and requests of every tab: a ``mark`` is its last value.
        self._seq = itertools.count(1)
        self.last_seq = 0
        #: Requests whose response object is held for its body (the newest ``network_bodies``).
        self._bodies: deque[RequestRecord] = deque()
        self.controls = NetworkControls()
        self._by_page: dict[int, Tab] = {}
        #: Set when the browser died under us (not by :meth:`close`): when, and the tabs lost.
        self.crash: dict[str, Any] | None = None
        #: True once a call has been answered ``BROWSER_CRASHED``; the next one relaunches.
        self.crash_reported = False
        self._closing = False
        self._gone: deque[tuple[float, dict[str, Any]]] = deque(maxlen=100)
        #: Futures of running calls, each resolved with the tab whose dialog opened under "manual".
        self._dialog_waiters: set[Any] = set()
        #: Files the pages downloaded (kept under OCNB_HOME/downloads, or refused).
        self.downloads = Downloads(config.home_path / DOWNLOADS_DIR, config.download_max_bytes, self._event)
        #: False when attached (CDP) to a browser's own context: close() leaves it open.
        self._own_context = True
        #: False when the browser is a :class:`SharedBrowser`'s: close() closes only the context.
        self._own_browser = True

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
        from playwright.async_api import async_playwright

        # A saved login is checked and read before anything starts: a refused one changes nothing.
        initial = load_state(state_path(self.config.storage_state, self.config)) if self.config.storage_state else None
        profile = self.config.user_data_dir
        if profile is not None and (connect or cdp or shared):
            raise InvalidArgument("user_data_dir is for a browser ocnb launches, not with connect, cdp or shared")
        width, height = self.config.viewport
        if shared is None:
            self._pw = await async_playwright().start()
        try:
            if shared is not None:  # somebody else's browser: this state owns only its context
                self.browser = await shared.ensure()  # first: it starts the shared Playwright
                self._pw = shared.playwright
                self.executable, self.remote, self._own_browser = shared.executable, shared.remote, False
            elif connect:
                # The server launches the browser; it honours executablePath/args only in --unsafe mode.
                options: dict[str, Any] = {"headless": self.config.headless, "args": launch_args()}
                if executable_path:
                    options["executablePath"] = str(executable_path)
                try:
                    self.browser = await self._pw.chromium.connect(
                        connect,
                        timeout=self.config.default_timeout_ms,
                        headers={"x-playwright-launch-options": json.dumps(options)},
                    )
                except Exception as exc:  # noqa: BLE001 - a server that is gone or cannot launch: one clear code
                    raise BrowserUnavailable(
                        f"cannot reach the browser at {connect}: {str(exc).splitlines()[0]}",
                        details={"remote": connect},
                    ) from exc
                self.remote = connect
            elif cdp:
                self.browser = await self._pw.chromium.connect_over_cdp(cdp, timeout=self.config.default_timeout_ms)
                self.remote = cdp
                if self.browser.contexts and initial is None:  # attach: the browser's own tabs and logins
                    self.context, self._own_context = self.browser.contexts[0], False
            else:
                own = None
                try:
                    own = self._pw.chromium.executable_path
                except Exception:  # noqa: BLE001 - Playwright raises when no build is registered
                    own = None
                path, tried = find_chromium(
                    executable_path, own, headless=self.config.headless, configured=self.config.chromium
                )
                if path is None:
                    raise BrowserUnavailable(
                        "no Chromium found (tried: " + "; ".join(tried) + "); " + INSTALL_HINT,
                        details={"tried": tried},
                    )
                self.executable = path
                try:
                    if profile is not None:  # a persistent profile: the context is the browser
                        self.context = await self._pw.chromium.launch_persistent_context(
                            _private_profile(profile),
                            executable_path=path,
                            headless=self.config.headless,
                            args=launch_args(),
                            viewport={"width": width, "height": height},
                            accept_downloads=True,
                        )
                        self.browser = self.context.browser
                        if initial is not None:
                            await self.context.set_storage_state(initial)
                    else:
                        self.browser = await self._pw.chromium.launch(
                            executable_path=path, headless=self.config.headless, args=launch_args()
                        )
                except Exception as exc:  # noqa: BLE001
                    raise BrowserUnavailable(
                        f"launching {path} failed: {str(exc).splitlines()[0]}; {INSTALL_HINT}"
                    ) from exc
            self.connected = True
            if self.browser is not None:
                self.browser.on("disconnected", self._on_disconnected)
            if self.context is None:
                self.context = await self.browser.new_context(
                    viewport={"width": width, "height": height}, accept_downloads=True, storage_state=initial
                )
            await install_listeners(self.context)  # script-driven controls get refs (perception/listeners.py)
            self.context.on("page", self._on_page)
            self.context.on("request", self._on_request)
            for page in self.context.pages:  # a profile's first page, or the tabs of an attached browser
                self.active_id = self._register(page).id
            if not self.tabs:
                await self.new_tab()
        except BaseException:
            await self.close()
            raise

    def _on_disconnected(self, _browser: Any) -> None:
        self.connected = False
        if self._closing or self.crash is not None:
            return
        now = time.monotonic()
        lost = [info for ts, info in self._gone if now - ts < 5.0]
        lost += [{"tab_id": t.id, "url": t.page.url, "title": t.title} for t in self.tabs.values()]
        lost.sort(key=lambda t: int(t["tab_id"][1:]))
        self.crash = {"ts": time.time(), "lost_tabs": lost, "remote": self.remote}
        self.on_event("browser_crashed", {"lost_tabs": lost, "remote": self.remote})

    def crashed_error(self) -> BrowserCrashed:
        """The ``BROWSER_CRASHED`` error for this dead browser; marks the crash as reported."""
        crash = self.crash or {"lost_tabs": [], "remote": self.remote}
        self.crash_reported = True
        lost = crash["lost_tabs"]
        what = "the connection to the remote browser dropped" if crash.get("remote") else "the browser process died"
        tabs = ", ".join(f"{t['tab_id']} {t['url']}" for t in lost[:10]) or "none"
        return BrowserCrashed(
            f"{what}; lost {len(lost)} tab(s): {tabs}. The next call starts a new browser",
            details={"lost_tabs": lost, "relaunch": "next call"},
        )

    async def close(self) -> None:
        """Close context, browser and Playwright; safe to call twice and after a crash."""
        self._closing = True
        context = self.context if self._own_context else None  # an attached browser's own context stays
        browser, pw = (self.browser, self._pw) if self._own_browser else (None, None)
        if not self._own_browser and self.browser is not None:
            self.browser.remove_listener("disconnected", self._on_disconnected)
        for obj, method in ((context, "close"), (browser, "close"), (pw, "stop")):
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
        page.on("console", lambda msg, t=tab: self._on_console(t, msg))
        page.on("framenavigated", lambda frame, t=tab: self._on_navigated(t, frame))
        page.on("download", lambda d, t=tab: self._on_download(t, d))
        page.on("pageerror", lambda err, t=tab: self._on_page_error(t, err))
        page.on("request", lambda r, t=tab: self._on_tab_request(t, r))
        page.on("response", lambda r, t=tab: self._on_response(t, r))
        page.on("requestfinished", lambda r, t=tab: self._on_request_end(t, r, None))
        page.on("requestfailed", lambda r, t=tab: self._on_request_end(t, r, r.failure or "failed"))
        if self.controls.throttle is not None:
            self._spawn(self.apply_throttle(page))
        page.on("dialog", lambda d, t=tab: self._on_dialog(t, d))
        page.on("close", lambda p, t=tab: self._on_close(t))
        page.on("crash", lambda p, t=tab: self._on_crash(t))
        if self.config.titles_on_load:
            page.on("domcontentloaded", lambda p, t=tab: self._refresh_title(t))
        return tab

    def _event(self, kind: str, body: dict[str, Any]) -> None:
        self.on_event(kind, body)

    def _on_download(self, tab: Tab, download: Any) -> None:
        """Record a download for the trace and keep its file (or refuse it): see :mod:`ocnb.downloads`."""
        self.on_event("download", {"tab_id": tab.id, "url": download.url, "filename": download.suggested_filename})
        request = next((r for r in reversed(tab.network) if r.url == download.url), None)
        self.downloads.max_bytes = self.config.download_max_bytes
        self.downloads.start(tab.id, download, request)

    def _refresh_title(self, tab: Tab) -> None:
        """Remember the title of a page that just loaded (``tabs_context`` shows it if the page hangs later)."""
        import asyncio

        async def read() -> None:
            with contextlib.suppress(Exception):
                tab.title = await asyncio.wait_for(tab.page.title(), 2)

        asyncio.ensure_future(read())

    def _on_crash(self, tab: Tab) -> None:
        tab.crashed = True
        self.on_event("page_crash", {"tab_id": tab.id, "url": tab.page.url})

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

    # -- network --------------------------------------------------------------------------------
    def _on_tab_request(self, tab: Tab, request: Any) -> None:
        rec = RequestRecord(
            id=self.next_seq(),
            ts=time.time(),
            method=request.method,
            url=request.url,
            resource_type=request.resource_type,
            request=request,
            headers=dict(request.headers),
        )
        tab.network.append(rec)
        tab.open_requests[id(request)] = rec
        if len(tab.open_requests) > 2 * len(tab.network):  # requests that never ended and rolled off
            oldest = tab.network[0].id
            tab.open_requests = {k: r for k, r in tab.open_requests.items() if r.id >= oldest}

    def _on_response(self, tab: Tab, response: Any) -> None:
        rec = tab.open_requests.get(id(response.request))
        if rec is None:
            return
        rec.status, rec.status_text = response.status, response.status_text
        rec.response_headers = dict(response.headers)
        rec.response_ts = time.time()
        rec.response = response
        self._bodies.append(rec)
        while len(self._bodies) > self.config.network_bodies:
            old = self._bodies.popleft()
            old.response, old.body_released = None, True

    def _on_request_end(self, tab: Tab, request: Any, failure: str | None) -> None:
        rec = tab.open_requests.pop(id(request), None)
        if rec is not None:
            rec.end_ts, rec.failure = time.time(), failure

    async def apply_throttle(self, page: Any) -> None:
        """Send the context's offline and throttle state to one page through its CDP session."""
        ctl = self.controls
        session = ctl.cdp.get(id(page))
        if session is None:
            session = ctl.cdp[id(page)] = await self.context.new_cdp_session(page)
        t = ctl.throttle or {}

        def rate(key: str) -> float:  # CDP wants bytes per second; -1 switches the limit off
            return float(t[key]) * 1000 / 8 if t.get(key) else -1

        await session.send(
            "Network.emulateNetworkConditions",
            {
                "offline": ctl.offline,
                "latency": t.get("latency_ms", 0),
                "downloadThroughput": rate("download_kbps"),
                "uploadThroughput": rate("upload_kbps"),
            },
        )

    @staticmethod
    def _spawn(coro: Any) -> None:
        import asyncio

        task = asyncio.ensure_future(coro)
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    def _on_navigated(self, tab: Tab, frame: Any) -> None:
        if frame.parent_frame is None:
            self.on_event("navigation", {"tab_id": tab.id, "url": frame.url})

    def _on_page(self, page: Any) -> None:
        opener = self.active_id
        tab = self._register(page, opener=opener)
        if opener is not None and tab.id != opener:
            self.active_id = tab.id  # a popup the page opened comes to the front, as in a browser
            self.on_event("popup", {"tab_id": tab.id, "opener": opener})

    def _on_request(self, request: Any) -> None:
        self.requests.append({"ts": time.time(), "url": request.url, "method": request.method})

    def _on_close(self, tab: Tab) -> None:
        if tab.id in self.tabs and not tab.closing:
            # A crash closes every page a moment before the browser reports the disconnect.
            self._gone.append((time.monotonic(), {"tab_id": tab.id, "url": tab.page.url, "title": tab.title}))
        self.tabs.pop(tab.id, None)
        self._by_page.pop(id(tab.page), None)
        self.controls.cdp.pop(id(tab.page), None)
        if self.active_id == tab.id:
            self.active_id = next(reversed(self.tabs), None) if self.tabs else None

    def _on_dialog(self, tab: Tab, dialog: Any) -> None:
        """Record a dialog on the tab and handle it with the configured policy: ``accept`` and
        ``dismiss`` answer it at once; ``manual`` leaves it open for ``dialog_answer`` and wakes the
        running call (see :meth:`guard_call`)."""
        policy = self.config.dialog_policy
        accept = policy == "accept"
        record = {
            "ts": time.time(),
            "type": dialog.type,
            "message": dialog.message,
            "default_value": dialog.default_value,
            "action": "pending" if policy == "manual" else "accepted" if accept else "dismissed",
        }
        tab.dialogs.append(record)
        self.on_event(
            "dialog",
            {"tab_id": tab.id, "type": record["type"], "message": record["message"], "action": record["action"]},
        )
        if policy == "manual":
            tab.pending_dialog = PendingDialog(dialog, record)
            for waiter in list(self._dialog_waiters):
                if not waiter.done():
                    waiter.set_result(tab)
            return
        coro = (
            dialog.accept(dialog.default_value)
            if (accept and dialog.type == "prompt")
            else (dialog.accept() if accept else dialog.dismiss())
        )
        import asyncio

        task = asyncio.ensure_future(coro)
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    # -- dialogs left open ("manual") and the calls around them ---------------------------------
    def pending_dialogs(self) -> list[dict[str, Any]]:
        """Every dialog waiting for an answer, as results show it (``tab_id``, ``type``, ``message``, ``default``)."""
        return [t.pending_dialog.describe(t.id) for t in self.tabs.values() if t.pending_dialog is not None]

    async def answer_dialog(self, tab: Tab, *, accept: bool = True, text: str | None = None) -> dict[str, Any]:
        """Answer the dialog waiting on ``tab``; then wait (at most :data:`RESUME_WAIT_S`) for the
        calls it interrupted and report how each ended.

        ``text`` answers a prompt (accepted); without it a prompt gets its default value, as the
        ``accept`` policy does. No dialog, or ``text`` for a dialog that is not a prompt, is
        ``INVALID_ARGUMENT`` and answers nothing.
        """
        import asyncio

        pending = tab.pending_dialog
        if pending is None:
            raise InvalidArgument(
                f"no dialog is waiting on tab {tab.id}", details={"tab_id": tab.id, "pending": self.pending_dialogs()}
            )
        kind = pending.record["type"]
        if text is not None and kind != "prompt":
            raise InvalidArgument(f"text answers a prompt; this dialog is {kind}", details={"type": kind})
        dialog = pending.dialog
        try:
            if not accept:
                await dialog.dismiss()
            elif kind == "prompt":
                await dialog.accept(dialog.default_value if text is None else text)
            else:
                await dialog.accept()
        except Exception:  # noqa: BLE001 - the page went away or navigated: the dialog is gone either way
            pending.record["action"] = "gone"
        else:
            pending.record["action"] = "accepted" if accept else "dismissed"
        tab.pending_dialog = None
        self.on_event(
            "dialog",
            {"tab_id": tab.id, "type": kind, "message": pending.record["message"], "action": pending.record["action"]},
        )
        resumed = []
        tasks = [task for _, _, task in pending.interrupted]
        if tasks:
            await asyncio.wait(tasks, timeout=RESUME_WAIT_S)
        for name, seq, task in pending.interrupted:
            entry: dict[str, Any] = {"tool": name, "seq": seq, "done": task.done()}
            if task.done() and not task.cancelled():
                exc = task.exception()
                entry["ok"] = exc is None
                if isinstance(exc, OcnbError):
                    entry["error"] = {"code": exc.code, "message": exc.message}
                elif exc is not None:
                    entry["error"] = {"code": "INTERNAL", "message": f"{type(exc).__name__}: {exc}"[:300]}
                else:
                    entry["data"] = task.result()
            resumed.append(entry)
        return {
            "tab_id": tab.id,
            "type": kind,
            "message": pending.record["message"],
            "action": pending.record["action"],
            "resumed": resumed,
        }

    def _call_tab(self, call: Any) -> Tab | None:
        tab_id = call.exec_args.get("tab_id") if isinstance(call.exec_args, dict) else None
        return self.tabs.get(tab_id if isinstance(tab_id, str) else (self.active_id or ""))

    async def guard_call(self, call: Any, coro: Any) -> Any:
        """Run one call's handler (dispatch does, for every call) under the dialog rules.

        Under ``dialog_policy="manual"`` a page-using call on a tab whose dialog waits is refused at
        once (``DIALOG_OPEN``: the page is frozen, the call would hang), except the ``dialogs``
        tools; a call during which a dialog opens returns at once with ``completed: false`` and the
        ``pending_dialog`` (what the handler put in ``call.extra["partial"]`` first, e.g. the element
        about to be clicked), and finishes in the background once the dialog is answered. While a
        dialog waits, every result's data (a dict) carries ``pending_dialog``. A tab with emulation
        gets it re-applied after the call.
        """
        import asyncio

        tooldef = call.tooldef
        target = self._call_tab(call)
        manual = self.config.dialog_policy == "manual"
        if not manual and not any(t.pending_dialog is not None for t in self.tabs.values()):
            result = await coro
            await self._refresh_emulation(target)
            return result
        if (
            target is not None
            and target.pending_dialog is not None
            and getattr(tooldef, "uses_page", False)
            and getattr(tooldef, "category", "") != "dialogs"
        ):
            coro.close()
            pending = target.pending_dialog.describe(target.id)
            raise DialogOpen(
                f"a {pending['type']} dialog waits on tab {target.id} ({pending['message'][:80]!r}); "
                "answer it with dialog_answer, or close the tab",
                details={"pending_dialog": pending},
            )
        waiter = asyncio.get_running_loop().create_future()
        self._dialog_waiters.add(waiter)
        task = asyncio.ensure_future(coro)
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the call's timeout (or shutdown): the handler goes with it
            task.cancel()
            raise
        finally:
            self._dialog_waiters.discard(waiter)
        if not task.done():
            tab: Tab = waiter.result()
            pending_dialog = tab.pending_dialog
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
            if pending_dialog is not None:
                pending_dialog.interrupted.append((call.name, call.seq, task))
                described = pending_dialog.describe(tab.id)
            else:  # answered already (by another face): nothing to report but that the call goes on
                described = None
            partial = call.extra.get("partial")
            return {**(partial if isinstance(partial, dict) else {}), "completed": False, "pending_dialog": described}
        await self._refresh_emulation(target)
        waiting = self.pending_dialogs()
        pending_now = next((d for d in waiting if target is not None and d["tab_id"] == target.id), None)
        pending_now = pending_now or (waiting[0] if waiting else None)
        try:
            data = task.result()
        except OcnbError as exc:
            if pending_now is not None:
                exc.details.setdefault("pending_dialog", pending_now)
            raise
        if pending_now is not None and isinstance(data, dict):
            data = {**data, "pending_dialog": pending_now}
        return data

    async def _refresh_emulation(self, tab: Tab | None) -> None:
        if tab is None or tab.emulation is None or tab.pending_dialog is not None or tab.closed:
            return
        import asyncio

        with contextlib.suppress(Exception):
            await asyncio.wait_for(tab.emulation.refresh(), 2.0)

    async def new_tab(self, url: str | None = None) -> Tab:
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
        if self.crash is not None:
            raise self.crashed_error()
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
                raise InvalidArgument(
                    f"no tab {tab_id!r}; open tabs: {', '.join(self.tabs) or 'none'}", details={"tab_id": tab_id}
                )
            tab = found
        if tab.crashed and not crashed_ok:
            raise self.page_crashed_error(tab)
        return tab

    @staticmethod
    def page_crashed_error(tab: Tab) -> PageCrashed:
        return PageCrashed(
            f"the page in tab {tab.id} crashed ({tab.page.url}); close it with tabs_close and open a new one",
            details={"tab_id": tab.id, "url": tab.page.url},
        )

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


class SharedBrowser:
    """One browser that several sessions share, each with its own context.

    It runs on one :class:`~ocnb.runtime.Runtime` that those sessions share (Playwright objects
    belong to one event loop). :meth:`ensure` launches it (or connects: ``connect=`` a Playwright
    server, ``cdp=`` an endpoint) on first use and again after it died; a session's ``close()``
    closes only its context, and :meth:`close` closes the browser.
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
        self._lock: Any = None

    async def ensure(self) -> Any:
        """The live browser: launched or connected now if it is not (first use, or it died)."""
        import asyncio

        from playwright.async_api import async_playwright

        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.browser is not None and self.browser.is_connected():
                return self.browser
            if self.playwright is None:
                self.playwright = await async_playwright().start()
            chromium = self.playwright.chromium
            timeout = self.config.default_timeout_ms
            if self.connect or self.cdp:
                try:
                    if self.connect:
                        options: dict[str, Any] = {"headless": self.config.headless, "args": launch_args()}
                        if self.executable_path:
                            options["executablePath"] = self.executable_path
                        headers = {"x-playwright-launch-options": json.dumps(options)}
                        self.browser = await chromium.connect(self.connect, timeout=timeout, headers=headers)
                    else:
                        self.browser = await chromium.connect_over_cdp(self.cdp, timeout=timeout)
                except Exception as exc:  # noqa: BLE001 - a server that is gone: one clear code
                    raise BrowserUnavailable(
                        f"cannot reach the browser at {self.remote}: {str(exc).splitlines()[0]}",
                        details={"remote": self.remote},
                    ) from exc
            else:
                own = None
                with contextlib.suppress(Exception):  # Playwright raises when no build is registered
                    own = chromium.executable_path
                path, tried = find_chromium(
                    self.executable_path, own, headless=self.config.headless, configured=self.config.chromium
                )
                if path is None:
                    raise BrowserUnavailable(
                        "no Chromium found (tried: " + "; ".join(tried) + "); " + INSTALL_HINT, details={"tried": tried}
                    )
                self.executable = path
                self.browser = await chromium.launch(
                    executable_path=path, headless=self.config.headless, args=launch_args()
                )
            return self.browser

    async def close(self) -> None:
        """Close the browser (every context on it) and stop Playwright; safe to call twice."""
        for obj, method in ((self.browser, "close"), (self.playwright, "stop")):
            if obj is not None:
                with contextlib.suppress(Exception):  # already gone is fine
                    await getattr(obj, method)()
        self.browser = self.playwright = None


def _private_profile(folder: Path) -> str:
    """A profile folder, created 0700 when new (it holds cookies and logins)."""
    from .storage import private_dir

    return str(private_dir(folder))
