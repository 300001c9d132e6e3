"""Per-call overhead of ``Session.call`` against raw Playwright doing the same thing on the same page.

Two operations, medians over N calls each: ``navigate`` to a fixture page, and ``javascript_tool``
evaluating a small expression. Raw Playwright uses its sync API on this thread; ocnb goes through
dispatch (validation, hooks, browser thread). Target (issue 35): javascript_tool ≤ 1.15×.

Wall time on a shared machine depends on what else runs; the CPU time this process spends per call
(``*_cpu_ms``, all its threads; the browser and the driver are other processes) does much less, so
both are reported: ``js_cpu_extra_ms`` is what ocnb adds to a call in this process.

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

from .common import median_cpu_ms, median_ms, save


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
            figures["raw_navigate_cpu_ms"] = median_cpu_ms(lambda: page.goto(url), n)
            figures["raw_js_cpu_ms"] = median_cpu_ms(lambda: page.evaluate("1 + 1"), n)
            browser.close()
        with ocnb.Session(headless=True) as s:
            s.start()
            figures["ocnb_navigate_ms"] = median_ms(lambda: s.call("navigate", url=url), n)
            figures["ocnb_js_ms"] = median_ms(lambda: s.call("javascript_tool", expression="1 + 1"), n)
            figures["ocnb_navigate_cpu_ms"] = median_cpu_ms(lambda: s.call("navigate", url=url), n)
            figures["ocnb_js_cpu_ms"] = median_cpu_ms(lambda: s.call("javascript_tool", expression="1 + 1"), n)
    figures["navigate_ratio"] = figures["ocnb_navigate_ms"] / figures["raw_navigate_ms"]
    figures["js_ratio"] = figures["ocnb_js_ms"] / figures["raw_js_ms"]
    figures["js_cpu_extra_ms"] = figures["ocnb_js_cpu_ms"] - figures["raw_js_cpu_ms"]
    figures["navigate_cpu_extra_ms"] = figures["ocnb_navigate_cpu_ms"] - figures["raw_navigate_cpu_ms"]
    print(
        f"navigate: raw {figures['raw_navigate_ms']:.2f} ms, ocnb {figures['ocnb_navigate_ms']:.2f} ms → {figures['navigate_ratio']:.2f}×"
    )
    print(
        f"javascript_tool: raw {figures['raw_js_ms']:.3f} ms, ocnb {figures['ocnb_js_ms']:.3f} ms → {figures['js_ratio']:.2f}×"
    )
    print(
        f"CPU of this process per call: javascript_tool raw {figures['raw_js_cpu_ms']:.3f} ms, "
        f"ocnb {figures['ocnb_js_cpu_ms']:.3f} ms (+{figures['js_cpu_extra_ms']:.3f}); navigate raw "
        f"{figures['raw_navigate_cpu_ms']:.2f} ms, ocnb {figures['ocnb_navigate_cpu_ms']:.2f} ms"
    )
    print("target: javascript_tool ≤ 1.15× raw Playwright (median of 5 runs)")
    save("call_overhead", {"n": n, **figures})
    return figures


if __name__ == "__main__":
    main()
