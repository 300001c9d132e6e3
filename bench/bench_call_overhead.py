"""Per-call overhead of ``Session.call`` against raw Playwright doing the same thing on the same page.

Two operations, medians over N calls each: ``navigate`` to a fixture page, and ``javascript_tool``
evaluating a small expression. Raw Playwright uses its sync API on this thread; ocnb goes through
dispatch (validation, hooks, browser thread). Target (issue 35): javascript_tool ≤ 1.15×.

``*_paired_ratio`` alternates raw and ocnb calls one by one and takes the median of the per-pair
ratios: the figure a shared machine's changing load moves least.

Wall time on a shared machine depends on what else runs; the CPU time this process spends per call
(``*_cpu_ms``, all its threads; the browser and the driver are other processes) does much less, so
both are reported: ``js_cpu_extra_ms`` is what ocnb adds to a call in this process.

    python -m bench.bench_call_overhead [--n 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from playwright.sync_api import sync_playwright

import ocnb
from ocnb.browser import find_chromium, launch_args
from ocnb.commands.demosite import serve
from ocnb.dispatch import dispatch

from .common import median_cpu_ms, median_ms, save


def paired_ratio(raw: Callable[[], Any], ours: Callable[[], Any], n: int) -> float:
    """Median over ``n`` pairs of (ours ÷ raw), each pair timed back to back, the order alternating."""
    ratios = []
    for i in range(n):
        first, second = (raw, ours) if i % 2 == 0 else (ours, raw)
        t0 = time.perf_counter()
        first()
        t1 = time.perf_counter()
        second()
        t2 = time.perf_counter()
        raw_t, ours_t = (t1 - t0, t2 - t1) if i % 2 == 0 else (t2 - t1, t1 - t0)
        ratios.append(ours_t / raw_t)
    return statistics.median(ratios)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=30)
    n = parser.parse_args(argv).n
    os.environ.setdefault("OCNB_HOME", tempfile.mkdtemp(prefix="ocnb-bench-"))
    exe, _ = find_chromium()
    figures: dict[str, float] = {}
    with serve() as site:
        url = site.page("form.html")
        with sync_playwright() as p, ocnb.Session(headless=True) as s:
            browser = p.chromium.launch(executable_path=exe, headless=True, args=launch_args())
            page = browser.new_page()
            s.start()
            raw_nav, raw_js = (lambda: page.goto(url)), (lambda: page.evaluate("1 + 1"))
            oc_nav = lambda: s.call("navigate", url=url)  # noqa: E731
            oc_js = lambda: s.call("javascript_tool", expression="1 + 1")  # noqa: E731
            raw_nav()
            oc_nav()
            figures["raw_navigate_ms"] = median_ms(raw_nav, n)
            figures["raw_js_ms"] = median_ms(raw_js, n)
            figures["raw_navigate_cpu_ms"] = median_cpu_ms(raw_nav, n)
            figures["raw_js_cpu_ms"] = median_cpu_ms(raw_js, n)
            figures["ocnb_navigate_ms"] = median_ms(oc_nav, n)
            figures["ocnb_js_ms"] = median_ms(oc_js, n)
            figures["ocnb_navigate_cpu_ms"] = median_cpu_ms(oc_nav, n)
            figures["ocnb_js_cpu_ms"] = median_cpu_ms(oc_js, n)
            # Paired: raw and ocnb calls alternate, so a change in the machine's load meets both alike;
            # the median of the per-pair ratios is the figure the load moves least.
            figures["js_paired_ratio"] = paired_ratio(raw_js, oc_js, 5 * n)
            # Where the ratio comes from, each paired the same way: the hop to the browser's thread and
            # back with Playwright's evaluate alone (no pipeline), then the whole pipeline without the
            # audit trail (record=False: no journal line, no trace events).
            state = s.browser_state()

            async def bare() -> Any:
                return await (await state.page(None)).evaluate("1 + 1")

            oc_hop = lambda: s.run(bare())  # noqa: E731
            oc_unrecorded = lambda: dispatch(s, "javascript_tool", {"expression": "1 + 1"}, record=False)  # noqa: E731
            figures["js_hop_paired_ratio"] = paired_ratio(raw_js, oc_hop, 5 * n)
            figures["js_unrecorded_paired_ratio"] = paired_ratio(raw_js, oc_unrecorded, 5 * n)
            figures["navigate_paired_ratio"] = paired_ratio(raw_nav, oc_nav, n)
            browser.close()
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
    print(
        f"paired (raw and ocnb calls alternating): javascript_tool {figures['js_paired_ratio']:.2f}×, "
        f"navigate {figures['navigate_paired_ratio']:.2f}×"
    )
    print(
        f"  of which: the hop with evaluate alone {figures['js_hop_paired_ratio']:.2f}×, the pipeline without "
        f"the audit trail {figures['js_unrecorded_paired_ratio']:.2f}×, with it {figures['js_paired_ratio']:.2f}×"
    )
    print("target: javascript_tool ≤ 1.15× raw Playwright (median of 5 runs)")
    save("call_overhead", {"n": n, **figures})
    return figures


if __name__ == "__main__":
    main()
