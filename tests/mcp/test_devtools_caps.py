"""`ocnb mcp --caps network` over stdio with the SDK's client: the network tools join tools/list and work."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest
from mcp.client import Client
from mcp_shim_helpers import payload, server_params

from ocnb.tokens import count_text

pytestmark = [pytest.mark.browser, pytest.mark.anyio]

NETWORK_TOOLS = {"console_messages", "network_requests", "network_request", "network_route", "network_conditions"}


def data(result: types.CallToolResult) -> dict:
    out = payload(result)
    assert out["ok"], out
    return out["data"]


def tools_tokens(tools: list[types.Tool]) -> int:
    return count_text(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in tools]))


async def test_caps_network_adds_the_network_tools(tmp_path: Path, site) -> None:
    async with Client(server_params(tmp_path / "plain"), mode="legacy") as client:
        default = (await client.list_tools()).tools
    assert not NETWORK_TOOLS & {t.name for t in default}

    async with Client(server_params(tmp_path / "net", "--caps", "network"), mode="legacy") as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} - {t.name for t in default} == NETWORK_TOOLS
        print(f"tools/list: {tools_tokens(default)} tokens default, {tools_tokens(tools)} with --caps network")

        # loaded where asked: a lean navigate result gives the title, not the URL back
        assert "url" not in data(await client.call_tool("navigate", {"url": site.page("network.html")}))
        mocked = await client.call_tool("network_route", {"url": "*/api/quote", "action": "mock", "body": "hi"})
        assert data(mocked)["routes"][0]["action"] == "mock"
        await client.call_tool("interact", {"query": "Fetch quote", "action": "click"})
        await client.call_tool("wait_for", {"text": "quote: 200 hi"})
        [quote] = data(await client.call_tool("network_requests", {"url": "*/api/quote"}))["requests"]
        detail = data(await client.call_tool("network_request", {"id": quote["id"]}))
        assert detail["response"]["body"]["text"] == "hi"
        errors = data(await client.call_tool("console_messages", {"level": "error"}))["messages"]
        assert [m["type"] for m in errors] == ["error", "pageerror"]
        gone = await client.call_tool("network_request", {"id": 10_000})
        assert gone.is_error is True and json.loads(gone.content[0].text)["error"]["code"] == "NOT_FOUND"
