"""Names for icon-only controls (issue 31 §3) and what a field is and holds (§2).

Icons: tests/fixtures/sites/perception/icons.html — one button per source of a name: aria-label,
title, an SVG's <title>, an image's alt, visually hidden text (the page's own words, shown as they
are), and inferred from how the icon is drawn (an icon-font class, a glyphicon, a sprite reference, a
prefixed class on a span, a lone action word as a class), marked ``inferred``. Each name resolves:
``interact(query=name)`` clicks that button (the page's log says which).
Fields: tests/fixtures/sites/perception/fields.html.
"""

from __future__ import annotations

import re

import pytest

import ocnb
import ocnb.tools.dom  # noqa: F401 - registers the tools
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


#: (element id, the name read_page gives it, whether the name is inferred)
ICONS = [
    ("b-aria", "Reply", False),
    ("b-title", "Bookmark", False),
    ("b-svgtitle", "Pin", False),
    ("b-alt", "Share", False),
    ("b-hidden", "More options", False),
    ("b-fa", "trash", True),
    ("b-glyph", "star", True),
    ("b-sprite", "like", True),
    ("s-icon", "edit", True),
    ("s-word", "retweet", True),
]


def assert_named_and_acts(session: ocnb.Session, el_id: str, name: str, inferred: bool) -> None:
    """The control's outline line has ``name`` (marked inferred or not), and a click by that name reaches it."""
    content = session.call("read_page").data["content"]
    line = next((ln for ln in content.splitlines() if f'"{name}" [ax_' in ln), None)
    assert line is not None, content
    assert line.endswith(" inferred") is inferred, line
    r = session.call("interact", query=name, action="click")
    assert r.ok, r.error
    logged = session.call("javascript_tool", expression="() => document.getElementById('log').textContent")
    assert logged.data.get("result") == f"clicked {el_id}"


@pytest.mark.parametrize(("el_id", "name", "inferred"), ICONS, ids=[i[0] for i in ICONS])
def test_an_icon_only_control_is_named_and_acts_by_that_name(
    session: ocnb.Session, perception_site: DemoSite, el_id: str, name: str, inferred: bool
) -> None:
    assert session.call("navigate", url=perception_site.page("icons.html")).ok
    assert_named_and_acts(session, el_id, name, inferred)


def test_typed_fields_say_their_format_bounds_and_state(session: ocnb.Session, perception_site: DemoSite) -> None:
    assert session.call("navigate", url=perception_site.page("fields.html")).ok
    content = session.call("read_page").data["content"]
    expect = [
        r'textbox "Departure" \[ax_\d+\] format=YYYY-MM-DD',
        r'textbox "Alarm" \[ax_\d+\] format=HH:MM',
        r'textbox "Meeting" \[ax_\d+\] format=YYYY-MM-DDTHH:MM',
        r'textbox "Billing month" \[ax_\d+\] format=YYYY-MM\b',
        r'textbox "Sprint week" \[ax_\d+\] format=YYYY-Www',
        r'spinbutton "Guests" \[ax_\d+\] min=1 max=8$',
        r'slider "Volume" \[ax_\d+\] value="50" min=0 max=100 step=10',
        r'textbox "Nickname" \[ax_\d+\] value="ada" readonly',
        r'textbox "Email" \[ax_\d+\] required',
    ]
    for pattern in expect:
        assert re.search(pattern, content, re.M), (pattern, content)


#: (element id, the name read_page gives it, whether the name is inferred)
SWATCHES = [
    ("sw-red", "red", True),
    ("sw-blue", "blue", True),
    ("sw-olive", "olive", True),  # the colour of its only child
    ("sw-titled", "Brand green", False),  # a title is its name
    ("b-text", "Apply", False),  # a coloured button with words keeps them
]


@pytest.mark.parametrize(("el_id", "name", "inferred"), SWATCHES, ids=[s[0] for s in SWATCHES])
def test_a_colour_swatch_is_named_by_its_colour_and_acts_by_that_name(
    session: ocnb.Session, perception_site: DemoSite, el_id: str, name: str, inferred: bool
) -> None:
    assert session.call("navigate", url=perception_site.page("swatches.html")).ok
    assert_named_and_acts(session, el_id, name, inferred)
