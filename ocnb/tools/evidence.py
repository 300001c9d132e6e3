"""Evidence: page_screenshot and oc_evidence_bundle (URL, DOM, screenshot, console, network, dialogs)."""

from __future__ import annotations

import struct
from typing import Any

from ..contracts.assertions import PageObservations
from ..contracts.evidence import create_bundle
from ..dispatch import ToolContext
from ..files import atomic_write_bytes
from ..registry import tool

__all__ = ["TO_FILE", "oc_evidence_bundle", "output_to_file", "page_screenshot", "png_size"]


#: Characters of a written output shown in the result.
PREVIEW_CHARS = 160
#: The ``to_file`` argument of tools whose output can be large (its name says what it does; the result
#: holds the path under ``OCNB_HOME/outputs/`` and a preview).
TO_FILE = {"type": "boolean"}


def output_to_file(ctx: ToolContext, tool_name: str, text: str, ext: str) -> dict[str, Any]:
    """Write a tool's (secret-masked) text output under ``OCNB_HOME/outputs/<session>/`` (0600); the
    result then holds the path, size and a short preview instead of the text itself."""
    masked = ctx.session.secrets.mask_text(text)
    path = ctx.home / "outputs" / ctx.session.id / f"{tool_name}-{ctx.call.seq:05d}.{ext}"
    data = masked.encode("utf-8")
    atomic_write_bytes(path, data)  # 0600, in folders 0700
    preview = masked[:PREVIEW_CHARS] + ("…" if len(masked) > PREVIEW_CHARS else "")
    return {"path": str(path), "bytes": len(data), "chars": len(masked), "preview": preview}


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG header."""
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


@tool(
    name="page_screenshot",
    page_text=("url",),
    examples=(
        "take a screenshot",
        "capture the whole page as an image",
        "show me what the page looks like now",
    ),
    category="evidence",
    description="Take a PNG screenshot of the tab. Returns the file path and size; full_page captures the whole page.",
    properties={"full_page": {"type": "boolean", "default": False}},
)
async def page_screenshot(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    page = await ctx.page(args.get("tab_id"))
    path = ctx.home / "screenshots" / ctx.session.id / f"shot-{ctx.call.seq:05d}.png"
    data = await page.screenshot(full_page=bool(args.get("full_page", False)), type="png")
    atomic_write_bytes(path, data)  # 0600, in folders 0700
    width, height = png_size(data)
    return {"path": str(path), "bytes": len(data), "width": width, "height": height, "url": page.url}


@tool(
    name="oc_evidence_bundle",
    examples=(
        "save proof of what the page looked like",
        "collect the DOM, screenshot and console for a bug report",
        "keep evidence of this failure",
    ),
    category="evidence",
    description="Save evidence: URL, DOM, screenshot, console, network. "
    "Dialogs are included and secrets masked. Returns the bundle id and folder.",
    properties={"reason": {"type": "string", "maxLength": 500}, "since_ms": {"type": "integer", "minimum": 0}},
)
async def oc_evidence_bundle(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    page = await ctx.page(args.get("tab_id"))
    tab = ctx.browser.tab_of(page)
    obs = PageObservations.from_tab(tab, args.get("since_ms")) if tab is not None else PageObservations()
    folder = await create_bundle(
        page,
        obs,
        home=ctx.home,
        reason=args.get("reason") or "on request",
        secrets=ctx.session.secrets,
    )
    return {"bundle_id": folder.name, "path": str(folder), "files": sorted(p.name for p in folder.iterdir())}
