"""read_page keeps what an interactive container holds: a short name on its line, its content beneath.

Fixture: tests/fixtures/sites/reading/containers.html (a click-handler chapter, a card link, a comment
list with one delegated listener, a role=button wrapper around a paragraph, a details/summary, and two
atomic controls). Each container's ref still clicks it through ``interact``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb.tools.dom  # noqa: F401
import ocnb.tools.interact  # noqa: F401 - registers the tools
from ocnb.commands.demosite import DemoSite, serve

pytestmark = pytest.mark.browser

READING = Path(__file__).resolve().parents[1] / "fixtures" / "sites" / "reading"


@pytest.fixture(scope="module")
def reading() -> Iterator[DemoSite]:
    with serve(root=READING) as s:
        yield s


def _open(session: Any, reading: DemoSite) -> str:
    assert session.call("navigate", url=reading.page("containers.html")).ok
    r = session.call("read_page")
    assert r.ok, r.error
    return r.data["content"]


def _block(content: str, head: str) -> tuple[str, str, list[str]]:
    """The line starting with ``head`` (after indentation), its ref, and the lines nested under it."""
    lines = content.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith(head):
            pad = len(line) - len(line.lstrip())
            kids = []
            for nxt in lines[i + 1 :]:
                if len(nxt) - len(nxt.lstrip()) <= pad:
                    break
                kids.append(nxt.strip())
            m = re.search(r"\[(ax_\d+)\]", line)
            assert m, line
            return line.strip(), m.group(1), kids
    raise AssertionError(f"{head!r} not in:\n{content}")


def _click(session: Any, ref: str) -> str:
    r = session.call("interact", ref=ref, action="click")
    assert r.ok, r.error
    return session.call("javascript_tool", expression="document.getElementById('status').textContent").data["result"]


SENTENCES = [
    "the supply boat would not come",
    "a ship was listening for it",
    "as though it had been waiting for him all along",
    "the sea walls will need to be twice as tall",
    "still keeps the tide mark painted on her door frame",
    "a promise the fishermen stopped believing long ago",
    "until a diary turned up in the parish archive last autumn",
    "the reason the original wording was considered misleading",
]


def test_every_sentence_is_read_once(session, reading):
    content = _open(session, reading)
    for s in SENTENCES:
        assert content.count(s) == 1, f"{s!r} appears {content.count(s)} times in:\n{content}"
    for line in content.split("\n"):  # no content folded into a long name
        for name in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
            assert len(name) <= 60, line


def test_click_handler_article_keeps_its_paragraphs(session, reading):
    line, ref, kids = _block(_open(session, reading), '- clickable "Chapter 12')
    assert line == f'- clickable "Chapter 12: The Lighthouse Keeper…" [{ref}]:'
    assert kids[0] == '- heading "Chapter 12: The Lighthouse Keeper" [level=2]'
    assert len([k for k in kids if not k.startswith("- ")]) == 3  # three paragraphs (plain text lines)
    assert _click(session, ref) == "chapter tapped"


def test_card_link_keeps_heading_and_teaser(session, reading):
    line, ref, kids = _block(_open(session, reading), '- link "Harbour towns')
    assert line.endswith(f"[{ref}] → #story-harbour:")
    assert '- heading "Harbour towns rebuild after the winter floods" [level=3]' in kids
    assert any("hauling silt out of their kitchens" in k for k in kids)
    assert "6 min read" in kids
    session.call("interact", ref=ref, action="click")
    assert session.call("javascript_tool", expression="location.hash").data["result"] == "#story-harbour"


def test_delegated_comment_list_keeps_each_comment(session, reading):
    line, ref, kids = _block(_open(session, reading), '- clickable "Comments')
    assert line == f'- clickable "Comments…" [{ref}]:'
    assert kids[:3] == ['- heading "Comments" [level=2]', "marta", kids[2]]
    assert "my grandmother still keeps the tide mark" in kids[2]
    assert "oskar" in kids
    assert _click(session, ref).startswith("comment by ")  # the click lands inside the list


def test_role_button_wrapper_keeps_its_paragraph(session, reading):
    line, ref, _ = _block(_open(session, reading), '- button "Engineers')
    # a single child paragraph is shown on the line itself, after the short name
    assert line.startswith(f'- button "Engineers studying the old breakwater found…" [{ref}]: Engineers studying')
    assert line.endswith("turned up in the parish archive last autumn.")
    assert _click(session, ref) == "teaser expanded"


def test_details_summary_keeps_its_content_and_opens(session, reading):
    content = _open(session, reading)
    line, ref, kids = _block(content, '- button "Editor')
    assert line == f'- button "Editor\'s notes on this edition…" [{ref}] collapsed:'
    assert kids[0] == "Editor's notes on this edition"
    assert "name of the editor who approved it" in kids[1]
    assert "tide table" not in content  # closed: the body is not shown
    session.call("interact", ref=ref, action="click")
    after = session.call("read_page").data["content"]
    assert _block(after, '- button "Editor')[1] == ref  # same ref, now expanded
    assert f"[{ref}] expanded:" in after and "The tide table in the print edition" in after


def test_atomic_controls_fold_their_text_into_their_name(session, reading):
    content = _open(session, reading)
    assert re.search(r'^- button "Save for later" \[ax_\d+\]$', content, re.M)
    assert re.search(r'^- link "Back to top" \[ax_\d+\] → #top$', content, re.M)
    interactive = session.call("read_page", filter="interactive").data["content"]
    assert len(interactive.split("\n")) == 7  # the five containers and the two controls, one line each
    assert "supply boat" not in interactive  # content is not folded into names there either
