"""dialog_policy="manual": a dialog waits, results show it, dialog_answer answers it (issue 23: 5), in real Chromium."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.browser.dialogs import pending_on
from ocnb.registry import build_registry


@pytest.fixture(scope="module")
def manual(module_home: Path) -> Iterator[ocnb.Session]:
    s = ocnb.Session(headless=True, home=module_home, caps=["dialogs", "vision"], dialog_policy="manual")
    s.start()
    yield s
    s.close()


@pytest.fixture
def dialogs(manual: ocnb.Session, site: Any) -> ocnb.Session:
    for t in manual.browser_state().tabs.values():  # a test that failed half-way leaves none behind
        if pending_on(t) is not None:
            manual.call("dialog_answer", tab_id=t.id, accept=False)
    assert manual.call("navigate", url=site.page("dialogs.html")).ok
    return manual


def result_text(s: ocnb.Session) -> str:
    r = s.call("javascript_tool", expression="document.getElementById('dialog-result').textContent")
    assert r.ok, r.error
    return str(r.data["result"])


@pytest.mark.browser
def test_a_prompt_waits_is_reported_and_is_answered_with_text(dialogs: ocnb.Session) -> None:
    started = time.monotonic()
    r = dialogs.call("interact", query="Show prompt")
    assert time.monotonic() - started < 5  # the click returns at once, not when the call times out
    pending = {"tab_id": "t1", "type": "prompt", "message": "What is your name?", "default": "Ada"}
    assert r.ok and r.data["completed"] is False and r.data["pending_dialog"] == pending
    assert r.data["element"]["name"] == "Show prompt"  # what was clicked, though the click has not returned
    # the page is frozen: a call that needs it is refused at once, and nothing happens
    started = time.monotonic()
    refused = dialogs.call("read_page")
    assert not refused.ok and refused.error.code == "DIALOG_OPEN" and time.monotonic() - started < 5
    assert refused.error.details["pending_dialog"] == pending
    # a call that does not need the page runs, and its result shows the pending dialog
    tabs = dialogs.call("tabs_context")
    assert tabs.ok and tabs.data["pending_dialog"] == pending
    answered = dialogs.call("dialog_answer", text="Grace")
    assert answered.ok, answered.error
    assert answered.data["action"] == "accepted" and answered.data["type"] == "prompt"
    (resumed,) = answered.data["resumed"]
    assert resumed["tool"] == "interact" and resumed["done"] and resumed["ok"]
    assert resumed["data"]["element"]["name"] == "Show prompt"
    assert result_text(dialogs) == "prompt: Grace"
    assert "pending_dialog" not in dialogs.call("tabs_context").data
    journal = dialogs.journal_df()
    assert list(journal["tool"].tail(6)) == [
        "interact",
        "read_page",
        "tabs_context",
        "dialog_answer",
        "javascript_tool",
        "tabs_context",
    ]
    assert journal["error_code"].iloc[-5] == "DIALOG_OPEN"


@pytest.mark.browser
def test_a_confirm_is_dismissed(dialogs: ocnb.Session) -> None:
    r = dialogs.call("interact", query="Show confirm")
    assert r.ok and r.data["pending_dialog"]["type"] == "confirm"
    answered = dialogs.call("dialog_answer", accept=False)
    assert answered.ok and answered.data["action"] == "dismissed"
    assert result_text(dialogs) == "confirm: false"


@pytest.mark.browser
def test_bad_answers_change_nothing(dialogs: ocnb.Session) -> None:
    none = dialogs.call("dialog_answer")
    assert not none.ok and none.error.code == "INVALID_ARGUMENT" and "no dialog" in none.error.message
    assert dialogs.call("interact", query="Show alert").data["pending_dialog"]["type"] == "alert"
    wrong = dialogs.call("dialog_answer", text="nope")  # text is for prompts
    assert not wrong.ok and wrong.error.code == "INVALID_ARGUMENT"
    assert pending_on(dialogs.browser_state().tabs["t1"]) is not None  # still waiting
    assert dialogs.call("dialog_answer").ok
    assert result_text(dialogs) == "alert: closed"


@pytest.mark.browser
def test_javascript_that_opens_a_dialog_returns_too(dialogs: ocnb.Session) -> None:
    r = dialogs.call("javascript_tool", expression="prompt('Code?', '42')")
    assert r.ok and r.data["completed"] is False and r.data["pending_dialog"]["message"] == "Code?"
    answered = dialogs.call("dialog_answer", text="7")
    assert answered.data["resumed"][0]["data"] == {"result": "7"}


@pytest.mark.browser
def test_a_coordinate_click_that_opens_a_dialog_still_names_its_element(dialogs: ocnb.Session) -> None:
    r = dialogs.call(
        "javascript_tool",
        expression="(r => [r.left + 5, r.top + 5])(document.getElementById('show-prompt').getBoundingClientRect())",
    )
    x, y = r.data["result"]
    at = dialogs.call("interact_at", x=x, y=y)
    assert at.ok and at.data["completed"] is False and at.data["pending_dialog"]["type"] == "prompt"
    assert (at.data["role"], at.data["name"]) == ("button", "Show prompt") and at.data["ref"].startswith("ax_")
    assert f"ref={at.data['ref']} role=button name=Show prompt" in dialogs.journal_df().iloc[-1]["summary"]
    answered = dialogs.call("dialog_answer", accept=False)
    assert answered.data["resumed"][0]["tool"] == "interact_at" and answered.data["resumed"][0]["ok"]
    assert result_text(dialogs) == "prompt: null"


def test_the_dialog_tool_is_opt_in() -> None:
    assert "dialog_answer" not in build_registry().names()
    assert "dialog_answer" in build_registry(caps=["dialogs"]).names()
