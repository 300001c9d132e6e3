"""What the page-text fence costs an agent: tokens of MCP results fenced vs as they were sent before.

For each call below, on the demo site, the result an MCP client gets now (:meth:`Fence.for_model`: the
lean line or JSON head, then the page's text between ``[page TOKEN]`` markers) is counted against the same result
as ocnb sent it before the fence (the JSON, with a page outline as a second plain block). Both are
measured in the same run on the same results; the figure is their ratio, per tool and over all calls,
with the render time per call beside the call's own time.

Run: ``.venv/bin/python bench/bench_fence.py``
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from typing import Any

from ocnb import Session, tokens
from ocnb.commands.demosite import serve
from ocnb.jsonsafe import strict_dumps
from ocnb.results import ToolResult

try:
    from bench.common import machine, save
except ImportError:  # run as a script from bench/
    from common import machine, save  # type: ignore[no-redef]


def before_fence(result: ToolResult) -> list[str]:
    """The text blocks ocnb's MCP face sent before the fence (its ``to_call_result`` of 2026-11-26)."""
    data = result.data
    if result.ok and isinstance(data, dict) and isinstance(data.get("content"), str):
        head = ToolResult(ok=True, tool=result.tool, data={**data, "content": "<next text block>"})
        return [strict_dumps(head.to_dict(), ensure_ascii=False), data["content"]]
    return [strict_dumps(result.to_dict(), ensure_ascii=False)]


CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("index.html", "read_page", {}),
    ("form.html", "read_page", {}),
    ("long.html", "read_page", {}),
    ("checkout.html", "read_page", {"mode": "text"}),
    ("form.html", "find", {"query": "email"}),
    ("form.html", "query_dom", {"selector": "input"}),
    ("index.html", "tabs_context", {}),
    ("index.html", "javascript_tool", {"expression": "document.title"}),
    ("network.html", "console_messages", {}),
    ("index.html", "navigate", {}),
]


def main() -> None:
    rows = []
    with serve() as site, Session(headless=True, home=tempfile.mkdtemp(), caps=("network",)) as s:
        for page, tool, args in CALLS:
            url = site.page(page)
            s.call("navigate", url=url)
            call_args = {"url": url} if tool == "navigate" else args
            t0 = time.perf_counter()
            result = s.call(tool, **call_args)
            call_ms = (time.perf_counter() - t0) * 1000
            assert result.ok, result
            t0 = time.perf_counter()
            for _ in range(50):
                fenced = s.fence.for_model(result, call_args)
            render_ms = (time.perf_counter() - t0) * 1000 / 50
            old = tokens.count_text("\n".join(before_fence(result)))
            new = tokens.count_text("\n".join(fenced))
            rows.append(
                {
                    "call": f"{tool} {page}",
                    "tokens_before": old,
                    "tokens_fenced": new,
                    "ratio": round(new / old, 3),
                    "render_ms": round(render_ms, 3),
                    "call_ms": round(call_ms, 1),
                }
            )
    total_old = sum(r["tokens_before"] for r in rows)
    total_new = sum(r["tokens_fenced"] for r in rows)
    figures = {
        "machine": machine(),
        "calls": rows,
        "tokens_before": total_old,
        "tokens_fenced": total_new,
        "ratio_all": round(total_new / total_old, 3),
        "added_per_call_median": statistics.median(r["tokens_fenced"] - r["tokens_before"] for r in rows),
        "render_vs_call_median": round(statistics.median(r["render_ms"] / r["call_ms"] for r in rows), 4),
    }
    print(f"{'call':34} {'before':>7} {'fenced':>7} {'ratio':>6} {'render ms':>9} {'call ms':>8}")
    for r in rows:
        print(
            f"{r['call']:34} {r['tokens_before']:7} {r['tokens_fenced']:7} {r['ratio']:6.3f} "
            f"{r['render_ms']:9.3f} {r['call_ms']:8.1f}"
        )
    print(
        f"all: {total_old} -> {total_new} tokens ({figures['ratio_all']}x); median +"
        f"{figures['added_per_call_median']} tokens a call; render/call time {figures['render_vs_call_median']}"
    )
    print(json.dumps({k: v for k, v in figures.items() if k not in ("machine", "calls")}))
    save("fence", figures)


if __name__ == "__main__":
    main()
