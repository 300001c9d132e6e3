"""Issue 16 (8): read_page's limits hold on huge pages, in bounded time."""

from __future__ import annotations

import time

from ocnb.perception.snapshot import MAX_CONTENT_CHARS, _cap, _truncate
from ocnb.tokens import count_text


def test_cap_keeps_whole_lines_and_says_so() -> None:
    text = "\n".join(f'- link "item {i}" [ax_{i}]' for i in range(60_000))
    assert len(text) > MAX_CONTENT_CHARS
    out, cut = _cap(text)
    assert cut and len(out) <= MAX_CONTENT_CHARS + 80
    body, marker = out.rsplit("\n", 1)
    assert marker.startswith("… [truncated: ") and text.startswith(body + "\n")
    kept = body.count("\n") + 1
    assert f"{60_000 - kept} more lines" in marker
    assert _cap("short\ntext") == ("short\ntext", False)


def test_cap_cuts_inside_one_huge_line() -> None:
    out, cut = _cap("- text: " + "word " * 200_000)
    assert cut and MAX_CONTENT_CHARS <= len(out) <= MAX_CONTENT_CHARS + 80
    assert out.endswith("[truncated: 1 more lines; use ref_id or depth]")


def test_truncate_is_fast_on_a_huge_outline() -> None:
    text = "\n".join(f"  - paragraph: Paragraph number {i} with some words" for i in range(200_000))  # ~10 MB
    started = time.perf_counter()
    out, cut = _truncate(text, 2000)
    took = time.perf_counter() - started
    assert cut and count_text(out) <= 2000
    assert took < 1.0, took
    assert out.split("\n")[-1].startswith("… [truncated: ")
    assert _truncate("a\nb", 10) == ("a\nb", False)


def test_truncate_one_line_longer_than_the_budget() -> None:
    out, cut = _truncate("- text: " + "lorem ipsum " * 5_000, 50)
    assert cut and count_text(out) <= 50 and out.startswith("- text: lorem")
