"""Run a recorded skill over a table of inputs: a pool of sessions here, or a Dask cluster.

``Pool(size=N, browsers=K)`` holds N sessions over K browsers (local Chromiums, or remote ones with
``connect=``/``cdp=``; ``connect=[ws1, ws2]`` is a farm of servers, one browser on each) and one
browser thread: each session has its own browser context, so its cookies, storage, tabs, journal
and trace are its own. ``pool.replay(skill_id, rows)`` replays the skill once per row across the
pool with a progress bar and returns one DataFrame row per input. A failing row never stops the
others; a crashed browser is replaced and its row retried once, and a browser still unreachable
then (a farm server gone) is taken out of service and its rows go to the others. A row is retried
only when it was lost before acting on the site; one lost after that is reported with ``outcome``
``"unknown"`` rather than done twice (see :mod:`ocnb.batch`). With ``client=`` (a
``dask.distributed.Client``) the same rows run as Dask tasks: each worker keeps one long-lived pool
like this one (``size`` sessions over its own browser(s)), created on first use and closed when the
worker shuts down, and runs a task's rows concurrently on it.

Less work per row: ``replay(..., block_resources=True)`` aborts image, font and media requests; a
``start_url`` the skill's own first ``navigate`` opens anyway is not loaded twice; each session keeps
its tab warm between rows; and evidence bundles of failed rows carry no screenshot unless
``Pool(screenshots=True)``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .batch import CRASH_CODES, RESULT_COLUMNS, Replayer, replay_row, resource_kinds, with_contract
from .browser import SharedBrowser
from .runtime import Runtime
from .session import Session
from .settings import Settings
from .skills.store import SkillStore

#: Browsers a pool shares its sessions over when ``browsers=`` is not given: one, measured fastest on
#: 2 cores (bench/bench_pool.py: contexts of one browser beat a browser each; see docs/scale.md).
DEFAULT_BROWSERS = 1

__all__ = ["RESULT_COLUMNS", "Pool", "replay_row"]


def _rows(params: Any) -> list[dict[str, Any]]:
    if params is None:
        return [{}]
    if hasattr(params, "to_dict") and hasattr(params, "columns"):
        return [{str(k): v for k, v in rec.items()} for rec in params.to_dict(orient="records")]
    return [dict(r) for r in params]


def _frame(rows: list[dict[str, Any]]) -> Any:
    import pandas as pd

    df = pd.DataFrame(rows, columns=RESULT_COLUMNS).sort_values("row").reset_index(drop=True)
    return df.astype(
        {
            "row": "Int64",
            "ok": "boolean",
            "outcome": "string",
            "failure_code": "string",
            "step_reached": "Int64",
            "steps_total": "Int64",
            "elapsed_ms": "Float64",
            "evidence_path": "string",
            "retried": "boolean",
            "worker": "string",
            "browser": "string",
        }
    )


def _endpoints(connect: Any, cdp: Any) -> list[dict[str, str]]:
    """``connect=`` / ``cdp=`` as one endpoint per browser: a list is a farm, a string one server."""
    out: list[dict[str, str]] = []
    for key, value in (("connect", connect), ("cdp", cdp)):
        if value:
            out += [{key: str(v)} for v in ([value] if isinstance(value, str) else value)]
    return out


def _settings(kwargs: dict[str, Any], home: Any) -> Settings:
    """The settings the pool's sessions will have, for launching their shared browsers."""
    base = kwargs.get("settings") or kwargs.get("config") or Settings.from_env()
    names = {f.name for f in dataclasses.fields(Settings)}
    changes = {k: v for k, v in kwargs.items() if k in names}
    if home is not None:
        changes["home"] = home
    return base.with_changes(**changes)


