"""A batch's rows are told what to do by a typed value, and tell back by one (issue 35 §2): no control
data rides in the options dict or the result row a person sees."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from ocnb.batch import row as batch
from ocnb.batch.options import RowOptions
from ocnb.results import ToolResult
from tests.fakes import FakeSession

SKILL = {"id": "sk1", "name": "signup", "domain": "example.test", "steps": []}


@pytest.fixture
def replies(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any], list[Any]]]:
    """Every dispatch as (tool, args, the session's extensions then); each session answers from its own list."""
    seen: list[tuple[str, dict[str, Any], list[Any]]] = []

    def dispatch(session: FakeSession, tool: str, args: dict[str, Any], *, source: str) -> ToolResult:
        seen.append((tool, dict(args), list(session.hooks)))
        return session.replies.pop(0)

    monkeypatch.setattr(batch, "dispatch", dispatch)
    monkeypatch.setattr(batch, "ensure_skill", lambda session, skill: None)
    return seen


def crashed_at(step: int) -> ToolResult:
    details = {"steps_executed": step, "steps_total": 3, "failure": {"step_index": step}}
    return ToolResult.failure("oc_skill_replay", "BROWSER_CRASHED", details=details)


def ok() -> ToolResult:
    return ToolResult.success("oc_skill_replay", {"steps_executed": 3, "steps_total": 3})


def test_a_row_lost_after_its_commit_step_is_unknown_and_its_row_holds_only_the_columns(
    replies: list[tuple[str, dict[str, Any], list[Any]]],
) -> None:
    sessions = iter([FakeSession(replies=[crashed_at(2)]), FakeSession(replies=[])])
    replayer = batch.Replayer(lambda: next(sessions))
    row = replayer.replay(SKILL, {"who": "Ada"}, 0, RowOptions(commit_step=1))
    assert row["outcome"] == "unknown" and row["failure_code"] == batch.UNKNOWN_OUTCOME and row["acted"]
    assert list(row) == batch.RESULT_COLUMNS  # "committed" went beside the row, not into it
    assert [t for t, _, _ in replies] == ["oc_skill_replay"]  # not replayed again


def test_a_row_lost_before_its_commit_step_is_retried(replies: list[tuple[str, dict[str, Any], list[Any]]]) -> None:
    sessions = iter([FakeSession(replies=[crashed_at(0)]), FakeSession(replies=[ok()])])
    replayer = batch.Replayer(lambda: next(sessions))
    row = replayer.replay(SKILL, {}, 4, {"commit_step": 1})  # a plain dict of options still reads
    assert row["ok"] and row["retried"] and list(row) == batch.RESULT_COLUMNS
    assert [t for t, _, _ in replies] == ["oc_skill_replay", "oc_skill_replay"]


def test_the_options_reach_the_replay_and_the_commit_hook_is_installed_for_the_call_only(
    replies: list[tuple[str, dict[str, Any], list[Any]]],
) -> None:
    told: list[int] = []
    session = FakeSession(replies=[ok()])
    options = RowOptions(step_timeout_ms=900, tolerate=["name"], commit_step=1).for_row(told.append)
    result = batch.replay_row(session, SKILL, {"who": None}, 2, options=options)  # type: ignore[arg-type]
    assert result["ok"] and list(result) == batch.RESULT_COLUMNS
    ((tool, args, during),) = replies
    assert args == {"skill_id": "sk1", "params": {"who": ""}, "step_timeout_ms": 900, "tolerate": ["name"]}
    assert [(type(h).__name__, h.step) for h in during] == [("CommitHook", 1)]  # the ledger's, during the replay
    during[0].call()
    assert told == [1]  # the hook tells the row's ledger which step it reached
    assert session.hooks == []  # and it was that call's only


def test_the_wire_form_is_plain_data_without_the_callback() -> None:
    options = RowOptions(
        start_url="http://x/", commit_step=2, tolerate=("name",), block_resources=("image",), extract={"kind": "table"}
    ).for_row(lambda step: None)
    wire = options.wire()
    assert wire == {
        "start_url": "http://x/",
        "commit_step": 2,
        "tolerate": ["name"],
        "block_resources": ["image"],
        "extract": {"kind": "table"},
    }
    back = RowOptions.of(pickle.loads(pickle.dumps(wire)))
    assert back == options and back.on_commit is None  # the same options, without this process's callback
    assert RowOptions.of({}) == RowOptions() and RowOptions().wire() == {}
    with pytest.raises(TypeError, match="unknown row option '_on_commit'"):
        RowOptions.of({"_on_commit": print})
