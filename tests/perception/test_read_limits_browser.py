"""Issue 16 (8): read_page keeps to the call's timeout on a huge page, and caps what it returns."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import ocnb
from ocnb.perception.snapshot import MAX_CONTENT_CHARS

pytestmark = pytest.mark.browser

BIG = (
    "() => { const p = []; for (let i = 0; i < %d; i++) p.push('<p>Paragraph ' + i + ' of a page far too long "
    "<a href=\"/x' + i + '\">link ' + i + '</a></p>'); document.body.innerHTML = p.join(''); "
    "return document.documentElement.outerHTML.length; }"
)


def test_read_page_keeps_to_the_timeout_on_a_huge_page(ocnb_home: Path) -> None:
    with ocnb.Session(headless=True, home=ocnb_home, default_timeout_ms=3000) as s:
        assert s.call("javascript_tool", expression=BIG % 40_000).data["result"] > 3_000_000
        started = time.monotonic()
        r = s.call("read_page")
        took = time.monotonic() - started
        assert took < 3.0 + 1.0, took
        if r.ok:  # a fast machine read it all: then it is capped and says so
            assert r.data["truncated"] is True and len(r.data["content"]) <= MAX_CONTENT_CHARS + 80
        else:
            assert r.error is not None and r.error.code == "TIMEOUT", r
            assert "too large" in r.error.message and "ref_id" in r.error.message


def test_read_page_caps_a_long_text(session: ocnb.Session) -> None:
    s = session
    made = s.call(
        "javascript_tool",
        expression="() => { const pre = document.createElement('pre'); "
        "pre.textContent = 'one line of the long text\\n'.repeat(40000); document.body.append(pre); "
        "return pre.textContent.length; }",
    )
    assert made.data["result"] > MAX_CONTENT_CHARS
    for args in ({"mode": "text"}, {}):
        r = s.call("read_page", args)
        assert r.ok, r
        assert r.data["truncated"] is True
        assert len(r.data["content"]) <= MAX_CONTENT_CHARS + 80
        assert "[truncated: " in r.data["content"].rsplit("\n", 1)[-1]
    small = s.call("read_page", mode="text", max_tokens=500)
    assert small.ok and small.data["truncated"] is True
