"""HumanHandoff: a NEEDS_HUMAN payload shown with its screenshot and candidates; a person picks; it resumes."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.results import ToolResult
from ocnb.widgets import HumanHandoff, ScriptedCaller

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def needs_human(tmp_path: Path, **extra: Any) -> ToolResult:
    shot = tmp_path / "handoff.png"
    shot.write_bytes(PNG)
    payload = {
        "tool": "interact",
        "target": {"query": "Pay"},
        "args": {"query": "Pay", "action": "click"},
        "candidates": [
            {"ref": "ax_3", "role": "button", "name": "Pay", "why": "row INV-1"},
            {"ref": "ax_9", "role": "button", "name": "Pay", "why": "row INV-2"},
        ],
        "screenshot": str(shot),
        "intent": "pay invoice INV-2",
        **extra,
    }
    return ToolResult.failure("interact", "NEEDS_HUMAN", "2 elements match 'Pay'", payload)


def test_shows_the_payload_and_resumes_on_the_chosen_element(tmp_path: Path) -> None:
    caller = ScriptedCaller({"interact": {"acted_on": {"ref": "ax_9"}}})
    hand = HumanHandoff(needs_hand := needs_human(tmp_path), caller=caller)
    assert needs_hand.error is not None
    assert "pay invoice INV-2" in hand.header.value and "query=Pay" in hand.header.value
    assert hand.image.value == PNG
    assert [ref for _, ref in hand.picker.options] == ["ax_3", "ax_9"]
    assert "row INV-2" in hand.picker.options[1][0]
    hand.pick("ax_9")
    hand.resume_button.click()
    assert [(c.tool, c.args, c.quiet) for c in caller.calls] == [
        ("interact", {"action": "click", "ref": "ax_9", "intent": "pay invoice INV-2"}, False)
    ]
    assert hand.result is not None and hand.result.ok
    assert hand.resume_button.disabled and "ax_9" in hand.outcome.value


def test_a_resume_seam_gets_the_payload_and_the_ref(tmp_path: Path) -> None:
    seen: list[tuple[dict[str, Any], str]] = []

    def resume(payload: dict[str, Any], ref: str) -> ToolResult:
        seen.append((payload, ref))
        return ToolResult.failure("interact", "STALE_REF", "the element is gone")

    hand = HumanHandoff(needs_human(tmp_path), resume=resume)
    result = hand.resume()
    assert seen[0][1] == "ax_3" and seen[0][0]["intent"] == "pay invoice INV-2"
    assert not result.ok and "STALE_REF" in hand.outcome.value and not hand.resume_button.disabled


def test_cancel_runs_nothing_and_other_results_are_refused(tmp_path: Path) -> None:
    caller = ScriptedCaller({"interact": {}})
    hand = HumanHandoff(needs_human(tmp_path), caller=caller)
    hand.cancel_button.click()
    assert caller.calls == [] and hand.resume_button.disabled and "cancelled" in hand.outcome.value
    with pytest.raises(ValueError, match="NEEDS_HUMAN"):
        HumanHandoff(ToolResult.failure("interact", "ELEMENT_NOT_FOUND", "none"), caller=caller)
    empty = HumanHandoff(needs_human(tmp_path, candidates=[], screenshot=None), caller=caller)
    assert empty.resume_button.disabled and empty.image.layout.display == "none"


@pytest.mark.browser
def test_ambiguous_click_hands_off_and_resumes_in_the_page(journaled: ocnb.Session, site: Any) -> None:
    session = journaled
    if "interact" not in session.registry:
        pytest.skip("needs the interact tool")
    session.configure(handoff=True)
    try:
        session.navigate(url=site.page("ambiguous.html"))
        result = session.call("interact", query="Delete", action="click", intent="delete invoice 1002")
        if result.ok or result.error is None or result.error.code != "NEEDS_HUMAN":
            pytest.skip(f"hand-off not available yet ({result.summary_line()})")
        log = "document.getElementById('log').innerText"
        assert session.call("javascript_tool", expression=log).data["result"] == ""  # nothing clicked yet
        hand = HumanHandoff(result, session)
        assert len(hand.picker.options) == 2
        hand.pick(hand.picker.options[1][1])  # the second "Delete": invoice 1002
        resumed = hand.resume()
        assert resumed.ok, resumed
        assert session.call("javascript_tool", expression=log).data["result"] == "Deleted Invoice 1002"
        entry = [e for e in session.journal.entries if e["tool"] == "interact"][-1]
        assert (entry["source"], entry["args"]["ref"]) == ("widget", hand.picker.value)
        assert entry.get("intent") == "delete invoice 1002"
    finally:
        session.configure(handoff=False)
