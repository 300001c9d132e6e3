"""A browser state's network part: each tab's requests as they happen, and the context's controls.

:class:`NetworkLog` fills every tab's ``network`` ring (:class:`~ocnb.browser.tabs.RequestRecord`
per request, completed by its response, end or failure), keeps the newest responses' objects for
their bodies, and holds what ``network_route`` and ``network_conditions`` set (:class:`NetworkControls`),
applying the throttle to each page through its CDP session.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .routes import Routes
from .tabs import RequestRecord, Tab, TabSet

F = TypeVar("F", bound=Callable[..., Any])


def signed(handler: F) -> F:
    """``handler`` (a function or lambda) carrying its own ``__signature__``: Playwright's async API
    reads a listener's ``inspect.signature`` at every event it delivers (to count the arguments the
    listener takes), which costs tens of µs a time for a plain function and nothing for one that
    carries it. The per-page events (requests, navigations, loads) fire several times per navigation."""
    handler.__signature__ = inspect.signature(handler)  # type: ignore[attr-defined]
    return handler


if TYPE_CHECKING:
    from .policy import OriginGuard

__all__ = ["NetworkControls", "NetworkLog"]


@dataclass
class NetworkControls:
    """What ``network_route`` and ``network_conditions`` set on the context: routes and conditions.

    A route is ``{"url", "action", "status"?, "hits", "rule"}`` (its rule in the context's :class:`Routes`);
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


class _Owner(TabSet, Protocol):
    context: Any
    origin_guard: OriginGuard | None

    def next_seq(self) -> int: ...


class NetworkLog:
    """The requests of a browser state's tabs, the context's request log, and its network controls."""

    def __init__(self, owner: _Owner) -> None:
        self._owner = owner
        #: Every request of the context (``{"ts", "url", "method"}``), the newest 2,000.
        self.requests: deque[dict[str, Any]] = deque(maxlen=2000)
        #: Requests whose response object is held for its body (the newest ``network_bodies``).
        self._bodies: deque[RequestRecord] = deque()
        self.controls = NetworkControls()
        #: The context's one route and its rules (the origin policy's, ``network_route``'s, ``block_resources``).
        self.routes = Routes(lambda: owner.context)

    def watch(self, tab: Tab) -> None:
        """Follow ``tab``'s requests (and give it the context's throttle, if one is set)."""
        page = tab.page
        page.on("request", signed(lambda r, t=tab: self._on_request(t, r)))
        page.on("response", signed(lambda r, t=tab: self._on_response(t, r)))
        page.on("requestfinished", signed(lambda r, t=tab: self._on_end(t, r, None)))
        page.on("requestfailed", signed(lambda r, t=tab: self._on_end(t, r, r.failure or "failed")))
        if self.controls.throttle is not None:
            task = asyncio.ensure_future(self.apply_throttle(page))
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    def on_context_request(self, request: Any) -> None:
        self.requests.append({"ts": time.time(), "url": request.url, "method": request.method})

    def forget(self, tab: Tab) -> None:
        """A tab closed: drop its CDP session and its requests.

        Its requests' Playwright objects are disposed by the driver with the page; the page's own
        listeners keep the closed :class:`Tab` reachable, so without this its ring would keep up to
        ``network_buffer`` requests and responses alive in Python for as long as the session runs.
        """
        self.controls.cdp.pop(id(tab.page), None)
        gone = {id(rec) for rec in tab.network} | {id(rec) for rec in tab.open_requests.values()}
        self._bodies = deque(rec for rec in self._bodies if id(rec) not in gone)
        tab.network.clear()
        tab.open_requests.clear()

    def _on_request(self, tab: Tab, request: Any) -> None:
        rec = RequestRecord(
            id=self._owner.next_seq(),
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
        while len(self._bodies) > self._owner.config.network_bodies:
            old = self._bodies.popleft()
            old.response, old.body_released = None, True

    def _on_end(self, tab: Tab, request: Any, failure: str | None) -> None:
        rec = tab.open_requests.pop(id(request), None)
        if rec is not None:
            rec.end_ts, rec.failure = time.time(), failure
        guard = self._owner.origin_guard if failure is not None else None
        if guard is not None and guard.network:  # the network guard's refusal: this tab asked
            guard.place(tab.id, request.url, request.resource_type)

    async def apply_throttle(self, page: Any) -> None:
        """Send the context's offline and throttle state to one page through its CDP session."""
        ctl = self.controls
        session = ctl.cdp.get(id(page))
        if session is None:
            session = ctl.cdp[id(page)] = await self._owner.context.new_cdp_session(page)
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
