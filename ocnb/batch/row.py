"""One row of a batch replay, the same for the local pool and a Dask worker.

:func:`replay_row` replays a skill once with one row as its ``${var}`` params and returns one result
row (it never raises). A :class:`Replayer` is one session replaying rows: when a row fails because the
browser itself is gone (:data:`CRASH_CODES`), it replaces its session and retries that row once.
:class:`~ocnb.batch.pool.Pool` holds one Replayer per session; each Dask worker holds one.

Exactly-once, as the site sees it: a row is retried (here, then on another browser or worker) only
when its browser was lost *before* the row's first step that can act on the site (:func:`commit_step`:
a click, a key press, a submit, or a navigation whose URL carries the row's values). A row lost at or
after that step may or may not have reached the site: it is not replayed again but reported with
``outcome`` ``"unknown"`` and failure code :data:`UNKNOWN_OUTCOME`, for a person (or a check of the
site) to settle. ``replay(..., idempotent=True)`` says the site ignores a repeated row (it dedupes on a
key the row carries): then such rows are retried like the others.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..browser.routes import Rule
from ..dispatch import dispatch
from ..session import Session
from ..skills.replay import CommitHook, ReplayOutcome
from ..skills.store import SkillStore
from .options import RowOptions

__all__ = [
    "BLOCKABLE",
    "CRASH_CODES",
    "OUTCOMES",
    "RESULT_COLUMNS",
    "UNKNOWN_OUTCOME",
    "Replayer",
    "RowOutcome",
    "block_resources",
    "commit_step",
    "replay_row",
]

#: Columns of a result row (and of the DataFrame ``Pool.replay`` returns), in order.
RESULT_COLUMNS = [
    "row",
    "ok",
    "outcome",
    "failure_code",
    "step_reached",
    "steps_total",
    "elapsed_ms",
    "evidence_path",
    "acted",
    "retried",
    "worker",
    "browser",
]
#: Codes that mean the browser itself is gone: the session is replaced and the row retried once.
CRASH_CODES = ("TARGET_CLOSED", "BROWSER_CRASHED", "PAGE_CRASHED", "BROWSER_UNAVAILABLE", "SESSION_CLOSED")
#: A row's failure code when its browser was lost at or after the row's first step that can act on
#: the site: the site may or may not have the row's effect. Such a row is not replayed again.
UNKNOWN_OUTCOME = "UNKNOWN_OUTCOME"
#: Values of a result row's ``outcome``: the replay succeeded; it was lost after it began acting on the
#: site and a ``verify`` check found its effect there; it failed (``failure_code`` says why; a failure
#: before the commit step left the site untouched); or it is unknown: lost (browser gone, or a step
#: timed out) at or after its commit step, so the site may or may not have it.
OUTCOMES = ("done", "verified", "failed", "unknown")
#: Failures of a step that may have acted anyway: at or after the commit step, the row's outcome is unknown.
_TIMEOUT_CODES = ("STEP_TIMEOUT", "TIMEOUT")
#: Step kinds that can send the row to the site (a click may submit a form, Enter too).
_ACTING_KINDS = ("click", "press", "submit")
#: What ``block_resources=`` can leave out of every row's pages, by resource kind (file extension, so
#: the browser side matches and requests of other kinds never cross to Python).
BLOCKABLE = {
    "image": ("png", "jpe?g", "gif", "webp", "avif", "svg", "ico", "bmp"),
    "font": ("woff2?", "ttf", "otf", "eot"),
    "media": ("mp4", "webm", "ogg", "ogv", "mp3", "wav", "m4a", "mov"),
}


def resource_kinds(value: Any) -> tuple[str, ...]:
    """``block_resources=`` as kinds: True is every kind of :data:`BLOCKABLE`; a list names some."""
    if value is True:
        return tuple(BLOCKABLE)
    if not value:
        return ()
    kinds = (value,) if isinstance(value, str) else tuple(value)
    unknown = [k for k in kinds if k not in BLOCKABLE]
    if unknown:
        raise ValueError(f"block_resources: unknown kind(s) {unknown}; choose from {sorted(BLOCKABLE)}")
    return kinds


def block_resources(session: Session, kinds: tuple[str, ...]) -> None:
    """Abort requests for images, fonts or media in ``session``'s browser context (a rule of its routes)."""
    if not kinds:
        return
    exts = "|".join(e for k in kinds for e in BLOCKABLE[k])
    pattern = re.compile(rf"\.({exts})(\?.*)?$", re.IGNORECASE)

    async def handler(route: Any) -> bool:
        with contextlib.suppress(Exception):  # the page may be gone already
            await route.abort("blockedbyclient")
        return True

    async def install() -> None:
        state = await session.ensure_browser()
        await state.network.routes.add(Rule("block_resources " + ",".join(kinds), pattern, handler))

    session.run(install(), timeout=session.config.default_timeout_ms / 1000 + 30)


