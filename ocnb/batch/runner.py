"""N sessions replaying rows over K shared browsers: the machinery under :class:`~ocnb.batch.pool.Pool` and
under each Dask worker's pool (:mod:`ocnb.batch.dask`).

:class:`ReplayPool` holds one :class:`~ocnb.batch.Replayer` per session, the sessions' shared browsers
(local Chromiums, or remote ones with ``connect=``/``cdp=``) and one browser thread, and runs rows on
its free sessions, ``size`` at a time (:meth:`ReplayPool.run_rows`). :class:`~ocnb.batch.pool.Pool` adds the
face (a skill id and a DataFrame in, a DataFrame out, a progress bar, a Dask client); a Dask worker
builds a ReplayPool of its own and runs each task's rows on it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import queue
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..browser.runtime import Runtime
from ..browser.shared import SharedBrowser
from ..session import Session, build_session
from ..settings import SessionOptions
from .options import RowOptions
from .row import CRASH_CODES, Replayer

#: Browsers a pool shares its sessions over when ``browsers=`` is not given: one, measured fastest on
#: 2 cores (bench/bench_pool.py: contexts of one browser beat a browser each; see docs/scale.md).
DEFAULT_BROWSERS = 1

__all__ = ["DEFAULT_BROWSERS", "ReplayPool"]


def _endpoints(connect: Any, cdp: Any) -> list[dict[str, str]]:
    """``connect=`` / ``cdp=`` as one endpoint per browser: a list is a farm, a string one server."""
    out: list[dict[str, str]] = []
    for key, value in (("connect", connect), ("cdp", cdp)):
        if value:
            out += [{key: str(v)} for v in ([value] if isinstance(value, str) else value)]
    return out


#: Keyword arguments of a pool that are for :class:`Session` but not face options: passed on as they are.
_PASSED = ("approve", "session_id")


def session_options(kwargs: dict[str, Any], home: Any) -> SessionOptions:
    """A pool's keyword arguments for every :class:`Session` as :class:`~ocnb.settings.SessionOptions`
    (checked now, before any browser starts; ``connect``/``cdp`` are the pool's browsers' own)."""
    values = {k: v for k, v in kwargs.items() if k not in ("connect", "cdp", "settings", "config", *_PASSED)}
    return SessionOptions.resolve({**values, "home": home}, base=kwargs.get("settings") or kwargs.get("config"))


class ReplayPool:
    """N sessions for batch replay over K shared browsers. Extra keyword arguments go to every :class:`Session`.

    ``browsers``: how many browsers the sessions share (default :data:`DEFAULT_BROWSERS`, at most
    ``size``); session *i* opens its context in browser *i mod K*. ``connect`` may be a list of
    Playwright server URLs (and ``cdp`` a list of endpoints): one browser on each, ``browsers`` is
    their number. ``screenshots``: whether failed rows' evidence bundles include a screenshot.
    """

    def __init__(
        self,
        size: int = 2,
        *,
        browsers: int | None = None,
        home: str | os.PathLike[str] | None = None,
        screenshots: bool = False,
        **session_kwargs: Any,
    ) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self.size = size
        self.home = home
        #: ``browsers=`` as asked (None: the default), for the pool each Dask worker builds alike.
        self.browsers_asked = browsers
        self.closed = False
        session_kwargs.setdefault("evidence_screenshots", screenshots)
        self._kwargs = session_kwargs
        self.endpoints = _endpoints(session_kwargs.get("connect"), session_kwargs.get("cdp"))
        k = len(self.endpoints) if self.endpoints else min(browsers or DEFAULT_BROWSERS, size)
        if k < 1:
            raise ValueError("browsers must be at least 1")
        #: What every session of the pool is built from (its browser is a shared one, not launched alone).
        self.options = session_options(session_kwargs, home)
        self._passed = {key: session_kwargs[key] for key in _PASSED if key in session_kwargs}
        self.runtime = Runtime(name="ocnb-pool")
        self.browsers = [
            SharedBrowser(
                self.runtime,
                self.options.settings,
                executable_path=self.options.executable_path,
                **(self.endpoints[i] if self.endpoints else {}),
            )
            for i in range(k)
        ]
        self._replayers = [
            Replayer(
                self._session_factory(self.browsers[i % k]), browser=self.browsers[i % k].remote or f"browser {i % k}"
            )
            for i in range(size)
        ]
        self._alive = set(self._replayers)
        self._alive_lock = threading.Lock()
        self._free: queue.Queue[Replayer] = queue.Queue()
        for r in self._replayers:
            self._free.put(r)

    def _session_factory(self, browser: SharedBrowser) -> Any:
        own = dataclasses.replace(self.options, executable_path=None)

        def new() -> Session:
            return build_session(own, shared_browser=browser, **self._passed)

        return new

    @property
    def sessions(self) -> list[Session]:
        return [r.session for r in self._replayers]

    def run_rows(
        self,
        skill: dict[str, Any],
        entries: list[tuple[Any, ...]],
        options: RowOptions | Mapping[str, Any],
        *,
        verify: dict[str, Any] | None = None,
        tick: Callable[[], Any] | None = None,
        on_commit: Callable[[int, int], None] | None = None,
        on_result: Callable[[tuple[Any, ...], dict[str, Any]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Each entry on a free session of the pool, ``size`` at a time; result rows in the entries' order.

        ``(index, row)`` entries are replayed (:meth:`~ocnb.batch.Replayer.replay`); with ``verify``,
        ``(index, row, result)`` entries (rows whose outcome is unknown) are settled by
        :meth:`~ocnb.batch.Replayer.check`. A row whose browser stays unreachable after a fresh session
        moves to another session (that session is taken out of service) until one session is left; its
        crash result then comes back as it is, for the caller to move it further (a Dask worker's
        caller: to another worker). The local pool and each Dask worker's pool both run their rows here.

        ``on_commit(index, step)`` runs just before a row's commit step acts, and ``on_result(entry,
        result)`` as each row finishes (a batch's ledger, :mod:`ocnb.batch.ledger`).
        """

        def run(act: Callable[[Replayer], dict[str, Any]]) -> tuple[dict[str, Any], bool]:
            """``act`` on a free replayer; while its browser stays unreachable, on another. (result, moved)"""
            moved = False
            while True:
                replayer = self._free.get()
                result = act(replayer)
                if result["ok"] or result["failure_code"] not in CRASH_CODES or not self._retire(replayer):
                    self._free.put(replayer)
                    return result, moved
                moved = True  # its browser stays unreachable after a fresh session: the row goes to another

        given = RowOptions.of(options)

        def one(entry: tuple[Any, ...]) -> dict[str, Any]:
            index, row = int(entry[0]), entry[1]
            opts = given.for_row(None if on_commit is None else lambda step: on_commit(index, step))
            try:
                if verify is not None and len(entry) > 2:
                    result = run(lambda r: r.check(skill, verify, row, index, opts, entry[2]))[0]
                else:
                    result, moved = run(lambda r: r.replay(skill, row, index, opts))
                    result["retried"] = result["retried"] or moved
                if on_result is not None:
                    on_result(entry, result)
                return result
            finally:
                if tick is not None:
                    tick()

        if len(entries) <= 1:
            return [one(e) for e in entries]
        with ThreadPoolExecutor(max_workers=min(self.size, len(entries)), thread_name_prefix="ocnb-pool") as ex:
            return list(ex.map(one, entries))

    def _retire(self, replayer: Replayer) -> bool:
        """Take a replayer whose browser is lost out of service, unless it is the last one; True if taken."""
        with self._alive_lock:
            if len(self._alive) <= 1:
                return False
            self._alive.discard(replayer)
        replayer.close()
        return True

    def close(self) -> None:
        """Close every session (its context), then the shared browsers and the pool's browser thread."""
        self.closed = True
        for r in self._replayers:
            r.close()
        if not self.runtime.stopped and self.runtime._thread is not None:
            for b in self.browsers:
                with contextlib.suppress(Exception):
                    self.runtime.run(b.close(), timeout=30)
        self.runtime.stop()
