"""What a person reads and clicks on a MiniWoB++-like page (issue 31): a textarea's text, cut in the page's
outline, is read whole through ``read_page(ref_id=…)``; a contenteditable editor shows its text; a clickable
bar made of spans with listeners of their own ("Reply", "Forward") shows each span with a ref, not the bar
alone — and the ref acts on that span (the page's own log says which); an icon drawn by CSS from an image
file named for its action (``content: url(…/send.png)``, ``background-image: url(…/close.svg)``) is named so,
marked inferred, and an image named for something else names nothing. A text area is said ``multiline``
apart from a one-line field, and a menu entry that opens a menu ``haspopup``.

Fixture: tests/fixtures/sites/perception/whole.html.
"""

from __future__ import annotations

import re

import pytest

import ocnb
import ocnb.tools.dom  # noqa: F401 - registers the tools
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite
from ocnb.tokens import count_text

pytestmark = pytest.mark.browser


@pytest.fixture
def s(session: ocnb.Session, perception_site: DemoSite) -> ocnb.Session:
    assert session.call("navigate", url=perception_site.page("whole.html")).ok
    return session


def line_of(content: str, pattern: str) -> str:
    for line in content.splitlines():
        if re.search(pattern, line):
            return line
    raise AssertionError(f"{pattern!r} not in:\n{content}")


def test_a_long_field_is_cut_in_the_outline_and_read_whole_by_its_ref(s: ocnb.Session) -> None:
    content = s.call("read_page").data["content"]
    terms = line_of(content, r'textbox "Terms" \[ax_\d+\]')
    assert "zanzibar" not in content  # the outline stays short: the value is cut …
    assert re.search(r'…" \(\d{3} chars\)', terms), terms  # … and says how long it is
    ref = re.search(r"ax_\d+", terms).group(0)  # type: ignore[union-attr]
    r = s.call("read_page", ref_id=ref)
    assert r.ok, r.error
    whole = r.data["content"]
    assert "est zanzibar." in whole and "…" not in whole  # the field read alone: its whole text
    assert count_text(whole) < 150  # only that field
    assert count_text(terms) < 0.7 * count_text(whole)  # the page's outline pays for 200 characters, not all


def test_a_contenteditable_editor_shows_its_text(s: ocnb.Session) -> None:
    content = s.call("read_page").data["content"]
    assert re.search(r'textbox \[ax_\d+\] value="Tortor dui sed quis egestas\."', content), content
    assert content.count("Tortor dui") == 1  # said once, as the editor's value


@pytest.mark.parametrize("word", ["Reply", "Forward"])
def test_each_listened_span_of_a_clickable_bar_has_a_ref_that_acts(s: ocnb.Session, word: str) -> None:
    content = s.call("read_page").data["content"]
    line = line_of(content, rf'clickable "{word}" \[ax_\d+\]')
    ref = re.search(r"ax_\d+", line).group(0)  # type: ignore[union-attr]
    r = s.call("interact", ref=ref, action="click")
    assert r.ok, r.error
    got = s.call("javascript_tool", expression="() => document.getElementById('log').textContent")
    assert got.data["result"] == word.lower()


@pytest.mark.parametrize(("name", "logged"), [("send", "send"), ("close", "close")])
def test_an_icon_drawn_from_an_image_file_is_named_by_the_file(s: ocnb.Session, name: str, logged: str) -> None:
    content = s.call("read_page").data["content"]
    line = line_of(content, rf'clickable "{name}" \[ax_\d+\] inferred')
    r = s.call("interact", ref=re.search(r"ax_\d+", line).group(0), action="click")  # type: ignore[union-attr]
    assert r.ok, r.error
    assert (
        s.call("javascript_tool", expression="() => document.getElementById('log').textContent").data["result"]
        == logged
    )


def test_an_image_not_named_for_an_action_names_nothing(s: ocnb.Session) -> None:
    content = s.call("read_page").data["content"]
    assert "logo" not in content


def test_a_text_area_is_multiline_and_a_menu_entry_with_a_submenu_says_so(s: ocnb.Session) -> None:
    content = s.call("read_page").data["content"]
    assert re.search(r'textbox "Terms" \[ax_\d+\] value=.* readonly multiline', content), content
    assert re.search(r'textbox "Answer" \[ax_\d+\]$', line_of(content, 'textbox "Answer"'))  # one line: no flag
    assert re.search(r'menuitem "Playback" \[ax_\d+\] haspopup', content), content
    assert re.search(r'menuitem "Save" \[ax_\d+\]$', line_of(content, 'menuitem "Save"'))
    assert re.search(
        r'menuitem "Zoom" \[ax_\d+\] expanded$', line_of(content, 'menuitem "Zoom"')
    )  # open: expanded says it
