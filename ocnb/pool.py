"""Run a recorded skill over a table of inputs: a pool of sessions here, or a Dask cluster.

``Pool(size=N)`` holds N sessions (local Chromiums, or remote ones with ``connect=``/``cdp=``), each
with its own browser context. ``pool.replay(skill_id, rows)`` replays the skill once per row across
the pool with a progress bar and returns one DataFrame row per input. A failing row never stops the
others; a crashed browser is replaced and its row retried once. With ``client=`` (a
``dask.distributed.Client``) the same rows run as Dask tasks: each worker keeps one long-lived
session, created on first use and closed when the worker shuts down.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .dispatch import dispatch
from .session import Session
from .skills.store import SkillStore

__all__ = ["RESULT_COLUMNS", "Pool", "replay_row"]

#: Columns of the DataFrame ``Pool.replay`` returns, in order.
RESULT_COLUMNS = ["row", "ok", "failure_code", "step_reached", "steps_total", "elapsed_ms", "evidence_path", "retried"]
#: Codes that mean the browser itself is gone: the session is replaced and the row retried once.
CRASH_CODES = ("TARGET_CLOSED", "BROWSER_CRASHED", "PAGE_CRASHED", "BROWSER_UNAVAILABLE", "SESSION_CLOSED")


def _rows(params: Any) -> list[dict[str, Any]]:
    if params is None:
        return [{}]
    if hasattr(params, "to_dict") and hasattr(params, "columns"):
        return [{str(k): v for k, v in rec.items()} for rec in params.to_dict(orient="records")]
    return [dict(r) for r in params]


#: Skill ids known to be in each session's store, so a batch reads the store once per session.
_READY: weakref.WeakKeyDictionary[Session, set[str]] = weakref.WeakKeyDictionary()


def _ensure_skill(session: Session, skill: dict[str, Any]) -> None:
    """Make the skill available in the session's own store (remote workers have their own home)."""
    ready = _READY.setdefault(session, set())
    if skill["id"] in ready:
        return
    _write_skill(session, skill)
    ready.add(skill["id"])


def _write_skill(session: Session, skill: dict[str, Any]) -> None:
    store = SkillStore(session.home)
    try:
        store.get(skill["id"])
    except Exception:  # noqa: BLE001 - not there yet: write it under the same (domain, name) → same id
        store.record(
            skill["domain"],
            skill["name"],
            skill["steps"],
            description=skill.get("description"),
            contract_id=skill.get("contract_id"),
            start_url=skill.get("start_url"),
        )


def replay_row(
    session: Session, skill: dict[str, Any], row: dict[str, Any], index: int, *, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Replay ``skill`` once with ``row`` as its ``${var}`` params; one result row (never raises)."""
    options = options or {}
    t0 = time.perf_counter()
    _ensure_skill(session, skill)
    start_url = options.get("start_url")
    if start_url:
        nav = dispatch(session, "navigate", {"url": start_url}, source="replay")
        if not nav.ok:
            return _row(index, False, nav.error.code if nav.error else "INTERNAL", 0, 0, t0, None)
    args: dict[str, Any] = {"skill_id": skill["id"], "params": {k: ("" if v is None else v) for k, v in row.items()}}
    for key in ("step_timeout_ms", "allow_risky", "stop_on_contract_failure", "tolerate"):
        if key in options:
            args[key] = options[key]
    r = dispatch(session, "oc_skill_replay", args, source="replay")
    report = r.data if r.ok else (r.error.details if r.error and isinstance(r.error.details, dict) else {})
    failure = report.get("failure") or {}
    return _row(
        index,
        r.ok,
        None if r.ok or r.error is None else r.error.code,
        int(report.get("steps_executed", 0)),
        int(report.get("steps_total", 0)),
        t0,
        failure.get("evidence_bundle_path"),
    )


def _row(
    index: int, ok: bool, code: str | None, reached: int, total: int, t0: float, evidence: str | None
) -> dict[str, Any]:
    return {
        "row": index,
        "ok": ok,
        "failure_code": code,
        "step_reached": reached,
        "steps_total": total,
        "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1),
        "evidence_path": evidence,
        "retried": False,
    }


def _frame(rows: list[dict[str, Any]]) -> Any:
    import pandas as pd

    df = pd.DataFrame(rows, columns=RESULT_COLUMNS).sort_values("row").reset_index(drop=True)
    return df.astype(
        {
            "row": "Int64",
            "ok": "boolean",
            "failure_code": "string",
            "step_reached": "Int64",
            "steps_total": "Int64",
            "elapsed_ms": "Float64",
            "evidence_path": "string",
            "retried": "boolean",
        }
    )


class Pool:
    """N sessions for batch replay. Extra keyword arguments go to every :class:`Session`."""

    def __init__(self, size: int = 2, *, home: str | os.PathLike[str] | None = None, **session_kwargs: Any) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self.size = size
        self.home = home
        self._kwargs = session_kwargs
        self._sessions: list[Session] = []
        self._free: queue.Queue[Session] = queue.Queue()
        self._lock = threading.Lock()
        for _ in range(size):
            s = self._new_session()
            self._sessions.append(s)
            self._free.put(s)

    def _new_session(self) -> Session:
        return Session(home=self.home, **self._kwargs)

    @property
    def sessions(self) -> list[Session]:
        return list(self._sessions)

    def _replace(self, old: Session) -> Session:
        with contextlib.suppress(Exception):
            old.close()
        new = self._new_session()
        with self._lock:
            self._sessions[self._sessions.index(old)] = new
        return new

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
        progress: bool = True,
    ) -> Any:
        """Replay ``skill_id`` once per row of ``params`` (a DataFrame or a list of dicts).

        ``tolerate`` (fingerprint fields that may differ, e.g. ``["name"]`` for a renamed label) goes
        to every row's ``oc_skill_replay``, locally and on a Dask cluster alike.
        """
        skill = SkillStore(None if self.home is None else str(self.home)).get(skill_id)
        rows = _rows(params)
        options: dict[str, Any] = {"start_url": start_url}
        if step_timeout_ms is not None:
            options["step_timeout_ms"] = step_timeout_ms
        if allow_risky is not None:
            options["allow_risky"] = allow_risky
        if tolerate:
            options["tolerate"] = list(tolerate)
        if client is not None:
            from .dask import replay_on_cluster

            return _frame(
                replay_on_cluster(client, skill, rows, options, progress=progress, session_kwargs=self._kwargs)
            )
        return _frame(self._replay_local(skill, rows, options, progress))

    def _replay_local(
        self, skill: dict[str, Any], rows: list[dict[str, Any]], options: dict[str, Any], progress: bool
    ) -> list[dict[str, Any]]:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(rows), desc=f"replay {skill['name']}", disable=not progress)

        def work(i: int) -> dict[str, Any]:
            session = self._free.get()
            try:
                result = replay_row(session, skill, rows[i], i, options=options)
                if not result["ok"] and result["failure_code"] in CRASH_CODES:
                    session = self._replace(session)
                    result = replay_row(session, skill, rows[i], i, options=options)
                    result["retried"] = True
                return result
            finally:
                self._free.put(session)
                bar.update(1)

        try:
            with ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="ocnb-pool") as ex:
                return list(ex.map(work, range(len(rows))))
        finally:
            bar.close()

    def close(self) -> None:
        for s in self._sessions:
            with contextlib.suppress(Exception):
                s.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
