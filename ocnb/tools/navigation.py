"""Navigation tools: navigate (also back/forward), page_reload, wait_for.

A URL that is a file to download leaves the page where it was; navigate then reports the download
(saved under OCNB_HOME/downloads, or refused: see :mod:`ocnb.browser.download_store`) instead of failing.
A page that sends itself to a file as it loads ("your download will begin shortly") never fires its
load event in Chromium: navigate and page_reload end once its document is complete, with a ``note``
that says so and the downloads it began (:func:`until_loaded`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from ..dispatch import ToolContext
from ..errors import InvalidArgument, NavigationFailed, OcnbError, Timeout, from_playwright
from ..registry import tool
from ..urls import check_origin, check_url
from .targeting import CAPTURE

__all__ = ["navigate", "page_reload", "wait_for"]

WAIT_UNTIL = {"type": "string", "enum": ["load", "domcontentloaded", "networkidle", "commit"]}


async def page_info(page: Any, tab: Any = None) -> dict[str, Any]:
    """url and title of a page (title empty when the page is mid-navigation); remembered on its tab."""
    try:
        title = await page.title()
    except Exception:  # noqa: BLE001
        title = ""
    if tab is not None:
        tab.title = title
    return {"url": page.url, "title": title}


async def settle(page: Any) -> None:
    """After a failed navigation let Chromium's error page finish loading, so the next one is clean."""
    with contextlib.suppress(Exception):
        if not page.url.startswith("chrome-error://"):
            await page.wait_for_url("chrome-error://**", timeout=1000)
    with contextlib.suppress(Exception):
        await page.wait_for_load_state("load", timeout=3000)


async def _goto(page: Any, url: str, wait_until: str, timeout: int) -> Any:
    """page.goto, retried once when a late Chromium error page of an earlier failure interrupts it."""
    try:
        return await page.goto(url, wait_until=wait_until, timeout=timeout)
    except Exception as exc:  # noqa: BLE001
        if "interrupted by another navigation" not in str(exc) or "chrome-error://" not in str(exc):
            raise
        await settle(page)
        return await page.goto(url, wait_until=wait_until, timeout=timeout)


#: How often a navigation still waiting for its page's load event asks the page whether it skipped it.
LOAD_CHECK_S = 0.5

#: True when the frame's document is complete yet never fired its load event. Chromium skips the event
#: when a navigation the page started (``location.href = file``, a link clicked as the page loads) is
#: under way as the document completes, and when that navigation turns into a download the document
#: stays, complete and never "loaded". In one task, readyState turns "complete" and the event fires:
#: another task never sees the one without the other unless the event was skipped.
_LOAD_SKIPPED = (
    "() => document.readyState === 'complete'"
    " && (performance.getEntriesByType('navigation')[0]?.loadEventStart ?? 1) === 0"
)

#: What a navigation cut short this way says (its result's ``note``).
LOAD_SKIPPED_NOTE = (
    "the page never fired its load event: it began another navigation as it loaded (here a download), "
    "and Chromium skips the event then; its document is complete"
)


async def until_loaded(page: Any, act: Any, wait_until: str) -> tuple[Any, bool]:
    """Await ``act`` (a goto, back, forward or reload of ``page``): ``(its response, False)``.

    With ``wait_until="load"``, a page whose document completed without its load event (see
    :data:`_LOAD_SKIPPED`) would keep Playwright waiting until the timeout: once the navigation has
    committed, the page is asked every :data:`LOAD_CHECK_S` whether it skipped the event, and when it
    did, the wait ends there: ``(None, True)``. A navigation that never committed is left to ``act``.
    """
    if wait_until != "load":
        return await act, False
    task = asyncio.ensure_future(act)
    main = page.main_frame
    committed: list[bool] = []

    def on_navigated(frame: Any) -> None:
        if frame is main:
            committed.append(True)

    page.on("framenavigated", on_navigated)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=LOAD_CHECK_S)
            if done:
                return task.result(), False
            if committed and await _load_skipped(main):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                return None, True
    finally:
        page.remove_listener("framenavigated", on_navigated)
        if not task.done():  # this call was cancelled (its timeout): the navigation's wait goes with it
            task.cancel()


