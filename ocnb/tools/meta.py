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
    "Includes the version, and the executable or the remote endpoint. "
    "relaunch: true starts a new browser if this one died (after BROWSER_CRASHED the next call does it anyway).",
    properties={"relaunch": {"type": "boolean", "description": "if the browser died, start a new one now"}},
)
async def oc_connection_health(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    relaunched = None
    if args.get("relaunch"):
        # Only a dead browser is replaced: on a live one this stays a read-only report.
        done = ctx.session._relaunched  # this call already relaunched a browser whose crash was reported
        b = ctx.browser
        if done:
            relaunched = {"after_crash": True, "lost_tabs": done["lost_tabs"]}
        elif b.crash is not None or not b.connected:
            relaunched = await ctx.session.relaunch_browser()
    b = ctx.browser
    out = {
        "connected": bool(b.connected) and b.crash is None,
        "version": await b.version() if b.connected and b.crash is None else None,
        "executable": b.executable,
        "remote": b.remote,
        "pages": len(b.tabs),
        "active_tab": b.active_id,
        "session_id": ctx.session.id,
        "crashes": len(ctx.session.crashes) + (1 if b.crash is not None else 0),
    }
    if b.crash is not None:
        out["crashed"] = {"lost_tabs": b.crash["lost_tabs"], "relaunch": "next call"}
        b.crash_reported = True  # reported here: the next call relaunches
    if relaunched is not None:
        out["relaunched"] = relaunched
    return out


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
