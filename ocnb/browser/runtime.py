"""The browser thread: one daemon thread that owns an asyncio loop and every Playwright object.

Every face submits coroutines here (:meth:`Runtime.run` blocks the caller, :meth:`Runtime.submit`
returns a future). This works the same from a script, from inside a running event loop (a Jupyter
kernel, ``asyncio.run``), from several threads at once and under the MCP server's own loop, without
nest_asyncio. ``Runtime.run`` is the one place in ocnb that waits on the browser thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ..errors import SessionClosed, Timeout

__all__ = ["Runtime"]

T = TypeVar("T")


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
        try:
            self._ensure_started()
        except SessionClosed:
            coro.close()
            raise
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the browser thread and wait for its result (from any other thread)."""
        if self.in_runtime_thread():
            coro.close()
            raise RuntimeError("Runtime.run() called from the browser thread; await the coroutine instead")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise Timeout(f"no answer from the browser thread within {timeout:.1f} s") from None

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
