"""Per-call overhead of ``Session.call`` against raw Playwright doing the same thing on the same page.

Two operations, medians over N calls each: ``navigate`` to a fixture page, and ``javascript_tool``
evaluating a small expression. Raw Playwright uses its sync API on this thread; ocnb goes through
dispatch (validation, hooks, browser thread). Target: ratio ≤ 1.3.

    python -m bench.bench_call_overhead [--n 30]
"""

from __future__ import annotations

import argparse
import os
import tempfile

from playwright.sync_api import sync_playwright

import ocnb
from ocnb.browser import find_chromium, launch_args
from ocnb.commands.demosite import serve

from .common import median_ms, save


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=30)
    n = parser.parse_args(argv).n
    os.environ.setdefault("OCNB_HOME", tempfile.mkdtemp(prefix="ocnb-bench-"))
    exe, _ = find_chromium()
    figures: dict[str, float] = {}
    with serve() as site:
        url = site.page("form.html")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, headless=True, args=launch_args())
            page = browser.new_page()
            figures["raw_navigate_ms"] = median_ms(lambda: page.goto(url), n)
            figures["raw_js_ms"] = median_ms(lambda: page.evaluate("1 + 1"), n)
            browser.close()
        with ocnb.Session(headless=True) as s:
            s.start()
            figures["ocnb_navigate_ms"] = median_ms(lambda: s.call("navigate", url=url), n)
            figures["ocnb_js_ms"] = median_ms(lambda: s.call("javascript_tool", expression="1 + 1"), n)
    figures["navigate_ratio"] = figures["ocnb_navigate_ms"] / figures["raw_navigate_ms"]
    figures["js_ratio"] = figures["ocnb_js_ms"] / figures["raw_js_ms"]
    print(
        f"navigate: raw {figures['raw_navigate_ms']:.2f} ms, ocnb {figures['ocnb_navigate_ms']:.2f} ms → {figures['navigate_ratio']:.2f}×"
    )
    print(
        f"javascript_tool: raw {figures['raw_js_ms']:.3f} ms, ocnb {figures['ocnb_js_ms']:.3f} ms → {figures['js_ratio']:.2f}×"
    )
    print("target: ≤ 1.3× raw Playwright")
    save("call_overhead", {"n": n, **figures})
    return figures


if __name__ == "__main__":
    main()
