"""The origin policy for WebSockets opened inside workers: a gate in each worker before its first line.

A WebSocket handshake is no request to ``route`` or DevTools ``Fetch``, and Playwright's
``route_web_socket`` patches pages only; DevTools' ``Network.setBlockedURLs`` stops no handshake
(Chromium's ``WebSocketChannelImpl::Connect`` does not ask it). So each worker gets a gate: its
``WebSocket`` (and ``WebSocketStream``, ``WebTransport``) constructors are replaced by ones that
refuse a URL the policy refuses (a ``SecurityError``, nothing sent) — installed while DevTools stops
the worker before its first script, so the worker's own code only ever sees the gated ones.

Why the gate is in place before the worker runs (measured on Chromium 156): a worker that a DevTools
client auto-attached with ``waitForDebuggerOnStart`` in *flat* mode does not start until *that*
client lets it go (``Runtime.runIfWaitingForDebugger``); Playwright letting it go is not enough. Non-flat
auto-attach holds nothing, and Playwright's Python ``CDPSession`` cannot address flat child sessions.
So :class:`PageWatch` opens a non-flat session to the page (a tunnel, through ``Target.sendMessageToTarget``
of the page's own ``CDPSession``) and, inside it, auto-attaches in flat mode: every worker and
cross-process frame of the page is held there, addressed by its session id inside the tunnel. A
held worker gets the same auto-attach (its nested workers are held too) and a breakpoint before its
first script, then is let go; stopped there, it gets a binding (to report a refusal) and the gate,
and goes on (its scope is not ready before: evaluating in a worker held at its start crashes the
renderer). A frame gets the auto-attach (its workers) and is let go. A worker whose gate did not go
in is never let go on: it does not run.

``blob:`` and ``data:`` workers, nested workers, workers of cross-process frames and of popups are all
children of some page or worker target, so all pass here; a worker started before or after the
page's load alike. Shared workers belong to no page: in a browser that holds this context alone, a
tunnel to the browser target holds them the same way (:meth:`ContextWatch.watch_shared_workers`); in
a browser shared by several contexts, the browser-level guard holds them and gates each by the policy
of its own context (``choose``; :meth:`ocnb.browser.fetch_guard.BrowserGuard.register`).

The policy reaches the gate as two regular expressions (:meth:`OriginPolicy.origin_regexes`) over the
URL's origin as the browser parses it; the gate holds its own references to what it uses (``URL``'s
getters, ``RegExp``'s ``exec``), so code running later in the worker cannot change its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any

from ..origins import OriginPolicy

__all__ = ["ContextWatch", "PageWatch", "gate_script", "watch_context", "watch_target"]

#: The binding through which a worker's gate reports a refused URL (removed from the worker's global).
BINDING = "__ocnb_refused_socket"
#: The constructors the gate replaces in a worker.
GATED = ("WebSocket", "WebSocketStream", "WebTransport")
#: Targets held at their start: workers get the gate; frames (cross-process iframes) only pass the hold on.
WORKERS = frozenset({"worker", "shared_worker"})
#: Workers another client (Playwright) lets go at their start: ``runIfWaitingForDebugger`` also ends a
#: pause at a breakpoint, so ocnb's own, arriving as the worker stops there, would let it run ungated.
#: (A dedicated worker cannot start before ocnb lets it go, so ocnb's comes first.)
LET_GO_BY_OTHERS = frozenset({"shared_worker"})
#: The commands ``driver_guard.js`` adds: Playwright's driver, which auto-attaches every shared
#: worker too and lets it go at once, waits for ocnb's breakpoint before it does (a race ocnb lost on a
#: loaded machine: the worker ran ungated).
HOLD_SHARED_WORKERS = "Ocnb.holdSharedWorkers"
RELEASE_SHARED_WORKER = "Ocnb.releaseSharedWorker"
LET_GO_AFTER_S = 2.0
#: A worker's gate script and the function told what it refused, chosen by the worker's target info.
Chooser = Callable[[dict[str, Any]], "tuple[str, Callable[[str], object]] | None"]
#: Where a held worker stops so the gate can go in: before its first script runs.
BREAK = "beforeScriptExecution"
HOLD: dict[str, Any] = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}
#: On the browser target: only shared workers (pages are each watched on their own).
HOLD_SHARED = {**HOLD, "filter": [{"type": "shared_worker"}, {"exclude": True}]}

_GATE = r"""
(function (allowed, blocked, binding, names) {
  "use strict";
  const g = globalThis, report = g[binding];
  try { delete g[binding]; } catch (e) {}
  const apply = Reflect.apply, construct = Reflect.construct, define = Object.defineProperty;
  const toText = String, NativeURL = URL, Problem = DOMException, slice = String.prototype.slice;
  const getter = (name) => Object.getOwnPropertyDescriptor(NativeURL.prototype, name).get;
  const protocolOf = getter("protocol"), hostnameOf = getter("hostname"), portOf = getter("port");
  const exec = RegExp.prototype.exec, test = RegExp.prototype.test;
  const compile = (source) => {
    if (source === null) return null;
    const re = new RegExp(source);
    define(re, "exec", { value: exec });
    return re;
  };
  const A = compile(allowed), B = compile(blocked);
  const fold = { __proto__: null, "ws:": "http:", "wss:": "https:", "http:": "http:", "https:": "https:" };
  const ports = { __proto__: null, "http:": "80", "https:": "443" };
  const base = toText(g.location.href);
  const refused = (text) => {
    let url;
    try { url = new NativeURL(text, base); } catch (e) { return false; }
    const scheme = fold[apply(protocolOf, url, [])];
    if (scheme === undefined) return false;
    let host = apply(hostnameOf, url, []);
    if (host.length > 1 && host[host.length - 1] === ".") host = apply(slice, host, [0, -1]);
    const origin = scheme + "//" + host + ":" + (apply(portOf, url, []) || ports[scheme]);
    return (B !== null && apply(test, B, [origin])) || (A !== null && !apply(test, A, [origin]));
  };
  for (const name of names) {
    const Native = g[name];
    if (typeof Native !== "function") continue;
    const Gated = function (url) {
      if (new.target === undefined) return apply(Native, this, arguments);
      const text = toText(url);
      if (refused(text)) {
        try { report(text); } catch (e) {}
        throw new Problem("Failed to construct '" + name + "': " + text + " is refused by the origin policy", "SecurityError");
      }
      const args = arguments.length > 1 ? [text, arguments[1]] : [text];
      return construct(Native, args, new.target === Gated ? Native : new.target);
    };
    Object.setPrototypeOf(Gated, Object.getPrototypeOf(Native));
    for (const key of Object.getOwnPropertyNames(Native)) {
      if (key !== "prototype" && key !== "length" && key !== "name") define(Gated, key, Object.getOwnPropertyDescriptor(Native, key));
    }
    define(Gated, "name", { value: name });
    define(Gated, "length", { value: Native.length });
    define(Gated, "prototype", { value: Native.prototype });
    define(Native.prototype, "constructor", { value: Gated, writable: true, configurable: true });
    define(g, name, { value: Gated, writable: true, configurable: true });
  }
  return "gated";
})
"""


def gate_script(policy: OriginPolicy) -> str:
    """The expression that installs the gate for ``policy`` in a worker's global scope."""
    allowed, blocked = policy.origin_regexes()
    return f"{_GATE.strip()}({json.dumps(allowed)}, {json.dumps(blocked)}, {json.dumps(BINDING)}, {json.dumps(GATED)})"