async def _load_skipped(frame: Any) -> bool:
    try:
        return bool(await asyncio.wait_for(frame.evaluate(_LOAD_SKIPPED), LOAD_CHECK_S))
    except Exception:  # noqa: BLE001 - a page busy, or between documents: ask again later
        return False


def _document_status(tab: Any, url: str, since: float) -> int | None:
    """The HTTP status of ``url``'s document as the tab saw it load since ``since`` (None: not seen)."""
    records = reversed(tab.network) if tab is not None else ()
    for rec in records:
        if rec.ts < since:
            break
        if rec.resource_type == "document" and rec.url == url and rec.status is not None:
            return int(rec.status)
    return None


async def _loaded_info(ctx: ToolContext, page: Any, response: Any, skipped: bool, started: float) -> dict[str, Any]:
    """A navigation's result: url, title, status and tab_id; for one whose page skipped its load event,
    the note that says so and the downloads the page began."""
    tab = _tab(ctx, page)
    info = await page_info(page, tab)
    if skipped:
        info["status"] = _document_status(tab, info["url"], started)
        info["note"] = LOAD_SKIPPED_NOTE
        downloads = await ctx.browser.downloads.since(started)
        if downloads:
            info["downloads"] = downloads
    else:
        info["status"] = response.status if response is not None else None
    info["tab_id"] = tab.id if tab is not None else None
    return info


def nav_error(exc: BaseException, url: str) -> OcnbError:
    err = from_playwright(exc)
    if err.code in ("INTERNAL", "NAVIGATION_FAILED", "TARGET_NAVIGATED_AWAY"):
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return NavigationFailed(f"could not load {url}: {reason}", details={"url": url, "reason": reason})
    return err


def _tab(ctx: ToolContext, page: Any) -> Any:
    return ctx.browser.tab_of(page)


def check_url_arg(config: Any, args: dict[str, Any]) -> None:
    """Refuse a blocked URL (scheme, or origin policy) before the browser is touched."""
    url = args.get("url")
    if isinstance(url, str) and url.strip() not in ("back", "forward"):
        check_url(url, config.allowed_schemes)
        check_origin(url, config.origin_policy())


