"""What each piece of the origin policy's machinery costs a page load, as ratios measured in one run.

``bench_origin_policy.py`` measures the policy as a whole; this one takes it apart to find where the
time goes (issue 30: a block-list at 1.105×, an allow-list at 1.30×, target ≤ 1.10×). Raw
Playwright, one browser per configuration, each configuration one piece alone:

- ``none``: nothing;
- ``interception``: DevTools ``Fetch.enable`` on the browser's own session with a pattern no request
  matches — what a block-list installs (it pauses only URLs naming a blocked host: none here);
- ``ws_route``: ``context.route_web_socket(".*")`` (Playwright's script and binding in every frame);
- ``worker_hold``: the worker gate's non-flat session per page, auto-attaching its workers and
  frames with ``waitForDebuggerOnStart`` (:func:`ocnb.browser.ws_guard.watch_target`);
- ``pause_all``: ``Fetch.enable`` on the browser's session pausing every request, each continued at
  once from Python — what an allow-list installs, without the policy's own work;
- ``proxy_allow``: the network guard (``ocnb/browser/proxy_guard.py``): the context's proxy is ocnb's
  refusing one, bypassed by the allowed origins (the servers'); every other request (the saved
  pages' CDNs) goes to it and is refused there;
- ``proxy_direct``: the same proxy bypassed by every host (``*``): what the proxy rules cost a
  request that goes straight to its server — an allowed one;
- ``documents_blocked_urls``: ``Fetch`` pausing documents only, the page's subresources decided in the
  browser by ``Network.setBlockedURLs`` (ordered ``urlPatterns``; it needs ``Network.enable`` on the
  same session, so every network event of the page also comes to Python). Pages only: this is the
  cost of the idea, not a guard — it misses a popup's first document scripted by its opener
  (``tests/security``'s ``blank_popup`` vectors; docs/security.md).

Each page of the demo site and of ``real-pages-2`` (the first ``--limit``) is loaded (``goto``,
``load``) ``--runs`` times per configuration, the configurations in a rotating order; per page the
median, in total the sum of the medians and the median of the per-page ratios. Beside the wall clock
(±30% run to run on a shared machine): this process's CPU time per configuration, the requests
paused and the network events received (counts).

``--check`` (alone, no timing): what ``Network.setBlockedURLs`` set on a page blocks, read from a
two-origin loopback site's log (``tests/security/origin_site.py``; a third host, ``refused.test``,
mapped to the same server is the refused one): a page's image, the same after the page navigated to
another site (another renderer process), and the image and fetch of a popup's empty first document
written by its opener; then the same popup under a content security policy of its opener's page (a
``<meta>``, no DevTools setting), which the popup's empty document inherits — and whether Playwright
sees the requests that policy stops.

Run: ``.venv/bin/python bench/bench_policy_pieces.py [--runs 3] [--limit 15] [--configs none,interception] [--check]``;
writes ``bench/results/policy_pieces.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.bench_origin_policy import NO_OTHER_HOSTS  # noqa: E402
from bench.bench_read_page import corpus_pages, serve_corpora  # noqa: E402
from bench.common import save  # noqa: E402
from ocnb.browser.launch import find_chromium, launch_args  # noqa: E402
from ocnb.browser.proxy_guard import RefusingProxy  # noqa: E402
from ocnb.browser.ws_guard import watch_target  # noqa: E402
from ocnb.commands.demosite import serve, site_root  # noqa: E402
from ocnb.origins import OriginPolicy  # noqa: E402

CONFIGS = (
    "none",
    "interception",
    "ws_route",
    "worker_hold",
    "pause_all",
    "documents_blocked_urls",
    "proxy_allow",
    "proxy_direct",
)
NETWORK_EVENTS = ("requestWillBeSent", "responseReceived", "loadingFinished", "loadingFailed", "dataReceived")


async def open_config(pw: Any, name: str, executable: str, own: list[str]) -> tuple[Any, Any, dict[str, int]]:
    """A browser, context and page with the one piece ``name`` installed; its counters."""
    browser = await pw.chromium.launch(executable_path=executable, args=[*launch_args(), NO_OTHER_HOSTS])
    options: dict[str, Any] = {"service_workers": "allow" if name == "none" else "block"}
    if name in ("proxy_allow", "proxy_direct"):  # ocnb's refusing proxy, bypassed by the allowed origins
        proxy = await RefusingProxy().start()
        options["proxy"] = proxy.options(OriginPolicy(own))
        if name == "proxy_direct":
            options["proxy"]["bypass"] = "<-loopback>,*"  # every host
    context = await browser.new_context(**options)
    counts = {"paused": 0, "events": 0}
    cdp = await browser.new_browser_cdp_session()

    def paused(event: dict[str, Any]) -> None:
        counts["paused"] += 1
        asyncio.ensure_future(cdp.send("Fetch.continueRequest", {"requestId": event["requestId"]}))

    cdp.on("Fetch.requestPaused", paused)
    if name == "interception":
        await cdp.send("Fetch.enable", {"patterns": [{"urlPattern": "*blocked.invalid*", "requestStage": "Request"}]})
    elif name == "pause_all":
        await cdp.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})
    elif name == "documents_blocked_urls":
        document = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}
        await cdp.send("Fetch.enable", {"patterns": [document]})
    elif name == "ws_route":
        await context.route_web_socket(re.compile(".*"), lambda ws: ws.connect_to_server())
    page = await context.new_page()
    if name == "documents_blocked_urls":
        session = await context.new_cdp_session(page)

        def event(_e: dict[str, Any]) -> None:
            counts["events"] += 1

        for method in NETWORK_EVENTS:
            session.on(f"Network.{method}", event)
        await session.send("Network.enable")
        patterns = [{"urlPattern": f"{o}/*", "block": False} for o in own] + [
            {"urlPattern": "*://*:*/*", "block": True}
        ]
        await session.send("Network.setBlockedURLs", {"urlPatterns": patterns})
    elif name == "worker_hold":
        session = await context.new_cdp_session(page)
        target = (await session.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
        await watch_target(session, target, "'gated'", lambda url: None)
    return browser, page, counts


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    configs = opts.configs.split(",")
    demo = serve()
    server, base = serve_corpora()
    pages = [("demo", p.name, demo.page(p.name)) for p in sorted(site_root().glob("*.html"))][: opts.limit]
    pages += [("real-pages-2", p.name, base + p.path) for p in corpus_pages("real-pages-2")[: opts.limit]]
    own = ["http://127.0.0.1:*", "http://localhost:*"]
    executable = find_chromium(None, None, headless=True, configured=None)[0]
    assert executable, "no Chromium"
    medians: dict[str, list[float]] = {c: [] for c in configs}
    cpu = dict.fromkeys(configs, 0.0)
    rows = []
    try:
        async with async_playwright() as pw:
            opened = {c: await open_config(pw, c, executable, own) for c in configs}
            for c in configs:
                await opened[c][1].goto(pages[0][2])  # browsers up, caches warm alike
            for group, name, url in pages:
                times: dict[str, list[float]] = {c: [] for c in configs}
                for i in range(opts.runs):
                    for c in configs[i % len(configs) :] + configs[: i % len(configs)]:
                        t0, c0 = time.perf_counter(), time.process_time()
                        await opened[c][1].goto(url, wait_until="load", timeout=60_000)
                        times[c].append((time.perf_counter() - t0) * 1000)
                        cpu[c] += (time.process_time() - c0) * 1000
                row: dict[str, Any] = {"group": group, "page": name}
                for c in configs:
                    medians[c].append(statistics.median(times[c]))
                    row[f"{c}_ms"] = round(medians[c][-1], 1)
                rows.append(row)
            counts = {c: opened[c][2] for c in configs}
            for browser, _page, _counts in opened.values():
                await browser.close()
    finally:
        server.shutdown()
        demo.close()
    base_total = sum(medians[configs[0]])
    out: dict[str, Any] = {}
    for c in configs:
        ratios = [a / b for a, b in zip(medians[c], medians[configs[0]], strict=True)]
        out[c] = {
            "ms": round(sum(medians[c]), 1),
            "ratio": round(sum(medians[c]) / base_total, 3),
            "median_page_ratio": round(statistics.median(ratios), 3),
            "cpu_ms": round(cpu[c], 1),
            "cpu_ratio": round(cpu[c] / cpu[configs[0]], 3),
            **counts[c],
        }
        print(
            f"{c:24} {out[c]['ms']:9.1f} ms  ×{out[c]['ratio']:.3f} (median page ×{out[c]['median_page_ratio']:.3f})"
            f"  cpu ×{out[c]['cpu_ratio']:.3f}  paused {counts[c]['paused']}  events {counts[c]['events']}"
        )
    return {"pages": len(pages), "configs": out, "rows": rows}


CHECK_PAGES = {
    "/first": "<img src='{R}/hit/first'>",
    "/second": "<img src='{R}/hit/second'>",
    "/opener": "<script>const w=window.open();w.document.write(`<img src='{R}/hit/popup_img'>`);"
    "w.document.close();w.fetch('{R}/hit/popup_fetch').catch(()=>0)</script>",
}
#: The same opener under a content security policy that allows the two own origins only (no DevTools
#: setting): an empty popup's document inherits its creator's policy.
CSP_OPENER = (
    "<meta http-equiv='Content-Security-Policy' content=\"default-src {A} {B} 'unsafe-inline' data: blob:\">"
    + CHECK_PAGES["/opener"].replace("/hit/popup_", "/hit/csp_popup_")
)


async def check_blocked_urls() -> dict[str, Any]:
    """Which of :data:`CHECK_PAGES`' requests to the refused host reached the server (True: it escaped)
    with ``Network.setBlockedURLs`` (and ``Network.enable``) on the page's own session, and the failure
    Playwright reports for a blocked one."""
    from playwright.async_api import async_playwright

    from tests.security.origin_site import serve_origin_site

    site = serve_origin_site()
    refused = f"http://refused.test:{site.port}"
    for path, body in CHECK_PAGES.items():
        site.pages[path] = ("text/html", body.replace("{R}", refused))
    site.pages["/opener_csp"] = ("text/html", CSP_OPENER.replace("{R}", refused))
    executable = find_chromium(None, None, headless=True, configured=None)[0]
    assert executable, "no Chromium"
    try:
        async with async_playwright() as pw:
            args = [*launch_args(), "--host-resolver-rules=MAP refused.test 127.0.0.1"]
            browser = await pw.chromium.launch(executable_path=executable, args=args)
            page = await (await browser.new_context()).new_page()
            failures: list[str] = []
            page.on("requestfailed", lambda request: failures.append(str(request.failure)))
            session = await page.context.new_cdp_session(page)
            await session.send("Network.enable")
            own = [{"urlPattern": f"{o}/*", "block": False} for o in (site.allowed, site.refused)]
            await session.send(
                "Network.setBlockedURLs", {"urlPatterns": [*own, {"urlPattern": "*://*:*/*", "block": True}]}
            )
            await page.goto(site.allowed + "/first")
            await page.goto(site.refused + "/second")  # 127.0.0.1 -> localhost: another site, another process
            await page.goto(site.allowed + "/opener", wait_until="commit")
            await asyncio.sleep(2)
            plain = await (await browser.new_context()).new_page()  # no DevTools setting: the policy alone
            csp_failures: list[str] = []
            plain.on("requestfailed", lambda request: csp_failures.append(str(request.failure)))
            await plain.goto(site.allowed + "/opener_csp", wait_until="commit")
            await asyncio.sleep(2)
            await browser.close()
    finally:
        site.server.shutdown()
    reached = {h.path for h in site.log if h.host.startswith("refused.test")}
    names = ("first", "second", "popup_img", "popup_fetch")
    escaped: dict[str, Any] = {n: f"/hit/{n}" in reached for n in names}
    print("reached the refused host with Network.setBlockedURLs on the page:", escaped, "failures:", set(failures))
    csp = {n: f"/hit/csp_{n}" in reached for n in names[2:]}
    print("reached it from a popup under its opener's content security policy:", csp, "failures:", csp_failures)
    return {
        "escaped": escaped,
        "failures": sorted(set(failures)),
        "csp_escaped": csp,
        "csp_failures_seen_by_playwright": csp_failures,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--limit", type=int, default=15, help="pages of the demo site and of real-pages-2 each")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated; the first is the baseline")
    ap.add_argument("--check", action="store_true", help="only what Network.setBlockedURLs blocks (no timing)")
    opts = ap.parse_args()
    result = {"blocked_urls": asyncio.run(check_blocked_urls())} if opts.check else asyncio.run(run(opts))
    path = save(
        "policy_pieces_check" if opts.check else "policy_pieces",
        {
            "runs": opts.runs,
            "limit": opts.limit,
            **result,
            "note": "wall-clock on a machine shared with other jobs (±30% run to run); cpu_ms is this process's",
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
