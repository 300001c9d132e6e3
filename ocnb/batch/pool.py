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

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..settings import Settings
from ..skills.store import SkillStore
from .ledger import Ledger, batch_dir
from .ledger import remove as remove_ledger
from .options import RowOptions
from .row import CRASH_CODES, RESULT_COLUMNS, replay_row, resource_kinds, with_contract
from .runner import DEFAULT_BROWSERS, ReplayPool

#: The one "task" of a local batch, in its ledger.
LOCAL_TASK = "local"

__all__ = ["DEFAULT_BROWSERS", "RESULT_COLUMNS", "Pool", "replay_row"]


def _rows(params: Any) -> list[dict[str, Any]]:
    if params is None:
        return [{}]
    if hasattr(params, "to_dict") and hasattr(params, "columns"):
        return [{str(k): v for k, v in rec.items()} for rec in params.to_dict(orient="records")]
    return [dict(r) for r in params]


def _frame(rows: list[dict[str, Any]]) -> Any:
    import pandas as pd

    extracted = any("extracted" in r for r in rows)  # Pool.replay(extract=...): each row's records
    columns = [*RESULT_COLUMNS, "extracted"] if extracted else RESULT_COLUMNS
    df = pd.DataFrame(rows, columns=columns).sort_values("row").reset_index(drop=True)
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
            "acted": "boolean",
            "retried": "boolean",
            "worker": "string",
            "browser": "string",
        }
    )


