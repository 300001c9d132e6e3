"""The same 4-step skill three ways on the demo form: ocnb replay, an agent re-resolving each step
(read_page + find + act), and a raw Playwright script with hard-coded selectors.

Reports wall-time medians, tool calls, and the tokens an agent would read (cl100k of the outputs).
Target: replay ≤ 1.3× the raw script, and zero page-reading tokens.   python -m bench.bench_skill_replay
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from playwright.sync_api import sync_playwright

import ocnb
from ocnb.browser import find_chromium, launch_args
from ocnb.demosite import serve
from ocnb.tokens import count_json

from .common import save


def _median(fn, n: int) -> tuple[float, object]:
    out = None
    times = []
    fn()  # warm-up
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=15)
    n = parser.parse_args(argv).n
    home = tempfile.mkdtemp(prefix="ocnb-bench-skill-")
    os.environ["OCNB_HOME"] = home
    from tests.skills.helpers import form_skill

    figures: dict[str, float] = {}
    with serve() as site:
        url = site.page("form.html")
        sid = form_skill(site, home, "bench-signup")
        with ocnb.Session(home=home) as s:
            s.start()

            def replay() -> int:
                r = s.oc_skill_replay(skill_id=sid, params={"who": "Ada"})
                assert r.ok, r
                return 1

            figures["replay_median_ms"], _ = _median(replay, n)
            figures["replay_calls"] = 1
            figures["replay_tokens"] = 0  # replay reads no page: no read_page/find output at all

            def agent() -> tuple[int, int]:
                calls = tokens = 0

                def call(tool: str, **args: object) -> ocnb.ToolResult:
                    nonlocal calls, tokens
                    calls += 1
                    r = s.call(tool, **args)
                    assert r.ok, r
                    if tool in ("read_page", "find"):
                        tokens += count_json(r.data)
                    return r

                call("navigate", url=url)
                for label, value in (("Full name", "Ada"), ("Email", "Ada@example.com")):
                    call("read_page")
                    ref = call("find", query=label, limit=3).data["candidates"][0]["ref"]
                    call("interact", ref=ref, action="fill", value=value)
                call("read_page")
                ref = call("find", query="Sign up", limit=3).data["candidates"][0]["ref"]
                call("interact", ref=ref, action="click")
                return calls, tokens

            figures["agent_median_ms"], (calls, tokens) = _median(agent, n)
            figures["agent_calls"], figures["agent_tokens"] = calls, tokens
        exe, _ = find_chromium()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, headless=True, args=launch_args())
            page = browser.new_page()

            def raw() -> int:
                page.goto(url)
                page.fill("#full-name", "Ada")
                page.fill("#email", "Ada@example.com")
                page.click("button[type=submit]")
                return 1

            figures["raw_median_ms"], _ = _median(raw, n)
            browser.close()
    figures["replay_vs_raw"] = figures["replay_median_ms"] / figures["raw_median_ms"]
    figures["agent_vs_raw"] = figures["agent_median_ms"] / figures["raw_median_ms"]
    print(f"ocnb replay:      {figures['replay_median_ms']:.1f} ms median, 1 tool call, 0 page tokens")
    print(f"agent re-resolve: {figures['agent_median_ms']:.1f} ms median, {calls} tool calls, {tokens} tokens read")
    print(f"raw Playwright:   {figures['raw_median_ms']:.1f} ms median")
    print(
        f"replay ÷ raw = {figures['replay_vs_raw']:.2f}× (target ≤ 1.3×); agent ÷ raw = {figures['agent_vs_raw']:.2f}×"
    )
    save("skill_replay", {"n": n, **figures})
    return figures


if __name__ == "__main__":
    main()
