"""Over streamable HTTP too, NaN/Infinity in a request are a parse error, and a call never becomes a
JSON-RPC error whatever its arguments (issue 16: 1, 2)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp_shim_helpers import RawSession, sse_messages

from ocnb.audit.fence import unfence
from ocnb.mcp import McpHandle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def raw(mcp_server: McpHandle) -> Any:
    with httpx.Client(timeout=30) as client:
        yield RawSession(mcp_server, client)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_nonfinite_numbers_are_a_parse_error(raw: RawSession, number: str) -> None:
    body = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait_for","arguments":{"time_ms":%s}}}'
    replies = [m for m in sse_messages(raw.post(body % number, raw=True)) if m.get("id") == 7]
    assert replies and replies[0]["error"]["code"] == -32700, replies


def test_any_arguments_come_back_as_tool_results(raw: RawSession) -> None:
    deep: Any = 1
    for _ in range(150):
        deep = [deep]
    for i, arguments in enumerate([{"url": deep}, {"url": "\x00"}, {"": 1, "timeout_ms": 10**30}], start=20):
        reply = raw.request("tools/call", {"name": "navigate", "arguments": arguments}, id=i)
        payload = unfence([c["text"] for c in reply["result"]["content"]])  # navigate's lean text: "error CODE …"
        assert reply["result"]["isError"] is True and payload["error"]["code"] == "INVALID_ARGUMENT", reply