class Pool(ReplayPool):
    """A :class:`~ocnb.batch.runner.ReplayPool` (its arguments: ``size``, ``browsers``, ``home``,
    ``screenshots``, and keyword arguments for every :class:`Session`) that replays a recorded skill
    once per row of a table, here or on a Dask cluster (:meth:`replay`)."""

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
        ledger: bool | str | os.PathLike[str] = False,
        commit_step: int | None = None,
        extract: dict[str, Any] | None = None,
    ) -> Any:
        """Replay ``skill_id`` once per row of ``params`` (a DataFrame or a list of dicts).

        ``tolerate`` (fingerprint fields that may differ, e.g. ``["name"]`` for a renamed label) goes
        to every row's ``oc_skill_replay``, locally and on a Dask cluster alike. ``block_resources``
        (True, or some of ``"image"``, ``"font"``, ``"media"``) aborts those requests in every
        session's context for this and later batches.

        With ``client=``, each Dask worker holds a pool like this one (``size`` sessions over its own
        ``browsers``, or over the server(s) :func:`ocnb.batch.dask.bind_workers` gives it from ``connect=``),
        and a task's rows run concurrently on that pool's sessions. ``rows_per_task`` (Dask only; default
        4 × ``size``: the worker's sessions take a task's rows as they come free) puts that many rows in
        one task; raise it for batches whose task count would load the scheduler (see docs/scale.md).

        A row whose browser is lost before the row's first step that acts on the site (a click, a key
        press, a navigation carrying the row's values) is retried, on another browser or worker if need
        be; one lost at or after that step is not replayed again: its ``outcome`` is ``"unknown"`` and its
        ``failure_code`` ``UNKNOWN_OUTCOME`` (check the site for it). ``idempotent=True`` (the site
        ignores a row it has seen, e.g. by a key the row carries) retries those rows too. ``verify`` (a
        skill id: a check that only reads the site, e.g. opens the record by the row's key, and passes
        only when the row's effect is there, by its contract) settles those rows on a surviving browser:
        passed → outcome ``"verified"`` (done once); its contract failed → the row is replayed now;
        otherwise the row stays ``"unknown"``. A step that times out at or after that step leaves its row
        ``"unknown"`` too (``failure_code`` ``STEP_TIMEOUT``: a slow site may still have taken it); one
        that times out before it is a plain failure. The frame's ``acted`` column says whether a row's
        commit step began: a ``failed`` row that acted (say, its contract found no confirmation) may be on
        the site all the same — rerun only the rows that did not act.

        That first acting step is judged from the step kinds, so a page that saves a field while it is
        filled (an autosave) is not seen as acting: ``commit_step`` (an index into the skill's low-level
        steps, as ``oc_skill_replay``'s ``step_index`` counts them) says the row acts on the site from
        that step on, replacing the judgement (earlier or later). It is checked before any row runs
        (``ValueError`` for anything but an int within the skill's steps) and goes to Dask workers too.

        ``extract`` (the arguments of the ``extract`` tool, e.g. ``{"kind": "table"}``) reads each row's
        data from the page its replay ended on: the frame gains an ``extracted`` column holding that row's
        records (a list of dicts; ``None`` when the row failed), and a row whose extract failed is a
        failure with the extract's code.

        ``ledger`` (local only; a Dask batch always keeps one, see :mod:`ocnb.batch.ledger`): a folder (or
        True: ``home/ledger/local-<digest of the skill and rows>``) where each row is recorded at its
        commit step and when it finishes, so that the same call made again after this process died
        resumes: rows finished come back as recorded, rows caught at their commit step ``"unknown"``
        (``verify`` settles them), the others are replayed. The ledger is removed when the batch ends.
        """
        store = SkillStore(None if self.home is None else str(self.home))
        skill = store.get(skill_id)
        check = store.get(verify) if verify else None
        checked_commit = _commit_step(skill, commit_step) if commit_step is not None else None
        rows = _rows(params)
        options = RowOptions(
            start_url=start_url,
            commit_step=checked_commit,
            step_timeout_ms=step_timeout_ms,
            allow_risky=allow_risky,
            tolerate=tuple(tolerate or ()),
            block_resources=resource_kinds(block_resources),
            idempotent=idempotent,
            extract=extract,
        )
        wire = options.wire()  # plain data, the same here and for a Dask worker (which unpickles it)
        if client is not None:
            from .dask import replay_on_cluster

            if ledger:
                raise InvalidArgument("ledger= is for a local batch; a Dask batch keeps a ledger of its own")
            kwargs = {**self._kwargs, **({"home": self.home} if self.home is not None else {})}
            shipped = with_contract(skill, self.home)
            return _frame(
                replay_on_cluster(
                    client,
                    shipped,
                    rows,
                    wire,
                    progress=progress,
                    session_kwargs=kwargs,
                    rows_per_task=rows_per_task,
                    pool_size=self.size,
                    browsers=self.browsers_asked,
                    verify=with_contract(check, self.home) if check else None,
                )
            )
        folder = self._ledger_dir(ledger, skill, rows) if ledger else None
        return _frame(self._replay_local(skill, rows, wire, progress, check, folder))

    def _ledger_dir(self, ledger: bool | str | os.PathLike[str], skill: dict[str, Any], rows: list[Any]) -> Path:
        """``ledger=`` as a folder: the one given, or (True) one named after the skill and the rows."""
        if not isinstance(ledger, bool):
            return Path(ledger)
        digest = hashlib.sha256(json.dumps([skill["id"], rows], sort_keys=True, default=str).encode()).hexdigest()
        root = Path(self.home) if self.home is not None else Settings.from_env().home_path
        return batch_dir(root, f"local-{digest[:16]}")

    def _replay_local(
        self,
        skill: dict[str, Any],
        rows: list[dict[str, Any]],
        wire: dict[str, Any],
        progress: bool,
        verify: dict[str, Any] | None = None,
        ledger: Path | None = None,
    ) -> list[dict[str, Any]]:
        from tqdm.auto import tqdm

        options = RowOptions.of(wire)

        bar = tqdm(total=len(rows), desc=f"replay {skill['name']}", disable=not progress)
        book = Ledger(ledger, "local") if ledger is not None else None
        hooks: dict[str, Any] = {}
        resumed: dict[int, dict[str, Any]] = {}
        if book is not None:
            hooks = {
                "on_commit": lambda i, step: book.committed(LOCAL_TASK, i, step),
                "on_result": lambda entry, result: book.finished(LOCAL_TASK, result),
            }
            # what an earlier run of this batch, which died, settled
            resumed = book.settled(LOCAL_TASK, range(len(rows)), idempotent=options.idempotent)
            bar.update(len(resumed))
        try:
            todo = [(k, rows[k]) for k in range(len(rows)) if k not in resumed]
            ran = self.run_rows(skill, todo, options, tick=lambda: bar.update(1), **hooks)
            done = {int(e[0]): r for e, r in zip(todo, ran, strict=True)}
            out = [resumed[k] if k in resumed else done[k] for k in range(len(rows))]
            if verify is not None:
                unknown = [k for k, r in enumerate(out) if r["outcome"] == "unknown"]
                checked = self.run_rows(skill, [(k, rows[k], out[k]) for k in unknown], options, verify=verify, **hooks)
                for k, settled in zip(unknown, checked, strict=True):
                    # a crash code: no browser left to check on, the row stays as it was
                    out[k] = out[k] if settled["failure_code"] in CRASH_CODES else settled
            if book is not None:
                book.close()
                remove_ledger(book.dir)  # the batch is over: a later call with the same rows starts afresh
            return out
        finally:
            if book is not None:
                book.close()
            bar.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _commit_step(skill: dict[str, Any], value: Any) -> int:
    """``commit_step=`` checked against ``skill``'s low-level steps: the index, or ``ValueError``."""
    from ..skills.replay import flatten

    steps = flatten(skill)
    if steps is None:
        raise InvalidArgument("commit_step: the skill was recorded without replay artifacts (no low-level steps)")
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(steps):
        kinds = ", ".join(f"{i}: {st.get('kind')}" for i, st in enumerate(steps))
        raise InvalidArgument(
            f"commit_step must be the index of one of the skill's {len(steps)} low-level steps ({kinds}), not {value!r}"
        )
    return value
