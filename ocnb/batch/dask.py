"""Batch replay on a ``dask.distributed`` cluster: one long-lived ocnb pool per worker.

Each worker holds a pool like the caller's :class:`~ocnb.batch.pool.Pool` (a
:class:`~ocnb.batch.runner.ReplayPool`: ``size`` sessions over ``browsers`` browsers), created on
first use and closed when the worker shuts down; a task's rows run concurrently on its sessions. Workers need a Chromium of their own (``make`` set-up, or ``python -m playwright
install chromium`` in the worker image), or pass ``connect="ws://browser-farm:3000/"`` (or a list,
split over the workers by :func:`bind_workers`) so every worker's pool attaches to a browser server
instead. The same code then runs on a real cluster:

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")
    ocnb.Pool(size=4, connect="ws://127.0.0.1:3000/").replay(skill_id, df, client=client)
"""

from __future__ import annotations

import contextlib
import re
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._extras import extra

with extra("dask"):
    from distributed import as_completed
    from distributed.diagnostics.plugin import WorkerPlugin

from ..session import Session
from ..settings import Settings
from .ledger import Ledger, batch_dir
from .ledger import remove as remove_ledger
from .options import RowOptions
from .row import CRASH_CODES
from .runner import ReplayPool

__all__ = [
    "TASK_ROUNDS",
    "OcnbWorkerPlugin",
    "bind_workers",
    "cluster_workers",
    "journal_ddf",
    "journal_df",
    "replay_on_cluster",
    "worker_home",
    "worker_pool",
    "worker_session",
]

#: Under the batch's home, each worker's own home: its journal, traces and skills, in files of its own.
WORKERS_DIR = "workers"

#: A task holds this many rows per session of the worker's pool, by default: the pool's sessions take
#: the task's rows as they come free, and wait for each other only at the task's end (with one row per
#: session a task was a barrier every row: 0.87-0.90x the local pool against 0.94x, docs/scale.md).
TASK_ROUNDS = 4

#: Per worker address (several in-process workers share this module): the pool's spec and the pool.
_POOLS: dict[str, tuple[dict[str, Any], ReplayPool]] = {}
_LOCK = threading.Lock()
PLUGIN_NAME = "ocnb-session"


def _address() -> str:
    from distributed import get_worker

    with contextlib.suppress(ValueError):
        return str(get_worker().address)
    return "local"


def worker_pool(size: int = 1, browsers: int | None = None, session_kwargs: dict[str, Any] | None = None) -> ReplayPool:
    """This worker's pool, created on first use; made anew when a batch asks for another one.

    ``ReplayPool(size, browsers=browsers, **session_kwargs)``: the same arguments as the last batch keep the
    same pool (its browsers and warm tabs); other ones (a bigger ``size``, another home or server)
    close it and open the one asked for.
    """
    kwargs = dict(session_kwargs or {})
    spec: dict[str, Any] = {"size": size, "browsers": browsers, "session_kwargs": kwargs}
    address = _address()
    with _LOCK:
        held = _POOLS.get(address)
        if held is not None and (held[1].closed or held[0] != spec):
            _POOLS.pop(address)
            held[1].close()
            held = None
        if held is None:
            held = (spec, ReplayPool(size=size, browsers=browsers, **kwargs))
            _POOLS[address] = held
        return held[1]


def worker_session(session_kwargs: dict[str, Any] | None = None) -> Session:
    """This worker's session: the first of the pool its batches use, or of a pool of one made now."""
    with _LOCK:
        held = _POOLS.get(_address())
    if held is not None and not held[1].closed:
        return held[1].sessions[0]
    return worker_pool(1, None, session_kwargs).sessions[0]


def _close_worker_session(address: str | None = None) -> None:
    """Close the pool of the worker at ``address`` (every worker's in this process when None)."""
    with _LOCK:
        held = [_POOLS.pop(a) for a in ([address] if address is not None else list(_POOLS)) if a in _POOLS]
    for _, pool in held:
        with contextlib.suppress(Exception):
            pool.close()


class OcnbWorkerPlugin(WorkerPlugin):
    """Closes the worker's ocnb pool (its sessions and browsers) when the worker shuts down."""

    name = PLUGIN_NAME
    idempotent = True

    def teardown(self, worker: Any) -> None:
        _close_worker_session(getattr(worker, "address", None))


