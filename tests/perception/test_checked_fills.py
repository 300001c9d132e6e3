"""Fills that are checked (issue 31 §4): the field is read back after fill, type, select, check,
form_input and fill_form; a value it did not take is INVALID_VALUE naming the format it expects and
what it holds, a person's unambiguous value is converted and said so. Plus UNKNOWN_REF (§5).

Fixture: tests/fixtures/sites/perception/fields.html (an en-US page with one field of each kind whose
fill can silently fail). What a field holds is read from the page's own FormData, not from ocnb.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import ocnb
import ocnb.tools.forms  # noqa: F401 - registers the tools
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite
from ocnb.perception.fills import to_format

pytestmark = pytest.mark.browser


@pytest.fixture
def s(session: ocnb.Session, perception_site: DemoSite) -> ocnb.Session:
    assert session.call("navigate", url=perception_site.page("fields.html")).ok
    return session


def form(s: ocnb.Session) -> dict[str, str]:
    """What the page's form would submit (its own FormData)."""
    r = s.call("javascript_tool", expression="() => Object.fromEntries(new FormData(document.getElementById('f')))")
    assert r.ok, r.error
    data = r.data.get("result", r.data)
    return {str(k): str(v) for k, v in data.items()}


def refused(r: Any, expected: str | None = None) -> dict[str, Any]:
    assert not r.ok and r.error.code == "INVALID_VALUE", r
    if expected:
        assert r.error.details["expected"] == expected and expected in r.error.message
    return r.error.details


@pytest.mark.parametrize(
    ("label", "asked", "stored"),
    [
        ("Departure", "10/11/2011", "2011-10-11"),  # en-US: month first
        ("Departure", "Nov 10, 2011", "2011-11-10"),
        ("Alarm", "8:04 PM", "20:04"),
        ("Meeting", "10/11/2011 8:04 PM", "2011-10-11T20:04"),
        ("Billing month", "October 2011", "2011-10"),
    ],
)
def test_a_persons_date_or_time_is_converted_and_said(s: ocnb.Session, label: str, asked: str, stored: str) -> None:
    r = s.call("form_input", query=label, value=asked)
    assert r.ok, r.error
    assert r.data["converted"] == {"from": asked, "to": stored}
    name = {"Departure": "date", "Alarm": "time", "Meeting": "dtl", "Billing month": "month"}[label]
    assert form(s)[name] == stored


@pytest.mark.parametrize(
    ("label", "asked", "expected"),
    [
        ("Departure", "next tuesday", "YYYY-MM-DD"),
        ("Departure", "2011-13-40", "YYYY-MM-DD"),
        ("Alarm", "25:99", "HH:MM (24-hour, seconds optional)"),
        ("Sprint week", "week 41", "YYYY-Www"),
    ],
)
def test_a_value_a_typed_field_cannot_take_is_refused_and_sets_nothing(
    s: ocnb.Session, label: str, asked: str, expected: str
) -> None:
    before = form(s)
    details = refused(s.call("interact", query=label, action="fill", value=asked), expected)
    assert details["asked"] == asked and details["holds"] == ""
    assert form(s) == before


def test_a_number_outside_min_max_is_invalid_value_not_ok(s: ocnb.Session) -> None:
    details = refused(s.call("interact", query="Guests", action="fill", value="12"))
    assert details["max"] == "8" and details["holds"] == "12"
    refused(s.call("interact", query="Guests", action="fill", value="many"))
    assert s.call("interact", query="Guests", action="fill", value="3").ok
    assert form(s)["guests"] == "3"


def test_a_range_that_snaps_to_its_step_is_invalid_value(s: ocnb.Session) -> None:
    details = refused(s.call("interact", query="Volume", action="fill", value="55"))
    assert details["holds"] == "60" and details["step"] == "10"
    assert s.call("interact", query="Volume", action="fill", value="70").ok


