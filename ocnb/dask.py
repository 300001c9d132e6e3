"""Batch replay on a ``dask.distributed`` cluster: one long-lived ocnb session per worker.

Workers need a Chromium of their own (``make`` set-up, or ``python -m playwright install chromium``
in the worker image), or pass ``connect="ws://browser-farm:3000/"`` to :class:`~ocnb.pool.Pool` so
every worker's session attaches to a browser farm instead. The same code then runs on a real cluster:

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")
    ocnb.Pool(size=1, connect="ws://farm:3000/").replay(skill_id, df, client=client)
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from ._extras import extra

with extra("dask"):
    from distributed import as_completed
    from distributed.diagnostics.plugin import WorkerPlugin

from .batch import CRASH_CODES, Replayer
from .session import Session
from .settings import Settings

__all__ = ["OcnbWorkerPlugin", "bind_workers", "journal_df", "replay_on_cluster", "worker_home", "worker_session"]

#: Under the batch's home, each worker's own home: its journal, traces and skills, in files of its own.
WORKERS_DIR = "workers"

#: This worker process's replayer (one session), created on first use.
_REPLAYER: Replayer | None = None
_LOCK = threading.Lock()
PLUGIN_NAME = "ocnb-session"


def _worker_replayer(session_kwargs: dict[str, Any] | None = None) -> Replayer:
    global _REPLAYER
    with _LOCK:
        if _REPLAYER is None or _REPLAYER.session.closed:
            kwargs = dict(session_kwargs or {})
            _REPLAYER = Replayer(lambda: Session(**kwargs), browser=kwargs.get("connect") or kwargs.get("cdp"))
        return _REPLAYER


def worker_session(session_kwargs: dict[str, Any] | None = None) -> Session:
    """This worker process's session, created on first use."""
    return _worker_replayer(session_kwargs).session


def _close_worker_session() -> None:
    global _REPLAYER
    with _LOCK:
        if _REPLAYER is not None:
            _REPLAYER.close()
            _REPLAYER = None


class OcnbWorkerPlugin(WorkerPlugin):
    """Closes the worker's ocnb session (and its Chromium) when the worker shuts down."""

    name = PLUGIN_NAME
    idempotent = True

    def teardown(self, worker: Any) -> None:
        _close_worker_session()


