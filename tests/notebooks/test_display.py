"""How tool results look in a notebook: text/plain always, plus compact HTML per kind of result."""

from __future__ import annotations

import base64
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ocnb import display
from ocnb.results import ToolResult

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture(autouse=True)
def default_options() -> None:
    saved = display.DisplayOptions(**vars(display.options))
    yield
    for key, value in vars(saved).items():
        setattr(display.options, key, value)


def test_an_error_is_one_plain_line_and_a_compact_red_box() -> None:
    r = ToolResult.failure("interact", "ELEMENT_NOT_FOUND", "no element matches <b>Pay</b>", {"candidates": ["ax_1"]})
    bundle = r._repr_mimebundle_()
    assert bundle["text/plain"] == "interact: ELEMENT_NOT_FOUND: no element matches <b>Pay</b>"
    html = bundle["text/html"]
    assert 'class="ocnb-error"' in html and "#d33" in html and "<b>ELEMENT_NOT_FOUND</b>" in html
    assert "&lt;b&gt;Pay&lt;/b&gt;" in html and "<b>Pay</b>" not in html
    assert "<details><summary>details</summary>" in html and "ax_1" in html


def test_a_page_read_is_a_collapsible_outline_with_refs() -> None:
    content = 'heading "Sign up"\nform\n  textbox "Email" [ax_3]\n  group "Plan"\n    radio "Pro" [ax_5]\n  button "Sign up" [ax_7]\nlink "Home" [ax_9]'
    r = ToolResult.success("read_page", {"url": "http://127.0.0.1/form.html", "title": "Sign up", "content": content})
    bundle = r._repr_mimebundle_()
    assert content in bundle["text/plain"]
    html = bundle["text/html"]
    # "form" and "group" have children: each folds them; leaves do not.
    assert html.count("<details open>") == 2 and html.count("<summary") == 3
    assert html.count('class="ocnb-ref"') == 4
    # Nesting follows the indentation: the outline itself, then "form", then "group".
    assert _ref_depths(html) == {"ax_3": 2, "ax_5": 3, "ax_7": 2, "ax_9": 1}


def _ref_depths(html: str) -> dict[str, int]:
    """How many <details> enclose each ref."""

    class Depths(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.depth, self.in_ref, self.found = 0, False, {}

        def handle_starttag(self, tag: str, attrs: list) -> None:
            self.depth += tag == "details"
            self.in_ref = tag == "code" and ("class", "ocnb-ref") in attrs

        def handle_endtag(self, tag: str) -> None:
            self.depth -= tag == "details"
            self.in_ref = False

        def handle_data(self, data: str) -> None:
            if self.in_ref:
                self.found[data] = self.depth

    parser = Depths()
    parser.feed(html)
    assert parser.depth == 0
    return parser.found


def test_a_very_long_outline_falls_back_to_one_block() -> None:
    display.options.outline_tree_max_lines = 10
    content = "\n".join(f"  item {i}" for i in range(50))
    html = ToolResult.success("read_page", {"url": "u", "title": "t", "content": content})._repr_mimebundle_()[
        "text/html"
    ]
    assert "<pre" in html and "<details open>" not in html


def test_a_screenshot_is_an_image_unless_switched_off(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    png.write_bytes(PNG)
    r = ToolResult.success("page_screenshot", {"path": str(png), "bytes": len(PNG), "url": "http://x/"})
    assert '<img src="data:image/png;base64,' in r._repr_mimebundle_()["text/html"]
    display.options.inline_images = False
    html = r._repr_mimebundle_()["text/html"]
    assert "<img" not in html and str(png) in html
    assert str(png) in r._repr_mimebundle_()["text/plain"]


def test_discovery_results_are_a_ranked_table() -> None:
    data = {
        "query": "take a screenshot",
        "results": [
            {"id": "tool:page_screenshot", "name": "page_screenshot", "summary": "Take a PNG.", "relevance": 0.91},
            {"id": "tool:navigate", "name": "navigate", "summary": "Open a URL.", "relevance": 0.2},
        ],
        "tokens": {"tier0": 40, "tier1": 60},
        "retriever": "WordLlama 0.7 + BM25 0.3",
    }
    html = ToolResult.success("discover_capabilities", data)._repr_mimebundle_()["text/html"]
    assert html.index("tool:page_screenshot") < html.index("tool:navigate")
    assert "0.910" in html and "tier1: 60" in html
    assert "ranked by WordLlama 0.7 + BM25 0.3" in html


def test_other_data_is_one_line_with_the_json_a_click_away() -> None:
    short = ToolResult.success("tabs_context", {"active": "t1"})._repr_mimebundle_()["text/html"]
    assert "ocnb-compact" in short and "active “t1”" in short
    assert "<summary" in short and "&quot;active&quot;" in short  # the JSON, folded behind one click
    long = ToolResult.success("cookies", {"cookies": [{"name": f"c{i}", "value": "v" * 20} for i in range(20)]})
    html = long._repr_mimebundle_()["text/html"]
    head = html[: html.index("<details")]
    assert "cookies [20 items]" in head and "c19" not in head and "c19" in html
    many = {f"k{i}": "x" * 200 for i in range(9)}
    head = ToolResult.success("t", many)._repr_mimebundle_()["text/html"].split("<details")[0]
    assert "k4 “" in head and "k5" not in head and "+4 more" in head and "x" * 100 not in head
    listed = ToolResult.success("t", [1, 2])._repr_mimebundle_()["text/html"]
    assert "<pre" in listed  # not an object: shown as JSON
