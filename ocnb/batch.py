"""One row of a batch replay, the same for the local pool and a Dask worker.

:func:`replay_row` replays a skill once with one row as its ``${var}`` params and returns one result
row (it never raises). A :class:`Replayer` is one session replaying rows: when a row fails because the
browser itself is gone (:data:`CRASH_CODES`), it replaces its session and retries that row once.
:class:`~ocnb.pool.Pool` holds one Replayer per session; each Dask worker holds one.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from typing import Any

from .dispatch import dispatch
from .session import Session
from .skills.store import SkillStore

__all__ = ["BLOCKABLE", "CRASH_CODES", "RESULT_COLUMNS", "Replayer", "block_resources", "replay_row"]

#: Columns of a result row (and of the DataFrame ``Pool.replay`` returns), in order.
RESULT_COLUMNS = [
    "row",
    "ok",
    "failure_code",
    "step_reached",
    "steps_total",
    "elapsed_ms",
    "evidence_path",
    "retried",
    "worker",
    "browser",
]
#: Codes that mean the browser itself is gone: the session is replaced and the row retried once.
CRASH_CODES = ("TARGET_CLOSED", "BROWSER_CRASHED", "PAGE_CRASHED", "BROWSER_UNAVAILABLE", "SESSION_CLOSED")
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
    """Abort requests for images, fonts or media in ``session``'s browser context (a context route)."""
    if not kinds:
        return
    exts = "|".join(e for k in kinds for e in BLOCKABLE[k])
    pattern = re.compile(rf"\.({exts})(\?.*)?$", re.IGNORECASE)

    async def handler(route: Any) -> None:
        with contextlib.suppress(Exception):  # the page may be gone already
            await route.abort("blockedbyclient")

    async def install() -> None:
        state = await session.ensure_browser()
        await state.context.route(pattern, handler)

    session.run(install(), timeout=session.config.default_timeout_ms / 1000 + 30)


def with_contract(skill: dict[str, Any], home: Any) -> dict[str, Any]:
    """The skill with its outcome contract's definition attached, for a worker with a home of its own."""
    if not skill.get("contract_id"):
        return skill
    from .contracts import ContractStore

    try:
        contract = ContractStore(home).get(skill["contract_id"])
    except Exception:  # noqa: BLE001 - a missing contract is reported by the replay itself
        return skill
    return {**skill, "contract_definition": contract.to_dict()}


def ensure_skill(session: Session, skill: dict[str, Any]) -> None:
    """Make the skill (and its contract) available in the session's own store (workers have their own home)."""
    definition = skill.get("contract_definition")
    if definition:
        from .contracts import ContractStore

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
    if start_url and not _starts_at(skill, start_url):
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
        "failure_code": code,
        "step_reached": reached,
        "steps_total": total,
        "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1),
        "evidence_path": evidence,
        "retried": False,
        "worker": "local",
        "browser": None,
    }


class Replayer:
    """One session replaying rows of batches; a crashed browser's session is replaced and its row retried once."""

    def __init__(self, new_session: Callable[[], Session], browser: str | None = None) -> None:
        self._new_session = new_session
        #: Which browser this replayer's sessions use, for the ``browser`` column (an endpoint, or ``browser 0``).
        self.browser = browser
        self.session = new_session()
        #: Ids of the skills already in this session's store, so a batch reads the store once per session.
        self._skills: set[str] = set()
        #: Resource kinds already blocked in this session's context (routes last as long as the context).
        self._blocked: set[str] = set()

    def replay(self, skill: dict[str, Any], row: dict[str, Any], index: int, options: dict[str, Any]) -> dict[str, Any]:
        """:func:`replay_row` on this session; on a crash, once more on a fresh one (``retried`` says so)."""
        result = self._replay(skill, row, index, options)
        if not result["ok"] and result["failure_code"] in CRASH_CODES:
            self.renew()
            result = self._replay(skill, row, index, options)
            result["retried"] = True
        result["browser"] = self.browser or "own"
        return result

    def _replay(
        self, skill: dict[str, Any], row: dict[str, Any], index: int, options: dict[str, Any]
    ) -> dict[str, Any]:
        if skill["id"] not in self._skills:
            ensure_skill(self.session, skill)
            self._skills.add(skill["id"])
        kinds = tuple(k for k in resource_kinds(options.get("block_resources")) if k not in self._blocked)
        if kinds:
            try:
                block_resources(self.session, kinds)
            except Exception as exc:  # noqa: BLE001 - a dead browser: the row's crash code says so, and retries
                code = getattr(exc, "code", "BROWSER_UNAVAILABLE")
                return _row(
                    index, False, code if isinstance(code, str) else "INTERNAL", 0, 0, time.perf_counter(), None
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
