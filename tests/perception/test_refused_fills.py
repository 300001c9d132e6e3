"""A refused value leaves the field as it was (issue 44 §4): every fill answered INVALID_VALUE after the
value was set puts the field back, with the input and change events a person's undo fires, so that
submitting the form sends what it held before. What counts is what the server received.

Fixture: tests/fixtures/sites/perception/refusals.html, a form posting to the demo site's /echo, which
answers with the fields it parsed from the request body.
"""

from __future__ import annotations

from typing import Any

import pytest

import ocnb
import ocnb.tools.forms  # noqa: F401 - registers the tools
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser

BEFORE = {
    "name": "Ann",
    "postcode": "10115",
    "age": "30",
    "pack": "10",
    "birthday": "1990-05-17",
    "arrival": "2024-06-01",
    "plan": "basic",
    "code": "abc",
}


@pytest.fixture
def s(session: ocnb.Session, perception_site: DemoSite) -> ocnb.Session:
    assert session.call("navigate", url=perception_site.page("refusals.html")).ok
    return session


def js(s: ocnb.Session, expression: str) -> Any:
    r = s.call("javascript_tool", expression=expression)
    assert r.ok, r.error
    return r.data.get("result", r.data) if isinstance(r.data, dict) else r.data


def submitted(s: ocnb.Session) -> dict[str, str]:
    """Submit the form and read what the server received (its /echo page lists the parsed body)."""
    assert s.call("interact", query="Send", action="click").ok
    assert s.call("wait_for", text="Received").ok
    rows = js(
        s,
        "() => Array.from(document.querySelectorAll('#fields li')).map(li => "
        "[li.querySelector('.name').textContent, li.querySelector('.value').textContent])",
    )
    return dict(rows)


def refused(r: Any) -> str:
    assert not r.ok and r.error.code == "INVALID_VALUE", r
    return str(r.error.message)


@pytest.mark.parametrize(
    ("how", "label", "value", "field", "said"),
    [
        ("interact", "Name", "Alexandra", "name", "maxlength"),  # cut by maxlength
        ("form_input", "Postcode", "ABC12", "postcode", "pattern"),  # refused by its pattern
        ("interact", "Age", "200", "age", "above max"),  # number over max
        ("form_input", "Pack", "7", "pack", "off step"),  # number off its step
        ("interact", "Arrival", "2025-03-01", "arrival", "after max"),  # date after max
        ("form_input", "Plan", "Legacy", "plan", "did not keep"),  # the page threw the option back
        ("interact", "Code", "a1b2", "code", "not what was asked"),  # a script changed what was typed
    ],
)
def test_a_refused_value_is_not_submitted(
    s: ocnb.Session, how: str, label: str, value: str, field: str, said: str
) -> None:
    args = {"action": "select" if field == "plan" else "fill"} if how == "interact" else {}
    message = refused(s.call(how, query=label, value=value, **args))
    assert said in message
    heard = js(s, "() => window.heard")
    if field != "plan":  # the undo is heard last, with the value the field held before
        assert heard[-2:] == [f"input:{field}={BEFORE[field]}", f"change:{field}={BEFORE[field]}"], heard
    assert submitted(s) == BEFORE


def test_a_date_that_does_not_exist_is_refused_before_anything_is_set(s: ocnb.Session) -> None:
    message = refused(s.call("form_input", query="Birthday", value="31/02/2024"))
    assert "'31/02/2024' is a date that does not exist: February 2024 has 29 days" in message
    assert "holds ''" not in message
    assert js(s, "() => window.heard") == []  # nothing was typed, nothing to undo
    refused(s.call("interact", query="Birthday", action="fill", value="2023-02-29"))
    assert submitted(s) == BEFORE


def test_a_refused_contenteditable_gets_its_markup_back(s: ocnb.Session) -> None:
    refused(s.call("interact", query="Note", action="fill", value="a note far longer than twelve"))
    assert js(s, "() => document.getElementById('note').innerHTML") == "<b>keep</b> me"


def test_fill_form_puts_back_the_fields_it_set_before_the_refused_one(s: ocnb.Session) -> None:
    r = s.call("fill_form", fields={"Name": "Bo", "Postcode": "20095", "Age": "200"})
    message = refused(r)
    assert message.startswith("field 'Age':")
    assert r.error.details["filled_before"] == ["Name", "Postcode"] and r.error.details["put_back"] is True
    assert submitted(s) == BEFORE


def test_an_accepted_value_is_submitted(s: ocnb.Session) -> None:
    assert s.call("fill_form", fields={"Name": "Bo", "Age": "42", "Plan": "Pro", "Arrival": "2024-07-14"}).ok
    assert submitted(s) == {**BEFORE, "name": "Bo", "age": "42", "plan": "pro", "arrival": "2024-07-14"}
