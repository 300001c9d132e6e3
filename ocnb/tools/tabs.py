"""Tab tools: tabs_create, tabs_context, tabs_activate, tabs_close. Popups become tabs by themselves."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidArgument
from ..registry import tool
from .navigation import CAPTURE_SCHEMA, _nav_error, check_url_arg, page_info

__all__ = ["tabs_activate", "tabs_close", "tabs_context", "tabs_create"]


async def _describe(ctx: Any) -> list[dict[str, Any]]:
    out = []
    for tab in ctx.browser.tabs.values():
        info = await page_info(tab.page)
        out.append({"tab_id": tab.id, **info, "active": tab.id == ctx.browser.active_id, "opener": tab.opener})
    return out


@tool(
    name="tabs_create",
    check=check_url_arg,
    category="tabs",
    side_effects=True,
    uses_page=False,
    description="Open a tab (optionally at a URL) and activate it.",
    properties={"url": {"type": "string"}, "capture_artifact": CAPTURE_SCHEMA},
)
async def tabs_create(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    url = args.get("url")
    tab = await ctx.browser.new_tab()
    if url:
        try:
            await tab.page.goto(url, timeout=ctx.config.default_timeout_ms)
        except Exception as exc:  # noqa: BLE001
            raise _nav_error(exc, url) from None
    return {"tab_id": tab.id, **(await page_info(tab.page)), "tabs": len(ctx.browser.tabs)}


@tool(
    name="tabs_context",
    category="tabs",
    uses_page=False,
    description="List the open tabs. Each has tab_id, url, title and whether it is active.",
    properties={},
)
async def tabs_context(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    return {"tabs": await _describe(ctx), "active": ctx.browser.active_id}


@tool(
    name="tabs_activate",
    category="tabs",
    side_effects=True,
    uses_page=False,
    description="Make a tab the active one. Page tools act on the active tab by default.",
    properties={"tab_id": {"type": "string"}},
    required=["tab_id"],
)
async def tabs_activate(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    tab = ctx.browser.tab(args["tab_id"])
    await tab.page.bring_to_front()
    ctx.browser.active_id = tab.id
    return {"tab_id": tab.id, **(await page_info(tab.page))}


@tool(
    name="tabs_close",
    category="tabs",
    side_effects=True,
    uses_page=False,
    description="Close a tab (default: the active one). The most recent remaining tab becomes active.",
    properties={"tab_id": {"type": "string"}},
)
async def tabs_close(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    tab = ctx.browser.tab(args.get("tab_id"))
    if tab.closed:
        raise InvalidArgument(f"tab {tab.id} is already closed")
    closed = tab.id
    await tab.page.close()
    ctx.browser._on_close(tab)
    return {"closed": closed, "active": ctx.browser.active_id, "tabs": len(ctx.browser.tabs)}
