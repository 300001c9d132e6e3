"""page_pdf: print the tab's page to a PDF file (capability group ``pdf``).

The file goes under ``OCNB_HOME/pdfs/<session_id>/`` (0600, folders 0700); the result is its path and
a short summary (bytes, pages, url, title), never the bytes themselves. Chromium prints PDFs in
headless mode only: a headed browser gets ``DISABLED``.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import Disabled, OcnbError, from_playwright
from ..files import atomic_write_bytes
from ..registry import tool

__all__ = ["page_pdf", "pdf_pages"]

_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def pdf_pages(data: bytes) -> int:
    """How many pages a PDF has (its ``/Type /Page`` objects; Chromium writes them uncompressed)."""
    return len(_PAGE.findall(data))


@tool(
    name="page_pdf",
    examples=(
        "save this page as a PDF",
        "print the page to a PDF file",
        "export the article as PDF",
    ),
    category="pdf",
    group="pdf",
    description="Print the page to a PDF file. "
    "Returns the file path, size and page count; landscape and background (print backgrounds) are optional.",
    properties={"landscape": {"type": "boolean", "default": False}, "background": {"type": "boolean", "default": True}},
)
async def page_pdf(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    page = await ctx.page(args.get("tab_id"))
    try:
        data = await page.pdf(
            landscape=bool(args.get("landscape", False)), print_background=bool(args.get("background", True))
        )
    except OcnbError:
        raise
    except Exception as exc:  # noqa: BLE001 - translated at the seam
        if not ctx.config.headless:
            raise Disabled("Chromium prints PDFs in headless mode only; start the session with headless=True") from None
        raise from_playwright(exc) from None
    path = ctx.home / "pdfs" / ctx.session.id / f"page-{ctx.call.seq:05d}.pdf"
    atomic_write_bytes(path, data)  # 0600, in folders 0700
    title = ""
    try:
        title = await page.title()
    except Exception:  # noqa: BLE001 - the summary does without it
        pass
    return {"path": str(path), "bytes": len(data), "pages": pdf_pages(data), "url": page.url, "title": title}
