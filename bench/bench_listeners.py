"""Which elements have click or key listeners: ocnb's registry vs the DevTools protocol, on one page.

Three ways to learn, for every element of a page, whether script listens to it:

- ``registry``: ocnb's init script (:mod:`ocnb.perception.listeners`) marked each element as the page
  added its listeners; the question is one ``WeakSet`` lookup per element, inside one evaluate;
- ``cdp_cmdline``: one ``Runtime.evaluate`` with the DevTools command-line API, calling
  ``getEventListeners(el)`` on every element (the cheapest protocol way: one round trip);
- ``cdp_per_node``: ``DOMDebugger.getEventListeners`` per element, as the protocol documents it (each
  element resolved to a remote object first: two round trips per element).

Each is timed on a generated page with ``--rows`` rows (a listener on each row, a delegated listener on
the list, plain text around them) and on the corpus pages given with ``--pages``. All three find the same
directly listened elements (checked); delegation (one listener on a parent) is invisible to all three,
which is why the perception script (js/listeners.js) also reads jQuery's event table and ``cursor: pointer``.
Figures are ratios to ``registry`` measured in one run. Run:
``.venv/bin/python bench/bench_listeners.py [--rows 2000] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ocnb.perception.listeners import INIT_SCRIPT  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
TYPES = "['click','dblclick','auxclick','mousedown','mouseup','pointerdown','pointerup','touchstart','touchend','keydown','keyup','keypress']"

REGISTRY_JS = """() => {
  const m = window[Symbol.for('ocnb.listeners')];
  let n = 0;
  for (const el of document.querySelectorAll('*')) if (m && m.has(el)) n++;
  return n;
}"""
CMDLINE_JS = f"""(() => {{
  const types = {TYPES};
  let n = 0;
  for (const el of document.querySelectorAll('*')) {{
    const ls = getEventListeners(el);
    if (types.some((t) => ls[t] && ls[t].length)) n++;
  }}
  return n;
}})()"""


def page_html(rows: int) -> str:
    items = "".join(f"<li class='row'><b>Sender {i}</b> <span>Subject line number {i}</span></li>" for i in range(rows))
    return (
        "<!doctype html><html><body><h1>Inbox</h1><ul id='list'>" + items + "</ul><script>"
        "for (const r of document.querySelectorAll('.row')) r.addEventListener('click', () => {});"
        "document.getElementById('list').addEventListener('click', () => {});"
        "</script></body></html>"
    )


async def _time(fn: Any, runs: int) -> tuple[float, Any]:
    out = await fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = await fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), out


async def measure(page: Any, runs: int, per_node_cap: int) -> dict[str, Any]:
    cdp = await page.context.new_cdp_session(page)

    async def registry() -> int:
        return int(await page.evaluate(REGISTRY_JS))

    async def cmdline() -> int:
        r = await cdp.send(
            "Runtime.evaluate", {"expression": CMDLINE_JS, "includeCommandLineAPI": True, "returnByValue": True}
        )
        return int(r["result"]["value"])

    async def per_node() -> int:
        doc = await cdp.send("DOM.getDocument", {"depth": -1})
        ids: list[int] = []

        def walk(n: dict[str, Any]) -> None:
            if n.get("nodeType") == 1:
                ids.append(n["nodeId"])
            for c in n.get("children", []):
                walk(c)

        walk(doc["root"])
        n = 0
        for node_id in ids[:per_node_cap]:
            obj = await cdp.send("DOM.resolveNode", {"nodeId": node_id})
            ls = await cdp.send("DOMDebugger.getEventListeners", {"objectId": obj["object"]["objectId"]})
            if any(x["type"] in TYPES for x in ls["listeners"]):
                n += 1
            await cdp.send("Runtime.releaseObject", {"objectId": obj["object"]["objectId"]})
        return n

    elements = int(await page.evaluate("() => document.querySelectorAll('*').length"))
    reg_ms, reg_n = await _time(registry, runs)
    cmd_ms, cmd_n = await _time(cmdline, runs)
    node_ms, node_n = await _time(per_node, max(1, runs // 5))
    scale = elements / min(elements, per_node_cap)  # per-node time extrapolated to the whole page
    await cdp.detach()
    return {
        "elements": elements,
        "listened": {"registry": reg_n, "cdp_cmdline": cmd_n, "cdp_per_node_first": node_n},
        "ms": {
            "registry": round(reg_ms, 2),
            "cdp_cmdline": round(cmd_ms, 2),
            "cdp_per_node": round(node_ms * scale, 1),
        },
        "ratio_to_registry": {
            "cdp_cmdline": round(cmd_ms / max(reg_ms, 1e-3), 1),
            "cdp_per_node": round(node_ms * scale / max(reg_ms, 1e-3), 1),
        },
    }


async def main_async(rows: int, runs: int, pages: list[str]) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    out: dict[str, Any] = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        ctx = await browser.new_context()
        await ctx.add_init_script(INIT_SCRIPT)
        page = await ctx.new_page()
        await page.route("**/generated.html", lambda r: r.fulfill(body=page_html(rows), content_type="text/html"))
        await page.goto("http://127.0.0.1:9/generated.html")
        out[f"generated ({rows} rows)"] = await measure(page, runs, per_node_cap=400)
        for path in pages:
            await page.goto(Path(path).resolve().as_uri())
            out[Path(path).parent.name or path] = await measure(page, runs, per_node_cap=400)
        await browser.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pages", default="", help="comma-separated local HTML files (e.g. corpus source.html)")
    args = ap.parse_args()
    figures = asyncio.run(main_async(args.rows, args.runs, [p for p in args.pages.split(",") if p]))
    print(f"{'page':40} {'elements':>8} {'listened':>8} {'registry ms':>11} {'cmdline ×':>9} {'per-node ×':>10}")
    for name, f in figures.items():
        print(
            f"{name[:40]:40} {f['elements']:>8} {f['listened']['registry']:>8} {f['ms']['registry']:>11} "
            f"{f['ratio_to_registry']['cdp_cmdline']:>9} {f['ratio_to_registry']['cdp_per_node']:>10}"
        )
    from bench.common import save

    print("saved", save("bench_listeners", {"pages": figures}))


if __name__ == "__main__":
    main()
