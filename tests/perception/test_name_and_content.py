"""Names and content both (issue 44 §3): an element whose accessible name comes from aria-label,
aria-labelledby or title and says other words than it shows keeps what it shows in read_page, in
find's candidates and in AMBIGUOUS_TARGET's; a label equal to the text costs nothing.

Fixture: tests/fixtures/sites/perception/news-front.html — thirty story links all labelled
aria-label="Opens a new window" (ten inside headings, twenty in a list), and navigation links whose
label equals their text ("About us"), holds its words ("Read more" under "Read more about the city
budget") or replaces an icon ("×" under "Close").
"""

from __future__ import annotations

import json
import re

import pytest

import ocnb
import ocnb.tools.interact  # noqa: F401 - registers the tools
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser

LABEL = "Opens a new window"


@pytest.fixture
def s(session: ocnb.Session, perception_site: DemoSite) -> ocnb.Session:
    assert session.call("navigate", url=perception_site.page("news-front.html")).ok
    return session


def headlines(s: ocnb.Session) -> dict[str, str]:
    """Each story's headline and href, as the page writes them (read from the DOM, not from ocnb)."""
    r = s.call(
        "javascript_tool",
        expression="() => JSON.stringify(Array.from(document.querySelectorAll('a[href^=\"/story/\"]'), "
        "a => [a.textContent, a.getAttribute('href')]))",
    )
    assert r.ok, r.error
    pairs = json.loads(r.data["result"])
    assert len(pairs) == 30
    return dict(pairs)


def test_read_page_shows_each_story_link_with_its_headline(s: ocnb.Session) -> None:
    stories = headlines(s)
    r = s.call("read_page")
    assert r.ok, r.error
    content = r.data["content"]
    lines = [ln for ln in content.splitlines() if f'link "{LABEL}" [ax_' in ln]
    assert len(lines) == 30
    for headline, href in stories.items():  # each link's line says its target and its headline
        mine = [ln for ln in lines if ln.endswith(f"→ {href}: {headline}")]
        assert len(mine) == 1, (headline, content)
    # no word is spent twice: a label equal to its text, a label holding the text's words, an icon
    assert content.count("About us") == 1
    assert re.search(r'link "Read more about the city budget" \[ax_\d+\] → /budget$', content, re.M), content
    assert re.search(r'link "Close" \[ax_\d+\] → /close$', content, re.M), content
    assert "×" not in content


def test_find_tells_the_stories_apart_by_what_they_show(s: ocnb.Session) -> None:
    stories = headlines(s)
    content = s.call("read_page").data["content"]
    for headline in ("Bridge repairs finish a week early", "Rare owls nest in the city park"):
        line = next(ln for ln in content.splitlines() if ln.endswith(f": {headline}"))
        ref = re.search(r"\[(ax_\d+)\]", line).group(1)  # type: ignore[union-attr]
        r = s.call("find", query=headline)
        assert r.ok, r.error
        top = r.data["candidates"][0]
        assert (top["ref"], top["name"], top["text"]) == (ref, LABEL, headline)
        assert all(c["score"] < top["score"] for c in r.data["candidates"][1:])
        words = s.call("find", query=" ".join(headline.split()[:3]).lower())  # "bridge repairs finish"
        assert words.ok and words.data["candidates"][0]["ref"] == ref
    # the label alone names thirty links: every candidate says which story it is
    every = s.call("find", query=LABEL, limit=30).data["candidates"]
    assert len(every) == 30 and {c["text"] for c in every} == set(stories)


def test_an_ambiguous_label_lists_candidates_that_differ_by_their_content(s: ocnb.Session) -> None:
    stories = headlines(s)
    r = s.call("interact", query=LABEL, action="click")
    assert not r.ok and r.error.code == "AMBIGUOUS_TARGET"
    cands = r.error.details["candidates"]
    assert len(cands) == 10 and all(c["name"] == LABEL for c in cands)
    texts = [c["text"] for c in cands]
    assert len(set(texts)) == len(texts) and set(texts) <= set(stories)
    assert f"showing {texts[0]!r}" in r.error.message
    tabs = s.call("tabs_context").data["tabs"]
    assert len(tabs) == 1 and tabs[0]["url"].endswith("/news-front.html")  # nothing was clicked


def test_a_label_equal_to_its_text_is_said_once(s: ocnb.Session) -> None:
    r = s.call("find", query="About us")
    assert r.ok, r.error
    top = r.data["candidates"][0]
    assert top["name"] == "About us" and "text" not in top
