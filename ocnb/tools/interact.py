"""Interaction tools: interact, drag_drop and scroll (form tools are in :mod:`ocnb.tools.forms`).

Each takes a ``ref`` (from read_page / find / query_dom) or a plain-words ``query``, resolved by
:func:`ocnb.perception.targets.resolve_target` before anything happens (``STALE_REF``,
``AMBIGUOUS_TARGET`` and ``ELEMENT_NOT_FOUND`` never act). Each result names the element acted on
(ref, role, name) and what changed visibly (:class:`ocnb.perception.changes.ChangeWatch`): ``navigated`` (+ ``url``), ``new_tab``, ``dialogs``
(handled by the browser layer's documented default: alerts/confirms accepted, prompts answered with
their default value; ``Config.dialog_policy="dismiss"`` dismisses), ``dom_changed``, and ``downloads``
(only when the action started one: each saved, or refused, see :mod:`ocnb.browser.download_store`).
With ``capture_artifact: true`` the result also carries the element's ``selector_chain`` and
``fingerprint`` (what skill replay checks before acting again).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..audit.secret_origins import check_target
from ..browser.dialogs import about_to_act
from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..perception.actions import ACTIONS, check_key, perform
from ..perception.targets import Resolved, focused, resolve_target
from ..registry import tool
from .targeting import (
    CAPTURE,
    TARGET_PROPS,
    action_timeout,
    capture_if_asked,
    element_result,
    target_args,
    target_spec,
    watch_changes,
)

__all__ = ["drag_drop", "interact", "scroll"]


async def _act(page: Any, r: Resolved, action: str, args: dict[str, Any], timeout: int) -> dict[str, str] | None:
    """Run the action; ``{from, to}`` when a value was put into the field's format (see :mod:`..perception.fills`)."""
    return await perform(
        r.element,
        action,
        value=args.get("value"),
        key=args.get("key"),
        timeout=timeout,
        position=args.get("position"),
    )


