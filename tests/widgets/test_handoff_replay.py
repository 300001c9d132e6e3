"""HumanHandoff settles a replay refusal: a person presses a candidate, the step runs on it through
dispatch (journaled), the step is re-recorded from that element and the replay goes on.

Real Chromium against tests/fixtures/sites/drift/signup.html: the sign-up flow is recorded on the
page as it was, then replayed on drifted variants that ``oc_skill_replay`` refuses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite, serve
from ocnb.results import ToolResult
from ocnb.skills.capture import capture_buffer
from ocnb.skills.store import SkillStore
from ocnb.widgets import HumanHandoff
from tests.skills.helpers import DRIFT, page_states, record_flow

pytestmark = pytest.mark.browser

PARAMS = {"first": "Ada", "email": "ada@example.com"}


@pytest.fixture(scope="module")
def drift() -> Iterator[DemoSite]:
    with serve(root=DRIFT) as s:
        yield s


def _refused(session: ocnb.Session, url: str, skill_id: str, **extra: Any) -> tuple[ToolResult, dict[str, Any]]:
    assert session.navigate(url=url).ok
    args: dict[str, Any] = {"params": PARAMS, "step_range": {"from": 1, "to": 5}, "step_timeout_ms": 1000, **extra}
    r = session.oc_skill_replay(skill_id=skill_id, **args)
    assert not r.ok and r.error is not None and r.error.code == "ARTIFACT_RESOLUTION_FAILED", r
    return r, args


def _email_step(session: ocnb.Session, skill_id: str) -> dict[str, Any]:
    low: dict[str, Any] = SkillStore(session.home).get(skill_id)["steps"][3]["replay_artifact"]["steps"][0]
    return low


def test_a_person_confirms_the_renamed_field_and_the_replay_goes_on(journaled: ocnb.Session, drift: DemoSite) -> None:
    s = journaled
    sid = record_flow(s, drift.page("signup.html"), "handoff-renamed")
    before = _email_step(s, sid)
    url = drift.page("signup.html") + "?v=label-renamed"
    refused, args = _refused(s, url, sid)
    ref = refused.data["failure"]["refused"]["ref"]

    hand = HumanHandoff(refused, s, replay_args=args)
    assert "refused step <b>3</b>" in hand.header.value and sid in hand.header.value
    assert "ocnb-replay-differs" in hand.header.value and "Email address" in hand.header.value
    assert bytes(hand.image.value).startswith(b"\x89PNG")  # the evidence bundle's screenshot
    button = hand.candidate_buttons[ref]
    assert "Email address" in button.description and "refused: name, label" in button.description
    assert page_states(s)["signup.html"]["values"]["email"] == ""  # nothing done to it yet
    n = len(s.journal.entries)

    button.click()  # what the front end's click message does

    done = hand.confirmed
    assert done is not None and done.ok, done
    state = page_states(s)["signup.html"]
    assert state["values"]["email"] == "ada@example.com" and state["values"]["terms"] is True
    assert state["log"] == ["cookies", "submit"], state  # steps 4–5 ran after the confirmed step 3
    entries = s.journal.entries[n:]
    assert [(e["tool"], e["source"]) for e in entries] == [
        ("interact", "widget"),
        ("oc_skill_record", "widget"),
        ("oc_skill_replay", "widget"),
    ], entries
    assert entries[0]["args"]["ref"] == ref and entries[0].get("intent", "").startswith("confirm step 3")
    assert entries[2]["args"]["step_range"] == {"from": 4, "to": 5}
    assert done.continued is not None and done.continued.data["steps_executed"] == 2
    assert all(b.disabled for b in hand.candidate_buttons.values()) and "replay: ok" in hand.outcome.value

    after = _email_step(s, sid)
    assert after["fingerprint"]["name"] == "Email address" and after["fingerprint"]["label"] == "Email address"
    assert after["args"] == before["args"] == {"action": "fill", "value": "${email}"}  # placeholders kept
    assert after["selectors"][0] == {"type": "role_name", "role": "textbox", "name": "Email address"}
    assert not capture_buffer(s._state.tabs[s._state.active_id])  # the confirming capture did not stay in the buffer

    # The re-recorded skill replays the renamed page without tolerate.
    assert s.navigate(url=url).ok
    again = s.oc_skill_replay(skill_id=sid, **args)
    assert again.ok and again.data["steps_executed"] == 5, again


def test_confirm_without_rerecording_or_continuing(journaled: ocnb.Session, drift: DemoSite) -> None:
    s = journaled
    sid = record_flow(s, drift.page("signup.html"), "handoff-phone")
    before = SkillStore(s.home).get(sid)
    refused, args = _refused(s, drift.page("signup.html") + "?v=phone", sid)
    failure = refused.data["failure"]
    hand = HumanHandoff(refused.data, s, replay_args=args)  # the data alone works too
    assert set(hand.candidate_buttons) >= {failure["refused"]["ref"]}
    hand.rerecord.value = False
    hand.continue_replay.value = False
    n = len(s.journal.entries)
    done = hand.confirm(failure["refused"]["ref"])
    assert done.ok and done.recorded is None and done.continued is None
    assert [e["tool"] for e in s.journal.entries[n:]] == ["interact"]
    state = page_states(s)["signup.html"]
    assert state["log"] == ["cookies"]  # nothing after the confirmed step
    assert "ada@example.com" in state["values"].values()  # the person's choice got the value
    stored = SkillStore(s.home).get(sid)
    assert stored["steps"] == before["steps"]


def test_cancel_does_nothing_and_unknown_refs_are_refused(journaled: ocnb.Session, drift: DemoSite) -> None:
    s = journaled
    sid = record_flow(s, drift.page("signup.html"), "handoff-cancel")
    refused, args = _refused(s, drift.page("signup.html") + "?v=delete", sid, allow_risky=True)
    hand = HumanHandoff(refused, s, replay_args=args)
    assert refused.data["failure"]["step_index"] == 5
    with pytest.raises(ValueError, match="not one of the candidates"):
        hand.confirm("ax_999")
    n = len(s.journal.entries)
    hand.cancel_button.click()
    assert len(s.journal.entries) == n and "cancelled" in hand.outcome.value
    assert all(b.disabled for b in hand.candidate_buttons.values())
    assert page_states(s)["signup.html"]["log"] == ["cookies"]  # the Delete account button never pressed
    with pytest.raises(TypeError, match="session"):
        HumanHandoff(refused, replay_args=args, resume=lambda p, r: refused)
