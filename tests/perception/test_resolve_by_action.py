"""Resolution by what the action can act on (issue 32 §3): fill, type, select and check consider only
the elements that can take them; click keeps every candidate; an ambiguity that remains lists each
candidate with the row, card or form it sits in — in the message and in ``details``.

Fixture: tests/fixtures/sites/perception/shared-name.html. What happened is read from the page.
"""

from __future__ import annotations

import pytest

import ocnb
import ocnb.tools.forms  # noqa: F401 - registers the tools
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


@pytest.fixture
def s(session: ocnb.Session, perception_site: DemoSite) -> ocnb.Session:
    assert session.call("navigate", url=perception_site.page("shared-name.html")).ok
    return session


def page(s: ocnb.Session, expression: str) -> str:
    r = s.call("javascript_tool", expression=expression)
    assert r.ok, r.error
    return str(r.data.get("result", r.data))


def test_fill_fills_the_field_that_shares_its_name_with_a_button(s: ocnb.Session) -> None:
    r = s.call("interact", query="Search", action="fill", value="apple")
    assert r.ok, r.error
    assert r.data["element"]["role"] == "searchbox"
    assert page(s, "() => document.getElementById('q').value") == "apple"
    assert page(s, "() => document.getElementById('log').textContent") == ""  # the button was not pressed
    assert s.call("form_input", query="Search", value="pear").ok
    assert page(s, "() => document.getElementById('q').value") == "pear"


def test_check_ticks_the_box_not_the_button_of_the_same_name(s: ocnb.Session) -> None:
    r = s.call("interact", query="Weekly", action="check")
    assert r.ok, r.error
    assert page(s, "() => String(document.querySelector('[name=weekly]').checked)") == "true"
    assert page(s, "() => document.getElementById('log').textContent") == ""


def test_click_still_sees_both_and_lists_them_with_their_context(s: ocnb.Session) -> None:
    r = s.call("interact", query="Weekly", action="click")
    assert not r.ok and r.error.code == "AMBIGUOUS_TARGET"
    assert {c["role"] for c in r.error.details["candidates"]} == {"checkbox", "button"}
    assert page(s, "() => document.getElementById('log').textContent") == ""


def test_twins_are_told_apart_by_their_row(s: ocnb.Session) -> None:
    r = s.call("interact", query="Delete", action="click")
    assert not r.ok and r.error.code == "AMBIGUOUS_TARGET"
    cands = r.error.details["candidates"]
    assert [c["context"] for c in cands] == ['row "Invoice 1001 — Acme Corp"', 'row "Invoice 1002 — Globex"']
    for c in cands:
        assert c["ref"] in r.error.message and c["context"] in r.error.message
    assert page(s, "() => document.getElementById('log').textContent") == ""
    assert s.call("interact", ref=cands[1]["ref"], action="click").ok
    assert page(s, "() => document.getElementById('log').textContent") == "deleted 1002"


def test_a_fill_with_no_fillable_match_says_so(s: ocnb.Session) -> None:
    r = s.call("interact", query="Delete", action="fill", value="x")
    assert not r.ok and r.error.code == "ELEMENT_NOT_FOUND"
    assert "fill" in r.error.message