def with_contract(skill: dict[str, Any], home: Any) -> dict[str, Any]:
    """The skill with its outcome contract's definition attached, for a worker with a home of its own."""
    if not skill.get("contract_id"):
        return skill
    from ..contracts import ContractStore

    try:
        contract = ContractStore(home).get(skill["contract_id"])
    except Exception:  # noqa: BLE001 - a missing contract is reported by the replay itself
        return skill
    return {**skill, "contract_definition": contract.to_dict()}


def ensure_skill(session: Session, skill: dict[str, Any]) -> None:
    """Make the skill (and its contract) available in the session's own store (workers have their own home)."""
    definition = skill.get("contract_definition")
    if definition:
        from ..contracts import ContractStore

        contracts = ContractStore(session.home)
        try:
            contracts.get(definition["id"])
        except Exception:  # noqa: BLE001 - not there yet
            contracts.define(definition["id"], definition["assertion"], description=definition.get("description"))
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


def acts_on_site(step: dict[str, Any]) -> bool:
    """True when ``step`` (a low-level replay step, before ``${var}`` filling) can send the row to the site.

    Clicks (but a hover, or checking a box), key presses and submits can; so can a navigation whose URL
    carries a ``${var}`` (a GET form). Filling a field, choosing an option, scrolling and a navigation to a
    fixed URL cannot (HTTP's GET is safe; a site whose page load has an effect needs ``idempotent``
    thinking of its own).
    """
    kind = step.get("kind")
    args = step.get("args") or {}
    if step.get("risky"):
        return True
    if kind == "navigate":
        return "${" in str(args.get("url", ""))
    return kind in _ACTING_KINDS and args.get("action") not in ("hover", "check", "uncheck", "scroll_into_view")


def commit_step(skill: dict[str, Any]) -> int | None:
    """Index of the skill's first low-level step that can act on the site (:func:`acts_on_site`), or None.

    A row whose browser is lost before this step has had no effect on the site and is retried; one lost
    at or after it has an unknown outcome.
    """
    from ..skills.replay import flatten

    for i, step in enumerate(flatten(skill) or []):
        if acts_on_site(step):
            return i
    return None


def _commit_at(skill: dict[str, Any], options: RowOptions) -> int | None:
    """The row's commit step: ``commit_step`` given by the caller (``Pool.replay``), else :func:`commit_step`."""
    return options.commit_step if options.commit_step is not None else commit_step(skill)


@dataclass(frozen=True)
class RowOutcome:
    """One attempt at a row: its result row (what the caller sees) and, apart from it, whether the row was
    lost at or after its commit step (then it is not replayed again: see the module)."""

    result: dict[str, Any]
    committed: bool = False


