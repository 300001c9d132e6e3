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
    assert data["rows"] == 2 and data["format"] == "csv" and data["content"] == "<fenced text>"  # the total is a footer
    assert "Notebook" not in head  # the page's words only inside the fence
    lines = fence.split("\n")
    assert lines[0].startswith("[page ") and lines[-1] == lines[0].replace("[page ", "[/page ")
    assert "Item,Qty,Price\nNotebook,2,$12.00\n" in fence  # plain CSV, not JSON-escaped
    full = payload(got)["data"]
    assert full["columns"] == ["Item", "Qty", "Price"]
    assert list(csv.reader(io.StringIO(full["content"])))[-1] == ["Fountain pen", "1", "$18.00"]
    assert full["numbers"] == {"Qty": "int"}
    assert bad.is_error is True and payload(bad)["error"]["code"] == "INVALID_ARGUMENT"


async def test_the_csv_comes_with_its_numeric_columns_and_the_footer_apart(
    mcp_server: McpHandle, site: DemoSite
) -> None:
    """Over MCP the result says which columns are numbers (and their kind); the footer, asked for, is a
    CSV of its own; column names and the footer are page text, inside the fence."""
    async with http_client(mcp_server) as client:
        assert (await client.call_tool("navigate", {"url": site.page("checkout.html")})).is_error is False
        got = await client.call_tool("extract", {"numbers": "parse", "footer": True})
    head, _fence = texts(got)
    assert "Price ($)" not in head and "Total" not in head  # page words stay inside the fence
    full = payload(got)["data"]
    assert full["numbers"] == {"Qty": "int", "Price ($)": "float"}
    assert full["content"] == "Item,Qty,Price ($)\nNotebook,2,12.0\nFountain pen,1,18.0\n"
    assert full["footer"] == "Item,Qty,Price ($)\nTotal,,42.0\n"
