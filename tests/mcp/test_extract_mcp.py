"""extract over MCP, through the SDK's client: the rows arrive as compact CSV in their own text block."""

from __future__ import annotations

import csv
import io
import json

import mcp_types as types
import pytest
from mcp_shim_helpers import http_client

from ocnb.commands.demosite import DemoSite
from ocnb.mcp import McpHandle

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


async def test_extract_sends_csv_with_its_row_count_and_columns(mcp_server: McpHandle, site: DemoSite) -> None:
    async with http_client(mcp_server) as client:
        assert (await client.call_tool("navigate", {"url": site.page("checkout.html")})).is_error is False
        got = await client.call_tool("extract", {})
        bad = await client.call_tool("extract", {"fields": {"x": "td["}, "item": "tr"})
    assert got.is_error is False and len(got.content) == 2
    head, body = got.content
    assert isinstance(head, types.TextContent) and isinstance(body, types.TextContent)
    data = json.loads(head.text)["data"]
    assert data["rows"] == 3 and data["columns"] == ["Item", "Qty", "Price"] and data["format"] == "csv"
    assert body.text.splitlines()[:2] == ["Item,Qty,Price", "Notebook,2,$12.00"]  # plain CSV, not JSON
    assert list(csv.reader(io.StringIO(body.text)))[-1] == ["Total", "Total", "$42.00"]
    assert bad.is_error is True and json.loads(bad.content[0].text)["error"]["code"] == "INVALID_ARGUMENT"
