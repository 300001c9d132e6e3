"""read_page says each link target once, shortened, and every link keeps its ref.

Fixture: tests/fixtures/sites/reading/links.html (a nav repeated in the footer, a card whose image,
title and "Read more" go to one story, a link with tracking parameters, one with a long query, one
with a long path).
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


def _read(session: Any, reading: DemoSite, **args: Any) -> str:
    assert session.call("navigate", url=reading.page("links.html")).ok
    r = session.call("read_page", **args)
    assert r.ok, r.error
    return r.data["content"]


def _links(content: str, name: str) -> list[str]:
    """The tails after each ref of the links named ``name`` (line or inline form), in order."""
    out = re.findall(r'(?:- |: )link "' + re.escape(name) + r'" \[ax_\d+\]((?: → \S+)?)', content)
    out += re.findall(r"\[" + re.escape(name) + r"\]\(ax_\d+((?: → [^)]+)?)\)", content)
    return out


def test_a_repeated_target_is_said_once_and_every_link_keeps_its_ref(session, reading):
    content = _read(session, reading)
    assert _links(content, "Home") == [" → #top", ""]  # the footer's Home: same target, said before
    assert _links(content, "News") == [" → /news/", ""]  # tracking parameters left out, then the same
    assert re.search(r'- img "The harbour at dawn"|link "The harbour at dawn" \[ax_\d+\] → /story\.html', content)
    assert _links(content, "Harbour towns rebuild after the winter floods") == [""]
    assert _links(content, "Read more") == [""]
    assert content.count("→ /story.html") == 1


def test_queries_and_long_paths_are_shortened(session, reading):
    content = _read(session, reading)
    assert _links(content, "Search") == [" → /search?q=tide"]  # a short query stays
    assert _links(content, "archive for 2019") == [" → /archive?…"]  # a long one is marked, not spelled
    (tail,) = _links(content, "A long story address")
    assert tail.startswith(" → /stories/2019/11/") and tail.endswith("…")


def test_a_link_without_its_target_shown_still_follows_it(session, reading):
    content = _read(session, reading)
    ref = re.search(r"\[Read more\]\((ax_\d+)\)", content).group(1)
    assert session.call("interact", ref=ref, action="click").ok
    path = session.call("javascript_tool", expression="location.pathname").data["result"]
    assert path == "/story.html"


def test_interactive_filter_says_each_target_once_too(session, reading):
    content = _read(session, reading, filter="interactive")
    assert content.count("→ /story.html") == 1
    assert len(re.findall(r"\[ax_\d+\]", content)) == 10  # every link has its line and ref
    assert re.search(
        r'^- link "Harbour towns rebuild after the winter floods" \[ax_\d+\]$', content, re.M
    )  # a heading's