def _task(
    skill: dict[str, Any],
    part: list[tuple[Any, ...]],
    options: dict[str, Any],
    session_kwargs: dict[str, Any],
    bindings: dict[str, dict[str, str]] | None = None,
    verify: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One task: the rows of ``part`` (``(index, row)`` pairs) on this worker's session, in order.

    With ``verify``, ``part`` holds ``(index, row, result)`` triples of rows whose outcome is unknown,
    and each is settled by :meth:`~ocnb.batch.Replayer.check` instead.
    """
    from distributed import get_worker

    address = get_worker().address
    kwargs = {**session_kwargs, **(bindings or {}).get(address, {})}
    root = Path(kwargs["home"]) if kwargs.get("home") else Settings.from_env().home_path
    kwargs["home"] = worker_home(root, address)
    replayer = _worker_replayer(kwargs)
    out = []
    for entry in part:
        index, row = entry[0], entry[1]
        prior: dict[str, Any] | None = entry[2] if len(entry) > 2 else None
        if verify is not None and prior is not None:
            result = replayer.check(skill, verify, row, index, options, prior)
            if result is prior or result.get("outcome") == "verified":
                out.append(result)  # where the row was done (or may have been) stays its worker
                continue
        else:
            result = replayer.replay(skill, row, index, options)
        result["worker"] = address
        out.append(result)
    return out


def worker_home(root: str | Path, address: str) -> Path:
    """The home of the worker at ``address`` under a batch's home ``root``: ``root/workers/<address>``.

    Each worker writes its journal and traces there, in files no other process appends to (on a
    cluster, ``root`` is shared storage); :func:`journal_df` reads them back as one frame.
    """
    return Path(root) / WORKERS_DIR / re.sub(r"[^A-Za-z0-9._-]+", "_", address)


def journal_df(home: str | Path | None = None) -> Any:
    """The journal of a batch home and of every worker's home under it, as one DataFrame.

    The columns of :func:`ocnb.journal_df`, plus ``worker`` (the worker's folder name, or
    ``<NA>`` for lines written in ``home`` itself), sorted by time.
    """
    import pandas as pd

    from .telemetry import journal_df as one_journal

    root = Path(home) if home is not None else Settings.from_env().home_path
    homes: list[tuple[str | None, Path]] = [(None, root)]
    if (root / WORKERS_DIR).is_dir():
        homes += [(p.name, p) for p in sorted((root / WORKERS_DIR).iterdir()) if p.is_dir()]
    frames = []
    for name, path in homes:
        df = one_journal(home=path)
        frames.append(df.assign(worker=pd.Series([name] * len(df), index=df.index, dtype="string")))
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values("ts", kind="stable").reset_index(drop=True) if "ts" in out else out


def bind_workers(client: Any, session_kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    """Split ``connect=[...]`` / ``cdp=[...]`` lists over the cluster's workers: one browser server each.

    Returns the session kwargs without the lists and, per worker address, the endpoint its session
    uses (worker *i* of the sorted addresses gets endpoint *i mod n*). A single URL stays as it is.
    """
    kwargs = dict(session_kwargs)
    endpoints: list[dict[str, str]] = []
    for key in ("connect", "cdp"):
        value = kwargs.get(key)
        if value is not None and not isinstance(value, str):
            endpoints += [{key: str(v)} for v in kwargs.pop(key)]
    if not endpoints:
        return kwargs, {}
    workers = sorted(client.scheduler_info()["workers"])
    return kwargs, {w: endpoints[i % len(endpoints)] for i, w in enumerate(workers)}


def replay_on_cluster(
    client: Any,
    skill: dict[str, Any],
    rows: list[dict[str, Any]],
    options: dict[str, Any],
    *,
    progress: bool = True,
    session_kwargs: dict[str, Any] | None = None,
    rows_per_task: int = 1,
    verify: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Submit the rows as tasks and gather the result rows (same shape as the local pool).

    ``rows_per_task`` > 1 puts that many consecutive rows in one task: the scheduler then handles
    ``len(rows) / rows_per_task`` tasks (about 1 ms of its CPU each), which is what lets a batch of
    millions of rows through one scheduler.

    A row that fails because its worker's browser is gone (after that worker's own retry on a fresh
    session) is submitted again to the workers not lost so far, so a dead browser server costs no rows.
    A row lost after it began acting on the site comes back ``"unknown"`` and is not submitted again;
    with ``verify`` (a skill), it is checked on a worker not lost (see :meth:`ocnb.batch.Replayer.check`).
    """
    from tqdm.auto import tqdm

    client.register_plugin(OcnbWorkerPlugin(), name=PLUGIN_NAME)
    kwargs, bindings = bind_workers(client, dict(session_kwargs or {}))
    lost: set[str] = set()  # workers whose browser stayed unreachable after a fresh session

    if rows_per_task < 1:
        raise ValueError("rows_per_task must be at least 1")

    unknown: dict[int, dict[str, Any]] = {}  # rows lost after acting on the site, to check with verify

    def submit(indexes: list[int], attempt: int = 0) -> Any:
        workers = sorted(set(client.scheduler_info()["workers"]) - lost) if attempt else None
        checking = verify is not None and indexes[0] in unknown
        return client.submit(
            _task,
            skill,
            [(i, rows[i], unknown[i]) if checking else (i, rows[i]) for i in indexes],
            options,
            kwargs,
            bindings,
            verify if checking else None,
            pure=False,
            key=f"ocnb-replay-{skill['id']}-{indexes[0]}-{id(rows)}-{attempt}",
            workers=workers,
        )

    n = len(rows)
    futures = as_completed([submit(list(range(s, min(s + rows_per_task, n)))) for s in range(0, n, rows_per_task)])
    out = []
    attempts: dict[int, int] = {}
    with tqdm(total=n, desc=f"replay {skill['name']} (dask)", disable=not progress) as bar:
        for fut in futures:
            for result in fut.result():
                i = result["row"]
                if not result["ok"] and result["failure_code"] in CRASH_CODES:
                    lost.add(result["worker"])
                    alive = set(client.scheduler_info()["workers"]) - lost
                    if alive and attempts.get(i, 0) < len(bindings or alive):
                        attempts[i] = attempts.get(i, 0) + 1
                        futures.add(submit([i], attempts[i]))  # to a worker whose browser answers
                        continue
                    if i in unknown:  # no browser left to check on: the row stays unknown
                        result = unknown[i]
                if verify is not None and result["outcome"] == "unknown" and i not in unknown:
                    unknown[i] = result
                    attempts[i] = attempts.get(i, 0) + 1
                    futures.add(submit([i], attempts[i]))  # checked on a worker not lost
                    continue
                if i not in unknown:
                    result["retried"] = result["retried"] or i in attempts
                out.append(result)
                bar.update(1)
    return out
