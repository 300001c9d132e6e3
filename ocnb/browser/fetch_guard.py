"""The origin policy's browser-level guard: one DevTools ``Fetch`` interceptor per browser ocnb launched.

(An allow-list with no blocked origin inside it is enforced by the network guard instead,
:mod:`ocnb.browser.proxy_guard`; its context registers here with no policy, so it is never paused.)

Chromium pauses every request of every target for a ``Fetch`` client on the **browser's** own
DevTools session from the moment it is set — each redirect hop, a popup's first navigation, shared
and dedicated workers, frames — with no race against a target's start (a per-page interceptor
attaches after a popup's navigation began, and a shared worker belongs to no page). One
:class:`BrowserGuard` holds that session for a browser and judges each paused request by the policy
of the context it belongs to (each context's :class:`~ocnb.browser.policy.OriginGuard` registered
under its DevTools ``browserContextId``):

- a browser launched for one session holds that context alone: every request is judged by its
  policy (registered under ``None``);
- a shared browser (``ocnb.Pool``, ``Session(shared_browser=…)``) holds several contexts, each with
  its own policy or none. A URL that every registered policy allows is continued at once (the common
  case: a pool's sessions share one policy); otherwise the request's ``frameId`` is mapped to its
  context — a page's or shared worker's target id through ``Target.getTargetInfo``, a frame inside
  a page through that page's frame tree (a dedicated worker's requests carry its frame's id) — and
  that context's policy decides; a context with no policy is continued. A request whose context
  cannot be found is refused if any policy here refuses it (fail closed).

The browser's own patterns (``Fetch.enable``) are the union of what the registered policies need
(:func:`~ocnb.browser.policy.fetch_patterns`): with an allow-list, every request. Of those, Playwright's
driver continues at once, without asking Python, each request that is not a document and that no
registered policy might refuse (:meth:`BrowserGuard.continue_allowed`, ``driver_guard.js``): an
allowed request waits for the driver, not for a round trip to Python.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..origins import OriginPolicy
from .devtools import ask_target
from .ws_guard import HOLD_SHARED, PageWatch, gate_script, watch_target

__all__ = ["BrowserGuard", "Judge", "answer", "fetch_patterns", "open_browser_guard"]

#: The command ``driver_guard.js`` adds to the driver's DevTools sessions (see :meth:`BrowserGuard.continue_allowed`).
CONTINUE_ALLOWED = "Ocnb.continueAllowed"
#: Decisions (:meth:`~ocnb.browser.policy.OriginGuard.decide`) and frame→context entries kept at most (both are cleared when full; they refill as asked).
CACHE_MAX = 4096
#: Seconds a page's target is given to answer the guard (:meth:`BrowserGuard.page_of`) while a request waits.
ASK_S = 2.0


def fetch_patterns(policy: OriginPolicy) -> dict[str, Any]:
    """``Fetch.enable``'s patterns: the requests (each redirect hop) the browser pauses for the guard.

    With an allow-list, every request (DevTools patterns cannot say "not these origins"); with only a
    block-list, the URLs that name a blocked host anywhere — a superset of what it refuses, as the
    browser writes URLs (ASCII host, lower case, dotted IPv4), so an allowed request is not paused."""
    if policy.allowed or not policy.blocked:
        hosts = ["*"]
    else:
        hosts = sorted({"*" + re.sub(r"([*?\\])", r"\\\1", p.host) + "*" for p in policy.blocked})
    return {"patterns": [{"urlPattern": h, "requestStage": "Request"} for h in hosts]}


class Judge(Protocol):
    """What the browser-level guard asks of a context's guard (:class:`~ocnb.browser.policy.OriginGuard`)."""

    policy: OriginPolicy

    def decide(self, url: str) -> str | None: ...

    def refuse(self, url: str, kind: str, page: Any = None) -> str | None: ...

    async def before_document(self, cdp: Any, frame_id: str | None) -> None: ...


