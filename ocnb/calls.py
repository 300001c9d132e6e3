"""What a tool call is while it runs, the pipeline of hooks it passes, and what a layer may ask of its host.

This is the low layer the rest builds on: :func:`ocnb.dispatch.dispatch` moves a :class:`CallContext`
through a :class:`Pipeline`; the layers a session is made of (audit, task guard, hand-offs, capture …)
contribute hooks, and reach the session only through :class:`Host`. A layer never sets attributes on
its host: each one keeps its state in its own object, which the session creates and owns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from .registry import Registry, ToolDef
from .results import ToolResult

if TYPE_CHECKING:
    from .settings import Settings

__all__ = [
    "AGENT_SOURCES",
    "SOURCES",
    "AskFn",
    "AfterHook",
    "BeforeHook",
    "CallContext",
    "CallLock",
    "Extensions",
    "Host",
    "Pipeline",
    "ProgressFn",
    "RecentResults",
    "Slots",
]

#: Faces a call can come from (recorded in the journal as ``source``).
SOURCES = ("api", "magic", "widget", "mcp", "plan", "replay")
#: Faces whose calls are an agent's, not the person's: an MCP client's. Their approvals follow
#: ``Settings.agent_confirm``, they wait at the approval desk, and the person can pause them.
AGENT_SOURCES = frozenset({"mcp"})

T = TypeVar("T")
S = TypeVar("S")

#: How a face asks its own person about an approval while the call waits (MCP elicitation):
#: ``ask(request, answer) -> cancel``, where ``answer(approved)`` may be called from any thread and
#: ``cancel()`` withdraws the question once someone else answered (or the wait ended). A request
#: whose ``kind`` is ``pick`` is a hand-off: ``answer(ref)`` with one of its ``candidates``' refs.
AskFn = Callable[[dict[str, Any], Callable[[Any], None]], Callable[[], None]]

#: How a face hears a long call's progress: ``(done, total or None, message or None)``. Called on the
#: browser thread; it must not block (the MCP face hands the notification to its own loop).
ProgressFn = Callable[[float, "float | None", "str | None"], None]


class Extensions:
    """Per-session objects that faces and tools add on first use (a widget watcher, a discovery
    engine), at most one per class. The session owns them; they go when it does."""

    def __init__(self) -> None:
        self._items: dict[type, object] = {}

    def get(self, kind: type[T]) -> T | None:
        item = self._items.get(kind)
        return item if isinstance(item, kind) else None

    def setdefault(self, kind: type[T], create: Callable[[], T]) -> T:
        """The one ``kind`` object, made by ``create()`` if there is none yet."""
        item = self.get(kind)
        if item is None:
            item = create()
            self._items[kind] = item
        return item

    def put(self, item: object) -> None:
        """Make ``item`` the one object of its class (replacing any earlier one)."""
        self._items[type(item)] = item

    def discard(self, item: object) -> None:
        """Forget ``item`` if it is still the one of its class."""
        if self._items.get(type(item)) is item:
            del self._items[type(item)]


class Host(Protocol):
    """What dispatch, and a layer's hooks, may ask of the session they run in.

    The browser state is typed ``Any`` here because this layer sits below :mod:`ocnb.browser`; it is
    a :class:`ocnb.browser.BrowserState`.
    """

    @property
    def id(self) -> str: ...
    @property
    def home(self) -> Path: ...
    @property
    def config(self) -> Settings: ...
    @property
    def registry(self) -> Registry: ...
    @property
    def pipeline(self) -> Pipeline: ...
    @property
    def extensions(self) -> Extensions: ...
    @property
    def closed(self) -> bool: ...
    @property
    def state(self) -> Any:
        """The running browser's state, or None before it starts (never starts it)."""

    def browser_state(self) -> Any:
        """The running browser's state; raises ``TARGET_CLOSED`` before it starts."""

    def ensure_browser(self) -> Awaitable[Any]:
        """Start (or relaunch) the browser if needed, on the browser thread; returns its state."""

    def run(
        self, coro: Coroutine[Any, Any, T], timeout: float | None = None, on_wait: Callable[[float], None] | None = None
    ) -> T:
        """Wait for ``coro`` run on the browser thread (from any other thread), telling ``on_wait`` the
        seconds waited every so often."""

    def call_lock(self) -> asyncio.Lock:
        """The lock that serializes top-level calls (created on the browser loop)."""

    def next_seq(self) -> int:
        """The next call's sequence number in this session, from 1."""

    def trace_event(self, kind: str, body: dict[str, Any]) -> None:
        """Write one non-call event (navigation, console, replay_step …) to the session's trace."""