@tool(
    name="navigate",
    page_text=("url", "title", "downloads", "error.details"),
    examples=(
        "go to example.com",
        "open the pricing page",
        "go back to the previous page",
        "visit this URL",
    ),
    check=check_url_arg,
    category="navigation",
    side_effects=True,
    intent=True,
    description="Open a URL, or go back/forward. Returns the final url, title and HTTP status.",
    properties={
        "url": {"type": "string", "description": 'http(s), about:blank or data: URL, or "back"/"forward".'},
        "wait_until": WAIT_UNTIL,
        "capture_artifact": CAPTURE,
    },
    required=["url"],
)
async def navigate(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    url = args["url"].strip()
    wait_until = args.get("wait_until", "load")
    page = await ctx.page(args.get("tab_id"))
    timeout = ctx.config.default_timeout_ms
    started = time.time()
    try:
        if url == "back":
            act = page.go_back(wait_until=wait_until, timeout=timeout)
        elif url == "forward":
            act = page.go_forward(wait_until=wait_until, timeout=timeout)
        else:
            act = _goto(page, url, wait_until, timeout)
        response, skipped = await until_loaded(page, act, wait_until)
    except Exception as exc:  # noqa: BLE001
        if "Download is starting" in str(exc):  # a file, not a page: kept (or refused) like any download
            tab = _tab(ctx, page)
            info = {**(await page_info(page, tab)), "status": None, "tab_id": tab.id if tab else None}
            return {**info, "downloads": await ctx.browser.downloads.since(started, expect=True)}
        await settle(page)
        raise nav_error(exc, url) from None
    info = await _loaded_info(ctx, page, response, skipped, started)
    if url in ("back", "forward") and response is None and not skipped and info["url"] == "about:blank":
        info["note"] = f"no history entry to go {url} to"
    return info


@tool(
    name="page_reload",
    page_text=("url", "title", "downloads"),
    examples=(
        "refresh the page",
        "reload this tab",
        "the page looks stuck, reload it",
    ),
    category="navigation",
    side_effects=True,
    description="Reload the tab's page. Refs of the old page become stale.",
    properties={"wait_until": WAIT_UNTIL},
)
async def page_reload(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    page = await ctx.page(args.get("tab_id"))
    wait_until = args.get("wait_until", "load")
    started = time.time()
    try:
        act = page.reload(wait_until=wait_until, timeout=ctx.config.default_timeout_ms)
        response, skipped = await until_loaded(page, act, wait_until)
    except Exception as exc:  # noqa: BLE001
        raise nav_error(exc, page.url) from None
    info = await _loaded_info(ctx, page, response, skipped, started)
    del info["tab_id"]  # as before: page_reload's result names no tab
    return info


_WAIT_KINDS = ("selector", "text", "url", "load_state", "time_ms")
#: How often a long wait tells a listening face (MCP progress) how far it is.
TICK_S = 1.0


async def _tick(ctx: ToolContext, message: str, total_ms: float) -> None:
    """Report the milliseconds waited out of ``total_ms`` every :data:`TICK_S` (a no-op for most faces)."""
    if getattr(ctx.call, "progress_fn", None) is None:
        return
    loop = asyncio.get_running_loop()
    started = loop.time()
    while True:
        await asyncio.sleep(TICK_S)
        ctx.progress(min(round((loop.time() - started) * 1000), total_ms), total_ms, message)


@tool(
    name="wait_for",
    page_text=("url", "title"),
    examples=(
        "wait until the results appear",
        "wait for the page to finish loading",
        "pause two seconds",
        "wait until the URL changes",
    ),
    category="navigation",
    description="Wait for a selector, text, URL, load state or time. "
    "Give exactly one condition; timeout_ms defaults to 10000.",
    properties={
        "selector": {"type": "string"},
        "text": {"type": "string"},
        "url": {"type": "string", "description": "glob, e.g. **/done*"},
        "load_state": {"type": "string", "enum": ["load", "domcontentloaded", "networkidle"]},
        "time_ms": {"type": "integer", "minimum": 0, "maximum": 60000},
        "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 120000, "description": "default 10000"},
    },
)
async def wait_for(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    given = [k for k in _WAIT_KINDS if k in args]
    if len(given) != 1:
        raise InvalidArgument(f"give exactly one of {', '.join(_WAIT_KINDS)} (got {', '.join(given) or 'none'})")
    kind = given[0]
    timeout = args.get("timeout_ms", 10_000)
    page = await ctx.page(args.get("tab_id"))
    started = asyncio.get_running_loop().time()
    ticker = asyncio.ensure_future(_tick(ctx, f"wait_for {kind}", args["time_ms"] if kind == "time_ms" else timeout))
    try:
        if kind == "selector":
            await page.wait_for_selector(args["selector"], state="visible", timeout=timeout)
        elif kind == "text":
            await page.get_by_text(args["text"]).first.wait_for(state="visible", timeout=timeout)
        elif kind == "url":
            await page.wait_for_url(args["url"], timeout=timeout)
        elif kind == "load_state":
            await page.wait_for_load_state(args["load_state"], timeout=timeout)
        else:
            await asyncio.sleep(args["time_ms"] / 1000)
    except Exception as exc:  # noqa: BLE001
        err = from_playwright(exc)
        if err.code == "TIMEOUT":
            raise Timeout(
                f"{kind} {args[kind]!r} not reached within {timeout} ms", details={kind: args[kind]}
            ) from None
        if err.code == "INVALID_ARGUMENT" and kind == "selector":
            raise InvalidArgument(f"invalid selector {args[kind]!r}", details={"selector": args[kind]}) from None
        raise err from None
    finally:
        ticker.cancel()
    waited = round((asyncio.get_running_loop().time() - started) * 1000)
    return {"condition": kind, "value": args[kind], "waited_ms": waited, **(await page_info(page, _tab(ctx, page)))}
