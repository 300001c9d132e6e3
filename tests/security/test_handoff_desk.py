"""An agent's hand-off at the approval desk (issue 42 §2, "or hand-off choice"), with the official MCP
client: the agent's ambiguous "Delete" (two rows, two Delete buttons) waits at the desk as a pick; the
person picks a row there, the same call goes on — asked about as usual, "Delete" being risky — and
acts once, on the picked row. The site's own request log is the witness."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import ocnb
from ocnb.audit.fence import unfence
from ocnb.audit.journal import read_journal
from ocnb.errors import InvalidArgument
from ocnb.mcp import McpHandle, serve

from .approval_site import ApprovalSite
from .approval_site import serve as serve_site

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def site() -> Iterator[ApprovalSite]:
    with serve_site() as s:
        yield s


@pytest.fixture
def desk(module_home: Path) -> Iterator[tuple[ocnb.Session, McpHandle]]:
    """A served session with hand-off on, and a person at the desk."""
    session = ocnb.Session(headless=True, home=module_home, handoff=True)
    handle = serve(session, quiet=True)
    leave = session.approvals.attend()
    try:
        yield session, handle
    finally:
        leave()
        handle.stop()
        session.close()


@asynccontextmanager
async def client(handle: McpHandle, **kwargs: Any) -> AsyncIterator[Client]:
    async with create_mcp_http_client(headers=handle.headers) as http:
        async with Client(streamable_http_client(handle.url, http_client=http), mode="legacy", **kwargs) as c:
            yield c


def payload(result: types.CallToolResult) -> dict[str, Any]:
    return unfence([c.text for c in result.content if isinstance(c, types.TextContent)])


async def waiting(session: ocnb.Session, kind: str) -> dict[str, Any]:
    with anyio.fail_after(30):
        while not (found := [p for p in session.approvals.pending() if p.get("kind") == kind]):
            await anyio.sleep(0.05)
    return found[0]


def deletes(site: ApprovalSite, wait: float) -> list[str]:
    """The ids of the invoices whose deletion reached the site."""
    deadline = time.monotonic() + wait
    while not (got := site.received("POST", "/delete-invoice")) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [r["body"] for r in got]


def row_of(pick: dict[str, Any], text: str) -> int:
    """The 1-based number of the candidate whose row holds ``text``."""
    (n,) = [i for i, c in enumerate(pick["candidates"], 1) if text in str(c.get("context"))]
    return n


async def test_picked_at_the_desk_then_approved_it_deletes_the_picked_row_once(
    desk: tuple[ocnb.Session, McpHandle], site: ApprovalSite
) -> None:
    session, handle = desk
    outcome: dict[str, Any] = {}
    async with client(handle) as c:
        assert payload(await c.call_tool("navigate", {"url": site.url + "invoices"}))["ok"]
        site.log.clear()
        before = max((e["seq"] for e in read_journal(session.home, session_id=session.id)), default=0)

        async def agent() -> None:
            args = {"query": "Delete", "action": "click", "intent": "remove the Globex invoice"}
            outcome["r"] = payload(await c.call_tool("interact", args))

        async with anyio.create_task_group() as tg:
            tg.start_soon(agent)
            pick = await waiting(session, "pick")
            assert pick["tool"] == "interact" and pick["source"] == "mcp" and len(pick["candidates"]) == 2
            assert site.log == [] and "r" not in outcome  # nothing happened yet
            with pytest.raises(InvalidArgument):
                session.approvals.pick(pick["approval_id"], 3)  # no such candidate: changes nothing
            with pytest.raises(InvalidArgument):
                session.approvals.answer(pick["approval_id"], True)  # a pick is not a yes
            assert session.approvals.pick(pick["approval_id"], row_of(pick, "Globex"))["by"] == "python"
            with pytest.raises(InvalidArgument):  # the first answer won
                session.approvals.pick(pick["approval_id"], row_of(pick, "Acme"))
            ask = await waiting(session, "approval")  # "Delete" is risky: the act is asked about
            assert (ask["name"], ask["source"]) == ("Delete", "mcp")
            assert site.log == []
            session.approvals.answer(ask["approval_id"], True)
    assert outcome["r"]["ok"] is True, outcome
    assert deletes(site, 5.0) == ["id=1002"]
    lines = [e for e in read_journal(session.home, session_id=session.id, tool="interact") if e["seq"] > before]
    assert [e["error_code"] for e in lines] == [None]  # one act, one journal line
    assert "picked by python" in lines[0]["summary"] and "approval: approved by python" in lines[0]["summary"]


async def test_a_slow_client_loses_the_pick_to_the_desk(
    desk: tuple[ocnb.Session, McpHandle], site: ApprovalSite
) -> None:
    """The client is asked at the same time as the desk; its late pick of the other row is ignored."""
    session, handle = desk
    asked: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        schema = params.requested_schema if hasattr(params, "requested_schema") else params.requestedSchema
        options = schema["properties"].get("ref", {}).get("oneOf")
        if options:  # the pick: answer late, with the Acme row
            await anyio.sleep(3)
            acme = [o["const"] for o in options if "ax_" in o["const"]][0]
            return types.ElicitResult(action="accept", content={"ref": acme})
        return types.ElicitResult(action="accept", content={"approve": True})

    outcome: dict[str, Any] = {}
    async with client(handle, elicitation_callback=on_elicit) as c:
        assert payload(await c.call_tool("navigate", {"url": site.url + "invoices"}))["ok"]
        site.log.clear()

        async def agent() -> None:
            outcome["r"] = payload(await c.call_tool("interact", {"query": "Delete", "action": "click"}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(agent)
            pick = await waiting(session, "pick")
            with anyio.fail_after(10):
                while not asked:  # the client was asked while the call waits, not after it returned
                    await anyio.sleep(0.05)
            assert "Which element" in asked[0] and "r" not in outcome
            session.approvals.pick(pick["approval_id"], row_of(pick, "Globex"), by="notebook")
    assert outcome["r"]["ok"] is True, outcome
    assert deletes(site, 5.0) == ["id=1002"]
    await anyio.sleep(3.5)  # the client's late pick came and went
    assert deletes(site, 0.1) == ["id=1002"]
    assert [a for a in asked if "Which element" in a] == asked[:1]  # asked about the pick once
