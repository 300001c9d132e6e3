"""Acting on what a screenshot shows (capability group ``vision``): interact_at and element_screenshot.

``interact_at`` takes a point of the viewport (CSS pixels, as ``page_screenshot`` shows them at the
default scale), finds the element a click there lands on (:func:`ocnb.perception.point.element_at`:
ref, role, name), and acts on that ref through ``interact`` — the same resolution, checks and
change report — at that very point. Its result and journal line start with the element's ref, role
and name, so a coordinate click is as auditable as a ref click. ``action="drag"`` presses the mouse at
the point, moves it in steps to ``to`` ``[x, y]`` and releases it there (pointer events and HTML5
drag and drop both see it); the element at the drop point is named too (``target`` in the result,
the summary note of the journal line). A point outside the viewport is ``INVALID_ARGUMENT`` and
nothing happens; for a drag, both points are checked before the mouse moves.

``element_screenshot`` writes a PNG of one element (ref or query) under ``OCNB_HOME/screenshots/``,
one image pixel per CSS pixel, and returns the path with the element and its size.
"""

from __future__ import annotations

from typing import Any

from ..audit.notes import note
from ..browser.dialogs import about_to_act
from ..dispatch import ToolContext
from ..errors import InvalidArgument, OcnbError
from ..files import atomic_write_bytes
from ..perception.point import element_at
from ..perception.targets import resolve_target
from ..registry import tool
from .evidence import png_size
from .interact import interact
from .targeting import TARGET_PROPS, action_timeout, target_args, watch_changes

__all__ = ["element_screenshot", "interact_at"]

#: What interact_at can do at a point (acting on a field there takes value/key like interact).
AT_ACTIONS = ("click", "double_click", "hover", "fill", "type", "press", "drag")
#: Mouse moves between the press and the release of a drag (pointermove handlers see each one).
DRAG_STEPS = 12


async def _viewport(page: Any) -> dict[str, Any]:
    try:
        size = await page.evaluate("() => ({width: innerWidth, height: innerHeight})")
    except Exception:  # noqa: BLE001 - only for the message
        size = page.viewport_size or {}
    return dict(size)


async def _border(page: Any, ref: str) -> tuple[float, float]:
    """The element's left and top border widths (a click position counts from inside them)."""
    r = await resolve_target(page, ref=ref)
    try:
        left, top = await r.element.evaluate("e => [e.clientLeft || 0, e.clientTop || 0]")
    except Exception:  # noqa: BLE001 - interact reports what is wrong with the element
        return 0.0, 0.0
    return float(left), float(top)


