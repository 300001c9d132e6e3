"""What a client reads: a registry tool as ``tools/list`` shows it, a ToolResult as a ``CallToolResult``."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..audit.fence import Fence
from ..registry import ToolDef
from ..results import ToolResult
from . import resources

__all__ = ["MAX_IMAGE_BYTES", "to_call_result", "tool_to_mcp", "unknown_tool"]

#: Images larger than this are not inlined (the JSON text still gives their path).
MAX_IMAGE_BYTES = 8 * 1024 * 1024
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


def tool_to_mcp(tooldef: ToolDef) -> types.Tool:
    """A registry tool as MCP ``tools/list`` shows it, with hints from its side-effect flag.

    Only hints that differ from the MCP spec's defaults are sent: ``readOnlyHint: true`` for a tool
    without side effects, nothing for one with side effects (the defaults, ``readOnlyHint: false`` and
    ``destructiveHint: true``, say exactly that). Spelling the defaults out would cost about 14 tokens
    per acting tool, and every token of ``tools/list`` sits in an agent's context.
    """
    spec = tooldef.to_mcp()
    return types.Tool(
        name=spec["name"],
        description=spec["description"],
        input_schema=spec["inputSchema"],
        annotations=None if tooldef.side_effects else types.ToolAnnotations(read_only_hint=True),
    )


def _images(data: Any) -> list[types.ImageContent]:
    """Image content for a result whose data names an image file (``{"path": "...png"}``)."""
    if not isinstance(data, dict) or not isinstance(data.get("path"), str):
        return []
    path = Path(data["path"])
    mime = _IMAGE_TYPES.get(path.suffix.lower())
    if mime is None:
        return []
    try:
        if not path.is_file() or path.stat().st_size > MAX_IMAGE_BYTES:
            return []
        raw = path.read_bytes()
    except OSError:
        return []
    return [types.ImageContent(data=base64.b64encode(raw).decode("ascii"), mime_type=mime)]


def to_call_result(
    result: ToolResult, home: Path | None = None, fence: Fence | None = None, args: Any = None
) -> types.CallToolResult:
    """A ToolResult as an MCP ``CallToolResult``: text (+ image), ``isError`` on failure.

    The text is :meth:`Fence.for_model <ocnb.audit.fence.Fence.for_model>`: for an act or a page read,
    one block (the outcome in ocnb's words as a JSON line, then the page's strings in the fence); for
    other tools the JSON head, then the text a page controls (what its tool declares in ``page_text``)
    between the session's ``[page TOKEN]`` markers in a second block. A page outline is plain text,
    unescaped: JSON-escaping its quotes and newlines would cost the agent tokens. ``args`` (the call's
    arguments) lets a lean result leave out what the agent wrote itself.

    No ``structuredContent``: a client that shows a model both it and the text (the spec asks servers to
    send the text too) would pay the result twice, and no tool declares an ``outputSchema``.
    """
    fence = fence or Fence()
    content: list[Any] = [types.TextContent(text=block) for block in fence.for_model(result, args)]
    if result.ok:
        content.extend(_images(result.data))
        if home is not None:
            content.extend(resources.links_for(home, result.data))
    return types.CallToolResult(content=content, is_error=not result.ok)


def unknown_tool(name: str, result: ToolResult | None) -> MCPError:
    """The JSON-RPC error for a call to a tool the registry does not have: -32602 (invalid params), as
    the spec wants ("Protocol Errors: Unknown tools"); ``data`` is ocnb's error (code ``UNKNOWN_TOOL``,
    a message naming where the list is)."""
    shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
    data = result.error.to_dict() if result is not None and result.error is not None else None
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {shown}", data=data)
