"""Meta tools: oc_connection_health and expand_tools (lists the registered tools)."""

from __future__ import annotations

from typing import Any

from ..registry import tool

__all__ = ["expand_tools", "oc_connection_health"]


@tool(
    name="oc_connection_health",
    category="observability",
    uses_page=False,
    description="Report the browser connection and open pages. "
    "Includes the version, and the executable or the remote endpoint.",
    properties={},
)
async def oc_connection_health(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    b = ctx.browser
    return {
        "connected": bool(b.connected),
        "version": await b.version() if b.connected else None,
        "executable": b.executable,
        "remote": b.remote,
        "pages": len(b.tabs),
        "active_tab": b.active_id,
        "session_id": ctx.session.id,
    }


@tool(
    name="expand_tools",
    category="discovery",
    uses_page=False,
    description="List the registered tools by category and tier with one-line summaries.",
    properties={"category": {"type": "string"}},
)
async def expand_tools(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    cats: dict[str, list[dict[str, Any]]] = {}
    for t in ctx.session.registry:
        if args.get("category") and t.category != args["category"]:
            continue
        cats.setdefault(t.category, []).append({"name": t.name, "tier": t.tier, "summary": t.summary})
    return {"categories": {k: cats[k] for k in sorted(cats)}, "count": sum(len(v) for v in cats.values())}
