"""The stored chain form, older spellings read compatibly, fingerprints of v2 steps, tolerate (no browser)."""

from __future__ import annotations

import pytest

from ocnb.errors import InvalidArgument
from ocnb.perception.selectors import step_fingerprint, stored_chain, tolerated_fields
from ocnb.skills.schema import SELECTOR_TYPES


def test_every_spelling_becomes_the_stored_form() -> None:
    page_form = [
        {"kind": "role_name", "role": "button", "name": "Send it"},
        {"kind": "accessible_name", "name": "Send it"},
        {"kind": "css", "selector": "#send"},
        {"kind": "xpath", "selector": "//*[@id='f']/button"},
        {"kind": "text", "text": "Send it"},
        {"type": "node_ref", "value": "ax_3"},
        {"strategy": "label", "value": "Email"},
        {"kind": "psychic", "value": "?"},  # unknown: dropped, never guessed at
        "not an entry",
    ]
    assert stored_chain(page_form) == [
        {"type": "role_name", "role": "button", "name": "Send it"},
        {"type": "accessible_name", "value": "Send it"},
        {"type": "css", "value": "#send"},
        {"type": "xpath", "value": "//*[@id='f']/button"},
        {"type": "text", "value": "Send it"},
        {"type": "node_ref", "value": "ax_3"},
        {"type": "accessible_name", "value": "Email"},
    ]
    stored = stored_chain(page_form)
    assert stored_chain(stored) == stored  # the stored form is a fixed point
    assert {e["type"] for e in stored} <= set(SELECTOR_TYPES)  # what the artifact schema accepts


def test_a_v2_step_without_fingerprint_is_checked_on_its_recorded_role_and_name() -> None:
    step = {
        "kind": "fill",
        "selectors": [{"type": "css", "value": "#e"}],
        "target": {"role": "textbox", "name": "Email"},
    }
    assert step_fingerprint(step) == {"role": "textbox", "name": "Email", "frame": {"ordinal": 0}}
    by_chain = {
        "kind": "click",
        "frame_ordinal": 2,
        "selectors": [{"type": "role_name", "role": "button", "name": "Go"}],
    }
    assert step_fingerprint(by_chain) == {"role": "button", "name": "Go", "frame": {"ordinal": 2}}
    fp = {"role": "textbox", "name": "Email", "type": "email", "frame": {"ordinal": 0}}
    assert step_fingerprint({**step, "fingerprint": fp}) == fp
    assert step_fingerprint({"kind": "click", "selectors": [{"type": "css", "value": "#x"}]}) == {}


def test_tolerate_relaxes_names_never_role_or_type() -> None:
    assert tolerated_fields(["name"]) == ["label", "name"]
    assert tolerated_fields(None) == []
    for bad in (["role"], ["type"], ["name", "anything"]):
        with pytest.raises(InvalidArgument):
            tolerated_fields(bad)
