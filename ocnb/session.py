"""Session: one browser (local or remote), its tabs, its registry view, and the layers every call passes.

``s = ocnb.Session()``; ``s.call("navigate", url=...)`` or ``s.navigate(url=...)`` — every registered
tool is also a method, generated from the registry. The browser starts on first use.

The session is the composition root: ``__init__`` creates its layers (``audit``: secrets, journal and
trace; ``guard``: the bound task signature; ``handoffs``; ``approvals``; ``crash_watch``; ``recent``), each holding
its own state, and declares all their hooks in one :class:`~ocnb.calls.Pipeline`. To dispatch and to
the layers it is a :class:`~ocnb.calls.Host`; nothing outside sets attributes on it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import os
import secrets as _secrets
import threading
import time
import types
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ._tool_methods import ToolMethods
from .audit.approval import Approvals, Approver, Desk
from .audit.fence import Fence
from .audit.handoff import Handoffs
from .audit.hooks import AuditLayer
from .audit.journal import Journal
from .audit.secrets import SecretStore
from .audit.trace import TraceWriter
from .browser.crashes import CrashWatch
from .browser.policy import OriginReport
from .browser.runtime import Runtime
from .browser.shared import SharedBrowser
from .browser.state import BrowserState
from .calls import Extensions, Pipeline, RecentResults
from .contracts.taskguard import TaskBinding, TaskGuard
from .discovery.learned import DiscoveryLearner
from .dispatch import dispatch
from .errors import SessionClosed, TargetClosed
from .registry import Registry, ToolDef
from .results import ToolResult
from .settings import SessionOptions, Settings
from .skills.capture import capture_hook

__all__ = ["Session", "build_session", "on_new_default", "session"]

_LIVE: weakref.WeakSet[Session] = weakref.WeakSet()
_DEFAULT: Session | None = None
_DEFAULT_LOCK = threading.Lock()
#: Called with each new default session (:func:`session`): views that follow the notebook's session.
_ON_NEW_DEFAULT: list[Callable[[Session], None]] = []


def new_session_id() -> str:
    return time.strftime("s%Y%m%d-%H%M%S-", time.gmtime()) + _secrets.token_hex(3)


class Session(ToolMethods):
    """A browser session that every face (API, magics, widgets, MCP, plans, replay) shares.

    Args:
        headless: run Chromium without a window (default, unless ``settings`` says otherwise).
        executable_path: a Chromium/Chrome executable; else ``OCNB_CHROMIUM``, Playwright's, PATH.
        connect: a Playwright server WebSocket URL (``playwright run-server``) instead of launching.
        cdp: a Chrome DevTools Protocol endpoint (``http://host:9222``) instead of launching.
        caps: opt-in capability groups of tools to offer besides the default set (``OCNB_CAPS``).
        home: storage root (default ``OCNB_HOME`` or ``~/.ocnb``).
        secrets: a dotenv file of secrets usable as ``${SECRET:NAME}``.
        shared_browser: a :class:`~ocnb.browser.SharedBrowser` to open this session's own context in
            (its cookies, storage, tabs, journal and trace stay this session's) instead of a browser of
            its own; the session then runs on the shared browser's thread, and ``close()`` closes
            only its context. ``ocnb.Pool(browsers=K)`` uses it.
        approve: ``approve(request) -> bool``, asked before an action the ``confirm`` setting (or,
            for an MCP client's call, ``agent_confirm``) says needs approval (:mod:`ocnb.audit.approval`);
            without it a person's such call is ``APPROVAL_REQUIRED``, and an agent's waits at the
            approval desk (``session.approvals.pending()`` / ``.answer(id, approved)``).
        desk: another session's approval desk (``other.approvals.desk``) for this session's agent
            calls to wait at — its pause, its agent policy, its person's answers; an isolated MCP
            client's session uses its served session's. Default: a desk of its own.
        settings: a :class:`~ocnb.settings.Settings` (default: :meth:`Settings.from_env`); keyword
            overrides of its fields are accepted too (``Session(handoff=True)``). ``config=`` is the old
            name of the same argument. The caller's object is never changed: settings are frozen.
    """

    def __init__(
        self,
        *,
        headless: bool | None = None,
        executable_path: str | os.PathLike[str] | None = None,
        connect: str | None = None,
        cdp: str | None = None,
        caps: Iterable[str] | str | None = None,
        home: str | os.PathLike[str] | None = None,
        secrets: str | os.PathLike[str] | None = None,
        settings: Settings | None = None,
        config: Settings | None = None,
        session_id: str | None = None,
        shared_browser: SharedBrowser | None = None,
        approve: Approver | None = None,
        desk: Desk | None = None,
        **overrides: Any,
    ) -> None:
        if settings is not None and config is not None:
            raise TypeError("Session() takes settings= or config= (its old name), not both")
        base = settings or config or Settings.from_env()
        if headless is not None:
            overrides["headless"] = headless
        if home is not None:
            overrides["home"] = home
        if caps is not None:
            overrides["caps"] = caps
        try:
            #: This session's settings (frozen; change them with :meth:`configure`).
            self.settings: Settings = base.with_changes(**overrides)
        except TypeError as exc:
            raise TypeError(f"Session() got an {exc}") from None
        self.id = session_id or new_session_id()
        self.home: Path = self.settings.home_path
        self.executable_path = str(executable_path) if executable_path else None
        self.connect_url = connect
        self.cdp_url = cdp
        self._tool_methods: set[str] = set()
        self.registry = Registry(caps=self.settings.caps)  # INVALID_ARGUMENT for an unknown group
        self.registry.on_change(self._install_methods)
        self._shared = shared_browser
        #: The browser thread: this session's own, or the shared browser's (then never stopped here).
        self.runtime = shared_browser.runtime if shared_browser else Runtime(name=f"ocnb-browser-{self.id}")
        self._seq = itertools.count(1)
        self._state: BrowserState | None = None
        self._start_lock: asyncio.Lock | None = None
        self._lock: asyncio.Lock | None = None
        self._closed = False
        self._close_lock = threading.Lock()
        self._closers: list[Callable[[], None]] = []
        #: Per-session objects that faces and tools add (the widget watcher, the discovery engine).
        self.extensions = Extensions()
        # The layers, each holding its own state. Only this session writes to them.
        #: Secrets, journal and trace.
        self.audit = AuditLayer(self.home, self.id, secrets=secrets)
        #: The bound task signature (``oc_task_start``) and its guards.
        self.guard = TaskGuard(self)
        #: Open human hand-offs (``NEEDS_HUMAN``).
        self.handoffs = Handoffs(self)
        #: This session's page-text fence (its random token), for results handed to a model.
        self.fence = Fence()
        #: Approval before irreversible actions (``confirm``; the ``approve`` callable; open requests).
        self.approvals = Approvals(self, self.audit.secrets, approve, desk=desk)
        #: Browser crashes seen, and the one code a call that ran into one gets.
        self.crash_watch = CrashWatch(self)
        #: What the origin policy refused during each call (``allowed_origins``/``blocked_origins``).
        self.origins = OriginReport(self)
        #: Recent results, for token accounting.
        self.recent = RecentResults()
        #: Intents of successful calls learned as discovery examples (``discovery_learn``).
        self.learner = DiscoveryLearner(self.home, self.audit.secrets.mask_text)
        #: Every call's hooks, in the order they run.
        self.pipeline = Pipeline(
            before=[
                self.audit.trace_call,
                self.approvals.gate,  # a paused agent's call ends here, before it costs anything
                self.audit.secrets_in,
                self.guard.before,
                self.approvals.before,
                self.origins.before,
            ],
            after=[
                self.crash_watch.after,  # first: every later hook sees the one crash code
                self.handoffs.after,  # NEEDS_HUMAN, before masking and journaling
                self.origins.after,  # what the origin policy refused, before masking and journaling
                self.audit.secrets_out,
                self.audit.record,
                self.learner.after,  # after masking: learns only what the journal would show
                self.guard.after,
                capture_hook,
                self.recent.after,
            ],
        )
        self._install_methods()
        _LIVE.add(self)

    # -- the layers' state, by its public names ---------------------------------------------------
    @property
    def secrets(self) -> SecretStore:
        """The secret store (``${SECRET:NAME}`` values; never written anywhere)."""
        return self.audit.secrets

    @property
    def journal(self) -> Journal:
        """This session's journal (every recorded call; also on disk)."""
        return self.audit.journal

    @property
    def trace(self) -> TraceWriter:
        """This session's trace writer."""
        return self.audit.trace

    @property
    def task(self) -> TaskBinding | None:
        """The bound task signature (``oc_task_start``), or None."""
        return self.guard.task

    @property
    def recent_results(self) -> deque[dict[str, Any]]:
        """The compact JSON of recent results, newest last (for token accounting)."""
        return self.recent.entries

    @property
    def crashes(self) -> list[dict[str, Any]]:
        """Browser crashes seen (each relaunched on the next call), each with its lost tabs."""
        return self.crash_watch.crashes

    def on_close(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` when the session closes; returns a function that cancels that."""
        self._closers.append(callback)
        return lambda: self._closers.remove(callback) if callback in self._closers else None

    # -- settings -----------------------------------------------------------------------------
    @property
    def config(self) -> Settings:
        """The same object as :attr:`settings` (its older name)."""
        return self.settings

    def configure(self, **changes: Any) -> Settings:
        """Change settings of this live session (``s.configure(handoff=True)``); returns the new settings.

        Each call after this sees them. ``headless``, ``viewport`` and ``chromium`` apply when the
        browser next starts; ``home`` cannot change (the journal and trace already live there).
        """
        if "home" in changes and Path(changes["home"]).expanduser() != self.home:
            raise ValueError("a session's home cannot change; create a new Session(home=...)")
        new = self.settings.with_changes(**changes)
        if new.caps != self.settings.caps:
            self.registry.set_caps(new.caps)  # checked first: an unknown group changes nothing
        self.settings = new
        if self._state is not None:
            self._state.config = new
        return new

    # -- tools as methods ---------------------------------------------------------------------
    def _install_methods(self) -> None:
        """One method per offered tool; re-run when the registry's tool set changes (``caps``)."""
        offered = set(self.registry.names())
        for name in self._tool_methods - offered:
            delattr(self, name)
        self._tool_methods &= offered
        for tooldef in self.registry:
            if hasattr(type(self), tooldef.name) or tooldef.name in self._tool_methods:
                continue
            setattr(self, tooldef.name, types.MethodType(_make_method(tooldef), self))
            self._tool_methods.add(tooldef.name)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, /, **kwargs: Any) -> ToolResult:
        """Run ``tool`` with ``arguments`` (a dict) and/or keyword arguments; returns a ToolResult."""
        if arguments is not None and not isinstance(arguments, dict):
            return dispatch(self, tool, arguments, source="api")  # refused there (INVALID_ARGUMENT), never raised
        args = dict(arguments or {})
        args.update(kwargs)
        return dispatch(self, tool, args, source="api")

    def trace_event(self, kind: str, body: dict[str, Any]) -> None:
        """Write one non-call event (navigation, console, dialog, replay_step …) to this session's trace."""
        self.audit.trace_event(kind, body)

    def _clip_text(self, text: str, max_len: int) -> str:
        """``text`` cut to ``max_len`` characters, secrets masked first (the cut never halves one)."""
        return self.audit.secrets.clip_text(text, max_len)

    def journal_df(self, since: Any = None) -> Any:
        """This session's journal as a DataFrame (see :func:`ocnb.journal_df` for the columns)."""
        from .audit.telemetry import journal_df

        return journal_df(session_id=self.id, since=since, home=self.home)

    def trace_df(self) -> Any:
        """This session's trace as a DataFrame (see :func:`ocnb.trace_df` for the columns)."""
        from .audit.telemetry import trace_df

        return trace_df(self.id, home=self.home)

    def load_secrets(self, path: str | os.PathLike[str]) -> list[str]:
        """Load a dotenv file of secrets (usable as ``${SECRET:NAME}``); returns the names loaded."""
        return list(self.secrets.load_dotenv(path))

    def resume_handoff(self, handoff_id: str, ref: str, *, source: str = "api") -> ToolResult:
        """Finish a ``NEEDS_HUMAN`` call on the element (ref) a person chose; journaled as usual.

        Raises ``INVALID_ARGUMENT`` when ``handoff_id`` is not open (already resumed, or unknown).
        """
        tool, args = self.handoffs.take(handoff_id, ref)
        return dispatch(self, tool, args, source=source)

    def fenced(self, result: ToolResult) -> str:
        """``result`` as a model should read it: the tool's own words as JSON, and the text the page
        controls between ``[page TOKEN]`` and ``[/page TOKEN]`` (this session's token) — what an MCP
        client gets. For a loop of your own that feeds results to a model; ``result`` is unchanged."""
        return self.fence.text(result)

    def tools(self) -> list[ToolDef]:
        """The tools this session offers (the default set, plus the opt-in groups of ``caps``)."""
        return list(self.registry)

    # -- browser (what a layer may ask: see ocnb.calls.Host) -----------------------------------
    @property
    def state(self) -> BrowserState | None:
        """The running browser's state, or None before it starts (never starts it)."""
        return self._state

    def browser_state(self) -> BrowserState:
        """The running browser's state; raises ``TARGET_CLOSED`` before it starts."""
        if self._state is None:
            raise TargetClosed("the browser has not started")
        return self._state

    def call_lock(self) -> asyncio.Lock:
        """The lock that serializes top-level calls (created on the browser loop)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def next_seq(self) -> int:
        """The next call's sequence number in this session, from 1."""
        return next(self._seq)

    async def ensure_browser(self) -> BrowserState:
        """Start (or, after a reported crash, relaunch) the browser if needed; returns its state."""
        if self._closed:
            raise SessionClosed("the session is closed; create a new Session")
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            old = self._state
            if old is not None and old.crashes.current is not None and old.crashes.reported:
                await self._drop_browser()  # the crash was reported once: this call relaunches
            if self._state is None:
                state = BrowserState(self.config, on_event=self.trace_event, clip_text=self._clip_text)
                await state.start(
                    executable_path=self.executable_path,
                    connect=self.connect_url,
                    cdp=self.cdp_url,
                    shared=self._shared,
                )
                self._state = state
                crash = self.crash_watch.relaunched_after()
                if crash is not None:
                    self.trace_event("browser_relaunched", {"lost_tabs": crash["lost_tabs"]})
        return self._state

    async def _drop_browser(self) -> dict[str, Any] | None:
        """Close the current browser (dead or alive) and forget it; returns its crash record, if any."""
        state, self._state = self._state, None
        if state is None:
            return None
        crash = state.crashes.current
        if crash is not None:
            self.crash_watch.seen(crash)
        await state.close()
        return crash

    async def relaunch_browser(self) -> dict[str, Any]:
        """Start a new browser now (after a crash, or to start clean); returns what was lost."""
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            state = self._state
            tabs = state.tabs.values() if state is not None else []
            lost = [{"tab_id": t.id, "url": t.page.url, "title": t.title} for t in tabs]
            crash = await self._drop_browser()
            if crash is not None:
                lost = crash["lost_tabs"]
                crash["relaunched"] = True
        await self.ensure_browser()
        self.trace_event("browser_relaunched", {"lost_tabs": lost, "after_crash": crash is not None})
        return {"after_crash": crash is not None, "lost_tabs": lost}

    def start(self) -> Session:
        """Start the browser now rather than on the first call (raises BROWSER_UNAVAILABLE)."""
        self.runtime.run(self.ensure_browser(), timeout=self.config.default_timeout_ms / 1000 + 30)
        return self

    def reconnect(self) -> Session:
        """Drop the browser (e.g. after a remote connection died) and start or connect again."""

        async def _restart() -> None:
            if self._state is not None:
                await self._state.close()
                self._state = None
            await self.ensure_browser()

        self.runtime.run(_restart(), timeout=self.config.default_timeout_ms / 1000 + 30)
        return self

    @property
    def started(self) -> bool:
        return self._state is not None

    @property
    def closed(self) -> bool:
        return self._closed

    def run(self, coro: Any, timeout: float | None = None, on_wait: Callable[[float], None] | None = None) -> Any:
        """Run a coroutine on this session's browser thread (for advanced use and tests)."""
        return self.runtime.run(coro, timeout, on_wait)

    def close(self) -> None:
        """Close the browser and stop the browser thread. Idempotent; later calls get SESSION_CLOSED."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        global _DEFAULT
        if _DEFAULT is self:
            _DEFAULT = None
        for callback in [self.audit.close, *self._closers]:
            with contextlib.suppress(Exception):
                callback()
        if not self.runtime.stopped and self.runtime._thread is not None:
            state = self._state

            async def _shutdown() -> None:
                if state is not None:
                    await state.close()

            with contextlib.suppress(Exception):
                fut = self.runtime.submit(_shutdown())
                fut.result(30)
        self._state = None
        if self._shared is None:
            self.runtime.stop()
        _LIVE.discard(self)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self._state else "not started")
        return f"<ocnb.Session {self.id} {state}, {len(self.registry)} tools>"

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.registry.names()))


def _make_method(tooldef: ToolDef) -> Any:
    def method(self: Session, arguments: dict[str, Any] | None = None, /, **kwargs: Any) -> ToolResult:
        return self.call(tooldef.name, arguments, **kwargs)

    method.__name__ = tooldef.name
    method.__qualname__ = f"Session.{tooldef.name}"
    props = tooldef.input_schema.get("properties", {})
    required = set(tooldef.required)
    params = ", ".join(f"{k}{'' if k in required else '?'}" for k in props)
    method.__doc__ = f"{tooldef.description}\n\nArguments: {params or 'none'}."
    return method


def session(**kwargs: Any) -> Session:
    """The shared default session for notebooks: created on first use, re-created after close()."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        created = _DEFAULT is None or _DEFAULT.closed
        if created:
            _DEFAULT = Session(**kwargs)
        current = _DEFAULT
        assert current is not None
    if created:
        for callback in list(_ON_NEW_DEFAULT):
            with contextlib.suppress(Exception):
                callback(current)
    return current


def is_default(s: Session) -> bool:
    """Whether ``s`` is the notebook's shared default session (:func:`session`)."""
    return _DEFAULT is s


def on_new_default(callback: Callable[[Session], None]) -> Callable[[], None]:
    """Call ``callback(session)`` whenever a new default session is created (after ``%oc close``, the
    next ``%oc`` line); returns a function that cancels that."""
    _ON_NEW_DEFAULT.append(callback)
    return lambda: _ON_NEW_DEFAULT.remove(callback) if callback in _ON_NEW_DEFAULT else None


def build_session(options: SessionOptions, *, default: bool = False, **extra: Any) -> Session:
    """The Session a face's :class:`~ocnb.settings.SessionOptions` describe — the one way the magics,
    ``ocnb mcp`` and a batch pool build theirs. ``default``: the shared default session (:func:`session`;
    an open one is kept as it is). ``extra``: what no face option carries (``shared_browser``, ``approve``).
    """
    kwargs = {**options.session_kwargs(), **extra}
    return session(**kwargs) if default else Session(**kwargs)


@atexit.register
def _close_all() -> None:
    for s in list(_LIVE):
        with contextlib.suppress(Exception):
            s.close()
