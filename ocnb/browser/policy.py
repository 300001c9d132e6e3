"""The origin policy enforced inside the browser: every request of the session's context is checked.

:func:`install` puts an :class:`OriginGuard` on a Playwright browser context (``BrowserState.start``
calls it when ``allowed_origins`` or ``blocked_origins`` is set). Two guards:

- **The network guard** (:mod:`ocnb.browser.proxy_guard`): an allow-list with no blocked origin
  inside it, on a browser ocnb launched. The context's proxy is ocnb's refusing one, bypassed by the
  allowed origins: Chromium sends every other request there, and the proxy reports it to the
  :class:`OriginGuard` (:meth:`OriginGuard.network_refused`) and answers nothing. Only the route's rule
  (below) is added here.
- **The DevTools guard**, for every other policy (a block-list; an allow-list with a blocked origin
  inside an allowed pattern; any policy on a browser ocnb attached to). A refused request is aborted
  in the browser (``net::ERR_BLOCKED_BY_CLIENT``) before it leaves; a refused WebSocket is closed
  before it connects. Three interceptors, each for what the others cannot see:

- A DevTools ``Fetch`` interceptor, on a browser ocnb launched (for this session alone or shared by
  a pool's): on the **browser's** own DevTools session, one per browser
  (:class:`~ocnb.browser.fetch_guard.BrowserGuard`), judging each paused request by the policy of the
  context it belongs to. Every target's requests pause there from the moment it is set, each hop of
  a redirect included (Playwright routes only the first hop: ``crNetworkManager``, "We do not support
  intercepting redirects"), so a popup's first navigation, shared workers, workers, cross-process
  frames and a beacon sent as a page goes are all checked, with no race against a target's start.
  On a browser ocnb attached to (``cdp=``, ``connect=``: other contexts it must not pause) it is put
  on each page of the context as the page appears (:meth:`OriginGuard.arm`): that misses the hops of
  a popup's very first navigation and shared workers (docs/security.md says so).
- A rule of the context's one route (:class:`~ocnb.browser.routes.Routes`), asked before the rules of
  ``network_route`` and ``block_resources``: a mock cannot answer for a refused URL. Its URL matcher is
  :meth:`OriginPolicy.suspects`, so Playwright asks Python only about URLs the policy might refuse.
  With the browser-level guard it routes the context only while another rule does (a routed context
  pauses every request in Playwright and has the browser's HTTP cache off); with the per-page guard
  it always does — the first hop of each tab's, popup's and frame's requests.
- ``context.route_web_socket``: WebSocket handshakes are not requests to ``route`` or ``Fetch``. It
  patches pages only: a worker's WebSockets pass a gate put in each worker before its first line
  (:mod:`ocnb.browser.ws_guard`).

Service workers are out of reach of all three (Playwright cannot route their requests): a context
with a policy is created with ``service_workers="block"`` (see ``BrowserState.start``).

:class:`OriginReport` is the call layer that turns what the guard refused during a call into the
call's ``blocked`` (its result's ``data["blocked"]`` and its journal line).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..audit.notes import add_entry
from ..calls import CallContext, Host
from ..errors import BlockedUrl
from ..origins import OriginPolicy, origin_of
from ..results import ToolError, ToolResult
from . import ws_guard
from .fetch_guard import CACHE_MAX, answer, fetch_patterns
from .routes import Routes, Rule

__all__ = ["Blocked", "OriginGuard", "OriginReport", "install"]

#: Playwright's and Chromium's word for a request refused inside the browser.
BLOCKED_FAILURE = "ERR_BLOCKED_BY_CLIENT"
#: The origin part of a URL as Chromium writes a request's URL (canonical: lower-case host, ``/`` only).
_ORIGIN_PART = re.compile(r"^(?:https?|wss?)://[^/?#\\@]+(?=[/?#]|$)")
#: Blocked requests one call reports at most (the rest are counted).
REPORT_MAX = 20


@dataclass(frozen=True)
class Blocked:
    """One refused request: what it was for, and the rule that refused it."""

    seq: int
    ts: float
    url: str
    rule: str
    type: str
    tab_id: str | None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"url": self.url, "rule": self.rule, "type": self.type}
        if self.tab_id:
            out["tab_id"] = self.tab_id
        return out


class OriginGuard:
    """The policy's interceptors on one context, and the log of what they refused (newest 500)."""

    def __init__(
        self,
        policy: OriginPolicy,
        on_event: Callable[[str, dict[str, Any]], None] = lambda kind, body: None,
        tab_of: Callable[[Any], str | None] = lambda page: None,
    ) -> None:
        self.policy = policy
        self.on_event = on_event
        self.tab_of = tab_of
        self.log: deque[Blocked] = deque(maxlen=500)
        self._seq = itertools.count(1)
        self.last_seq = 0
        self._cdp: dict[int, Any] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        #: False when the browser-level guard judges this context's requests (:mod:`ocnb.browser.fetch_guard`).
        self.per_page = True
        #: The gate of workers' WebSockets (:mod:`ocnb.browser.ws_guard`), once installed.
        self.workers: ws_guard.ContextWatch | None = None
        #: The policy's decision per origin, as :meth:`decide` remembers it.
        self.decisions: dict[str, str | None] = {}
        #: True when the network guard's proxy enforces the policy (:mod:`ocnb.browser.proxy_guard`).
        self.network = False

    # -- what the interceptors share ------------------------------------------------------------
    def decide(self, url: str) -> str | None:
        """``policy.check(url)``, remembered per origin (a request's URL as Chromium writes it): what the
        browser-level guard asks of every paused request."""
        match = _ORIGIN_PART.match(url)
        if match is None:
            return self.policy.check(url)
        key = match.group(0)
        cache = self.decisions
        if key not in cache:
            if len(cache) >= CACHE_MAX:
                cache.clear()
            cache[key] = self.policy.check(key + "/")
        return cache[key]

    def refuse(self, url: str, kind: str, page: Any = None) -> str | None:
        """The rule refusing a request to ``url`` (logged, and sent to the trace), or None."""
        rule = self.policy.check(url)
        if rule is not None:
            tab_id = None
            with contextlib.suppress(Exception):
                tab_id = self.tab_of(page) if page is not None else None
            self._log(url, rule, kind, tab_id)
        return rule

    def _log(self, url: str, rule: str, kind: str, tab_id: str | None) -> None:
        self.last_seq = next(self._seq)
        entry = Blocked(self.last_seq, time.time(), url, rule, kind, tab_id)
        self.log.append(entry)
        self.on_event("request_blocked", entry.to_dict())

    def network_refused(self, url: str, kind: str) -> None:
        """The network guard's proxy refused a request (:mod:`ocnb.browser.proxy_guard`): log it. A URL
        the policy would allow (the browser's bypass rules read it otherwise) is logged as refused too:
        it was."""
        if self.refuse(url, kind) is None:
            self._log(url, "not in allowed_origins (as the browser's proxy rules read it)", kind, None)

    def place(self, tab_id: str | None, url: str, kind: str) -> None:
        """A tab saw its request to ``url`` fail: name that tab (and the request's kind) in a refusal the
        network guard logged without knowing them (the newest such of that URL)."""
        for i in range(len(self.log) - 1, max(len(self.log) - 50, 0) - 1, -1):
            entry = self.log[i]
            if entry.url == url and entry.tab_id is None:
                self.log[i] = replace(entry, tab_id=tab_id, type=kind if entry.type == "other" else entry.type)
                return

    def since(self, mark: int) -> list[Blocked]:
        """Refused requests logged after ``mark`` (a value of :attr:`last_seq`), oldest first."""
        return [b for b in self.log if b.seq > mark]

    def rule_for(self, url: str, failure: str | None) -> str | None:
        """The rule behind a failed request of a tab's log, if the policy refused it: a request to a URL
        the policy refuses fails in the browser, whichever guard stopped it (the DevTools guard's
        ``ERR_BLOCKED_BY_CLIENT``, the network guard's closed connection)."""
        if not failure:
            return None
        return self.policy.check(url)

    def refused_navigation(self, message: str, entries: list[Blocked]) -> Blocked | None:
        """The refusal behind a failed navigation whose error reads ``message``: the DevTools guard's
        ``ERR_BLOCKED_BY_CLIENT`` (its document, or the first refusal), or a request the network guard
        refused during the call to the URL the error names (or to its origin)."""
        if BLOCKED_FAILURE in message:
            return next((b for b in entries if b.type == "document"), entries[0])
        if not self.network or "net::ERR_" not in message:
            return None
        named = [b for b in entries if b.url and b.url in message]
        if named:
            return named[0]
        origins = {origin_of(b.url): b for b in reversed(entries) if b.type in ("document", "other")}
        return next((b for o, b in origins.items() if o and o + "/" in message), None)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- install ----------------------------------------------------------------------------------
    async def install(
        self, context: Any, routes: Routes, per_page: bool = True, browser_cdp: Any = None, network: bool = False
    ) -> None:
        # the first rule of the context's one route: a mock cannot answer for a refused URL
        # (with the browser-level guard, only while another rule routes the context: the browser's cache stays on)
        standalone = per_page and not network
        await routes.add(
            Rule("origin policy", self.policy.suspects(), self._on_route, first=True, standalone=standalone)
        )
        if network:  # the network stack sends every refused request to ocnb's proxy: nothing else to put in
            self.network, self.per_page = True, False
            return
        await context.route_web_socket(re.compile(r".*"), self._on_websocket)
        self.workers = await ws_guard.watch_context(context, self.policy, self.refuse)  # WebSockets in workers
        if browser_cdp is not None:  # the browser holds this context alone: its shared workers are ours
            await self.workers.watch_shared_workers(browser_cdp)
        self.per_page = per_page
        if not per_page:  # the browser-level guard judges this context's requests (ocnb/browser/fetch_guard.py)
            return
        context.on("page", lambda page: self._spawn(self.arm(context, page)))
        for page in context.pages:
            await self.arm(context, page)

    async def before_document(self, cdp: Any, frame_id: str | None) -> None:
        """The browser-level guard paused a document of this context in frame ``frame_id``: a new
        target (a popup's) gets its workers' WebSocket gate before it runs (:mod:`ocnb.browser.ws_guard`)."""
        if self.workers is not None:
            await self.workers.before_document(cdp, frame_id)

    async def _on_route(self, route: Any) -> bool:
        request = route.request
        page = None
        with contextlib.suppress(Exception):  # a worker's or service worker's request has no frame
            page = request.frame.page
        if self.per_page and page is not None and id(page) not in self._cdp:
            await self.arm(page.context, page)  # a page not armed yet: arm it before any later request
        if self.refuse(request.url, request.resource_type, page) is None:
            return False  # the next rule's, or the browser's
        await route.abort("blockedbyclient")
        return True

    async def _on_websocket(self, ws: Any) -> None:
        if self.refuse(ws.url, "websocket") is not None:
            with contextlib.suppress(Exception):
                await ws.close(code=1008, reason="refused by the origin policy")
            return
        ws.connect_to_server()

    async def arm(self, context: Any, page: Any) -> None:
        """Put the ``Fetch`` interceptor on ``page`` (its own target: not its cross-process iframes or workers)."""
        if id(page) in self._cdp:
            return
        self._cdp[id(page)] = None  # claimed: a second request of the same page waits on nothing
        try:
            session = await context.new_cdp_session(page)
        except Exception:  # noqa: BLE001 - closed already, or not Chromium: route still checks the first hop
            return
        self._cdp[id(page)] = session
        page.once("close", lambda _p: self._cdp.pop(id(page), None))
        session.on("Fetch.requestPaused", lambda event: self._spawn(self._on_paused(session, event, page)))
        with contextlib.suppress(Exception):
            await session.send("Fetch.enable", fetch_patterns(self.policy))

    async def _on_paused(self, session: Any, event: dict[str, Any], page: Any) -> None:
        request = event.get("request", {})
        rule = self.refuse(request.get("url", ""), str(event.get("resourceType", "other")).lower(), page)
        await answer(session, event["requestId"], rule)


