"""The scroll tool: real mouse-wheel events over an element or the page (issue 31, sign-agreement).

tests/fixtures/sites/perception/scroll.html: a disabled terms box that unlocks the Agree button only
when read to its end by the wheel (a script setting scrollTop does not count), a note that fits (does
not scroll), and a long page. What the page saw is read from the page (its wheel count, scrollTop,
scrollY), not from what the tool reports.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import ocnb
import ocnb.tools.dom  # noqa: F401 - registers the tools
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


@pytest.fixture
def s(session: ocnb.Session, perception_site: DemoSite) -> ocnb.Session:
    assert session.call("navigate", url=perception_site.page("scroll.html")).ok
    return session


def js(s: ocnb.Session, expr: str) -> Any:
    r = s.call("javascript_tool", expression=f"() => {expr}")
    assert r.ok, r.error
    return r.data.get("result")


def ref_of(s: ocnb.Session, role: str, name: str) -> str:
    content = s.call("read_page").data["content"]
    m = re.search(rf'{role} "{name}" \[(ax_\d+)\]', content)
    assert m, content
    return m.group(1)


def test_scrolling_the_terms_to_the_bottom_unlocks_them_by_the_wheel_and_is_journaled(s: ocnb.Session) -> None:
    terms = ref_of(s, "textbox", "Terms")
    r = s.call("scroll", ref=terms, to="bottom", intent="read the terms")
    assert r.ok, r.error
    top, max_ = (
        js(s, "document.getElementById('terms').scrollTop"),
        js(s, "document.getElementById('terms').scrollHeight - document.getElementById('terms').clientHeight"),
    )
    assert max_ > 200 and top >= max_ - 1
    assert r.data["at_end"] is True and r.data["scroll_top"] == round(top) and r.data["scroll_max"] == max_
    assert r.data["element"]["ref"] == terms
    assert js(s, "window.wheels") >= 1
    assert js(s, "document.getElementById('log').textContent").startswith("unlocked after")
    assert js(s, "document.getElementById('agree').disabled") is False
    assert js(s, "window.scrollY") == 0  # the page itself did not move
    journal = s.journal_df()
    last = journal[journal["tool"] == "scroll"].iloc[-1]
    assert last["ok"] and last["intent"] == "read the terms" and f"element={terms}" in last["summary"]
    back = s.call("scroll", ref=terms, to="top")
    assert back.ok and back.data["scroll_top"] == 0 and back.data["at_end"] is True
    assert js(s, "document.getElementById('terms').scrollTop") == 0


def test_the_page_scrolls_by_pixels_and_to_the_top(s: ocnb.Session) -> None:
    r = s.call("scroll", dy=600)
    assert r.ok, r.error
    assert js(s, "window.scrollY") == 600 == r.data["scroll_top"] and r.data["moved"] == 600
    assert r.data["element"] is None and r.data["at_end"] is False
    r = s.call("scroll", to="bottom")
    assert r.ok and r.data["at_end"] is True
    assert js(s, "window.scrollY + innerHeight >= document.scrollingElement.scrollHeight - 1") is True
    assert s.call("scroll", to="top").ok
    assert js(s, "window.scrollY") == 0
    assert js(s, "window.wheels") == 0  # the page's wheel went to the page, not the terms box


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"ref": "ax_99999", "to": "bottom"}, "UNKNOWN_REF"),
        ({"query": "Note", "to": "bottom"}, "INVALID_ARGUMENT"),  # it fits: nothing to scroll
        ({"query": "Terms"}, "INVALID_ARGUMENT"),  # neither to nor dy
        ({"query": "Terms", "to": "bottom", "dy": 100}, "INVALID_ARGUMENT"),
        ({"query": "Terms", "dy": 0}, "INVALID_ARGUMENT"),
    ],
)
def test_a_bad_target_or_goal_is_a_clear_error_and_scrolls_nothing(
    s: ocnb.Session, args: dict[str, Any], code: str
) -> None:
    r = s.call("scroll", **args)
    assert not r.ok and r.error.code == code, (r.error, args)
    assert js(s, "[window.wheels, document.getElementById('terms').scrollTop, window.scrollY]") == [0, 0, 0]
    assert js(s, "document.getElementById('agree').disabled") is True
