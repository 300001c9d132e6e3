"""Delegated handlers count (issue 44 §6): an element whose click a listener on an ancestor handles gets
a ref — a hand-written root listener that dispatches by ``event.target.closest(…)``, one on the
document, a React-like root listener dispatching to ``__reactProps$…onClick``, jQuery's
``.on("click", ".row", fn)`` (the jQuery the installed miniwob package ships, served at run time,
never kept here) — and clicking that ref runs the handler (the page's log says so). A pointer cursor
under a listener that names no selector is the weaker sign, said ``inferred``. Slider handles (ARIA,
jQuery UI) show value, min and max and take ``form_input`` a number (arrow keys, read back; a value
the slider cannot hold is refused and the slider left where it was); tree items say expanded or
collapsed.

Fixtures: tests/fixtures/sites/delegation/ (delegation.html, widgets.html, jquery.html).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import ocnb
import ocnb.tools.dom  # noqa: F401 - registers the tools
import ocnb.tools.forms  # noqa: F401
import ocnb.tools.interact  # noqa: F401
from ocnb.commands.demosite import DemoSite, serve

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "sites" / "delegation"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoSite]:
    """The fixture pages, with miniwob's jQuery and jQuery UI copied beside them when it is installed."""
    root = tmp_path_factory.mktemp("delegation")
    for f in PAGES.iterdir():
        shutil.copy(f, root / f.name)
    try:
        import miniwob

        ui = Path(miniwob.__file__).parent / "html" / "core" / "jquery-ui"
        shutil.copy(ui / "external" / "jquery" / "jquery.js", root / "jquery.js")
        shutil.copy(ui / "jquery-ui.min.js", root / "jquery-ui.min.js")
        shutil.copy(ui / "jquery-ui.min.css", root / "jquery-ui.min.css")
    except (ImportError, FileNotFoundError):
        pass
    with serve(root=root) as site:
        yield site


def open_page(s: ocnb.Session, pages: DemoSite, name: str) -> str:
    if name == "jquery.html" and not (Path(pages.root) / "jquery.js").exists():
        pytest.skip("the miniwob package (which ships jQuery) is not installed")
    assert s.call("navigate", url=pages.page(name)).ok
    r = s.call("read_page")
    assert r.ok, r.error
    return str(r.data["content"])


def line_of(content: str, shown: str) -> str:
    found = [line for line in content.splitlines() if shown in line]
    assert found, f"no line shows {shown!r} in:\n{content}"
    return found[0]


def ref_of(line: str) -> str:
    m = re.search(r"ax_\d+", line)
    assert m, line
    return m.group(0)


def log(s: ocnb.Session) -> str:
    r = s.call("javascript_tool", expression="() => document.getElementById('log').textContent")
    assert r.ok, r.error
    return str(r.data.get("result", r.data))


@pytest.mark.parametrize(
    ("page", "shown", "logged"),
    [
        ("delegation.html", 'clickable "Cathrine Trip to Lisbon"', "opened Cathrine"),  # closest(".row") on the list
        ("delegation.html", 'clickable "Ezra Quarterly numbers"', "opened Ezra"),
        ("delegation.html", 'listitem "Mute this thread"', "action mute"),  # closest("[data-action]") on document
        ("delegation.html", 'clickable "Red toaster"', "bought Red toaster"),  # React-like root listener
        ("jquery.html", 'clickable "Cathrine Trip to Lisbon"', "opened Cathrine"),  # $(list).on("click", ".row")
        ("jquery.html", 'clickable "Ezra Quarterly numbers"', "opened Ezra"),
    ],
)
def test_a_delegated_row_gets_a_ref_and_clicking_it_runs_the_handler(
    session: ocnb.Session, pages: DemoSite, page: str, shown: str, logged: str
) -> None:
    line = line_of(open_page(session, pages, page), shown)
    assert "inferred" not in line  # a selector (or React's own handler) says so: not a guess
    assert log(session) == ""
    r = session.call("interact", ref=ref_of(line), action="click")
    assert r.ok, r.error
    assert log(session) == logged


