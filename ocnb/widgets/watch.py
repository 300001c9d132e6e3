"""Keeps widgets in step with a session: pipeline hooks plus one throttled refresher thread.

The watcher adds one outer before-hook and one outer after-hook to ``session.pipeline`` (they run
before and after every layer's hooks); the session keeps the one
watcher among its extensions and stops it when it closes. The after-hook runs on the browser thread, so it only counts the call, hands it to
quick ``on_call`` listeners (e.g. the skill recorder collecting steps) and wakes the refresher;
the refresher thread then calls the ``subscribe`` listeners at most once per ``interval`` seconds,
however many calls arrived meanwhile. Quiet widget calls (see :mod:`ocnb.widgets.caller`) are
dispatched with ``record=False``: no journal entry, and they wake no one, so a refresh never triggers another refresh.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..calls import CallContext
    from ..results import ToolResult
    from ..session import Session

__all__ = ["SessionWatcher", "watcher_for"]

log = logging.getLogger(__name__)
_CREATE = threading.Lock()


class SessionWatcher:
    """Pipeline hooks and a throttled refresher for the widgets of one session."""

    def __init__(self, session: Session, *, interval: float = 0.4) -> None:
        self.session = session
        self.interval = interval
        #: Calls seen (not counting quiet ones).
        self.calls = 0
        self._listeners: list[Callable[[], None]] = []
        self._call_listeners: list[Callable[[CallContext, ToolResult], None]] = []
        self._before_listeners: list[Callable[[CallContext], None]] = []
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stopped = False
        self._state_lock = threading.Lock()
        self._last = 0.0
        self._thread: threading.Thread | None = None
        session.pipeline.outer_before.append(self._before)  # quiet calls are marked before the trace sees them
        session.pipeline.outer_after.append(self._after)
        self._cancel_on_close = session.on_close(self.stop)

    # -- hooks (browser thread) ------------------------------------------------------------
    def _before(self, call: CallContext) -> None:
        if not call.record:  # a display-only call (a widget's own screenshot) wakes no one
            return
        for fn in list(self._before_listeners):
            try:
                fn(call)
            except Exception:  # noqa: BLE001 - a widget bug must not break a tool call
                log.exception("ocnb widget before-listener failed")

    def _after(self, call: CallContext, result: ToolResult) -> None:
        if not call.record:
            return
        self.calls += 1
        for fn in list(self._call_listeners):
            try:
                fn(call, result)
            except Exception:  # noqa: BLE001
                log.exception("ocnb widget call-listener failed")
        if self._listeners:
            self.request()

    # -- listeners ---------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` on the refresher thread after tool calls (throttled); returns an unsubscribe."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def on_call(self, fn: Callable[[CallContext, ToolResult], None]) -> Callable[[], None]:
        """Call ``fn(call, result)`` on the browser thread after each recorded call (keep it quick)."""
        self._call_listeners.append(fn)
        return lambda: self._call_listeners.remove(fn) if fn in self._call_listeners else None

    def on_before(self, fn: Callable[[CallContext], None]) -> Callable[[], None]:
        """Call ``fn(call)`` before each recorded call's handler runs (it may adjust ``exec_args``)."""
        self._before_listeners.append(fn)
        return lambda: self._before_listeners.remove(fn) if fn in self._before_listeners else None

    # -- refresher thread ------------------------------------------------------------------
    def request(self) -> None:
        """Ask for a refresh of every subscriber soon (coalesced with other requests)."""
        if self._stopped:
            return
        with self._state_lock:
            self._idle.clear()
            self._wake.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ocnb-widget-refresh", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stopped:
            self._wake.wait()
            if self._stopped:
                break
            delay = self._last + self.interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self._wake.clear()
            self._last = time.monotonic()
            for fn in list(self._listeners):
                try:
                    fn()
                except Exception:  # noqa: BLE001
                    log.exception("ocnb widget refresh failed")
            with self._state_lock:
                if not self._wake.is_set():
                    self._idle.set()
        self._idle.set()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until no refresh is pending or running (for tests and scripts)."""
        return self._idle.wait(timeout)

    def stop(self) -> None:
        """Stop the refresher and detach the hooks (the session closes, or no widget is left)."""
        self._stopped = True
        self._wake.set()
        with contextlib.suppress(ValueError):
            self.session.pipeline.outer_before.remove(self._before)
        with contextlib.suppress(ValueError):
            self.session.pipeline.outer_after.remove(self._after)
        self._cancel_on_close()
        self.session.extensions.discard(self)


def watcher_for(session: Session, *, interval: float | None = None) -> SessionWatcher:
    """The session's one watcher, created (and its hooks installed) on first use."""
    with _CREATE:
        w = session.extensions.get(SessionWatcher)
        if w is None or w._stopped:
            w = SessionWatcher(session)
            session.extensions.put(w)
        if interval is not None:
            w.interval = interval
        return w
