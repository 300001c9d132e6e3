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

from typing import Any

from .batch import CRASH_CODES, RESULT_COLUMNS, replay_row, resource_kinds, with_contract
from .replay_pool import DEFAULT_BROWSERS, ReplayPool
from .skills.store import SkillStore

__all__ = ["DEFAULT_BROWSERS", "RESULT_COLUMNS", "Pool", "replay_row"]


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


class Pool(ReplayPool):
    """A :class:`~ocnb.replay_pool.ReplayPool` (its arguments: ``size``, ``browsers``, ``home``,
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
        commit_step: int | None = None,
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
        otherwise the row stays ``"unknown"``. A step that times out at or after that step leaves its row
        ``"unknown"`` too (``failure_code`` ``STEP_TIMEOUT``: a slow site may still have taken it); one
        that times out before it is a plain failure.

        That first acting step is judged from the step kinds, so a page that saves a field while it is
        filled (an autosave) is not seen as acting: ``commit_step`` (an index into the skill's low-level
        steps, as ``oc_skill_replay``'s ``step_index`` counts them) says the row acts on the site from
        that step on, replacing the judgement (earlier or later). It is checked before any row runs
        (``ValueError`` for anything but an int within the skill's steps) and goes to Dask workers too.
        """
        store = SkillStore(None if self.home is None else str(self.home))
        skill = store.get(skill_id)
        check = store.get(verify) if verify else None
        options: dict[str, Any] = {"start_url": start_url}
        if commit_step is not None:
            options["commit_step"] = _commit_step(skill, commit_step)
        rows = _rows(params)
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

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _commit_step(skill: dict[str, Any], value: Any) -> int:
    """``commit_step=`` checked against ``skill``'s low-level steps: the index, or ``ValueError``."""
    from .skills.replay import flatten

    steps = flatten(skill)
    if steps is None:
        raise ValueError("commit_step: the skill was recorded without replay artifacts (no low-level steps)")
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(steps):
        kinds = ", ".join(f"{i}: {st.get('kind')}" for i, st in enumerate(steps))
        raise ValueError(
            f"commit_step must be the index of one of the skill's {len(steps)} low-level steps ({kinds}), not {value!r}"
        )
    return value
