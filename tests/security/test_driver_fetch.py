"""Allowed requests are continued inside Playwright's driver, not in Python (``driver_guard.js``).

With an allow-list the browser-level guard has Chromium pause every request. The driver continues at
once each one that is not a document and that no registered policy might refuse (the URL matches none
of the policies' ``OriginPolicy.suspects()``); the rest still come to Python. These tests check that
the driver's JavaScript reads the regex exactly as the property test of ``suspects()`` assumes, and,
from the two-origin server's log, that allowed subresources arrive without a round trip to Python
while refused ones still reach nothing and are reported.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from pathlib import Path

import pytest
from playwright._impl._driver import compute_driver_executable

import ocnb
from ocnb.browser.fetch_guard import CONTINUE_ALLOWED
from ocnb.origins import OriginPolicy

from .conftest import policy_of
from .origin_site import OriginSite
from .test_origins import POLICIES

HTML = "text/html"


def test_a_url_the_driver_continues_is_one_every_policy_allows() -> None:
    """The driver tests each URL with JavaScript's ``RegExp(source, "i")`` on the union of the policies'
    ``suspects()``: for every URL it would continue, each policy's ``check`` allows it (each policy
    alone, and all three together as a shared browser registers them)."""
    urls = [
        f"{scheme}://{user}{host}{port}{rest}"
        for scheme, user, host, port, rest in itertools.product(
            ["http", "https", "ws", "wss", "blob:https", "blob:http", "HTTP", "data:text/html,"],
            ["", "a@", "127.0.0.1@", "a.org:x@"],
            ["127.0.0.1", "localhost", "LOCALHOST.", "a.example.com", "bad.example.com", "x.bad.example.com",
             "example.com", "a.org", "a.org.evil.net", "evil.net", "x.evil.net", "[::1]", "2130706433",
             "127.0.0.1.evil.net"],
            ["", ":443", ":80", ":8080", ":5"],
            ["/", "/p?q=1", "#f", "?x", ""],
        )
    ]  # fmt: skip
    sets = [[p] for p in POLICIES] + [POLICIES]
    sources = ["|".join(f"(?:{p.suspects().pattern})" for p in policies) for policies in sets]
    node, _ = compute_driver_executable()
    script = (
        "const [sources, urls] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(sources.map(s => { const r = new RegExp(s, 'i'); return urls.map(u => r.test(u)); })))"
    )
    out = subprocess.run(
        [node, "-e", script], input=json.dumps([sources, urls]), capture_output=True, text=True, timeout=60, check=True
    )
    refusable = json.loads(out.stdout)
    continued = 0
    for policies, flags in zip(sets, refusable, strict=True):
        for url, suspect in zip(urls, flags, strict=True):
            if not suspect:
                continued += 1
                assert all(p.check(url) is None for p in policies), (policies, url)
    assert continued > 100  # the check is not vacuous: many URLs are continued


def _page(n: int) -> str:
    images = "".join(f"<img src='{{A}}/fast/img{i}.png'>" for i in range(n))
    refused = "<img src='{B}/hit/fastimg.png'><script>fetch('{B}/hit/fastfetch').catch(() => 0)</script>"
    return f"<body>{images}{refused}<img src='{{A}}/ok/fast' ></body>"


@pytest.mark.browser
def test_allowed_subresources_skip_python_and_refused_ones_still_reach_nothing(
    origin_site: OriginSite, tmp_path: Path
) -> None:
    origin_site.pages["/v/fast"] = (HTML, _page(30))
    s = ocnb.Session(headless=True, home=tmp_path, caps=["network"], **policy_of("devtools", ["http://127.0.0.1:*"]))
    try:
        s.start()
        guard = s.browser_state().browser_guard
        assert guard is not None
        before_python = guard.paused
        before_driver = s.run(guard.continue_allowed())
        assert isinstance(before_driver, int)  # the driver has the command
        result = s.call("navigate", url=f"{origin_site.allowed}/v/fast")
        assert result.ok
        assert origin_site.wait_for("127.0.0.1:", "/ok/fast")
        time.sleep(0.5)
        # what reached the server: every allowed image, nothing of the refused origin
        assert len({h.path for h in origin_site.hits("127.0.0.1:", "/fast/img")}) == 30
        assert origin_site.refused_hits("/hit/fast") == []
        # the allowed images were continued by the driver; Python saw the document and the refused ones
        by_driver = s.run(guard.continue_allowed())
        assert by_driver is not None and by_driver - before_driver >= 30
        assert guard.paused - before_python < 10
        # the refused requests are still reported, as before
        blocked = {b["url"] for b in result.data.get("blocked", [])} | {
            r["url"] for r in s.call("network_requests").data["requests"] if r.get("blocked")
        }
        assert any("/hit/fastimg.png" in u for u in blocked), blocked
    finally:
        s.close()


def test_the_command_names_are_what_the_preload_answers() -> None:
    """The names Python sends are the ones ``driver_guard.js`` answers (a rename on one side only would
    quietly send every request back through Python, or let shared workers go ungated again)."""
    from ocnb.browser.ws_guard import HOLD_SHARED_WORKERS, RELEASE_SHARED_WORKER

    source = (Path(ocnb.__file__).parent / "browser" / "driver_guard.js").read_text()
    for constant, name in (
        ("CONTINUE", CONTINUE_ALLOWED),
        ("HOLD", HOLD_SHARED_WORKERS),
        ("RELEASE", RELEASE_SHARED_WORKER),
    ):
        assert f'const {constant} = "{name}";' in source
    assert OriginPolicy(allowed=["http://127.0.0.1:*"]).suspects().flags  # compiled case-blind, as the driver reads it