def replay_row(
    session: Session,
    skill: dict[str, Any],
    row: dict[str, Any],
    index: int,
    *,
    options: RowOptions | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Replay ``skill`` once with ``row`` as its ``${var}`` params; one result row (never raises)."""
    ensure_skill(session, skill)
    return _replay_stored(session, skill, row, index, RowOptions.of(options)).result


def _replay_stored(
    session: Session, skill: dict[str, Any], row: dict[str, Any], index: int, options: RowOptions
) -> RowOutcome:
    return RowRun(session, skill, row, index, options).run()


class RowRun:
    """One row in the phases of a replay (:class:`~ocnb.skills.walk.StepWalk`): :meth:`preflight` (the
    start page), :meth:`act` (``oc_skill_replay`` dispatched: its :class:`~ocnb.skills.replay.ReplayRun`
    walks the skill's steps), :meth:`verify` (the row's data extracted) and :meth:`record` (the result
    row, and whether the row was lost at or after its commit step). Every act is a dispatched call."""

    def __init__(
        self, session: Session, skill: dict[str, Any], row: dict[str, Any], index: int, options: RowOptions
    ) -> None:
        self.session, self.skill, self.row, self.index, self.options = session, skill, row, index, options
        self.t0 = time.perf_counter()
        self.commit = _commit_at(skill, options)

    def run(self) -> RowOutcome:
        refused = self.preflight()
        if refused is not None:
            return refused
        replay = self.act()
        out = _row(
            self.index,
            replay.ok,
            replay.code,
            replay.steps_executed,
            replay.steps_total,
            self.t0,
            replay.evidence,
        )
        self.verify(replay, out)
        return self.record(replay, out)

    def preflight(self) -> RowOutcome | None:
        """The row's start page, unless the skill's first step loads it; a failed load ends the row
        before any step (a timed-out one leaves the page, for the next row)."""
        start_url = self.options.start_url
        if not start_url or _starts_at(self.skill, start_url):
            return None
        nav = dispatch(self.session, "navigate", {"url": start_url}, source="replay")
        if nav.ok:
            return None
        if nav.error and nav.error.code in _TIMEOUT_CODES:
            _stop_loading(self.session)
        code = nav.error.code if nav.error else "INTERNAL"
        return RowOutcome(_row(self.index, False, code, 0, 0, self.t0, None))  # before any step

    def act(self) -> ReplayOutcome:
        """The skill replayed with the row as its params; the row's ledger is told just before the
        commit step acts (a :class:`CommitHook` in the session's extensions while it runs)."""
        params = {k: ("" if v is None else v) for k, v in self.row.items()}
        args: dict[str, Any] = {"skill_id": self.skill["id"], "params": params}
        args.update(self.options.replay_args())
        on_commit = self.options.on_commit  # the row's ledger (ocnb.batch.ledger)
        hook = None
        if on_commit is not None and self.commit is not None:
            hook = CommitHook(self.commit, functools.partial(on_commit, self.commit))
            self.session.extensions.put(hook)
        try:
            return ReplayOutcome.of(dispatch(self.session, "oc_skill_replay", args, source="replay"))
        finally:
            if hook is not None:
                self.session.extensions.discard(hook)

    def verify(self, replay: ReplayOutcome, out: dict[str, Any]) -> None:
        """The row's data, read from the page the replay ended on (``extract=``): a failed read fails the row."""
        extract = self.options.extract
        if extract is None:
            return
        out["extracted"] = None
        if not replay.ok:
            return
        got = dispatch(self.session, "extract", dict(extract), source="replay")
        out["extracted"] = _extracted_rows(got) if got.ok else None
        if not got.ok and got.error is not None:
            out.update(ok=False, outcome="failed", failure_code=got.error.code)

    def record(self, replay: ReplayOutcome, out: dict[str, Any]) -> RowOutcome:
        """The result row: ``acted`` (the commit step began, so the site may have the row even when it
        failed after it), and a row lost (crashed, timed out) at or after its commit step marked so."""
        if not replay.ok and out["failure_code"] in _TIMEOUT_CODES:
            _stop_loading(self.session)
        lost_at, commit = replay.stopped_at, self.commit
        committed = lost_at is not None and commit is not None and lost_at >= commit
        out["acted"] = commit is not None and (replay.ok or committed or out["step_reached"] > commit)
        if not replay.ok and out["failure_code"] in CRASH_CODES:
            return RowOutcome(out, committed)
        if not replay.ok and out["failure_code"] in _TIMEOUT_CODES and committed:
            out["outcome"] = "unknown"  # the click timed out, say: the site may have the row all the same
        return RowOutcome(out)


def _extracted_rows(result: Any) -> list[dict[str, str]]:
    """An ``extract`` result's rows as records of text (JSON as they are, for a ledger or a Dask worker)."""
    data = result.data
    text = data["content"] if "content" in data else Path(data["file"]["path"]).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _stop_loading(session: Session) -> None:
    """After a timed-out step: leave the page (about:blank), so a navigation still pending cannot abort
    the next row's (Chromium answers a new load of the same URL with ``net::ERR_ABORTED`` meanwhile)."""
    dispatch(session, "navigate", {"url": "about:blank"}, source="replay")


def _starts_at(skill: dict[str, Any], url: str) -> bool:
    """True when the skill's first step navigates to ``url`` itself: a separate ``start_url`` load is waste."""
    steps = skill.get("steps") or []
    first = steps[0] if steps else {}
    return (first.get("kind") or first.get("tool")) == "navigate" and str(
        (first.get("args") or {}).get("url", "")
    ).split("#")[0] == url.split("#")[0]


def _row(
    index: int, ok: bool, code: str | None, reached: int, total: int, t0: float, evidence: str | None
) -> dict[str, Any]:
    return {
        "row": index,
        "ok": ok,
        "outcome": "done" if ok else "failed",
        "failure_code": code,
        "step_reached": reached,
        "steps_total": total,
        "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1),
        "evidence_path": evidence,
        "acted": False,
        "retried": False,
        "worker": "local",
        "browser": None,
    }


class Replayer:
    """One session replaying rows of batches; a crashed browser's session is replaced and its row retried
    once, unless the row had begun acting on the site (then its outcome is unknown: see the module)."""

    def __init__(self, new_session: Callable[[], Session], browser: str | None = None) -> None:
        self._new_session = new_session
        #: Which browser this replayer's sessions use, for the ``browser`` column (an endpoint, or ``browser 0``).
        self.browser = browser
        self.session = new_session()
        #: Ids of the skills already in this session's store, so a batch reads the store once per session.
        self._skills: set[str] = set()
        #: Resource kinds already blocked in this session's context (routes last as long as the context).
        self._blocked: set[str] = set()

    def replay(
        self, skill: dict[str, Any], row: dict[str, Any], index: int, options: RowOptions | Mapping[str, Any]
    ) -> dict[str, Any]:
        """:func:`replay_row` on this session; on a crash, once more on a fresh one (``retried`` says so).

        A row whose browser was lost at or after its :func:`commit_step` is not replayed again (unless
        ``options.idempotent``): it comes back with ``outcome`` ``"unknown"`` and :data:`UNKNOWN_OUTCOME`.
        """
        return self._attempts(skill, row, index, RowOptions.of(options), reads_only=False)

    def check(
        self,
        skill: dict[str, Any],
        verify: dict[str, Any],
        row: dict[str, Any],
        index: int,
        options: RowOptions | Mapping[str, Any],
        unknown: dict[str, Any],
    ) -> dict[str, Any]:
        """Settle a row whose outcome is unknown (``unknown``, its result row) with the ``verify`` skill.

        ``verify`` is replayed with the row's values on this session; it must only read the site. When
        it passes, the row's effect is there: ``unknown`` comes back as ``ok``, outcome ``"verified"``
        (done once, where its ``browser`` says). When its contract fails (``CONTRACT_FAILED``: the check
        ran and found nothing), the row never reached the site and is replayed now. Any other failure
        leaves the row unknown; a crash comes back with its crash code, for the caller to move the check
        to another browser.
        """
        options = RowOptions.of(options)
        probe_options = RowOptions(
            step_timeout_ms=options.step_timeout_ms, tolerate=options.tolerate, block_resources=options.block_resources
        )
        probe = self._attempts(verify, row, index, probe_options, reads_only=True)
        if probe["ok"]:
            return {**unknown, "ok": True, "outcome": "verified", "failure_code": None}
        if probe["failure_code"] == "CONTRACT_FAILED":
            return {**self.replay(skill, row, index, options), "retried": True}
        if probe["failure_code"] in CRASH_CODES:
            return {**unknown, "failure_code": probe["failure_code"]}
        return unknown

    def _attempts(
        self, skill: dict[str, Any], row: dict[str, Any], index: int, options: RowOptions, *, reads_only: bool
    ) -> dict[str, Any]:
        retried = False
        while True:
            outcome = self._replay(skill, row, index, options)
            result, committed = outcome.result, outcome.committed and not reads_only
            if result["ok"] or result["failure_code"] not in CRASH_CODES:
                break
            if committed and not options.idempotent:
                self.renew()  # for the next row; this one may have reached the site: not replayed again
                result["outcome"] = "unknown"
                result["failure_code"] = UNKNOWN_OUTCOME
                break
            if retried:
                break  # still no browser: the caller may move the row to another one
            self.renew()
            retried = True
        result["retried"] = retried
        result["browser"] = self.browser or "own"
        return result

    def _replay(self, skill: dict[str, Any], row: dict[str, Any], index: int, options: RowOptions) -> RowOutcome:
        if skill["id"] not in self._skills:
            ensure_skill(self.session, skill)
            self._skills.add(skill["id"])
        kinds = tuple(k for k in resource_kinds(options.block_resources) if k not in self._blocked)
        if kinds:
            try:
                block_resources(self.session, kinds)
            except Exception as exc:  # noqa: BLE001 - a dead browser: the row's crash code says so, and retries
                code = getattr(exc, "code", "BROWSER_UNAVAILABLE")
                return RowOutcome(
                    _row(index, False, code if isinstance(code, str) else "INTERNAL", 0, 0, time.perf_counter(), None)
                )
            self._blocked.update(kinds)
        return _replay_stored(self.session, skill, row, index, options)

    def renew(self) -> None:
        """Close this session (whatever state it is in) and start over with a new one."""
        with contextlib.suppress(Exception):
            self.session.close()
        self.session = self._new_session()
        self._skills.clear()
        self._blocked.clear()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.session.close()
