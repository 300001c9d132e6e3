"""The browser thread: one daemon thread that owns an asyncio loop and every Playwright object.

Every face submits coroutines here (:meth:`Runtime.run` blocks the caller, :meth:`Runtime.submit`
returns a future). This works the same from a script, from inside a running event loop (a Jupyter
kernel, ``asyncio.run``), from several threads at once and under the MCP server's own loop, without
nest_asyncio. ``Runtime.run`` is the one place in ocnb that waits on the browser thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, cast

from ..errors import Interrupted, SessionClosed, Timeout

__all__ = ["Runtime"]

T = TypeVar("T")


#: How often :meth:`Runtime.run` tells its ``on_wait`` how long it has waited, in seconds.
TICK_S = 0.25

#: How long an interrupted :meth:`Runtime.run` waits for the cancelled coroutine to wind down.
SETTLE_S = 5.0


def _told_nobody(seconds: float) -> None:
    """The ``on_wait`` of a wait that tells nobody (it is sliced for the signal handlers' sake alone)."""


class _Hop:
    """One :meth:`Runtime.run`: its coroutine, run in a task on the browser loop, and its outcome.

    The cheapest way there and back: one ``call_soon_threadsafe`` to start the task, and a plain
    ``threading.Lock`` the task releases as its last step, which the caller waits on — no
    ``concurrent.futures.Future`` (a ``Condition`` and two chained callbacks) and no loop turn for a
    done-callback. The lock is released however the coroutine ends (a cancellation included).
    """

    __slots__ = ("coro", "done", "value", "error", "task", "cancelled")

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro
        self.done = threading.Lock()
        self.done.acquire()
        self.value: Any = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[None] | None = None
        self.cancelled = False

    def start(self) -> None:
        """On the browser loop: run the coroutine in a task of its own (unless cancelled already)."""
        if self.cancelled:
            self.coro.close()
            self.error = concurrent.futures.CancelledError()
            self.done.release()
            return
        self.task = asyncio.get_running_loop().create_task(self._drive())

    async def _drive(self) -> None:
        try:
            self.value = await self.coro
        except (KeyboardInterrupt, SystemExit) as exc:  # as asyncio does: these stop the loop
            self.error = exc
            raise
        except asyncio.CancelledError:
            self.error = concurrent.futures.CancelledError()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
            self.error = exc
        finally:
            self.done.release()

    def cancel(self) -> None:
        """On the browser loop: cancel the task (or, not started yet, never start it)."""
        self.cancelled = True
        if self.task is not None:
            self.task.cancel()

    def outcome(self) -> Any:
        error = self.error
        if error is not None:
            self.error = None  # no reference cycle through the traceback
            try:
                raise error
            finally:
                del error
        return self.value


class Runtime:
    """Owns the browser thread and its event loop; started on first use, stopped by :meth:`stop`."""

    def __init__(self, name: str = "ocnb-browser") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        self._ensure_started()
        assert self._loop is not None
        return self._loop

    @property
    def stopped(self) -> bool:
        return self._stopped

    def in_runtime_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def _ensure_started(self) -> None:
        with self._lock:
            if self._stopped:
                raise SessionClosed("the session is closed; create a new Session")
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, name=self._name, daemon=True)
                self._thread.start()
        self._ready.wait()  # every caller, not only the one that started it: the loop is set by then

    def _main(self) -> None:
        if sys.platform == "win32":  # pragma: no cover - subprocesses need the Proactor loop
            loop: asyncio.AbstractEventLoop = asyncio.ProactorEventLoop()
        else:
            loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the browser loop and return a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self._started_loop(coro))

    def run(
        self,
        coro: Coroutine[Any, Any, T],
        timeout: float | None = None,
        on_wait: Callable[[float], None] | None = None,
    ) -> T:
        """Run ``coro`` on the browser thread and wait for its result (from any other thread).

        ``on_wait(seconds)`` is called on the waiting thread every :data:`TICK_S` while it waits (a
        notebook's progress line); its errors are ignored and end its calls. An interrupt of the
        waiting thread (Ctrl-C, Jupyter's ■) cancels ``coro`` on the browser thread, waits a moment for it to wind down (a call journals itself ``CANCELLED``), and raises
        :class:`~ocnb.errors.Interrupted`; the browser, its pages and tabs stay as they are.
        """
        if self.in_runtime_thread():
            coro.close()
            raise RuntimeError("Runtime.run() called from the browser thread; await the coroutine instead")
        loop = self._started_loop(coro)
        hop = _Hop(coro)
        loop.call_soon_threadsafe(hop.start)
        started = time.monotonic()
        try:
            # In slices on the main thread too: Python runs signal handlers there only, and only while
            # it runs Python code. A SIGINT that reaches another thread of the process (the kernel may
            # pick any thread that does not block it; pthread_kill picks one) sets the handler's flag
            # but does not wake the main thread out of a lock's wait: one long wait would hold a Ctrl-C
            # back until the call ended by itself. Between slices the handler runs and stops the wait.
            if on_wait is not None or threading.current_thread() is threading.main_thread():
                self._wait_ticking(hop.done, started, timeout, on_wait or _told_nobody)
            elif not hop.done.acquire(True, -1 if timeout is None else max(timeout, 0.0)):
                raise concurrent.futures.TimeoutError
        except concurrent.futures.TimeoutError:
            self._cancel(loop, hop)
            raise Timeout(f"no answer from the browser thread within {timeout:.1f} s") from None
        except KeyboardInterrupt:
            seconds = time.monotonic() - started
            self._cancel(loop, hop)
            hop.done.acquire(True, SETTLE_S)  # a second interrupt here goes through as it is
            raise Interrupted(seconds=seconds) from None
        return cast(T, hop.outcome())

    def _started_loop(self, coro: Coroutine[Any, Any, Any]) -> asyncio.AbstractEventLoop:
        """The running loop (started on first use); ``coro`` is closed when there is none any more."""
        loop = self._loop
        if loop is None or self._stopped:
            try:
                self._ensure_started()
            except SessionClosed:
                coro.close()
                raise
            loop = self._loop
            assert loop is not None
        return loop

    @staticmethod
    def _cancel(loop: asyncio.AbstractEventLoop, hop: _Hop) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing runs there any more
            loop.call_soon_threadsafe(hop.cancel)

    @staticmethod
    def _wait_ticking(
        done: threading.Lock, started: float, timeout: float | None, on_wait: Callable[[float], None]
    ) -> None:
        """Wait for ``done`` in :data:`TICK_S` slices, telling ``on_wait`` (once it fails, the rest of
        the wait tells nobody). Raises TimeoutError when ``timeout`` passes."""
        while True:
            left = None if timeout is None else started + timeout - time.monotonic()
            if left is not None and left <= 0:
                raise concurrent.futures.TimeoutError
            if done.acquire(True, TICK_S if left is None else min(TICK_S, left)):
                return
            try:
                on_wait(time.monotonic() - started)
            except Exception:  # noqa: BLE001 - a display's failure never fails the call
                on_wait = _told_nobody

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop and join the thread; idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            if threading.current_thread() is not thread:
                thread.join(timeout)
