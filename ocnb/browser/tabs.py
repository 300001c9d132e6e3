"""What ocnb keeps about one tab: the page, and the bounded logs of what happened on it.

The data only: :class:`Tab` and the records it holds (:class:`RequestRecord`) in :class:`Ring`
buffers. The behaviour that fills them lives with its concern — :mod:`~ocnb.browser.network`,
:mod:`~ocnb.browser.dialogs`, :mod:`~ocnb.browser.crashes` — and
:class:`~ocnb.browser.state.BrowserState` owns the tabs. A layer's own state of a tab is its slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..calls import Slots
from ..settings import Settings

__all__ = ["Emulation", "RequestRecord", "Ring", "Tab", "TabSet", "refresh_emulation"]

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


class Emulation(Protocol):
    """What the ``emulate`` tool leaves on a tab (:class:`ocnb.tools.emulation.TabEmulation`): overrides
    that :func:`refresh_emulation` re-applies after each call (Playwright's own screenshots reset
    device metrics)."""

    async def refresh(self) -> None: ...


@dataclass
class Tab(Slots):
    """One page of the context plus what ocnb observed on it (bounded ring buffers).

    What a layer keeps per tab is that layer's slot (:meth:`~ocnb.calls.Slots.slot`): the dialog
    layer's waiting dialog (:mod:`ocnb.browser.dialogs`), the skills layer's capture buffer
    (:mod:`ocnb.skills.capture`).
    """

    id: str
    page: Any
    #: Console messages and page errors, each ``{"id", "ts", "type", "text", "url"}`` (text masked, cut).
    console: Ring[dict[str, Any]] = field(default_factory=lambda: Ring(200))
    #: Requests, oldest first; ``id`` shares the browser's sequence with console entries.
    network: Ring[RequestRecord] = field(default_factory=lambda: Ring(500))
    #: Dialogs seen, each ``{"ts", "type", "message", "default_value", "action"}`` (read by contracts
    #: and change reports like the console; the one still waiting is the dialog layer's).
    dialogs: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))
    opener: str | None = None
    created: float = field(default_factory=time.time)
    #: Closed on purpose (tabs_close, a failed tabs_create), not lost to a crash.
    closing: bool = False
    #: The last title read from the page: what ``tabs_context`` shows for a page too busy to answer.
    title: str = ""
    #: The renderer died (Playwright's ``crash`` event): every call on the tab is ``PAGE_CRASHED``.
    crashed: bool = False
    #: Emulation the ``emulate`` tool set on this tab (re-applied after each call: Playwright's own
    #: screenshots reset device metrics).
    emulation: Emulation | None = None
    #: Requests still waiting for their end, by ``id()`` of the Playwright request.
    open_requests: dict[int, RequestRecord] = field(default_factory=dict, repr=False)
    #: The layers' own state for this tab, one object per class (:meth:`~ocnb.calls.Slots.slot`).
    _slots: dict[type, object] = field(default_factory=dict, init=False, repr=False, compare=False)

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


class TabSet(Protocol):
    """What the parts of a browser state read of it: the settings, the tabs and the active one."""

    config: Settings
    tabs: dict[str, Tab]
    active_id: str | None


async def refresh_emulation(tab: Tab | None) -> None:
    """Re-apply the emulation the ``emulate`` tool set on ``tab`` (Playwright's screenshots reset it).
    Not while a dialog waits on it: the dialog layer asks only then (:mod:`ocnb.browser.dialogs`)."""
    if tab is None or tab.emulation is None or tab.closed:
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(tab.emulation.refresh(), 2.0)
