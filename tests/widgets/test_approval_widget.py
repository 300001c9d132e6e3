"""The hand-off widget asks for approval (issue 30 §4): an APPROVAL_REQUIRED result shown with its
request, Approve runs the call again and it acts, Deny runs it again and it ends APPROVAL_DENIED —
first with a scripted caller (the widget's logic), then in real Chromium against a site that logs
what it received."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.audit.journal import read_journal
from ocnb.results import ToolResult
from ocnb.widgets import HumanHandoff, ScriptedCaller
from tests.security.approval_site import ApprovalSite, serve

REQUEST = {
    "tool": "interact",
    "args": {"query": "Delete account"},
    "role": "button",
    "name": "Delete account",
    "ref": "ax_7",
    "url": "http://127.0.0.1:8000/account",
    "intent": "close the <test> account",
    "reason": "its name holds the risky word 'delete'",
    "approval_id": "a12",
}


def required() -> ToolResult:
    return ToolResult.failure("interact", "APPROVAL_REQUIRED", "needs approval", dict(REQUEST))


def test_shows_the_request_with_approve_and_deny() -> None:
    settled: list[tuple[str, bool]] = []
    caller = ScriptedCaller({"interact": {"element": {"ref": "ax_7"}}})

    def settle(approval_id: str, approved: bool) -> tuple[str, dict[str, Any]]:
        settled.append((approval_id, approved))
        return "interact", {"query": "Delete account", "intent": "close the <test> account"}

    hand = HumanHandoff(required(), caller=caller, settle=settle)
    text = hand.header.value
    assert "interact" in text and "“Delete account”" in text and "ax_7" in text
    assert "http://127.0.0.1:8000/account" in text and "risky word" in text
    assert "close the &lt;test&gt; account" in text  # escaped
    assert [b.description for b in (hand.approve_button, hand.deny_button)] == ["Approve", "Deny"]
    assert caller.calls == []  # nothing runs until the person answers
    hand.approve_button.click()
    assert settled == [("a12", True)]
    assert [(c.tool, c.args, c.quiet) for c in caller.calls] == [
        ("interact", {"query": "Delete account", "intent": "close the <test> account"}, False)
    ]
    assert hand.result is not None and hand.result.ok and "approved" in hand.outcome.value
    assert hand.approve_button.disabled and hand.deny_button.disabled  # one answer per request


def test_deny_settles_no_and_shows_the_refusal() -> None:
    settled: list[tuple[str, bool]] = []
    denied = ToolResult.failure("interact", "APPROVAL_DENIED", "interact on button 'Delete account' was not approved")
    caller = ScriptedCaller({"interact": denied})

    def settle(approval_id: str, approved: bool) -> tuple[str, dict[str, Any]]:
        settled.append((approval_id, approved))
        return "interact", {"query": "Delete account"}

    hand = HumanHandoff(dict(REQUEST), caller=caller, settle=settle)
    hand.deny_button.click()
    assert settled == [("a12", False)]
    assert "denied" in hand.outcome.value and "APPROVAL_DENIED" in hand.outcome.value
    assert hand.approve_button.disabled


def test_an_approval_needs_a_way_to_settle_it() -> None:
    with pytest.raises(TypeError, match="settle an approval"):
        HumanHandoff(required(), caller=ScriptedCaller({}))


@pytest.fixture(scope="module")
def approval_site() -> Iterator[ApprovalSite]:
    with serve() as s:
        yield s


@pytest.mark.browser
@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_in_the_page_approve_acts_and_deny_sends_nothing(
    ocnb_home: Path, approval_site: ApprovalSite, answer: str
) -> None:
    with ocnb.Session(headless=True, home=ocnb_home, confirm="risky") as s:
        assert s.call("navigate", url=approval_site.url).ok
        approval_site.log.clear()
        result = s.call("interact", query="Delete account", intent="close the account")
        assert result.error is not None and result.error.code == "APPROVAL_REQUIRED"
        time.sleep(0.3)
        assert approval_site.log == []  # held: nothing reached the site
        hand = HumanHandoff(result, s)
        assert "Delete account" in hand.header.value
        (hand.approve_button if answer == "approve" else hand.deny_button).click()
        lines = read_journal(s.home, session_id=s.id, tool="interact")
        deadline = time.monotonic() + 5
        while answer == "approve" and not approval_site.received("POST", "/delete") and time.monotonic() < deadline:
            time.sleep(0.05)
        if answer == "approve":
            assert hand.result is not None and hand.result.ok, hand.result
            assert len(approval_site.received("POST", "/delete")) == 1
            assert "approval: approved by widget" in lines[-1]["summary"]
        else:
            assert hand.result is not None and hand.result.error is not None
            assert hand.result.error.code == "APPROVAL_DENIED"
            time.sleep(0.3)
            assert approval_site.log == []
            assert "approval: denied by widget" in lines[-1]["summary"]
        assert [(e["source"], e["error_code"]) for e in lines] == [
            ("api", "APPROVAL_REQUIRED"),
            ("widget", None if answer == "approve" else "APPROVAL_DENIED"),
        ]
        with pytest.raises(ocnb.errors.OcnbError, match="no open approval request"):
            s.approvals.settle(str(result.error.details["approval_id"]), True, by="widget")  # answered once
