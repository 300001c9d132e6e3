"""Run a recorded skill over a table of inputs: a pool of sessions here, or a Dask cluster.

``Pool(size=N)`` holds N sessions (local Chromiums, or remote ones with ``connect=``/``cdp=``), each
with its own browser context. ``pool.replay(skill_id, rows)`` replays the skill once per row across
the pool with a progress bar and returns one DataFrame row per input. A failing row never stops the
others; a crashed browser is replaced and its row retried once. With ``client=`` (a
``dask.distributed.Client``) the same rows run as Dask tasks: each worker keeps one long-lived
session, created on first use and closed when the worker shuts down.
"""

from __future__ import annotations

import os
import queue
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .batch import RESULT_COLUMNS, Replayer, replay_row
from .session import Session
from .skills.store import SkillStore

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
        self._replayers = [Replayer(self._new_session) for _ in range(size)]
        self._free: queue.Queue[Replayer] = queue.Queue()
        for r in self._replayers:
            self._free.put(r)

    def _new_session(self) -> Session:
        return Session(home=self.home, **self._kwargs)

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
            replayer = self._free.get()
            try:
                return replayer.replay(skill, rows[i], i, options)
            finally:
                self._free.put(replayer)
                bar.update(1)

        try:
            with ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="ocnb-pool") as ex:
                return list(ex.map(work, range(len(rows))))
        finally:
            bar.close()

    def close(self) -> None:
        for r in self._replayers:
            r.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
