"""`ocnb mcp` as a new user starts it: tools/list shows the essentials and discover_capabilities (the
budget below), every tool stays callable, a discovery lists what it found, --all-tools lists all."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp_shim_helpers import payload, server_params

from ocnb.mcp.cli import main
from ocnb.mcp.listing import ESSENTIALS, listed
from ocnb.registry import Registry
from ocnb.tokens import count_tools

pytestmark = [pytest.mark.browser, pytest.mark.anyio]

#: The default tools/list, counted as the client receives it (cl100k, compact JSON of the entries).
#: Was 4,279 tokens (35 tools) before the essentials listing; Playwright MCP 0.0.83's is 4,310. extract (issue
#: 33) is among the essentials.
DEFAULT_LIST_BUDGET = 1_950


def wire_tokens(tools: list[types.Tool]) -> int:
    return count_tools([t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools])


async def test_default_lists_the_essentials_and_the_rest_is_one_discovery_away(tmp_path: Path, site) -> None:
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(server_params(tmp_path), mode="legacy", message_handler=on_message) as client:
        first = (await client.list_tools()).tools
        names = {t.name for t in first}
        assert names == ESSENTIALS | {"discover_capabilities"}
        print(f"\ndefault tools/list: {len(first)} tools, {wire_tokens(first)} tokens")
        assert wire_tokens(first) <= DEFAULT_LIST_BUDGET, wire_tokens(first)
        assert len(Registry()) > len(first)  # the Python API keeps every tool

        # The essentials do the work of a page: open, read, act by ref.
        nav = await client.call_tool("navigate", {"url": site.page("dynamic.html")})
        assert nav.is_error is False
        read = await client.call_tool("read_page", {"filter": "interactive"})
        ref = next(line.split("[")[1].split("]")[0] for line in read.content[0].text.splitlines() if "button" in line)
        assert payload(await client.call_tool("interact", {"ref": ref}))["ok"] is True

        # A tool that is not listed is still there: discovery names it, and it joins the list.
        query = {"query": "read the journal of calls made", "kind": "tool"}
        for _ in range(3):  # the first discovery loads its models: on a loaded machine that can time out
            found = await client.call_tool("discover_capabilities", query)
            if '"TIMEOUT"' not in found.content[0].text:
                break
        assert found.is_error is False, found.content[0].text
        ids = [r["id"] for r in json.loads(found.content[0].text)["data"]["results"]]
        assert "tool:oc_journal" in ids
        with anyio.fail_after(10):
            await changed.wait()
        grown = {t.name for t in (await client.list_tools()).tools}
        assert "oc_journal" in grown and ESSENTIALS <= grown
        journal = await client.call_tool("oc_journal", {})
        assert journal.is_error is False
        tools_called = [e["tool"] for e in payload(journal)["data"]["entries"]]
        assert {"navigate", "read_page", "interact"} <= set(tools_called)


async def test_all_tools_flag_lists_every_tool(tmp_path: Path) -> None:
    async with Client(server_params(tmp_path, "--all-tools"), mode="legacy") as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names == Registry().names()


def test_listing_flags_contradict(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--discovery", "--all-tools"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_every_essential_is_a_default_tool() -> None:
    """A renamed tool must not silently drop out of the default list."""
    registry = Registry()
    assert ESSENTIALS <= set(registry.names())
    assert {t.name for t in listed(registry, "essentials")} == ESSENTIALS | {"discover_capabilities"}
    assert [t.name for t in listed(registry, "all")] == registry.names()
    assert [t.name for t in listed(registry, "discovery")] == ["discover_capabilities"]
