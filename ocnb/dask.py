"""Batch replay on a ``dask.distributed`` cluster: one long-lived ocnb session per worker.

Workers need a Chromium of their own (``make`` set-up, or ``python -m playwright install chromium``
in the worker image), or pass ``connect="ws://browser-farm:3000/"`` to :class:`~ocnb.pool.Pool` so
every worker's session attaches to a browser farm instead. The same code then runs on a real cluster:

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")
    ocnb.Pool(size=1, connect="ws://farm:3000/").replay(skill_id, df, client=client)
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["OcnbWorkerPlugin", "replay_on_cluster", "worker_session"]

_SESSION: Any = None
_LOCK = threading.Lock()
PLUGIN_NAME = "ocnb-session"


def worker_session(session_kwargs: dict[str, Any] | None = None) -> Any:
    """This worker process's session, created on first use."""
    global _SESSION
    from .session import Session

    with _LOCK:
        if _SESSION is None or _SESSION.closed:
            _SESSION = Session(**(session_kwargs or {}))
        return _SESSION


def _close_worker_session() -> None:
    global _SESSION
    with _LOCK:
        if _SESSION is not None:
            _SESSION.close()
            _SESSION = None


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _Base
except ImportError:  # pragma: no cover - dask is optional
    _Base = object  # type: ignore[assignment, misc]


class OcnbWorkerPlugin(_Base):  # type: ignore[misc, valid-type]
    """Closes the worker's ocnb session (and its Chromium) when the worker shuts down."""

    name = PLUGIN_NAME
    idempotent = True

    def teardown(self, worker: Any) -> None:
        _close_worker_session()


def _task(
    skill: dict[str, Any], row: dict[str, Any], index: int, options: dict[str, Any], session_kwargs: dict[str, Any]
) -> dict[str, Any]:
    from .pool import CRASH_CODES, replay_row

    session = worker_session(session_kwargs)
    result = replay_row(session, skill, row, index, options=options)
    if not result["ok"] and result["failure_code"] in CRASH_CODES:
        _close_worker_session()
        result = replay_row(worker_session(session_kwargs), skill, row, index, options=options)
        result["retried"] = True
    return result


def replay_on_cluster(
    client: Any,
    skill: dict[str, Any],
    rows: list[dict[str, Any]],
    options: dict[str, Any],
    *,
    progress: bool = True,
    session_kwargs: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Submit one task per row and gather the result rows (same shape as the local pool)."""
    from distributed import as_completed
    from tqdm.auto import tqdm

    client.register_plugin(OcnbWorkerPlugin(), name=PLUGIN_NAME)
    kwargs = dict(session_kwargs or {})
    futures = [
        client.submit(
            _task, skill, row, i, options, kwargs, pure=False, key=f"ocnb-replay-{skill['id']}-{i}-{id(rows)}"
        )
        for i, row in enumerate(rows)
    ]
    out = []
    with tqdm(total=len(futures), desc=f"replay {skill['name']} (dask)", disable=not progress) as bar:
        for fut in as_completed(futures):
            out.append(fut.result())
            bar.update(1)
    return out
