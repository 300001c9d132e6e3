"""downloads: the files pages downloaded in this browser (capability group ``downloads``).

Every download is kept under ``OCNB_HOME/downloads/`` with a safe name, or refused over
``Settings.download_max_bytes`` (see :mod:`ocnb.browser.download_store`), whether or not this group is offered;
the call that caused one reports it in its ``changes``.
"""

from __future__ import annotations

from typing import Any

from ..registry import tool

__all__ = ["downloads"]


@tool(
    name="downloads",
    examples=(
        "which files did I download",
        "where did the report get saved",
        "list the downloaded files",
    ),
    category="downloads",
    group="downloads",
    uses_page=False,
    description="List the files downloaded in this browser. Each: name, path, bytes, state (saved, refused, failed).",
    properties={},
)
async def downloads(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    kept = ctx.browser.downloads
    return {"folder": str(kept.folder), "downloads": kept.describe()}