async def install(
    context: Any,
    policy: OriginPolicy,
    on_event: Callable[[str, dict[str, Any]], None] = lambda kind, body: None,
    tab_of: Callable[[Any], str | None] = lambda page: None,
    *,
    routes: Routes,
    per_page: bool = True,
    browser_cdp: Any = None,
    network: Any = None,
) -> OriginGuard:
    """Enforce ``policy`` on every request ``context`` makes; returns the guard (its log of refusals).

    ``per_page=False``: the browser-level guard of a browser ocnb launched judges this context's every
    request (no gap at a target's start; the caller registers the guard there); else the guard puts a
    ``Fetch`` interceptor on each page of ``context``. ``browser_cdp``: the browser's own DevTools
    session when the browser holds this context alone (its shared workers' WebSockets are gated too).
    ``network``: the context's :class:`~ocnb.browser.proxy_guard.RefusingProxy` when its proxy enforces
    the policy (then only the route's rule is added here); it reports to the guard from now on."""
    guard = OriginGuard(policy, on_event, tab_of)
    await guard.install(context, routes, per_page, browser_cdp, network=network is not None)
    if network is not None:
        network.report = guard.network_refused
    return guard


class OriginReport:
    """The call layer: what the browser refused while a call ran becomes that call's ``blocked``.

    ``before`` notes the guard's last refusal; ``after`` puts the refusals since then in
    the call's journal line (:func:`ocnb.audit.notes.add_entry`) and in the result's ``data["blocked"]``; a
    navigation that failed because its document was refused becomes ``BLOCKED_URL`` naming the rule.
    """

    def __init__(self, host: Host) -> None:
        self.host = host
        self._marks: dict[int, tuple[OriginGuard | None, int]] = {}

    def _guard(self) -> OriginGuard | None:
        state = self.host.state
        return getattr(state, "origin_guard", None) if state is not None else None

    def before(self, call: CallContext) -> None:
        guard = self._guard()
        self._marks[call.seq] = (guard, guard.last_seq if guard is not None else 0)

    def after(self, call: CallContext, result: ToolResult) -> ToolResult | None:
        marked = self._marks.pop(call.seq, None)
        guard = self._guard()
        if guard is None or marked is None:  # no browser, or refused before it ran: it caused nothing
            return None
        guard_then, mark = marked
        entries = guard.since(mark if guard is guard_then else 0)  # a new browser: all it refused
        if not entries:
            return None
        blocked = [b.to_dict() for b in entries[:REPORT_MAX]]
        add_entry(call, "blocked", blocked)  # the journal line names them
        shown: dict[str, Any] = {"blocked": blocked}
        if len(entries) > REPORT_MAX:
            shown["blocked_more"] = len(entries) - REPORT_MAX
        if result.ok:
            return replace(result, data={**result.data, **shown}) if isinstance(result.data, dict) else None
        error = result.error
        first = guard.refused_navigation(error.message, entries) if error is not None else None
        if first is not None:
            refusal = BlockedUrl(
                f"{first.url} is refused by the origin policy ({first.rule}); nothing was sent to it",
                details={"url": first.url, "rule": first.rule, **shown},
            )
            return replace(result, error=ToolError.from_exception(refusal))
        if error is not None:
            return replace(result, error=replace(error, details={**error.details, **shown}))
        return None
