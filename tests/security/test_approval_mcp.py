"""Approval over MCP with the official client (issue 30 §4): the client's person is asked through
elicitation; accepted, the action reaches the site; declined, ``APPROVAL_DENIED`` and nothing reaches
it; a client without elicitation gets ``APPROVAL_REQUIRED``. The site's own log is the witness.

Issue 42 changed the shape: the call waits for the client's answer and acts once — one journal line
(``approval: approved by mcp-client``), where it used to fail, be asked about, and run again."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import ocnb
from ocnb.audit.fence import unfence
from ocnb.audit.journal import read_journal
from ocnb.mcp import McpHandle, serve
from ocnb.mcp.cli import _session, build_parser

from .approval_site import ApprovalSite
from .approval_site import serve as serve_site

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def approval_site() -> Iterator[ApprovalSite]:
    with serve_site() as s:
        yield s


@pytest.fixture(scope="module")
def server(module_home: Path) -> Iterator[McpHandle]:
    """A session with the agent's default (agent_confirm=risky) and no approve callable, served over HTTP."""
    session = ocnb.Session(headless=True, home=module_home)
    handle = serve(session, quiet=True)
    yield handle
    handle.stop()
    session.close()


@asynccontextmanager
async def client(handle: McpHandle, **kwargs: Any) -> AsyncIterator[Client]:
    async with create_mcp_http_client(headers=handle.headers) as http:
        async with Client(streamable_http_client(handle.url, http_client=http), mode="legacy", **kwargs) as c:
            yield c


def payload(result: types.CallToolResult) -> dict[str, Any]:
    """The ToolResult JSON of a tools/call result, the page's fenced text put back in its place."""
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    return unfence(texts)