def test_a_host_that_only_dispatches_is_not_a_control_itself(session: ocnb.Session, pages: DemoSite) -> None:
    content = open_page(session, pages, "delegation.html")
    assert "Cathrine Trip to Lisbon Ezra" not in content  # the list's listener acts for its rows only
    card = line_of(content, 'clickable "Weekend in Porto')  # a listener that leaves its link alone still acts
    assert session.call("interact", ref=ref_of(card), action="click").ok  # its centre: past the text
    assert log(session) == "card opened"


def test_a_pointer_cursor_under_a_listener_is_a_control_said_inferred(session: ocnb.Session, pages: DemoSite) -> None:
    content = open_page(session, pages, "delegation.html")
    line = line_of(content, 'clickable "Plum"')
    assert line.rstrip().endswith("inferred"), line
    assert session.call("interact", ref=ref_of(line), action="click").ok
    assert log(session) == "colour plum"


def test_an_aria_slider_shows_its_range_and_takes_a_number(session: ocnb.Session, pages: DemoSite) -> None:
    line = line_of(open_page(session, pages, "widgets.html"), 'slider "Volume"')
    assert 'value="3" min=0 max=10' in line
    r = session.call("form_input", ref=ref_of(line), value=7)
    assert r.ok, r.error
    now = session.call(
        "javascript_tool", expression="() => document.getElementById('volume').getAttribute('aria-valuenow')"
    )
    assert now.data["result"] == "7"
    assert 'value="7"' in line_of(str(session.call("read_page").data["content"]), 'slider "Volume"')
    down = session.call("form_input", query="Volume", value="2")
    assert down.ok, down.error
    assert log(session) == "volume 2"


def test_a_value_the_slider_cannot_hold_is_refused_and_changes_nothing(session: ocnb.Session, pages: DemoSite) -> None:
    line = line_of(open_page(session, pages, "widgets.html"), 'slider "Bass"')  # steps of 2 from 4
    bass = "() => document.getElementById('bass').getAttribute('aria-valuenow')"
    r = session.call("form_input", ref=ref_of(line), value=7)
    assert not r.ok and r.error.code == "INVALID_VALUE", r
    assert session.call("javascript_tool", expression=bass).data["result"] == "4"
    r = session.call("form_input", ref=ref_of(line), value=11)  # above max: nothing pressed
    assert not r.ok and r.error.code == "INVALID_VALUE" and "outside" in r.error.message
    assert session.call("javascript_tool", expression=bass).data["result"] == "4"
    assert log(session) == "bass 4"  # the refused 7 went to 8 and back


def test_a_jquery_ui_slider_handle_is_a_slider_set_by_its_keys(session: ocnb.Session, pages: DemoSite) -> None:
    content = open_page(session, pages, "jquery.html")
    line = line_of(content, "- slider")
    assert 'value="2" min=0 max=10' in line and "inferred" not in line, line
    r = session.call("form_input", ref=ref_of(line), value=7)
    assert r.ok, r.error
    held = session.call("javascript_tool", expression="() => [$('#slider').slider('value'), $('#value').text()]")
    assert held.data["result"] == [7, "7"]


def test_tree_items_say_expanded_or_collapsed(session: ocnb.Session, pages: DemoSite) -> None:
    content = open_page(session, pages, "widgets.html")
    assert line_of(content, 'clickable "Projects"').rstrip().endswith("collapsed")  # its list is hidden
    assert line_of(content, 'clickable "Photos"').rstrip().endswith("expanded")
    assert not re.search(r"expanded|collapsed", line_of(content, 'clickable "readme.md"'))  # a file, no list
    assert line_of(content, 'treeitem "2010"').rstrip().endswith("collapsed")  # aria-expanded
    projects = ref_of(line_of(content, 'clickable "Projects"'))
    assert session.call("interact", ref=projects, action="click").ok
    again = str(session.call("read_page").data["content"])
    assert line_of(again, 'clickable "Projects"').rstrip().endswith("expanded")
    assert 'clickable "plan.txt"' in again
