"""extract over MCP, through the SDK's client: the rows arrive as compact CSV, inside the page-text fence."""

from __future__ import annotations

import csv
import io
import json

import pytest
from mcp_shim_helpers import http_client, payload, texts

from ocnb.commands.demosite import DemoSite
from ocnb.mcp import McpHandle

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


async def test_extract_sends_csv_with_its_row_count_and_columns(mcp_server: McpHandle, site: DemoSite) -> None:
    async with http_client(mcp_server) as client:
        assert (await client.call_tool("navigate", {"url": site.page("checkout.html")})).is_error is False
        got = await client.call_tool("extract", {})
        bad = await client.call_tool("extract", {"fields": {"x": "td["}, "item": "tr"})
    assert got.is_error is False
    head, fence = texts(got)
    data = json.loads(head)["data"]
    assert data["rows"] == 3 and data["format"] == "csv" and data["content"] == "<fenced text>"
    assert "Notebook" not in head  # the page's words only inside the fence
    lines = fence.split("\n")
    assert lines[0].startswith("[page ") and lines[-1] == lines[0].replace("[page ", "[/page ")
    assert "Item,Qty,Price\nNotebook,2,$12.00\n" in fence  # plain CSV, not JSON-escaped
    full = payload(got)["data"]
    assert full["columns"] == ["Item", "Qty", "Price"]
    assert list(csv.reader(io.StringIO(full["content"])))[-1] == ["Total", "Total", "$42.00"]
    assert bad.is_error is True and payload(bad)["error"]["code"] == "INVALID_ARGUMENT"