class BrowserGuard:
    """The ``Fetch`` interceptor on one browser's own DevTools session, judging for every context registered.

    ``judges`` maps a ``browserContextId`` (or ``None``: the browser holds that context alone) to the
    context's :class:`~ocnb.browser.policy.OriginGuard` and a function returning its pages."""

    def __init__(self, cdp: Any) -> None:
        self.cdp = cdp
        self.judges: dict[str | None, tuple[Judge | None, Callable[[], list[Any]]]] = {}
        self._contexts: dict[str, str | None] = {}  # frame or target id -> browserContextId (None: none found)
        self._pages: dict[str, Any] = {}  # frame id -> its page, as found for a refusal
        self._patterns: list[dict[str, Any]] | None = None
        #: Whether the driver continues allowed requests itself (:meth:`continue_allowed`); False once it cannot.
        self._driver_continues = True
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Requests the browser paused for this guard (each a round trip to Python).
        self.paused = 0
        #: The hold on the browser's shared workers, for their WebSocket gate (a shared browser's).
        self.shared_workers: PageWatch | None = None
        self._gate_scripts: dict[Judge, str] = {}  # each registered policy's worker gate
        cdp.on("Fetch.requestPaused", listener(self._on_paused))

    # -- contexts ---------------------------------------------------------------------------------
    async def register(self, context_id: str | None, guard: Judge | None, pages: Callable[[], list[Any]]) -> None:
        """Judge the requests of context ``context_id`` (``None``: every request) by ``guard``'s policy;
        ``guard=None``: a context with no policy (known, so that its frames are found: continued)."""
        self.judges[context_id] = (guard, pages)
        await self._enable()
        if context_id is not None and guard is not None and self.shared_workers is None:
            await self._hold_shared_workers()

    async def _hold_shared_workers(self) -> None:
        """Hold every shared worker of the browser at its start and gate its WebSockets by the policy of
        its own context (:mod:`ocnb.browser.ws_guard`): a shared worker belongs to no page."""
        with contextlib.suppress(Exception):  # the browser is gone: nothing left to hold
            browser_id = (await self.cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
            self.shared_workers = await watch_target(
                self.cdp, browser_id, "", lambda url: None, HOLD_SHARED, choose=self._worker_gate
            )

    def _worker_gate(self, info: dict[str, Any]) -> tuple[str, Callable[[str], object]] | None:
        """A worker's gate and reporter: those of the policy of its context; None for a context without one."""
        guard = self.judges.get(info.get("browserContextId"), (None, list))[0]
        if guard is None:
            return None
        script = self._gate_scripts.get(guard)
        if script is None:
            script = self._gate_scripts[guard] = gate_script(guard.policy)
        return script, lambda url: guard.refuse(url, "websocket", None)

    async def unregister(self, context_id: str | None) -> None:
        """Stop judging a context (it closed): its requests, if any still come, are continued."""
        judge = self.judges.pop(context_id, None)
        if judge is not None and judge[0] is not None:
            self._gate_scripts.pop(judge[0], None)
        if judge is not None:
            with contextlib.suppress(Exception):  # the browser is gone: nothing left to pause
                await self._enable()

    async def new_context(self, create: Callable[[], Awaitable[Any]]) -> tuple[Any, str | None]:
        """``create()`` a browser context and find its ``browserContextId`` (the one new id the browser
        lists); contexts of this browser are created one at a time through here.

        A context that held the browser alone (registered under ``None``: a session's own browser
        lending a context to an MCP client, ``HostedBrowser``) is registered under its own id first,
        so that each context's requests are judged, and reported, by its own guard."""
        async with self._lock:
            before = await self._context_ids()
            if None in self.judges and len(before) == 1:
                self.judges[next(iter(before))] = self.judges.pop(None)
            context = await create()
            after = await self._context_ids()
        new = after - before
        return context, (new.pop() if len(new) == 1 else None)

    async def _context_ids(self) -> set[str]:
        try:
            return set((await self.cdp.send("Target.getBrowserContexts")).get("browserContextIds", []))
        except Exception:  # noqa: BLE001 - closed: no id (the per-page guard takes over)
            return set()

    async def _enable(self) -> None:
        """``Fetch.enable`` with the union of the registered policies' patterns (again when it changed),
        the driver told first which requests it may continue itself (:meth:`continue_allowed`)."""
        await self.continue_allowed()
        wanted: list[dict[str, Any]] = []
        for guard in self.policies():
            for pattern in fetch_patterns(guard.policy)["patterns"]:
                if pattern not in wanted:
                    wanted.append(pattern)
        if any(p["urlPattern"] == "*" for p in wanted):
            wanted = [{"urlPattern": "*", "requestStage": "Request"}]
        if wanted == self._patterns:
            return
        self._patterns = wanted
        if wanted:
            await self.cdp.send("Fetch.enable", {"patterns": wanted})
        else:
            await self.cdp.send("Fetch.disable")

    async def continue_allowed(self) -> int | None:
        """Have Playwright's driver continue, without a round trip to Python, a paused request that is not
        a document and that no registered policy might refuse: one whose URL matches none of their
        :meth:`~ocnb.origins.OriginPolicy.suspects` (each matches every URL its policy could refuse,
        and more). Documents still come here (a new target's workers are gated before its first one).

        Set again whenever the registered policies change; needs ``driver_guard.js`` in the driver
        (:mod:`ocnb.browser.driver`): without it every paused request comes here, as before. Returns the
        requests the driver continued so far on this session, or None when it cannot."""
        if not self._driver_continues:
            return None
        sources = [guard.policy.suspects() for guard in self.policies()]
        if any(not (regex.flags & re.IGNORECASE) for regex in sources):  # the driver's regex is case-blind
            sources = []
        refusable = "|".join(f"(?:{regex.pattern})" for regex in sources) if sources else None
        try:
            reply = await self.cdp.send(CONTINUE_ALLOWED, {"refusable": refusable})
        except Exception:  # noqa: BLE001 - a driver without driver_guard.js (or closed): Python judges all
            self._driver_continues = False
            return None
        continued = reply.get("continued") if isinstance(reply, dict) else None
        return continued if isinstance(continued, int) else None

    def policies(self) -> list[Judge]:
        """The registered contexts' guards (those with a policy)."""
        return [guard for guard, _pages in self.judges.values() if guard is not None]

    # -- the paused request -----------------------------------------------------------------------
    def _on_paused(self, event: dict[str, Any]) -> None:
        """Decide at once when the answer does not depend on the context; else find the context first."""
        self.paused += 1
        url = event.get("request", {}).get("url", "")
        if event.get("resourceType") == "Document":  # a new target's workers are gated before it runs
            self._spawn(self._document(event, url))
            return
        alone = self.judges.get(None)
        if alone is not None and alone[0] is not None:
            self._decide(event, alone, url)
        elif not any(guard.decide(url) for guard in self.policies()):
            self._send(event, None)  # every policy here allows it (or none is registered)
        else:
            self._spawn(self._judge(event, url))

    async def _document(self, event: dict[str, Any], url: str) -> None:
        """A document: its context's guard sees it first (:meth:`Judge.before_document`), then it is judged."""
        frame_id = str(event.get("frameId") or "")
        alone = self.judges.get(None)
        judge = alone if alone is not None else self.judges.get(await self.context_of(frame_id))
        if judge is not None and judge[0] is not None:
            with contextlib.suppress(Exception):  # the target went away: nothing to gate
                await judge[0].before_document(self.cdp, frame_id)
        if alone is not None and alone[0] is not None:
            self._decide(event, alone, url)
        else:
            await self._judge(event, url)

    async def _judge(self, event: dict[str, Any], url: str) -> None:
        context_id = await self.context_of(str(event.get("frameId") or ""))
        if context_id is None:  # no context found: refused if any policy here refuses it
            refusing = any(guard.decide(url) for guard in self.policies())
            self._send(event, "refused" if refusing else None)
            return
        self._decide(event, self.judges.get(context_id, (None, list)), url)

    def _decide(self, event: dict[str, Any], judge: tuple[Judge | None, Callable[[], list[Any]]], url: str) -> None:
        """Continue the request, or refuse it by its context's guard (None: a context with no policy)."""
        guard, pages = judge
        if guard is None or guard.decide(url) is None:
            self._send(event, None)
        else:
            self._spawn(self._refuse(event, guard, pages, url))

    async def _refuse(self, event: dict[str, Any], guard: Judge, pages: Callable[[], list[Any]], url: str) -> None:
        """Log the refusal with the guard of the request's context — naming its tab, found through the
        pages' frame trees while the request waits — and fail the request."""
        page = await self.page_of(str(event.get("frameId") or ""), pages)
        rule = guard.refuse(url, str(event.get("resourceType", "other")).lower(), page)
        self._send(event, rule)

    def _send(self, event: dict[str, Any], rule: str | None) -> None:
        self._spawn(answer(self.cdp, event["requestId"], rule))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- which context a request belongs to -------------------------------------------------------
    async def context_of(self, frame_id: str) -> str | None:
        """The ``browserContextId`` of the frame or target ``frame_id``: a page's, popup's or worker's
        target through ``Target.getTargetInfo``, a frame inside a page through the frame trees of the
        registered contexts' pages. None when neither knows it."""
        if not frame_id:
            return None
        if frame_id in self._contexts:
            return self._contexts[frame_id]
        found: str | None = None
        try:
            info = (await self.cdp.send("Target.getTargetInfo", {"targetId": frame_id}))["targetInfo"]
            found = info.get("browserContextId")
        except Exception:  # noqa: BLE001 - not a target: a frame inside a page
            found = await self._frame_context(frame_id)
        if found is not None:
            self._remember(frame_id, found)
        return found

    async def page_of(self, frame_id: str, pages: Callable[[], list[Any]]) -> Any:
        """The page among ``pages()`` that holds frame ``frame_id`` (None: none does).

        A page's main frame carries its target's id, which the browser answers for; a frame inside a
        page is looked up in the page's frame tree, which its renderer answers for: a renderer busy
        with the very navigation being judged (an ``<a download>`` clicked to a refused origin) may not
        answer until that request is failed, so each answer is waited for at most :data:`ASK_S`."""
        page = self._pages.get(frame_id)
        if page is not None or not frame_id:
            return page
        candidates = list(pages())
        for frames in (self._target_ids, self._frame_ids):
            for candidate in candidates:
                for frame in await frames(candidate):
                    if len(self._pages) >= CACHE_MAX:
                        self._pages.clear()
                    self._pages[frame] = candidate
                if frame_id in self._pages:
                    return self._pages[frame_id]
        return None

    async def _frame_context(self, frame_id: str) -> str | None:
        for context_id, (_guard, pages) in list(self.judges.items()):
            if context_id is None:
                continue
            for page in list(pages()):
                for frame in await self._frame_ids(page):
                    self._remember(frame, context_id)
            if self._contexts.get(frame_id) == context_id:
                return context_id
        return None

    async def _ask(self, page: Any, method: str) -> dict[str, Any] | None:
        """``method``'s answer on a DevTools session of ``page``'s target, waited for at most
        :data:`ASK_S` (:func:`~ocnb.browser.devtools.ask_target`: while a page's request is paused its
        renderer may hold even a detach from its target, so the session is let go without waiting)."""
        return await ask_target(page, method, ASK_S)

    async def _target_ids(self, page: Any) -> list[str]:
        """``page``'s DevTools target id (its main frame's id), which the browser answers for."""
        reply = await self._ask(page, "Target.getTargetInfo")
        return [reply["targetInfo"]["targetId"]] if reply else []

    async def _frame_ids(self, page: Any) -> list[str]:
        """The DevTools ids of every frame in ``page``'s target (its frame tree), which its renderer answers for."""
        reply = await self._ask(page, "Page.getFrameTree")
        ids: list[str] = []
        todo = [reply["frameTree"]] if reply else []
        while todo:
            node = todo.pop()
            ids.append(node["frame"]["id"])
            todo.extend(node.get("childFrames", []))
        return ids

    def _remember(self, frame_id: str, context_id: str) -> None:
        if len(self._contexts) >= CACHE_MAX:
            self._contexts.clear()
        self._contexts[frame_id] = context_id


async def answer(cdp: Any, request_id: str, rule: str | None) -> None:
    """Fail the paused request ``request_id`` on session ``cdp`` when a ``rule`` refused it; else continue it."""
    with contextlib.suppress(Exception):  # the target went away: its request went nowhere
        if rule is not None:
            await cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
        else:
            await cdp.send("Fetch.continueRequest", {"requestId": request_id})


def listener(handle: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """``handle`` as a listener of a Playwright event that fires per request: Playwright's async API
    reads a listener's ``inspect.signature`` at every event (to count the arguments it takes): about
    75 µs for a bound method on the (loaded) bench machine, about 20 µs for a function that carries
    its ``__signature__``."""

    def on_event(event: dict[str, Any]) -> None:
        handle(event)

    on_event.__signature__ = inspect.signature(on_event)  # type: ignore[attr-defined]
    return on_event


async def open_browser_guard(browser: Any) -> BrowserGuard | None:
    """A :class:`BrowserGuard` on ``browser``'s own DevTools session; None when it has none (not Chromium)."""
    if browser is None:
        return None
    try:
        cdp = await browser.new_browser_cdp_session()
    except Exception:  # noqa: BLE001 - not Chromium, or closed: the per-page guard instead
        return None
    return BrowserGuard(cdp)