def _task(
    skill: dict[str, Any],
    part: list[tuple[Any, ...]],
    options: dict[str, Any],  # RowOptions.wire(): plain data
    session_kwargs: dict[str, Any],
    bindings: dict[str, dict[str, Any]] | None = None,
    verify: dict[str, Any] | None = None,
    pool: dict[str, Any] | None = None,
    ledger: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One task: the rows of ``part`` (``(index, row)`` pairs) on this worker's pool, concurrently.

    With ``verify``, ``part`` holds ``(index, row, result)`` triples of rows whose outcome is unknown,
    and each is settled by :meth:`~ocnb.batch.Replayer.check` instead. ``pool``: the pool's ``size``
    and ``browsers``. ``ledger``: the batch's id and this task's key (``{"batch", "task"}``): each row
    is recorded in the batch's ledger (:mod:`ocnb.batch.ledger`) at its commit step and when it finishes, and
    a rerun of the task (its first worker process died) returns what the ledger holds instead of
    replaying a row that finished or reached its commit step.
    """
    from distributed import get_worker

    address = get_worker().address
    row_options = RowOptions.of(options)  # the wire form: plain data, picklable
    kwargs = {**session_kwargs, **(bindings or {}).get(address, {})}
    root = Path(kwargs["home"]) if kwargs.get("home") else Settings.from_env().home_path
    kwargs["home"] = worker_home(root, address)
    spec = pool or {}
    here = worker_pool(int(spec.get("size", 1)), spec.get("browsers"), kwargs)

    def finish(entry: tuple[Any, ...], result: dict[str, Any]) -> None:
        prior: dict[str, Any] | None = entry[2] if len(entry) > 2 else None
        checked = verify is not None and prior is not None
        if not (checked and (result is prior or result.get("outcome") == "verified")):
            result["worker"] = address  # where the row was done (or may have been) stays its worker

    if ledger is None:
        return here.run_rows(skill, list(part), row_options, verify=verify, on_result=finish)
    task = ledger["task"]
    with Ledger(batch_dir(root, ledger["batch"]), address) as book:
        settled: dict[int, dict[str, Any]] = {}
        if not book.claim(task):  # a rerun: Dask lost the worker process that ran this task first
            settled = book.settled(task, (int(e[0]) for e in part), idempotent=row_options.idempotent)

        def record(entry: tuple[Any, ...], result: dict[str, Any]) -> None:
            finish(entry, result)
            book.finished(task, result)

        todo = [e for e in part if int(e[0]) not in settled]
        ran = here.run_rows(
            skill,
            todo,
            row_options,
            verify=verify,
            on_commit=lambda i, step: book.committed(task, i, step),
            on_result=record,
        )
        done = {int(e[0]): r for e, r in zip(todo, ran, strict=True)}
        return [settled[int(e[0])] if int(e[0]) in settled else done[int(e[0])] for e in part]


def worker_home(root: str | Path, address: str) -> Path:
    """The home of the worker at ``address`` under a batch's home ``root``: ``root/workers/<address>``.

    Each worker writes its journal and traces there, in files no other process appends to (on a
    cluster, ``root`` is shared storage); :func:`journal_df` reads them back as one frame.
    """
    return Path(root) / WORKERS_DIR / re.sub(r"[^A-Za-z0-9._-]+", "_", address)


def journal_df(
    home: str | Path | None = None,
    worker: str | Sequence[str] | None = None,
    since: str | int | None = None,
    until: Any = None,
    columns: Sequence[str] | None = None,
    session_id: str | None = None,
) -> Any:
    """The journal of a batch home and of every worker's home under it, as one DataFrame.

    The columns of :func:`ocnb.journal_df`, plus ``worker`` (the worker's folder name, or
    ``<NA>`` for lines written in ``home`` itself), sorted by time. Filters, each read without
    opening what it leaves out:

    - ``worker`` — a worker (its folder name under ``home/workers``, or its address) or a list of
      them: only their homes are read (not ``home``'s own lines);
    - ``since`` / ``until`` — as in :func:`ocnb.journal_df` (``since="2026-11-22", until="2026-11-23"``
      is that UTC day): day files outside the range are not opened;
    - ``columns`` — only these columns, in this order (the fields of no other column are decoded);
    - ``session_id``.

    For a journal too big for one process, :func:`journal_ddf` is the same as a Dask DataFrame.
    """
    import pandas as pd

    out_cols = _journal_columns(columns)
    read_cols = out_cols if "ts" in out_cols else ["ts", *out_cols]
    files = _journal_parts(home, worker, since, until)
    frames = [_journal_part(part, read_cols, session_id, since, until) for part in files]
    if not frames:
        return _journal_part(None, out_cols, session_id, since, until)
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    out = out.sort_values("ts", kind="stable").reset_index(drop=True)
    return out if read_cols == out_cols else out[out_cols]


def journal_ddf(
    home: str | Path | None = None,
    worker: str | Sequence[str] | None = None,
    since: str | int | None = None,
    until: Any = None,
    columns: Sequence[str] | None = None,
    session_id: str | None = None,
) -> Any:
    """:func:`journal_df` as a lazy ``dask.dataframe.DataFrame``: one partition per (worker, day) file.

    Nothing is read until it is computed, and then file by file (on the cluster's workers, when a
    ``distributed`` client is active: the home must be on storage they share), so a journal of 10⁸
    lines never sits in one process: ``journal_ddf(home).groupby("worker").ok.mean().compute()``.
    Each partition is sorted by time (the frame as a whole is not: divisions are unknown); the
    columns, dtypes and filters are :func:`journal_df`'s, and so is a computed frame's content.
    Needs ``dask[dataframe]`` (pandas and pyarrow), which the ``dask`` extra installs.
    """
    import functools

    with extra("dask"):
        import dask
        import dask.dataframe as dd

    out_cols = _journal_columns(columns)
    meta = _journal_part(None, out_cols, session_id, since, until)
    files = _journal_parts(home, worker, since, until)
    read = functools.partial(_journal_part, columns=out_cols, session_id=session_id, since=since, until=until)
    # journal_df's dtypes: no conversion of ``string`` to pyarrow strings, nor of ``args`` (dicts) to text
    with dask.config.set({"dataframe.convert-string": False}):
        if not files:
            return dd.from_pandas(meta, npartitions=1)
        return dd.from_map(read, files, meta=meta, label="ocnb-journal", enforce_metadata=False)


def _journal_columns(columns: Sequence[str] | None) -> list[str]:
    from ..audit.telemetry import JOURNAL_COLUMNS

    known = [*JOURNAL_COLUMNS, "worker"]
    if columns is None:
        return known
    if isinstance(columns, str):
        columns = [columns]
    unknown = [c for c in columns if c not in known]
    if unknown or not columns:
        raise ValueError(f"columns: unknown {unknown or 'none given'}; choose from {known}")
    return list(dict.fromkeys(columns))


def _journal_parts(
    home: str | Path | None, worker: str | Sequence[str] | None, since: Any, until: Any
) -> list[tuple[str | None, Path]]:
    """``(worker folder name or None, day file)`` of every journal file the filters can match."""
    from ..audit.journal import journal_files

    root = Path(home) if home is not None else Settings.from_env().home_path
    homes: list[tuple[str | None, Path]] = []
    wanted: set[str] | None = None
    if worker is None:
        homes.append((None, root))
    else:
        names = [worker] if isinstance(worker, str) else list(worker)
        wanted = {str(n) for n in names} | {worker_home(root, str(n)).name for n in names}
    if (root / WORKERS_DIR).is_dir():
        homes += [
            (p.name, p)
            for p in sorted((root / WORKERS_DIR).iterdir())
            if p.is_dir() and (wanted is None or p.name in wanted)
        ]
    return [(name, path) for name, where in homes for path in journal_files(where, since=since, until=until)]


def _journal_part(
    part: tuple[str | None, Path] | None,
    columns: list[str],
    session_id: str | None = None,
    since: Any = None,
    until: Any = None,
) -> Any:
    """One (worker, day file)'s lines as a frame of ``columns`` (``worker`` among them), sorted by time;
    ``part=None``: the empty frame with those columns and dtypes."""
    import pandas as pd

    from ..audit.telemetry import journal_frame

    name, paths = (None, []) if part is None else (part[0], [part[1]])
    own = [c for c in columns if c != "worker"]
    read = own if "ts" in own or part is None else ["ts", *own]
    df = journal_frame(paths, session_id=session_id, since=since, until=until, columns=read)
    if part is not None and len(df) > 1:
        df = df.sort_values("ts", kind="stable", ignore_index=True)
    if "worker" in columns:
        df["worker"] = pd.array([name] * len(df), dtype="string")
    return df[columns]


def cluster_workers(client: Any) -> list[str]:
    """The addresses of the cluster's workers now, sorted, asked of the scheduler (``Client.nthreads``).

    Not ``client.scheduler_info()["workers"]``: the client refreshes that cache every 2 s *without*
    per-worker entries, so a refresh landing between its fetch and its return leaves it empty (2 calls in
    about 15,600 here), and a row then looked as if no worker were left to move it to.
    """
    return sorted(client.nthreads())


def bind_workers(client: Any, session_kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Split ``connect=[...]`` / ``cdp=[...]`` lists over the cluster's workers: its own server(s) each.

    Returns the session kwargs without the lists and, per worker address, the endpoint(s) its pool
    uses: with *n* endpoints and *w* workers (sorted by address), worker *i* gets endpoint *i mod n*
    when *n* ≤ *w*, else endpoints *i*, *i + w*, *i + 2w* … (its pool then has one browser on each).
    A single URL stays as it is, for every worker.
    """
    kwargs = dict(session_kwargs)
    endpoints: list[dict[str, str]] = []
    for key in ("connect", "cdp"):
        value = kwargs.get(key)
        if value is not None and not isinstance(value, str):
            endpoints += [{key: str(v)} for v in kwargs.pop(key)]
    if not endpoints:
        return kwargs, {}
    workers = cluster_workers(client)
    out: dict[str, dict[str, Any]] = {}
    for i, address in enumerate(workers):
        mine = endpoints[i :: len(workers)] if len(endpoints) > len(workers) else [endpoints[i % len(endpoints)]]
        grouped: dict[str, list[str]] = {}
        for endpoint in mine:
            for key, url in endpoint.items():
                grouped.setdefault(key, []).append(url)
        out[address] = {key: urls[0] if len(urls) == 1 else urls for key, urls in grouped.items()}
    return kwargs, out


def replay_on_cluster(
    client: Any,
    skill: dict[str, Any],
    rows: list[dict[str, Any]],
    options: dict[str, Any],
    *,
    progress: bool = True,
    session_kwargs: dict[str, Any] | None = None,
    rows_per_task: int | None = None,
    verify: dict[str, Any] | None = None,
    pool_size: int = 1,
    browsers: int | None = None,
) -> list[dict[str, Any]]:
    """Submit the rows as tasks and gather the result rows (same shape as the local pool).

    Each worker replays its tasks' rows on its own pool of ``pool_size`` sessions over ``browsers``
    browsers (:func:`worker_pool`), a task's rows concurrently. ``rows_per_task`` (default
    :data:`TASK_ROUNDS` × ``pool_size``) puts that many consecutive rows in one task: the scheduler
    then handles ``len(rows) / rows_per_task`` tasks (about 1 ms of its CPU each),
    which is what lets a batch of millions of rows through one scheduler.

    A row that fails because its worker's browser is gone (after that worker's own retry on a fresh
    session) is submitted again to the workers not lost so far, so a dead browser server costs no rows.
    A row lost after it began acting on the site comes back ``"unknown"`` and is not submitted again;
    with ``verify`` (a skill), it is checked on a worker not lost (see :meth:`ocnb.batch.Replayer.check`).
    A task Dask reruns because its worker *process* died settles its rows from the batch's ledger
    (:mod:`ocnb.batch.ledger`, under the batch's home), which is removed once every row is back.
    """
    from tqdm.auto import tqdm

    client.register_plugin(OcnbWorkerPlugin(), name=PLUGIN_NAME)
    kwargs, bindings = bind_workers(client, dict(session_kwargs or {}))
    lost: set[str] = set()  # workers whose browser stayed unreachable after a fresh session

    if rows_per_task is None:
        rows_per_task = TASK_ROUNDS * pool_size
    if rows_per_task < 1 or pool_size < 1:
        raise ValueError("rows_per_task and pool_size must be at least 1")
    spec = {"size": pool_size, "browsers": browsers}

    unknown: dict[int, dict[str, Any]] = {}  # rows lost after acting on the site, to check with verify
    batch = uuid.uuid4().hex  # the batch's ledger (ocnb.batch.ledger): root/ledger/<batch>/, for tasks Dask reruns

    def submit(indexes: list[int], attempt: int = 0) -> Any:
        workers = sorted(set(cluster_workers(client)) - lost) if attempt else None
        checking = verify is not None and indexes[0] in unknown
        key = f"ocnb-replay-{skill['id']}-{indexes[0]}-{batch}-{attempt}"
        return client.submit(
            _task,
            skill,
            [(i, rows[i], unknown[i]) if checking else (i, rows[i]) for i in indexes],
            options,
            kwargs,
            bindings,
            verify if checking else None,
            spec,
            {"batch": batch, "task": key},
            pure=False,
            key=key,
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
                    alive = set(cluster_workers(client)) - lost
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
    root = Path(kwargs["home"]) if kwargs.get("home") else Settings.from_env().home_path
    remove_ledger(batch_dir(root, batch))  # (where this client sees the workers' storage)
    return out
