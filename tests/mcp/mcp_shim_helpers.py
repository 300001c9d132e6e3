"""Helpers for the MCP shim tests: the SDK client over HTTP and stdio, and raw JSON-RPC over plain HTTP."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ocnb.audit.fence import unfence
from ocnb.mcp import McpHandle

ACCEPT = "application/json, text/event-stream"


def server_params(home: Path, *extra: str) -> StdioServerParameters:
    """``ocnb mcp`` over stdio with its storage in ``home`` (and the machine's Chromium, if one is set)."""
    env = {"OCNB_HOME": str(home)}
    if os.environ.get("OCNB_CHROMIUM"):
        env["OCNB_CHROMIUM"] = os.environ["OCNB_CHROMIUM"]
    return StdioServerParameters(command=sys.executable, args=["-m", "ocnb.mcp.cli", *extra], env=env)


def texts(result: types.CallToolResult) -> list[str]:
    """The text blocks of a tools/call result (the JSON head, then the page's fenced text if any)."""
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def payload(result: types.CallToolResult) -> dict:
    """The ToolResult JSON of a tools/call result, the page's fenced text put back in its place."""
    return unfence(texts(result))


@asynccontextmanager
async def http_client(handle: McpHandle, *, mode: str = "auto", **kwargs: Any) -> AsyncIterator[Client]:
    """The SDK's own client over streamable HTTP, sending the handle's bearer token."""
    async with create_mcp_http_client(headers=handle.headers) as http:
        async with Client(streamable_http_client(handle.url, http_client=http), mode=mode, **kwargs) as client:
            yield client


def sse_messages(response: httpx.Response) -> list[dict[str, Any]]:
    """JSON-RPC messages in a POST response (JSON body or SSE ``data:`` lines)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    out = []
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            out.append(json.loads(line[5:]))
    return out


class RawSession:
    """A hand-driven handshake-era MCP session over plain HTTP (for malformed traffic)."""

    def __init__(self, handle: McpHandle, client: httpx.Client) -> None:
        self.handle = handle
        self.client = client
        self.headers = {**handle.headers, "Accept": ACCEPT, "Content-Type": "application/json"}
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        }
        r = client.post(handle.url, json=init, headers=self.headers)
        assert r.status_code == 200, r.text
        self.headers["mcp-session-id"] = r.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = "2025-06-18"
        r = client.post(
            handle.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers
        )
        assert r.status_code == 202, r.text

    def post(self, body: bytes | str | Any, *, raw: bool = False, **headers: str) -> httpx.Response:
        content = body if raw else json.dumps(body)
        return self.client.post(self.handle.url, content=content, headers={**self.headers, **headers})

    def request(self, method: str, params: Any = None, id: int = 1) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        r = self.post(msg)
        replies = [m for m in sse_messages(r) if m.get("id") == id]
        assert replies, (r.status_code, r.text)
        return replies[0]


def read_banner(proc: Any, until: str) -> str:
    """The start-up banner of a server started as ``proc`` (text stdout), read up to the line holding ``until``."""
    banner = ""
    assert proc.stdout is not None
    while until not in banner:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "no output"
        banner += line
    return banner