class PageWatch:
    """One page's tunnel: a non-flat DevTools session to the page, inside which its workers and
    cross-process frames are auto-attached (flat), held at their start, gated and let go.

    ``refuse(url)`` is called with each URL a worker's gate refused (the guard logs and reports it).
    """

    def __init__(
        self, cdp: Any, tunnel: str, script: str, refuse: Callable[[str], object], choose: Chooser | None = None
    ) -> None:
        self.cdp = cdp
        self.tunnel = tunnel
        self.script = script
        self.refuse = refuse
        #: In a browser shared by several contexts: each worker's gate and reporter, by its context.
        self.choose = choose
        self._gates: dict[str, tuple[str, Callable[[str], object]]] = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Workers whose gate is in place and frames let go, by their session id in the tunnel.
        self.released: set[str] = set()
        #: The breakpoint each held worker stops at, by its session id.
        self._breakpoints: dict[str, str] = {}
        self._paused: set[str] = set()
        cdp.on("Target.receivedMessageFromTarget", self._on_message)
        cdp.on("Target.detachedFromTarget", self._on_detached)

    def _on_detached(self, event: dict[str, Any]) -> None:
        """The tunnel closed (its target went away): nothing more will answer or happen in it."""
        if event.get("sessionId") != self.tunnel:
            return
        self.cdp.remove_listener("Target.receivedMessageFromTarget", self._on_message)
        self.cdp.remove_listener("Target.detachedFromTarget", self._on_detached)
        for future in self._pending.values():
            if not future.done():
                future.set_result({"error": {"message": "the target went away"}})
        self._pending.clear()

    def send(self, session: str | None, method: str, params: dict[str, Any] | None = None) -> asyncio.Future[Any]:
        """Send ``method`` to the page (``session`` None) or to a target attached inside the tunnel."""
        message: dict[str, Any] = {"id": next(self._ids), "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message["id"]] = future
        out = {"sessionId": self.tunnel, "message": json.dumps(message)}
        sent = asyncio.ensure_future(self.cdp.send("Target.sendMessageToTarget", out))
        sent.add_done_callback(lambda t: self._lost(message["id"], t))
        return future

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _lost(self, mid: int, sent: asyncio.Future[Any]) -> None:
        failure = None if sent.cancelled() else sent.exception()
        if sent.cancelled() or failure is not None:  # the page went away: nothing will answer
            future = self._pending.pop(mid, None)
            if future is not None and not future.done():
                future.set_result({"error": {"message": str(failure or "cancelled")}})

    def _on_message(self, event: dict[str, Any]) -> None:
        if event.get("sessionId") != self.tunnel:
            return
        try:
            message = json.loads(event["message"])
        except (KeyError, ValueError):
            return
        if "id" in message:
            future = self._pending.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        method, params = message.get("method"), message.get("params") or {}
        if method == "Target.attachedToTarget":
            self._spawn(self._admit(params))
        elif method == "Debugger.paused" and message.get("sessionId") in self._breakpoints:
            self._paused.add(str(message.get("sessionId")))
            self._spawn(self._gate(str(message.get("sessionId")), paused=True))
        elif method == "Runtime.bindingCalled" and params.get("name") == BINDING:
            gate = self._gates.get(str(message.get("sessionId")))
            (gate[1] if gate is not None else self.refuse)(str(params.get("payload", "")))
        elif method == "Target.detachedFromTarget":
            self.released.discard(str(params.get("sessionId")))
            self._breakpoints.pop(str(params.get("sessionId")), None)
            self._paused.discard(str(params.get("sessionId")))
            self._gates.pop(str(params.get("sessionId")), None)

    async def _admit(self, params: dict[str, Any]) -> None:
        """Hold a worker's own workers and stop it before its first script; pass a frame's hold on; let go.

        The gate cannot go in while the worker is held at its start (its global scope is not ready:
        evaluating there crashes the renderer), so a held worker gets an instrumentation breakpoint
        before its first script instead, and the gate goes in when it pauses there (:meth:`_gate`).
        A dedicated worker cannot start before ocnb lets it go; a shared worker is let go by
        Playwright — once ocnb's breakpoint is in (``driver_guard.js`` holds Playwright's
        hand until :meth:`_let_others_go`) — and by ocnb only if nobody has after :data:`LET_GO_AFTER_S`."""
        session = str(params.get("sessionId"))
        info = params.get("targetInfo") or {}
        kind = info.get("type")
        if kind in WORKERS and self.choose is not None:
            gate = self.choose(info)
            if gate is None:  # its context has no policy: nothing to gate
                if params.get("waitingForDebugger"):
                    await self.send(session, "Runtime.runIfWaitingForDebugger")
                self._let_others_go(kind, info)
                return
            self._gates[session] = gate
        if kind in WORKERS or kind == "iframe":
            self.send(session, "Target.setAutoAttach", HOLD)
        if kind in WORKERS:
            if not params.get("waitingForDebugger"):  # it runs already: too late to stop, gate its later sockets
                await self._gate(session)
                return
            self.send(session, "Debugger.enable")
            answer = await self.send(session, "Debugger.setInstrumentationBreakpoint", {"instrumentation": BREAK})
            breakpoint_id = (answer.get("result") or {}).get("breakpointId")
            if breakpoint_id is None:
                return  # no breakpoint, no start: the worker stays held
            self._breakpoints[session] = breakpoint_id
            self._let_others_go(kind, info)  # the breakpoint is in: whoever lets it go, it stops there
        if params.get("waitingForDebugger") and kind in LET_GO_BY_OTHERS:
            # Playwright lets it go; should a client that gives it its start resume it as it pauses at
            # the breakpoint, the worker would run ungated — so only if nobody has, a while later
            await asyncio.sleep(LET_GO_AFTER_S)
            if session not in self._breakpoints or session in self._paused:
                return
        if params.get("waitingForDebugger"):
            await self.send(session, "Runtime.runIfWaitingForDebugger")
        if kind not in WORKERS:
            self.released.add(session)

    def _let_others_go(self, kind: Any, info: dict[str, Any]) -> None:
        """Tell Playwright's driver it may let this shared worker go (``driver_guard.js`` holds it
        until then); without that preload the command fails and nothing changes."""
        if kind in LET_GO_BY_OTHERS:
            self._spawn(self._release(str(info.get("targetId", ""))))

    async def _release(self, target_id: str) -> None:
        with contextlib.suppress(Exception):  # a driver without driver_guard.js: as before
            await self.cdp.send(RELEASE_SHARED_WORKER, {"targetId": target_id})

    async def _gate(self, session: str, paused: bool = False) -> None:
        """Put the gate in the worker (paused before its first script, or running); let it go if paused."""
        # one session's commands run in order: one round trip for them all. The breakpoint goes
        # first, or the gate's own script would stop at it.
        if paused:
            self.send(session, "Debugger.removeBreakpoint", {"breakpointId": self._breakpoints.pop(session, "")})
        self.send(session, "Runtime.addBinding", {"name": BINDING})
        script = self._gates[session][0] if session in self._gates else self.script
        answer = await self.send(session, "Runtime.evaluate", {"expression": script, "returnByValue": True})
        if (answer.get("result") or {}).get("result", {}).get("value") != "gated":
            return  # no gate, no start: the worker stays paused (and sends nothing)
        self.released.add(session)
        if paused:
            self.send(session, "Debugger.resume")
            await self.send(session, "Debugger.disable")


async def watch_target(
    cdp: Any,
    target_id: str,
    script: str,
    refuse: Callable[[str], object],
    hold: dict[str, Any] = HOLD,
    choose: Chooser | None = None,
) -> PageWatch | None:
    """Hold, gate and let go every worker the page or frame ``target_id`` starts from now on, through
    ``cdp`` (the page's own session, or the browser's); None when it is no target (or gone).
    ``hold``: the auto-attach (:data:`HOLD_SHARED` on the browser target: its shared workers).
    ``choose``: a worker's gate script and reporter by its target info (its ``browserContextId``),
    None for a context without a policy — for a browser shared by several contexts."""
    if hold is HOLD_SHARED:  # Playwright's driver lets each shared worker go only once ocnb says so
        with contextlib.suppress(Exception):  # a driver without driver_guard.js: as before
            await cdp.send(HOLD_SHARED_WORKERS)
    with contextlib.suppress(Exception):
        tunnel = await cdp.send("Target.attachToTarget", {"targetId": target_id, "flatten": False})
        watch = PageWatch(cdp, tunnel["sessionId"], script, refuse, choose)
        answer = await watch.send(None, "Target.setAutoAttach", hold)
        if "error" not in answer:
            return watch
    return None


class ContextWatch:
    """Every page of a context watched as it appears, each until it closes.

    A page is watched when Playwright reports it (``context.on("page")``); a popup can start a worker
    before that, so when the origin guard pauses a new target's first document on the browser's
    session it asks :meth:`before_document` first, which watches that target at once.
    """

    def __init__(self, policy: OriginPolicy, refuse: Callable[[str, str, Any], object]) -> None:
        self.script = gate_script(policy)
        self.refuse = refuse
        self.pages: dict[int, PageWatch | None] = {}
        #: Target ids watched already (or found to be no target).
        self.targets: set[str] = set()
        #: The browser's own tunnel, for shared workers (a browser ocnb launched for this context).
        self.browser: PageWatch | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def install(self, context: Any) -> None:
        context.on("page", lambda page: self._spawn(self.watch(context, page)))
        for page in context.pages:
            await self.watch(context, page)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def watch(self, context: Any, page: Any) -> None:
        if id(page) in self.pages:
            return
        self.pages[id(page)] = None  # claimed
        page.once("close", lambda _p: self.pages.pop(id(page), None))
        with contextlib.suppress(Exception):  # closed already, or not Chromium
            cdp = await context.new_cdp_session(page)
            target_id = (await cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
            if target_id in self.targets:
                return
            self.targets.add(target_id)
            self.pages[id(page)] = await watch_target(
                cdp, target_id, self.script, lambda url: self.refuse(url, "websocket", page)
            )

    async def before_document(self, cdp: Any, frame_id: str | None) -> None:
        """A document is about to load in frame ``frame_id``: watch its target first if it is a new one."""
        if not frame_id or frame_id in self.targets:
            return
        self.targets.add(frame_id)
        await watch_target(cdp, frame_id, self.script, lambda url: self.refuse(url, "websocket", None))

    async def watch_shared_workers(self, cdp: Any) -> None:
        """Hold and gate every shared worker of the browser ``cdp`` is the session of (one that holds
        this context alone: a shared worker belongs to no page)."""
        with contextlib.suppress(Exception):
            browser_id = (await cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
            self.browser = await watch_target(
                cdp, browser_id, self.script, lambda url: self.refuse(url, "websocket", None), HOLD_SHARED
            )


async def watch_context(context: Any, policy: OriginPolicy, refuse: Callable[[str, str, Any], object]) -> ContextWatch:
    """Gate the WebSockets of every worker of every page of ``context``; ``refuse(url, kind, page)``
    is told each refused URL (the origin guard's :meth:`~ocnb.browser.policy.OriginGuard.refuse`)."""
    watch = ContextWatch(policy, refuse)
    await watch.install(context)
    return watch
