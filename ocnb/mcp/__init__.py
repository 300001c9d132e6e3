"""The MCP shim: the session's tools for agents, over streamable HTTP (in the kernel) or stdio.

``ocnb.mcp.serve(session)`` starts the HTTP server in the kernel; ``ocnb mcp`` runs a stand-alone
stdio (or ``--http PORT``) server. Both are thin adapters: ``tools/list`` is the registry and
``tools/call`` is dispatch with ``source="mcp"``.
"""

from __future__ import annotations

from .._extras import extra

with extra("mcp"):
    from .http import McpHandle, McpRemoteBindError, McpSecurityWarning, McpTokenError, load_or_create_token, serve
    from .server import McpBridge, run_stdio, to_call_result, tool_to_mcp

__all__ = [
    "McpBridge",
    "McpHandle",
    "McpRemoteBindError",
    "McpSecurityWarning",
    "McpTokenError",
    "load_or_create_token",
    "run_stdio",
    "serve",
    "to_call_result",
    "tool_to_mcp",
]
