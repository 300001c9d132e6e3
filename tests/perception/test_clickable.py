"""Everything a person can click gets a ref (issue 31 §1): script-driven controls — rows with a click
listener, ``<a>`` without href (an ``on*`` property, a mousedown listener), calendar cells that only set
``cursor: pointer`` under a delegated listener, tree spans, a menu delegated to the document, suggestions
delegated through jQuery's event table, an inline text link made of a span, a key listener — next to
ARIA tree items and listbox options. For each: ``read_page`` shows it with a ref, ``find`` ranks it first,
``interact(query=…)`` acts on that very element, and the page's own log says the click happened.

Fixture: tests/fixtures/sites/perception/controls.html.
"""

from __future__ import annotations

import re

import pytest

import ocnb
import ocnb.tools.dom  # noqa: F401 - registers the tools
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


#: (query, the line read_page shows for it, what the page logs when it is clicked)
CONTROLS = [
    ("Truman Lunch tomorrow?", 'clickable "Truman Lunch tomorrow?"', "opened Truman"),  # row, addEventListener
    ("Prev", 'clickable "Prev"', "prev"),  # <a> without href, onclick property
    ("Next", "[Next](", "next"),  # <a> without href, mousedown listener, inline after text
    ("10", 'cell "10"', "day 10"),  # cursor:pointer under a delegated table listener
    ("Documents", 'clickable "Documents"', "tree Documents"),  # tree folder span
    ("notes.txt", 'clickable "notes.txt"', "tree notes.txt"),
    ("2010", 'treeitem "2010"', "year 2010"),  # ARIA tree item
    ("Rename", 'clickable "Rename"', "menu Rename"),  # delegated to the document: cursor:pointer tells
    ("London", 'listitem "London"', "city London"),  # jQuery-style delegated selector
    ("Red", 'option "Red"', "colour Red"),  # ARIA listbox option
    ("terms of use", "[terms of use](", "terms"),  # inline text link made of a span
]


@pytest.fixture
def s(session: ocnb.Session, perception_site: DemoSite) -> ocnb.Session:
    assert session.call("navigate", url=perception_site.page("controls.html")).ok
    return session


def log(s: ocnb.Session) -> str:
    r = s.call("javascript_tool", expression="() => document.getElementById('log').textContent")
    assert r.ok, r.error
    return str(r.data.get("result", r.data))


def ref_in(content: str, shown: str) -> str:
    """The ref on the line (or inline link) that shows ``shown``."""
    for line in content.splitlines():
        at = line.find(shown)
        if at >= 0:
            m = re.search(r"ax_\d+", line[at:])
            assert m, line
            return m.group(0)
    raise AssertionError(f"{shown!r} not in:\n{content}")


@pytest.mark.parametrize(("query", "shown", "logged"), CONTROLS, ids=[c[0] for c in CONTROLS])
def test_a_script_driven_control_has_a_ref_find_and_interact_agree(
    s: ocnb.Session, query: str, shown: str, logged: str
) -> None:
    content = s.call("read_page").data["content"]
    ref = ref_in(content, shown)
    found = s.call("find", query=query).data["candidates"]
    assert found and found[0]["ref"] == ref, found
    r = s.call("interact", query=query, action="click")
    assert r.ok, r.error
    assert r.data["element"]["ref"] == ref
    assert log(s) == logged


def test_the_ref_read_page_gives_acts(s: ocnb.Session) -> None:
    content = s.call("read_page").data["content"]
    assert s.call("interact", ref=ref_in(content, 'clickable "Ada Engine notes"'), action="click").ok
    assert log(s) == "opened Ada"
    assert s.call("interact", ref=ref_in(content, 'clickable "Press a key here"'), action="press", key="x").ok
    assert log(s) == "key x"


def test_a_word_inside_a_row_resolves_to_the_row_in_find_and_interact(s: ocnb.Session) -> None:
    row = ref_in(s.call("read_page").data["content"], 'clickable "Truman Lunch tomorrow?"')
    assert s.call("find", query="Truman").data["candidates"][0]["ref"] == row
    r = s.call("interact", query="Truman", action="click")
    assert r.ok and r.data["element"]["ref"] == row and r.data["via"] == "visible text"
    assert log(s) == "opened Truman"


def test_tree_states_and_plain_text_stay_plain(s: ocnb.Session) -> None:
    content = s.call("read_page").data["content"]
    assert re.search(r'treeitem "2010" \[ax_\d+\] collapsed', content)
    assert re.search(r'treeitem "2011" \[ax_\d+\] selected', content)
    assert "October 2011" in content and not re.search(r'"October 2011" \[ax_', content)  # no listener, no ref
    assert "Please read the [terms of use](ax_" in content  # the sentence stays one line


def test_a_page_loaded_without_the_registry_still_finds_pointer_and_onclick(s: ocnb.Session) -> None:
    # the registry wraps addEventListener for pages loaded after the browser started; the supporting
    # signals (cursor:pointer set by the element, on* properties) need no registry
    html = (
        "<p><span id='a' style='cursor:pointer'>Alpha</span></p><p><span id='b'>Beta</span></p>"
        "<script>document.getElementById('b').onclick = () => document.title = 'beta';</script>"
    )
    s.call("javascript_tool", expression=f"() => {{ document.body.innerHTML = {html!r}; }}")
    s.call(
        "javascript_tool", expression="() => { document.getElementById('b').onclick = () => document.title = 'beta'; }"
    )
    content = s.call("read_page").data["content"]
    assert re.search(r'clickable "Alpha" \[ax_\d+\]', content) and re.search(r'clickable "Beta" \[ax_\d+\]', content)
