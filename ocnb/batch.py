"""One row of a batch replay, the same for the local pool and a Dask worker.

:func:`replay_row` replays a skill once with one row as its ``${var}`` params and returns one result
row (it never raises). A :class:`Replayer` is one session replaying rows: when a row fails because the
browser itself is gone (:data:`CRASH_CODES`), it replaces its session and retries that row once.
:class:`~ocnb.pool.Pool` holds one Replayer per session; each Dask worker holds one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from .dispatch import dispatch
from .session import Session
from .skills.store import SkillStore

__all__ = ["CRASH_CODES", "RESULT_COLUMNS", "Replayer", "replay_row"]

#: Columns of a result row (and of the DataFrame ``Pool.replay`` returns), in order.
RESULT_COLUMNS = ["row", "ok", "failure_code", "step_reached", "steps_total", "elapsed_ms", "evidence_path", "retried"]
#: Codes that mean the browser itself is gone: the session is replaced and the row retried once.
CRASH_CODES = ("TARGET_CLOSED", "BROWSER_CRASHED", "PAGE_CRASHED", "BROWSER_UNAVAILABLE", "SESSION_CLOSED")


def ensure_skill(session: Session, skill: dict[str, Any]) -> None:
    """Make the skill available in the session's own store (remote workers have their own home)."""
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
    ensure_skill(session, skill)
    return _replay_stored(session, skill, row, index, options or {})


def _replay_stored(
    session: Session, skill: dict[str, Any], row: dict[str, Any], index: int, options: dict[str, Any]
) -> dict[str, Any]:
    t0 = time.perf_counter()
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


class Replayer:
    """One session replaying rows of batches; a crashed browser's session is replaced and its row retried once."""

    def __init__(self, new_session: Callable[[], Session]) -> None:
        self._new_session = new_session
        self.session = new_session()
        #: Ids of the skills already in this session's store, so a batch reads the store once per session.
        self._skills: set[str] = set()

    def replay(self, skill: dict[str, Any], row: dict[str, Any], index: int, options: dict[str, Any]) -> dict[str, Any]:
        """:func:`replay_row` on this session; on a crash, once more on a fresh one (``retried`` says so)."""
        result = self._replay(skill, row, index, options)
        if result["ok"] or result["failure_code"] not in CRASH_CODES:
            return result
        self.renew()
        result = self._replay(skill, row, index, options)
        result["retried"] = True
        return result

    def _replay(
        self, skill: dict[str, Any], row: dict[str, Any], index: int, options: dict[str, Any]
    ) -> dict[str, Any]:
        if skill["id"] not in self._skills:
            ensure_skill(self.session, skill)
            self._skills.add(skill["id"])
        return _replay_stored(self.session, skill, row, index, options)

    def renew(self) -> None:
        """Close this session (whatever state it is in) and start over with a new one."""
        with contextlib.suppress(Exception):
            self.session.close()
        self.session = self._new_session()
        self._skills.clear()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.session.close()
