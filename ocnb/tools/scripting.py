"""javascript_tool (can be disabled) and page_screenshot."""

from __future__ import annotations

import json
import struct
from typing import Any

from ..errors import Disabled, OcnbError, from_playwright
from ..registry import tool
from ..storage import atomic_write_bytes

__all__ = ["javascript_tool", "page_screenshot"]


@tool(
    name="javascript_tool",
    category="js",
    side_effects=True,
    description="Evaluate JavaScript in the page. It returns the JSON-able result. "
    "A function expression is called. Disabled when the configuration turns it off.",
    properties={"expression": {"type": "string", "minLength": 1}},
    required=["expression"],
)
async def javascript_tool(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    if not ctx.config.allow_javascript:
        raise Disabled("javascript_tool is disabled by configuration (allow_javascript=False / OCNB_JAVASCRIPT=0)")
    page = await ctx.page(args.get("tab_id"))
    try:
        value = await page.evaluate(args["expression"])
    except Exception as exc:  # noqa: BLE001
        err = from_playwright(exc)
        if err.code == "INTERNAL":
            first = str(exc).splitlines()[0]
            raise OcnbError(first.removeprefix("Page.evaluate: "), code="SCRIPT_ERROR") from None
        raise err from None
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        value = repr(value)
    return {"result": value}


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG header."""
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


@tool(
    name="page_screenshot",
    category="evidence",
    description="Take a PNG screenshot of the tab. Returns the file path and size; full_page captures the whole page.",
    properties={"full_page": {"type": "boolean", "default": False}},
)
async def page_screenshot(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    page = await ctx.page(args.get("tab_id"))
    path = ctx.home / "screenshots" / ctx.session.id / f"shot-{ctx.call.seq:05d}.png"
    data = await page.screenshot(full_page=bool(args.get("full_page", False)), type="png")
    atomic_write_bytes(path, data)  # 0600, in folders 0700
    width, height = png_size(data)
    return {"path": str(path), "bytes": len(data), "width": width, "height": height, "url": page.url}
