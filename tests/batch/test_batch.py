"""Batch replay's one crash-retry (ocnb/batch.py), used by the local pool and by Dask workers alike."""

from __future__ import annotations

from typing import Any

import pytest

from ocnb.batch import row as batch
from ocnb.results import ToolResult
from tests.fakes import FakeSession

SKILL = {"id": "sk1", "name": "signup", "domain": "example.test", "steps": []}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every dispatch (tool, session) and every skill written to a session's store."""
    seen: list[tuple[str, Any]] = []

    def dispatch(session: FakeSession, tool: str, args: dict[str, Any], *, source: str) -> ToolResult:
        assert source == "replay"
        seen.append((tool, session))
        return session.replies.pop(0)

    monkeypatch.setattr(batch, "dispatch", dispatch)
    monkeypatch.setattr(batch, "ensure_skill", lambda session, skill: seen.append(("ensure_skill", session)))
    return seen


def ok() -> ToolResult:
    return ToolResult.success("oc_skill_replay", {"steps_executed": 2, "steps_total": 2})


def failed(code: str) -> ToolResult:
    return ToolResult.failure("oc_skill_replay", code, details={"steps_executed": 1, "steps_total": 2})


def test_a_crashed_browser_is_replaced_and_the_row_retried_once(calls: list[tuple[str, Any]]) -> None:
    sessions = iter([FakeSession(replies=[failed("TARGET_CLOSED")]), FakeSession(replies=[ok(), ok()])])
    replayer = batch.Replayer(lambda: next(sessions))
    first = replayer.session
    row = replayer.replay(SKILL, {"who": "Ada"}, 0, {})
    assert row["ok"] and row["retried"] and row["step_reached"] == 2
    assert first.closed and replayer.session is not first
    assert [c[0] for c in calls] == ["ensure_skill", "oc_skill_replay", "ensure_skill", "oc_skill_replay"]
    calls.clear()
    row = replayer.replay(SKILL, {"who": "Grace"}, 1, {})
    assert row["ok"] and not row["retried"]
    assert calls == [("oc_skill_replay", replayer.session)]  # the skill is in this session's store already


def test_any_other_failure_is_a_result_row_not_a_retry(calls: list[tuple[str, Any]]) -> None:
    replayer = batch.Replayer(lambda: FakeSession(replies=[failed("CONTRACT_FAILED")]))
    row = replayer.replay(SKILL, {}, 3, {})
    assert row == {**row, "row": 3, "ok": False, "failure_code": "CONTRACT_FAILED", "step_reached": 1, "retried": False}
    assert list(row) == batch.RESULT_COLUMNS
