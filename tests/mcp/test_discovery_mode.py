"""Discovery mode: tools/list starts with discover_capabilities alone and, per turn, shows the tools the
latest discovery found."""

from __future__ import annotations

import json

import anyio
import mcp_types as types
import pytest
from mcp_shim_helpers import http_client

from ocnb.mcp import serve
from ocnb.tokens import count_tools

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


async def test_list_grows_with_discovery_and_notifies(shared_session) -> None:
    handle = serve(shared_session, quiet=True, discovery=True)
    received: list[object] = []

    async def on_message(message: object) -> None:
        received.append(message)

    try:
        async with http_client(handle, mode="legacy", message_handler=on_message) as client:
            first = (await client.list_tools()).tools
            assert [t.name for t in first] == ["discover_capabilities"]
            # What the start-up banner and status say is what tools/list shows.
            assert f"starts with 1 tool of {len(shared_session.registry)}" in handle.banner().splitlines()[0]
            assert handle.status()["tools_listed"] == 1 and handle.status()["discovery"] is True
            small = count_tools([t.model_dump(by_alias=True, exclude_none=True) for t in first])
            with anyio.fail_after(10):
                while handle.bridge.connections == 0:
                    await anyio.sleep(0.02)
            found = await client.call_tool(
                "discover_capabilities", {"query": "open a web page at a url", "kind": "tool"}
            )
            ids = [r["id"] for r in json.loads(found.content[0].text)["data"]["results"]]
            assert "tool:navigate" in ids
            with anyio.fail_after(10):
                while not any(isinstance(m, types.ToolListChangedNotification) for m in received):
                    await anyio.sleep(0.02)
            grown = [t.name for t in (await client.list_tools()).tools]
            assert "navigate" in grown and "discover_capabilities" in grown
            assert set(grown) < set(shared_session.registry.names())
            nav = await client.call_tool("navigate", {"url": "about:blank"})
            assert nav.is_error is False
            # A tool of an opt-in capability group is found, listed and callable like any other.
            found = await client.call_tool("discover_capabilities", {"query": "print the page to a PDF file"})
            ids = [r["id"] for r in json.loads(found.content[0].text)["data"]["results"]]
            assert "tool:page_pdf" in ids
            with anyio.fail_after(10):
                while "page_pdf" not in [t.name for t in (await client.list_tools()).tools]:
                    await anyio.sleep(0.05)
            # Filtered per turn: the list is this discovery's tools, not every tool found so far.
            listed = {t.name for t in (await client.list_tools()).tools}
            assert listed == {"discover_capabilities", *(i.removeprefix("tool:") for i in ids if i.startswith("tool:"))}
            pdf = await client.call_tool("page_pdf", {})
            assert pdf.is_error is False and json.loads(pdf.content[0].text)["data"]["bytes"] > 0
        full = count_tools([t.to_mcp() for t in shared_session.registry])
        assert small < 300 < full
    finally:
        handle.stop()
    # Stopping gives the session back as the server found it: discovery mode's every-group tool set
    # is undone, so the notebook's own session (and the next server) has its default tools again.
    assert shared_session.settings.caps == () and "page_pdf" not in shared_session.registry.names()


def test_stopping_keeps_groups_chosen_meanwhile(shared_session) -> None:
    handle = serve(shared_session, quiet=True, discovery=True)
    try:
        assert "page_pdf" in shared_session.registry.names()
        shared_session.configure(caps=["pdf"])  # the person narrows the groups while it runs
    finally:
        handle.stop()
    try:
        assert shared_session.settings.caps == ("pdf",), "a choice made meanwhile is not undone"
    finally:
        shared_session.configure(caps=[])
