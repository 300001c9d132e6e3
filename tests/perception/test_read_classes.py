"""read_page keeps the words of every class of article content (issue 31: an article page outside the shared
corpus kept 91% of its visible words): an open ``<details>``, a ``<figcaption>``, a table with its caption,
a ``<dl>``, ``<pre><code>``, visible text under ``aria-hidden``, an open shadow root, a ``role=img`` with
text inside, a blockquote with ``<time>`` and ``<abbr>``, a fieldset's legend and label, ``<br>``-split
lines, a visible child of a ``visibility: hidden`` parent, ``display: contents``, flex and CSS-table
cells, a long link, a clamped paragraph, SVG text, ``content-visibility: auto``, a checkbox's label — and
a checkbox label of 400 characters (a consent sentence; it was cut at 300 in the checkbox's name: the
class this test found) — and a paragraph after a 400-item list. Each section keeps ≥ 95% of the words a person sees in it (its ``innerText``;
the shadow root's text for the shadow host), and the page as a whole keeps ≥ 95% (the measure of
``bench/bench_read_page.py``).

Fixture: tests/fixtures/sites/article/classes.html.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ocnb
import ocnb.tools.dom  # noqa: F401 - registers the tools
from bench.bench_read_page import recall, visible_text
from ocnb.commands.demosite import DemoSite, serve

pytestmark = pytest.mark.browser

SITES = Path(__file__).resolve().parents[1] / "fixtures" / "sites" / "article"
SECTIONS = [
    "details", "figure", "table", "dl", "pre", "ariahidden", "shadow", "roleimg", "blockquote", "fieldset", "br", "vis",
    "contents", "flex", "cells", "longlink", "clamp", "svgtext", "cv", "label", "longlabel",
]  # fmt: skip
SEEN = """(id) => {
  const el = document.getElementById(id);
  const shadow = el.querySelector('#host');
  return shadow ? shadow.shadowRoot.textContent : el.innerText;
}"""


@pytest.fixture(scope="module")
def article_site() -> Iterator[DemoSite]:
    with serve(root=SITES) as s:
        yield s


@pytest.fixture
def page(session: ocnb.Session, article_site: DemoSite) -> tuple[ocnb.Session, str]:
    assert session.call("navigate", url=article_site.page("classes.html")).ok
    r = session.call("read_page")
    assert r.ok, r.error
    return session, r.data["content"]


def seen(s: ocnb.Session, expression: str) -> str:
    r = s.call("javascript_tool", expression=expression)
    assert r.ok, r.error
    return str(r.data["result"])


@pytest.mark.parametrize("section", SECTIONS)
def test_each_class_of_content_keeps_its_words(page: tuple[ocnb.Session, str], section: str) -> None:
    s, content = page
    words = seen(s, f"() => ({SEEN})({section!r})")
    kept, total, missing = recall(words, content)
    assert total >= 4
    assert kept >= 0.95, f"{section}: kept {kept:.2f}, missing {dict(missing)}"


def test_the_closing_paragraph_after_a_long_list_is_kept(page: tuple[ocnb.Session, str]) -> None:
    _, content = page
    assert "The closing paragraph after the long index still belongs to the article." in content
    assert "Entry number 400 of the index" in content


def test_the_page_keeps_its_visible_words(page: tuple[ocnb.Session, str]) -> None:
    s, content = page
    kept, total, missing = recall(visible_text(seen(s, "() => document.body.innerText")), content)
    assert total > 2000
    assert kept >= 0.95, f"kept {kept:.3f}, missing {missing.most_common(10)}"