def received(site: ApprovalSite, path: str, wait: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + wait
    while not (got := site.received("POST", path)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return got


@pytest.mark.parametrize("answer", ["accept", "decline", "cancel", "accept-no"])
async def test_elicitation_asks_the_clients_person(server: McpHandle, approval_site: ApprovalSite, answer: str) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        if answer == "accept-no":  # the form sent back with the box unticked
            return types.ElicitResult(action="accept", content={"approve": False})
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    session = server.session
    async with client(server, elicitation_callback=on_elicit) as c:
        assert payload(await c.call_tool("navigate", {"url": approval_site.url}))["ok"]
        approval_site.log.clear()
        before = max((e["seq"] for e in read_journal(session.home, session_id=session.id)), default=0)
        result = payload(await c.call_tool("interact", {"query": "Delete account", "intent": "close the account"}))
    (params,) = asked
    assert "Delete account" in params.message and "close the account" in params.message
    assert "delete" in params.message and approval_site.url in params.message
    lines = [e for e in read_journal(session.home, session_id=session.id, tool="interact") if e["seq"] > before]
    if answer == "accept":
        assert result["ok"] is True, result
        assert len(received(approval_site, "/delete", 5.0)) == 1
        assert [e["error_code"] for e in lines] == [None]  # one call, one line (issue 42)
        assert "approval: approved by mcp-client" in lines[0]["summary"]
    else:
        assert result["error"]["code"] == "APPROVAL_DENIED", result
        assert result["error"]["details"]["decided_by"] == "mcp-client"
        assert received(approval_site, "/delete", 0.5) == []
        assert approval_site.log == []
        assert [e["error_code"] for e in lines] == ["APPROVAL_DENIED"]
        assert "approval: denied by mcp-client" in lines[0]["summary"]


async def test_a_client_without_elicitation_gets_approval_required(
    server: McpHandle, approval_site: ApprovalSite
) -> None:
    async with client(server) as c:
        assert payload(await c.call_tool("navigate", {"url": approval_site.url}))["ok"]
        approval_site.log.clear()
        result = payload(await c.call_tool("interact", {"query": "Buy now"}))
        safe = payload(await c.call_tool("interact", {"query": "Save settings"}))
    assert result["error"]["code"] == "APPROVAL_REQUIRED", result
    details = result["error"]["details"]
    assert (details["role"], details["name"], details["tool"]) == ("button", "Buy now", "interact")
    assert received(approval_site, "/buy", 0.5) == []
    assert safe["ok"] is True  # a safe button is not asked about
    assert len(received(approval_site, "/save", 5.0)) == 1


def test_ocnb_mcp_asks_before_risky_actions_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--confirm`` and ``OCNB_AGENT_CONFIRM`` set the agent's policy (issue 42: it was ``confirm``)."""
    monkeypatch.delenv("OCNB_AGENT_CONFIRM", raising=False)
    parser = build_parser()
    for argv, env, want in (
        ([], None, "risky"),
        (["--confirm", "never"], None, "never"),
        (["--confirm", "acting"], "never", "acting"),
        ([], "acting", "acting"),
    ):
        if env is not None:
            monkeypatch.setenv("OCNB_AGENT_CONFIRM", env)
        s = _session(parser.parse_args(argv))
        try:
            assert s.settings.agent_confirm == want, argv
        finally:
            s.close()
            monkeypatch.delenv("OCNB_AGENT_CONFIRM", raising=False)


async def test_an_agents_plan_step_is_the_agents_and_is_asked_about(
    server: McpHandle, approval_site: ApprovalSite
) -> None:
    """Issue 42: authority by caller follows an agent's call into the plan it runs (a plan step's
    source is ``plan``, its caller the agent): with nobody to ask, the step is refused."""
    async with client(server) as c:
        assert payload(await c.call_tool("navigate", {"url": approval_site.url}))["ok"]
        approval_site.log.clear()
        steps = [{"tool": "interact", "args": {"query": "Pay now"}}]
        result = payload(await c.call_tool("execute_plan", {"steps": steps}))
    assert [s.get("error_code") for s in result["data"]["steps"]] == ["APPROVAL_REQUIRED"], result
    assert received(approval_site, "/pay", 0.5) == []


async def test_the_agents_policy_is_its_own(module_home: Path, approval_site: ApprovalSite) -> None:
    """``Session(agent_confirm="never")`` lets the agent's risky click through unasked, while the
    person's ``confirm="risky"`` still holds the person's own: the caller decides the policy."""
    session = ocnb.Session(headless=True, home=module_home, agent_confirm="never", confirm="risky")
    handle = serve(session, quiet=True)
    try:
        assert "Agent policy: confirm=never" in handle.safe_banner()
        async with client(handle) as c:
            assert payload(await c.call_tool("navigate", {"url": approval_site.url}))["ok"]
            approval_site.log.clear()
            result = payload(await c.call_tool("interact", {"query": "Pay now"}))
        assert result["ok"] is True, result
        assert len(received(approval_site, "/pay", 5.0)) == 1
        session.call("navigate", url=approval_site.url)
        mine = session.call("interact", query="Pay now")  # the person's own call, under confirm=risky
        assert mine.error is not None and mine.error.code == "APPROVAL_REQUIRED"
        assert len(approval_site.received("POST", "/pay")) == 1
    finally:
        handle.stop()
        session.close()


async def test_a_plan_step_waiting_at_the_desk_lets_the_person_work(
    module_home: Path, approval_site: ApprovalSite
) -> None:
    """A plan's risky step waits at the desk under its top-level call's lock, which the wait lets go:
    the person's own call runs meanwhile; approved, the step acts once (the site receives one payment)."""
    import anyio

    session = ocnb.Session(headless=True, home=module_home)
    handle = serve(session, quiet=True)
    leave = session.approvals.attend()  # a person watches the desk
    try:
        async with client(handle) as c:
            assert payload(await c.call_tool("navigate", {"url": approval_site.url}))["ok"]
            approval_site.log.clear()
            outcome: dict[str, Any] = {}

            async def run_plan() -> None:
                steps = [{"tool": "interact", "args": {"query": "Pay now"}}]
                outcome["plan"] = payload(await c.call_tool("execute_plan", {"steps": steps}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(run_plan)
                with anyio.fail_after(30):
                    while not (waiting := session.approvals.pending()):
                        await anyio.sleep(0.1)
                t0 = time.monotonic()
                mine = await anyio.to_thread.run_sync(lambda: session.call("tabs_context"))
                assert mine.ok and time.monotonic() - t0 < 10  # not held behind the waiting step
                assert approval_site.received("POST", "/pay") == [] and "plan" not in outcome
                session.approvals.answer(waiting[0]["approval_id"], True)
        steps = outcome["plan"]["data"]["steps"]
        assert [s.get("ok") for s in steps] == [True], outcome
        assert len(received(approval_site, "/pay", 5.0)) == 1
    finally:
        leave()
        handle.stop()
        session.close()


async def test_a_key_press_waiting_at_the_desk_is_refused_when_the_focus_moved(
    module_home: Path, approval_site: ApprovalSite
) -> None:
    """An agent's Enter on the focused "Pay now" waits at the desk; meanwhile the focus moves to
    "Save settings". The yes was for "Pay now": the press ends ``STALE_REF`` and neither form is sent."""
    import anyio

    session = ocnb.Session(headless=True, home=module_home)
    handle = serve(session, quiet=True)
    leave = session.approvals.attend()

    def focus(name: str) -> None:
        js = f"[...document.querySelectorAll('button')].find(b => b.textContent === {name!r}).focus()"
        state = session.state
        assert state is not None
        session.run(state.tabs[state.active_id].page.evaluate(js))

    try:
        async with client(handle) as c:
            assert payload(await c.call_tool("navigate", {"url": approval_site.url}))["ok"]
            await anyio.to_thread.run_sync(focus, "Pay now")
            approval_site.log.clear()
            outcome: dict[str, Any] = {}

            async def press() -> None:
                outcome["press"] = payload(await c.call_tool("interact", {"action": "press", "key": "Enter"}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(press)
                with anyio.fail_after(30):
                    while not (waiting := session.approvals.pending()):
                        await anyio.sleep(0.1)
                assert waiting[0]["element"]["name"] == "Pay now"
                await anyio.to_thread.run_sync(focus, "Save settings")
                session.approvals.answer(waiting[0]["approval_id"], True)
        error = outcome["press"]["error"]
        assert error["code"] == "STALE_REF" and "focus moved" in error["message"], outcome
        await anyio.sleep(1.0)
        assert approval_site.received("POST", "/pay") == [] and approval_site.received("POST", "/save") == []
    finally:
        leave()
        handle.stop()
        session.close()