def test_maxlength_truncation_is_invalid_value_saying_how_much_was_cut(s: ocnb.Session) -> None:
    r = s.call("interact", query="Zip", action="fill", value="1234567")
    details = refused(r)
    assert details["maxlength"] == "5" and details["kept"] == 5 and "last 2 of the 7" in r.error.message
    assert "holds" not in details  # a prefix of what was asked (perhaps a secret) is said as a length
    assert form(s)["zip"] == ""  # put back as it was (issue 44 §4; it held the cut "12345" before)


def test_a_select_without_the_option_is_refused_at_once(s: ocnb.Session) -> None:
    details = refused(s.call("interact", query="Size", action="select", value="Large"))
    assert details["options"] == ["Choose", "Small", "Medium"]
    assert form(s)["size"] == ""
    assert s.call("form_input", query="Size", value="Medium").ok  # by label
    assert form(s)["size"] == "m"
    assert s.call("interact", query="Size", action="select", value="s").ok  # by value
    assert form(s)["size"] == "s"


def test_a_checkbox_the_page_unticks_is_invalid_value(s: ocnb.Session) -> None:
    refused(s.call("interact", query="Stubborn box", action="check"))
    assert "stubborn" not in form(s)
    assert s.call("form_input", query="Newsletter", value=True).ok
    assert form(s)["news"] == "on"


def test_a_read_only_field_is_refused_at_once(s: ocnb.Session) -> None:
    started = time.monotonic()
    r = s.call("interact", query="Nickname", action="fill", value="bob")
    assert refused(r)["state"] == "read-only"
    assert time.monotonic() - started < 5  # at once, not after Playwright's wait for an editable field
    assert form(s)["nick"] == "ada"


def test_a_page_formatter_and_contenteditable_still_count_as_taken(s: ocnb.Session) -> None:
    assert s.call("interact", query="Shouting", action="fill", value="hello").ok
    assert form(s)["upper"] == "HELLO"
    assert s.call("interact", query="Bio", action="fill", value="I write code").ok
    text = s.call("javascript_tool", expression="() => document.getElementById('bio').innerText").data
    assert "I write code" in str(text)


def test_fill_form_checks_every_value_before_filling_any(s: ocnb.Session) -> None:
    r = s.call("fill_form", fields={"Departure": "10/11/2011", "Alarm": "25:99"})
    assert refused(r)["field"] == "Alarm"
    assert form(s)["date"] == ""  # nothing was set
    ok = s.call("fill_form", fields={"Departure": "10/11/2011", "Alarm": "8:04 pm"})
    assert ok.ok, ok.error
    assert [f.get("converted", {}).get("to") for f in ok.data["fields"]] == ["2011-10-11", "20:04"]
    assert (form(s)["date"], form(s)["time"]) == ("2011-10-11", "20:04")


def test_a_ref_never_issued_is_unknown_ref_and_a_removed_one_stale(s: ocnb.Session) -> None:
    r = s.call("interact", ref="ax_9999", action="click")
    assert not r.ok and r.error.code == "UNKNOWN_REF"
    assert s.call("read_page", ref_id="ax_9999").error.code == "UNKNOWN_REF"
    zip_ref = s.call("find", query="Zip").data["candidates"][0]["ref"]
    assert s.call("javascript_tool", expression="() => document.getElementById('zip').remove()").ok
    gone = s.call("interact", ref=zip_ref, action="fill", value="1")
    assert not gone.ok and gone.error.code == "STALE_REF"


def test_to_format_reads_day_first_outside_en_us() -> None:
    assert to_format("date", "10/11/2011", "en-GB") == "2011-11-10"
    assert to_format("date", "10.11.2011", "en-US") == "2011-11-10"
    assert to_format("date", "25/12/2011", "en-US") == "2011-12-25"  # only one reading
    assert to_format("time", "12:30 am") == "00:30"
    assert to_format("date", "soon") is None