class Pool:
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
        local = {key: v for key, v in session_kwargs.items() if key not in ("connect", "cdp", "executable_path")}
        self._session_kwargs = local
        self.runtime = Runtime(name="ocnb-pool")
        config = _settings(session_kwargs, home)
        path = session_kwargs.get("executable_path")
        self.browsers = [
            SharedBrowser(
                self.runtime,
                config,
                executable_path=str(path) if path else None,
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
        def new() -> Session:
            return Session(home=self.home, shared_browser=browser, **self._session_kwargs)

        return new

    @property
    def sessions(self) -> list[Session]:
        return [r.session for r in self._replayers]

    def replay(
        self,
        skill_id: str,
        params: Any = None,
        *,
        client: Any = None,
        start_url: str | None = None,
        step_timeout_ms: int | None = None,
        allow_risky: bool | None = None,
        tolerate: list[str] | None = None,
        block_resources: bool | str | list[str] = False,
        idempotent: bool = False,
        verify: str | None = None,
        rows_per_task: int | None = None,
        progress: bool = True,
    ) -> Any:
        """Replay ``skill_id`` once per row of ``params`` (a DataFrame or a list of dicts).

        ``tolerate`` (fingerprint fields that may differ, e.g. ``["name"]`` for a renamed label) goes
        to every row's ``oc_skill_replay``, locally and on a Dask cluster alike. ``block_resources``
        (True, or some of ``"image"``, ``"font"``, ``"media"``) aborts those requests in every
        session's context for this and later batches.

        With ``client=``, each Dask worker holds a pool like this one (``size`` sessions over its own
        ``browsers``, or over the server(s) :func:`ocnb.dask.bind_workers` gives it from ``connect=``),
        and a task's rows run concurrently on that pool's sessions. ``rows_per_task`` (Dask only; default
        ``size``, so a task keeps every session of its worker's pool busy) puts that many rows in one
        task; raise it for batches whose task count would load the scheduler (see docs/scale.md).

        A row whose browser is lost before the row's first step that acts on the site (a click, a key
        press, a navigation carrying the row's values) is retried, on another browser or worker if need
        be; one lost at or after that step is not replayed again: its ``outcome`` is ``"unknown"`` and its
        ``failure_code`` ``UNKNOWN_OUTCOME`` (check the site for it). ``idempotent=True`` (the site
        ignores a row it has seen, e.g. by a key the row carries) retries those rows too. ``verify`` (a
        skill id: a check that only reads the site, e.g. opens the record by the row's key, and passes
        only when the row's effect is there, by its contract) settles those rows on a surviving browser:
        passed → outcome ``"verified"`` (done once); its contract failed → the row is replayed now;
        otherwise the row stays ``"unknown"``.
        """
        store = SkillStore(None if self.home is None else str(self.home))
        skill = store.get(skill_id)
        check = store.get(verify) if verify else None
        rows = _rows(params)
        options: dict[str, Any] = {"start_url": start_url}
        if step_timeout_ms is not None:
            options["step_timeout_ms"] = step_timeout_ms
        if allow_risky is not None:
            options["allow_risky"] = allow_risky
        if tolerate:
            options["tolerate"] = list(tolerate)
        kinds = resource_kinds(block_resources)
        if kinds:
            options["block_resources"] = list(kinds)
        if idempotent:
            options["idempotent"] = True
        if client is not None:
            from .dask import replay_on_cluster

            kwargs = {**self._kwargs, **({"home": self.home} if self.home is not None else {})}
            shipped = with_contract(skill, self.home)
            return _frame(
                replay_on_cluster(
                    client,
                    shipped,
                    rows,
                    options,
                    progress=progress,
                    session_kwargs=kwargs,
                    rows_per_task=rows_per_task,
                    pool_size=self.size,
                    browsers=self.browsers_asked,
                    verify=with_contract(check, self.home) if check else None,
                )
            )
        return _frame(self._replay_local(skill, rows, options, progress, check))

    def _replay_local(
        self,
        skill: dict[str, Any],
        rows: list[dict[str, Any]],
        options: dict[str, Any],
        progress: bool,
        verify: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(rows), desc=f"replay {skill['name']}", disable=not progress)
        try:
            out = self.run_rows(skill, list(enumerate(rows)), options, tick=lambda: bar.update(1))
            if verify is not None:
                unknown = [k for k, r in enumerate(out) if r["outcome"] == "unknown"]
                checked = self.run_rows(skill, [(k, rows[k], out[k]) for k in unknown], options, verify=verify)
                for k, settled in zip(unknown, checked, strict=True):
                    # a crash code: no browser left to check on, the row stays as it was
                    out[k] = out[k] if settled["failure_code"] in CRASH_CODES else settled
            return out
        finally:
            bar.close()

    def run_rows(
        self,
        skill: dict[str, Any],
        entries: list[tuple[Any, ...]],
        options: dict[str, Any],
        *,
        verify: dict[str, Any] | None = None,
        tick: Callable[[], Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Each entry on a free session of the pool, ``size`` at a time; result rows in the entries' order.

        ``(index, row)`` entries are replayed (:meth:`~ocnb.batch.Replayer.replay`); with ``verify``,
        ``(index, row, result)`` entries (rows whose outcome is unknown) are settled by
        :meth:`~ocnb.batch.Replayer.check`. A row whose browser stays unreachable after a fresh session
        moves to another session (that session is taken out of service) until one session is left; its
        crash result then comes back as it is, for the caller to move it further (a Dask worker's
        caller: to another worker). The local pool and each Dask worker's pool both run their rows here.
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

        def one(entry: tuple[Any, ...]) -> dict[str, Any]:
            index, row = int(entry[0]), entry[1]
            try:
                if verify is not None and len(entry) > 2:
                    return run(lambda r: r.check(skill, verify, row, index, options, entry[2]))[0]
                result, moved = run(lambda r: r.replay(skill, row, index, options))
                result["retried"] = result["retried"] or moved
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

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