@tool(
    name="interact",
    # error.message: an ambiguity names its candidates and their context, INVALID_VALUE what a field holds
    page_text=("element", "changes", "url", "title", "downloads", "candidates", "error.message", "error.details"),
    examples=(
        "click the submit button",
        "press Enter in the search box",
        "tick the terms checkbox",
        "choose Germany in the country dropdown",
    ),
    category="interact",
    side_effects=True,
    intent=True,
    description="Click, fill, type, press, select, check or hover one element. "
    "The element is a ref or a query (press or type without one: the focused element); action defaults to click; "
    "value is needed for fill/type/select, key for press. "
    "Returns what changed (navigation, new tab, dialog).",
    properties={
        **TARGET_PROPS,
        "action": {"type": "string", "enum": list(ACTIONS), "default": "click"},
        "value": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {"type": "string"}}]},
        "key": {"type": "string", "description": "for press, e.g. Enter or Control+A"},
        "capture_artifact": CAPTURE,
    },
)
async def interact(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    action = args.get("action", "click")
    if action in ("fill", "type", "select") and args.get("value") is None:
        raise InvalidArgument(f"action {action} needs value")
    if action == "press" and not args.get("key"):
        raise InvalidArgument("action press needs key")
    if action == "press":
        try:  # before anything is resolved or pressed: Playwright would press the modifiers first
            check_key(args["key"])
        except ValueError as exc:
            raise InvalidArgument(str(exc), details={"key": str(args["key"])[:80]}) from None
    if action in ("press", "type") and args.get("ref") is None and args.get("query") is None:
        return await _keys_focused(ctx, args, action)
    ref, query = target_args(args)
    page = await ctx.page(args.get("tab_id"))
    r = await resolve_target(page, ref=ref, query=query, action=action)
    await check_target(ctx.session.secrets, page, r, args, action=action, key=args.get("key"))
    await ctx.session.approvals.check(ctx.call, page, r, action=action, key=args.get("key"))  # confirm: ask first
    about_to_act(ctx.call, {"element": r.describe(), "action": action}, keep=True)  # if a dialog interrupts
    chain = await capture_if_asked(args, page, r)
    async with watch_changes(ctx, page, r.frame, r.element if action in ("click", "press") else None) as watch:
        converted = await _act(page, r, action, args, action_timeout(ctx))
        changes = await watch.changes()
    extra = {"converted": converted} if converted else {}
    return await element_result(ctx, page, r, changes, chain, action=action, via=r.via, **extra)


async def _keys_focused(ctx: ToolContext, args: dict[str, Any], action: str) -> dict[str, Any]:
    """A key pressed or text typed on the page, as a person types it: on the focused element (reported,
    as a ref with role and name, so the journal shows what received it), or on the page when nothing is."""
    page = await ctx.page(args.get("tab_id"))
    if args.get("capture_artifact"):
        raise InvalidArgument(f"capture_artifact needs an element: give ref or query to record a {action}")
    key = str(args["key"]) if action == "press" else None
    r = await focused(page)
    await check_target(
        ctx.session.secrets, page, r, args if action == "press" else args.get("value"), action=action, key=key
    )
    await ctx.session.approvals.check(ctx.call, page, r, action=action, key=key)
    about_to_act(ctx.call, {"element": r.describe() if r else None, "action": action}, keep=True)
    async with watch_changes(ctx, page, r.frame if r else page.main_frame, r.element if r else None) as watch:
        if key is not None:
            await page.keyboard.press(key)  # an unknown key name: dispatch translates Playwright's error
        else:
            await page.keyboard.type(str(args["value"]))
        changes = await watch.changes()
    tab = ctx.browser.tab_of(page)
    out: dict[str, Any] = {"element": r.describe() if r else None, "action": action, "via": "focus" if r else "page"}
    out.update(changes=changes, frame_ordinal=r.frame_ordinal if r else 0, tab_id=tab.id if tab else None)
    return out


@tool(
    name="drag_drop",
    page_text=("source", "target", "changes", "error.details"),
    examples=(
        "drag the card into the done column",
        "move this item onto the trash",
        "drag and drop the file onto the drop zone",
    ),
    category="interact",
    side_effects=True,
    intent=True,
    description="Drag one element onto another. source and target are each a ref or a query.",
    properties={"source": {"type": "string", "minLength": 1}, "target": {"type": "string", "minLength": 1}},
    required=["source", "target"],
)
async def drag_drop(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    page = await ctx.page(args.get("tab_id"))
    src = await resolve_target(page, **target_spec(args["source"]))
    dst = await resolve_target(page, **target_spec(args["target"]))
    await ctx.session.approvals.check(ctx.call, page, src, action="drag")
    timeout = action_timeout(ctx)
    async with watch_changes(ctx, page, src.frame) as watch:
        await src.element.scroll_into_view_if_needed(timeout=timeout)
        a = await src.element.bounding_box()
        b = await dst.element.bounding_box()
        if not a or not b:
            raise InvalidArgument("source or target has no visible box")
        await page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
        await page.mouse.down()
        await page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=8)
        await page.mouse.up()
        changes = await watch.changes()
    tab = ctx.browser.tab_of(page)
    return {"source": src.describe(), "target": dst.describe(), "changes": changes, "tab_id": tab.id if tab else None}


#: Where an element (or the page: ``null``) stands in its scrolling, read after each wheel notch.
_SCROLL_POS_JS = """el => {
  const s = el || document.scrollingElement || document.documentElement;
  return {top: Math.round(s.scrollTop), max: Math.max(0, s.scrollHeight - s.clientHeight)};
}"""
WHEEL_STEP_PX = 300
WHEEL_MAX_NOTCHES = 60


@tool(
    name="scroll",
    page_text=("element", "changes", "error.details"),
    examples=(
        "scroll the terms to the bottom",
        "scroll down the page",
        "scroll this list up by 300 pixels",
        "scroll to the end of the agreement",
    ),
    category="interact",
    side_effects=True,
    intent=True,
    description="Scroll an element or the page with the mouse wheel. "
    'A ref or query scrolls that element, neither the page, as a person does: to "top" or "bottom", or by dy pixels (positive: down). Returns where it ended: scroll_top, '
    "scroll_max, at_end. Pages that wait for a scroll (read to the end to agree) see real wheel events.",
    properties={
        **TARGET_PROPS,
        "to": {"type": "string", "enum": ["top", "bottom"]},
        "dy": {"type": "number", "description": "pixels, positive down"},
    },
)
async def scroll(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    to, dy = args.get("to"), args.get("dy")
    if (to is None) == (dy is None) or (dy is not None and (isinstance(dy, bool) or dy == 0)):
        raise InvalidArgument('give exactly one of to ("top" or "bottom") or dy (non-zero pixels)', details={"to": to})
    ref, query = args.get("ref"), args.get("query")
    if ref is not None and query is not None:
        raise InvalidArgument("give ref or query, not both (neither scrolls the page)")
    page = await ctx.page(args.get("tab_id"))
    r = await resolve_target(page, ref=ref, query=query, action="scroll") if (ref or query) else None
    el = r.element if r else None
    pos = await (el.evaluate(_SCROLL_POS_JS) if el is not None else page.evaluate(_SCROLL_POS_JS, None))
    if r is not None and pos["max"] == 0:
        raise InvalidArgument(
            f"{r.describe()['ref']} does not scroll (its content fits): give the element that scrolls, or none for "
            "the page",
            details={"element": r.describe()},
        )
    about_to_act(ctx.call, {"element": r.describe() if r else None, "action": "scroll"}, keep=True)
    async with watch_changes(ctx, page, r.frame if r else page.main_frame) as watch:
        start, pos = pos, await _wheel(page, el, to, dy, pos)
        changes = await watch.changes()
    tab = ctx.browser.tab_of(page)
    at_end = pos["top"] <= 0 if (to == "top" or (dy is not None and dy < 0)) else pos["top"] >= pos["max"] - 1
    return {
        "element": r.describe() if r else None,
        "scroll_top": pos["top"],
        "scroll_max": pos["max"],
        "moved": pos["top"] - start["top"],
        "at_end": at_end,
        "changes": changes,
        "tab_id": tab.id if tab else None,
    }


async def _wheel(page: Any, el: Any, to: str | None, dy: float | None, pos: dict[str, int]) -> dict[str, int]:
    """Wheel notches over the element's visible centre (the viewport's for the page) until the goal is
    reached or the position stops moving; the last position read (Playwright's errors: dispatch translates)."""
    if el is not None:
        await el.scroll_into_view_if_needed(timeout=5000)
        box = await el.bounding_box()
        if not box:
            raise InvalidArgument("the element has no visible box to scroll over")
        vw = page.viewport_size or {"width": 1280, "height": 720}
        x0, y0 = max(box["x"], 0), max(box["y"], 0)
        x1, y1 = min(box["x"] + box["width"], vw["width"]), min(box["y"] + box["height"], vw["height"])
        x, y = (x0 + x1) / 2, (y0 + y1) / 2
    else:
        vw = page.viewport_size or await page.evaluate("() => ({width: innerWidth, height: innerHeight})")
        x, y = vw["width"] / 2, vw["height"] / 2
    await page.mouse.move(x, y)
    goal = 0 if to == "top" else pos["max"] if to == "bottom" else max(0, min(pos["max"], pos["top"] + (dy or 0)))
    still = 0
    for _ in range(WHEEL_MAX_NOTCHES):
        left = goal - pos["top"]
        if abs(left) < 1 or still >= 2:
            break
        await page.mouse.wheel(0, max(-WHEEL_STEP_PX, min(WHEEL_STEP_PX, left)))
        await asyncio.sleep(0.05)
        now = await (el.evaluate(_SCROLL_POS_JS) if el is not None else page.evaluate(_SCROLL_POS_JS, None))
        still = still + 1 if now["top"] == pos["top"] else 0
        pos = now
    return pos
