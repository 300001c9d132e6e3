"""Tab tools: tabs_create, tabs_context, tabs_activate, tabs_close. Popups become tabs by themselves."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..browser.devtools import browser_title
from ..dispatch import ToolContext
from ..errors import InvalidArgument, NavigationFailed
from ..registry import tool
from .navigation import check_url_arg, nav_error, page_info
from .targeting import CAPTURE

__all__ = ["tabs_activate", "tabs_close", "tabs_context", "tabs_create"]

#: How long tabs_context waits for one page's title before it answers from the last one known.
TITLE_WAIT_S = 0.5


async def _title(tab: Any) -> bool:
    """Refresh ``tab.title`` within TITLE_WAIT_S; False when the page did not answer (busy, hung,
    crashed). Then the title is the one the browser holds (the page's last ``document.title``, even
    set by a script after its load: :func:`~ocnb.browser.devtools.browser_title`), else the last known."""
    if not tab.crashed:
        try:
            tab.title = await asyncio.wait_for(tab.page.title(), TITLE_WAIT_S)
            return True
        except TimeoutError:
            pass
        except Exception:  # noqa: BLE001 - mid-navigation: keep the last title
            return True
    held = await browser_title(tab.page, TITLE_WAIT_S)
    if held is not None:
        tab.title = held
    return False


async def _describe(ctx: ToolContext) -> list[dict[str, Any]]:
    """Every tab, asked in parallel; a page that does not answer in time shows its last known title."""
    tabs = list(ctx.browser.tabs.values())
    answered = await asyncio.gather(*(_title(t) for t in tabs))
    out = []
    for tab, ok in zip(tabs, answered, strict=True):
        row = {"tab_id": tab.id, "url": tab.page.url, "title": tab.title, "active": tab.id == ctx.browser.active_id}
        row["opener"] = tab.opener
        row["responsive"] = ok
        if tab.crashed:
            row["crashed"] = True
        out.append(row)
    return out


@tool(
    name="tabs_create",
    page_text=("url", "title", "downloads"),
    examples=(
        "open a new tab",
        "open this link in a new tab",
        "start a fresh tab at the homepage",
    ),
    check=check_url_arg,
    category="tabs",
    side_effects=True,
    uses_page=False,
    description="Open a tab and activate it. It opens at url when given.",
    properties={"url": {"type": "string"}, "capture_artifact": CAPTURE},
)
async def tabs_create(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    url = args.get("url")
    if isinstance(url, str) and url.strip() in ("back", "forward"):
        raise InvalidArgument(f"a new tab has no history to go {url.strip()} to; give a URL", details={"url": url})
    browser = ctx.browser
    before = browser.active_id
    tab = await browser.new_tab()
    if url:
        try:
            await tab.page.goto(url, timeout=ctx.config.default_timeout_ms)
        except BaseException as exc:  # a failed (or cancelled) call leaves nothing behind
            with contextlib.suppress(Exception):
                await asyncio.shield(browser.close_tab(tab))
            if before in browser.tabs:
                browser.active_id = before
            if not isinstance(exc, Exception):
                raise
            err = nav_error(exc, url)
            if isinstance(err, NavigationFailed):
                err.message += "; the tab it opened was closed"
            raise err from None
    return {"tab_id": tab.id, **(await page_info(tab.page, tab)), "tabs": len(browser.tabs)}


@tool(
    name="tabs_context",
    page_text=("tabs",),
    examples=(
        "which tabs are open",
        "list the open tabs and their URLs",
        "how many tabs do I have",
    ),
    category="tabs",
    uses_page=False,
    description="List the open tabs. Each has tab_id, url, title, active, and responsive "
    "(false: the page is busy or hung; its last known title is shown).",
    properties={},
)
async def tabs_context(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return {"tabs": await _describe(ctx), "active": ctx.browser.active_id}


@tool(
    name="tabs_activate",
    page_text=("url", "title"),
    examples=(
        "switch to the other tab",
        "go to the second tab",
        "bring the first tab to the front",
    ),
    category="tabs",
    side_effects=True,
    uses_page=False,
    description="Make a tab the active one. Page tools act on the active tab by default.",
    properties={"tab_id": {"type": "string"}},
    required=["tab_id"],
)
async def tabs_activate(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    tab = ctx.browser.tab(args["tab_id"])
    await tab.page.bring_to_front()
    ctx.browser.active_id = tab.id
    return {"tab_id": tab.id, **(await page_info(tab.page, tab))}


@tool(
    name="tabs_close",
    examples=(
        "close this tab",
        "close the popup window that opened",
        "shut the extra tab",
    ),
    category="tabs",
    side_effects=True,
    uses_page=False,
    description="Close a tab. Without tab_id, the active one; the most recent remaining tab becomes active.",
    properties={"tab_id": {"type": "string"}},
)
async def tabs_close(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    tab = ctx.browser.tab(args.get("tab_id"), crashed_ok=True)
    if tab.closed:
        raise InvalidArgument(f"tab {tab.id} is already closed")
    closed = tab.id
    await ctx.browser.close_tab(tab)
    return {"closed": closed, "active": ctx.browser.active_id, "tabs": len(ctx.browser.tabs)}