class Slots:
    """Typed state that layers keep on an object they share (a call, a tab), one object per class.

    ``obj.slot(Kind)`` is the ``Kind`` object of ``obj``, made by ``Kind()`` on first use;
    ``obj.peek(Kind)`` is it or None (never makes one). ``Kind`` is a class of the layer that owns the
    state: only that layer's package touches it, and other layers call the owner's functions
    (``tests/core/test_layer_state.py`` checks it). The object holding them declares ``_slots``.
    """

    _slots: dict[type, object]

    def slot(self, kind: type[S]) -> S:
        """The ``kind`` object here, made by ``kind()`` on first use."""
        item = self._slots.get(kind)
        if item is None:
            item = self._slots[kind] = kind()
        return cast(S, item)  # stored under its own class

    def peek(self, kind: type[S]) -> S | None:
        """The ``kind`` object here if a layer made one (never makes one)."""
        return cast("S | None", self._slots.get(kind))  # stored under its own class


@dataclass
class CallContext(Slots):
    """One call as it moves through the pipeline; hooks read and annotate it.

    It carries what every layer needs (the call, its timing, where it came from, its parent and
    lock, the face's progress and ask functions); what one layer knows about the call is that
    layer's slot (:meth:`~Slots.slot`: the audit layer's :class:`~ocnb.audit.notes.JournalLine`, the
    task guard's, the dialog layer's …).
    """

    session: Host
    name: str
    args: dict[str, Any]
    source: str
    seq: int
    started: float = field(default_factory=time.time)
    tooldef: ToolDef | None = None
    #: Arguments the handler receives (after secrets substitution); ``args`` stays as given.
    exec_args: dict[str, Any] = field(default_factory=dict)
    intent: str | None = None
    tab_id: str | None = None
    duration_ms: float = 0.0
    #: False for calls that leave no journal entry, trace event or skill step: a refused intent,
    #: or a display-only call (``dispatch(..., record=False)``, e.g. a widget's screenshot).
    record: bool = True
    #: For hooks of your own; ocnb's own layers keep their per-call state in slots (:meth:`slot`).
    extra: dict[str, Any] = field(default_factory=dict)
    #: Set by a face that can show progress (MCP with a ``progressToken``); None elsewhere.
    progress_fn: ProgressFn | None = None
    #: Set by a face that can ask its own person about an approval while the call waits (MCP elicitation).
    ask_fn: AskFn | None = None
    #: The call this one runs inside (a plan's or a replay's step), or None for a top-level call.
    parent: CallContext | None = None
    #: The ``asyncio.timeout`` around the handler while it runs: a wait for a person pauses it.
    deadline: asyncio.Timeout | None = None
    #: The session's call lock as this top-level call holds it (None for a nested call: see :attr:`root`).
    lock: CallLock | None = None
    #: The name the MCP client gave for itself (``clientInfo.name``), for its journal line; None elsewhere.
    client: str | None = None
    #: The layers' own state for this call, one object per class (:meth:`~Slots.slot`).
    _slots: dict[type, object] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def root(self) -> CallContext:
        """The top-level call this one runs inside (itself when top-level)."""
        call = self
        while call.parent is not None:
            call = call.parent
        return call

    @property
    def agent(self) -> bool:
        """Whether an agent made this call (or the plan or replay it is a step of): see :data:`AGENT_SOURCES`."""
        return self.root.source in AGENT_SOURCES

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report that ``done`` of ``total`` steps are finished (a no-op when no face listens)."""
        if self.progress_fn is not None:
            try:
                self.progress_fn(done, total, message)
            except Exception:  # noqa: BLE001 - progress is a courtesy; it never fails a call
                pass


class CallLock:
    """The session's call lock as one top-level call holds it (:func:`ocnb.dispatch.dispatch_async`).

    A call that waits for a person (the approval desk) lets it go meanwhile (:meth:`released`), so
    the person's own calls run; it takes it back before it acts. Only this holder releases it: the
    steps of a plan or a replay run under their top-level call's hold and never lock again.
    """

    def __init__(self, lock: asyncio.Lock) -> None:
        self.lock = lock
        self.held = False

    async def acquire(self) -> None:
        await self.lock.acquire()
        self.held = True

    def release(self) -> None:
        """Let the lock go if this holder has it (idempotent)."""
        if self.held:
            self.held = False
            self.lock.release()

    @contextlib.asynccontextmanager
    async def released(self) -> AsyncIterator[bool]:
        """Let the lock go for the block; take it back after it (not when the call is cancelled: the
        caller is gone, and the holder then has nothing to release). Yields whether it let it go."""
        if not self.held:
            yield False
            return
        self.release()
        try:
            yield True
        except asyncio.CancelledError:
            raise
        except BaseException:
            await self.acquire()
            raise
        await self.acquire()


#: A hook run before the handler: returns None, or an awaitable of None; raises an
#: :class:`~ocnb.errors.OcnbError` to refuse the call.
BeforeHook = Callable[[CallContext], "Awaitable[None] | None"]
#: A hook run after the handler: returns None (the result stands) or a replacement :class:`ToolResult`,
#: or an awaitable of either.
AfterHook = Callable[[CallContext, ToolResult], "Awaitable[ToolResult | None] | ToolResult | None"]


@dataclass
class Pipeline:
    """Hook points, run in list order. ``before`` hooks may raise :class:`~ocnb.errors.OcnbError` to
    refuse a call (nothing runs); ``after`` hooks may return a replacement :class:`ToolResult` (e.g.
    with secrets masked), which the later ones see. A session declares its layers' hooks in one
    place (:class:`ocnb.session.Session`).

    Faces that follow calls at run time (the widget watcher) add theirs to ``outer_before``, run
    before every ``before`` hook, and ``outer_after``, run after every ``after`` hook: they see a
    call as its caller made it and its result as its caller gets it.
    """

    before: list[BeforeHook] = field(default_factory=list)
    after: list[AfterHook] = field(default_factory=list)
    outer_before: list[BeforeHook] = field(default_factory=list)
    outer_after: list[AfterHook] = field(default_factory=list)

    def before_hooks(self) -> list[BeforeHook]:
        """Every before-hook in the order it runs."""
        return [*self.outer_before, *self.before]

    def after_hooks(self) -> list[AfterHook]:
        """Every after-hook in the order it runs."""
        return [*self.after, *self.outer_after]


class RecentResults:
    """The compact JSON of the (masked) results of a session's recent recorded calls, for token accounting."""

    #: How many results are kept.
    SIZE = 200

    def __init__(self, size: int = SIZE) -> None:
        self.entries: deque[dict[str, Any]] = deque(maxlen=size)

    def after(self, call: CallContext, result: ToolResult) -> None:
        """After-hook (last): remember the result as the caller got it."""
        if not call.record:
            return
        text = json.dumps(result.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str)
        self.entries.append({"seq": call.seq, "tool": call.name, "source": call.source, "ok": result.ok, "json": text})
