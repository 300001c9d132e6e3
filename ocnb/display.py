"""HTML rendering of tool results for notebooks (``text/plain`` is always produced as well)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import ToolResult

__all__ = ["render_html"]

_MAX_INLINE_IMAGE = 4 * 1024 * 1024


def _error_box(result: ToolResult) -> str:
    assert result.error is not None
    details = ""
    if result.error.details:
        details = (
            "<details><summary>details</summary><pre>"
            + html.escape(json.dumps(result.error.details, ensure_ascii=False, indent=2, default=str))
            + "</pre></details>"
        )
    return (
        '<div class="ocnb-error" style="border-left:4px solid #d33;background:#fdecea;padding:4px 8px;'
        'font-family:monospace">'
        f"<b>{html.escape(result.error.code)}</b> {html.escape(result.tool)}: "
        f"{html.escape(result.error.message)}{details}</div>"
    )


def _outline(content: str, head: dict[str, Any]) -> str:
    title = html.escape(str(head.get("title", "")))
    url = html.escape(str(head.get("url", "")))
    return (
        f'<details open class="ocnb-outline"><summary><b>{title}</b> <code>{url}</code></summary>'
        f'<pre style="max-height:32em;overflow:auto">{html.escape(content)}</pre></details>'
    )


def _image(path: str) -> str:
    p = Path(path)
    if not p.is_file() or p.stat().st_size > _MAX_INLINE_IMAGE:
        return f"<code>{html.escape(path)}</code>"
    b64 = base64.b64encode(p.read_bytes()).decode()
    return f'<img src="data:image/png;base64,{b64}" style="max-width:100%;border:1px solid #ccc"/>'


def render_html(result: ToolResult) -> str:
    """Render a :class:`ToolResult` as compact HTML: outline, image, or a JSON block."""
    if not result.ok:
        return _error_box(result)
    data = result.data
    if isinstance(data, dict):
        if isinstance(data.get("content"), str):
            return _outline(data["content"], data)
        if isinstance(data.get("path"), str) and data["path"].endswith(".png"):
            return _image(data["path"])
    body = html.escape(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    return f'<div class="ocnb-result"><b>{html.escape(result.tool)}</b> ok<pre>{body}</pre></div>'