@tool(
    name="interact_at",
    page_text=("name", "element", "target", "changes", "url", "title", "downloads", "error.details"),
    examples=(
        "click at these coordinates",
        "click the spot I see in the screenshot",
        "tap the point x 200 y 340",
        "drag from this point to that point of the screenshot",
    ),
    category="vision",
    group="vision",
    side_effects=True,
    intent=True,
    description="Act on the element at x,y of the viewport (CSS px, as in a screenshot). "
    "The element at the point is found first and named (ref, role, name) in the result and the journal; "
    "a click or hover lands on that point. action defaults to click; value is needed for fill/type, key for press, "
    "to [x, y] for drag.",
    properties={
        "x": {"type": "number", "minimum": 0},
        "y": {"type": "number", "minimum": 0},
        "action": {"type": "string", "enum": list(AT_ACTIONS), "default": "click"},
        "value": {"type": "string"},
        "key": {"type": "string"},
        "to": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
    },
    required=["x", "y"],
)
async def interact_at(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    x, y = float(args["x"]), float(args["y"])
    action = args.get("action", "click")
    if action in ("fill", "type") and args.get("value") is None:
        raise InvalidArgument(f"action {action} needs value")
    if action == "press" and not args.get("key"):
        raise InvalidArgument("action press needs key")
    if (action == "drag") != ("to" in args):
        raise InvalidArgument("action drag needs to [x, y], and to goes with action drag only")
    page = await ctx.page(args.get("tab_id"))
    hit = await _element_at(page, x, y)
    named = {"ref": hit["ref"], "role": hit["role"], "name": hit.get("name") or ""}
    if action == "drag":
        return await _drag(ctx, page, hit, named, (x, y), (float(args["to"][0]), float(args["to"][1])))
    about_to_act(ctx.call, {**named, "point": {"x": x, "y": y}, "action": action})  # if a dialog interrupts
    rect = hit["rect"]
    acting: dict[str, Any] = {"ref": hit["ref"], "action": action}
    for key in ("value", "key", "tab_id"):
        if args.get(key) is not None:
            acting[key] = args[key]
    if action in ("click", "double_click", "hover"):  # Playwright counts from the padding box
        left, top = await _border(page, hit["ref"])
        acting["position"] = {"x": max(0.0, x - rect["x"] - left), "y": max(0.0, y - rect["y"] - top)}
    try:
        done = await interact(ctx, acting)
    except Exception as exc:  # noqa: BLE001 - Playwright's refusal to fill a non-field is reworded
        if not isinstance(exc, OcnbError) and "is not an <input>" in str(exc):  # Playwright's words for it
            what = f"{named['role']} {named['name']!r} <{hit.get('tag')}>"
            raise InvalidArgument(
                f"the element at ({x:g}, {y:g}) is {what}, not a field; nothing was typed", details=named
            ) from None
        raise
    element = {k: hit.get(k) for k in ("tag", "rect", "visible", "frame_ordinal")}
    return {**named, "point": {"x": x, "y": y}, "action": action, "element": element, **_rest(done)}


async def _element_at(page: Any, x: float, y: float) -> dict[str, Any]:
    """The element at (x, y), or ``INVALID_ARGUMENT`` when the point is outside the viewport."""
    hit = await element_at(page, x, y)
    if hit is None:
        size = await _viewport(page)
        raise InvalidArgument(
            f"({x:g}, {y:g}) is outside the viewport ({size.get('width')}x{size.get('height')} CSS px); nothing was done",
            details={"x": x, "y": y, "viewport": size},
        )
    return hit


async def _drag(
    ctx: ToolContext,
    page: Any,
    hit: dict[str, Any],
    named: dict[str, Any],
    start: tuple[float, float],
    end: tuple[float, float],
) -> dict[str, Any]:
    """Press at ``start``, move in :data:`DRAG_STEPS` steps to ``end``, release; name both elements."""
    drop = await _element_at(page, *end)  # checked before the mouse moves
    target = {"ref": drop["ref"], "role": drop["role"], "name": drop.get("name") or ""}
    point, to = {"x": start[0], "y": start[1]}, {"x": end[0], "y": end[1]}
    about_to_act(ctx.call, {**named, "point": point, "action": "drag", "to": to, "target": target})
    note(ctx.call, "to ref={ref} role={role} name={name}".format(**target))
    frames = page.frames
    ordinal = hit.get("frame_ordinal") or 0
    async with watch_changes(ctx, page, frames[ordinal] if ordinal < len(frames) else page.main_frame) as watch:
        await page.mouse.move(*start)
        await page.mouse.down()
        await page.mouse.move(*end, steps=DRAG_STEPS)
        await page.mouse.up()
        changes = await watch.changes()
    element = {k: hit.get(k) for k in ("tag", "rect", "visible", "frame_ordinal")}
    tab = ctx.browser.tab_of(page)
    return {
        **named,
        "point": point,
        "action": "drag",
        "to": to,
        "target": {**target, "tag": drop.get("tag"), "rect": drop.get("rect")},
        "element": element,
        "changes": changes,
        "tab_id": tab.id if tab else None,
    }


def _rest(done: dict[str, Any]) -> dict[str, Any]:
    """interact's report minus what interact_at already says (the element)."""
    return {k: v for k, v in done.items() if k not in ("element", "action", "via", "frame_ordinal")}


@tool(
    name="element_screenshot",
    page_text=("name", "error.details"),
    examples=(
        "screenshot just the chart",
        "capture an image of this one element",
        "take a picture of the login box only",
    ),
    category="vision",
    group="vision",
    description="Screenshot one element to a PNG file. "
    "Returns the file path, the element and the image size (CSS px, the element's box).",
    properties={**TARGET_PROPS},
)
async def element_screenshot(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ref, query = target_args(args)
    page = await ctx.page(args.get("tab_id"))
    r = await resolve_target(page, ref=ref, query=query)
    data = await r.element.screenshot(type="png", scale="css", timeout=action_timeout(ctx))
    box = await r.element.bounding_box()
    path = ctx.home / "screenshots" / ctx.session.id / f"element-{ctx.call.seq:05d}.png"
    atomic_write_bytes(path, data)  # 0600, in folders 0700
    width, height = png_size(data)
    return {**r.describe(), "path": str(path), "bytes": len(data), "width": width, "height": height, "box": box}
