"""MCP beyond tools, through the SDK's own client over HTTP: cancellation, progress, logging, resources
and the human hand-off as elicitation (issue 24)."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_shim_helpers import http_client, payload

import ocnb
from ocnb.audit.journal import read_journal
from ocnb.mcp import McpHandle, serve

pytestmark = [pytest.mark.browser, pytest.mark.anyio]

TWO_BUTTONS = "data:text/html,<button onclick=\"document.title='first'\">Go</button><button onclick=\"document.title='second'\">Go</button>"


def journal(session: ocnb.Session, tool: str | None = None) -> list[dict[str, Any]]:
    return read_journal(session.home, session_id=session.id, tool=tool)


def cancelled_lines(session: ocnb.Session, seq_after: int) -> list[dict[str, Any]]:
    return [e for e in journal(session) if e["seq"] > seq_after and e.get("error_code") == "CANCELLED"]


async def wait_for_line(session: ocnb.Session, seq_after: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """The CANCELLED lines after ``seq_after``, once there are some (the client's loop keeps running)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not cancelled_lines(session, seq_after):
        await asyncio.sleep(0.1)
    return cancelled_lines(session, seq_after)


async def test_a_call_the_client_gives_up_on_is_journaled_once_as_cancelled(mcp_server: McpHandle) -> None:
    session = mcp_server.session
    before = max((e["seq"] for e in journal(session)), default=0)
    async with http_client(mcp_server, mode="legacy") as client:
        with pytest.raises(MCPError):
            await client.call_tool(
                "wait_for", {"selector": "#never-there", "timeout_ms": 30000}, read_timeout_seconds=1.0
            )
        lines = await wait_for_line(session, before)
        assert [e["tool"] for e in lines] == ["wait_for"]
        seq = lines[0]["seq"]
        assert len([e for e in journal(session) if e["seq"] == seq]) == 1
        assert lines[0]["ok"] is False and lines[0]["source"] == "mcp"
        # the session goes on: the next call runs
        assert payload(await client.call_tool("tabs_context", {}))["ok"] is True


def test_a_call_cut_by_server_shutdown_is_journaled_as_cancelled(shared_session: ocnb.Session) -> None:
    from mcp_shim_helpers import http_client as client_for

    handle = serve(shared_session, quiet=True)
    before = max((e["seq"] for e in journal(shared_session)), default=0)

    async def long_call() -> None:
        async with client_for(handle, mode="legacy") as client:
            await client.call_tool("wait_for", {"selector": "#never-there", "timeout_ms": 30000})

    def run() -> None:
        try:
            asyncio.run(long_call())
        except BaseException:  # noqa: BLE001 - the server goes away under it
            pass

    import threading

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while handle.bridge.calls == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    handle.stop()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not cancelled_lines(shared_session, before):
        time.sleep(0.1)
    lines = cancelled_lines(shared_session, before)
    assert [e["tool"] for e in lines] == ["wait_for"]
    thread.join(10)


async def test_progress_of_a_long_wait_and_of_a_plan(mcp_server: McpHandle) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with http_client(mcp_server, mode="legacy") as client:
        result = await client.call_tool("wait_for", {"time_ms": 2600}, progress_callback=on_progress)
        assert payload(result)["ok"] is True
        assert len(seen) >= 2 and all(total == 2600 for _, total, _ in seen)
        assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen)
        assert seen[0][2] == "wait_for time_ms"
        seen.clear()
        steps = [{"tool": "navigate", "args": {"url": "about:blank"}}, {"tool": "tabs_context", "args": {}}]
        result = await client.call_tool("execute_plan", {"steps": steps}, progress_callback=on_progress)
        assert payload(result)["ok"] is True
        assert seen == [(1, 2, "navigate"), (2, 2, "tabs_context")]
        seen.clear()
        await client.call_tool("wait_for", {"time_ms": 1200})  # no token: no progress
        assert seen == []


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # SEP-2577 (2026) drops logging
async def test_console_errors_arrive_as_log_messages_at_the_set_level(mcp_server: McpHandle) -> None:
    messages: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        messages.append(params)

    async with http_client(mcp_server, mode="legacy", logging_callback=on_log) as client:
        await client.call_tool("navigate", {"url": "about:blank"})
        await client.call_tool("javascript_tool", {"expression": "console.error('boom-before'); 1"})
        await client.set_logging_level("warning")
        code = "console.log('quiet'); console.warn('careful'); console.error('boom'); 1"
        await client.call_tool("javascript_tool", {"expression": code})
        failed = await client.call_tool("navigate", {"url": "http://127.0.0.1:9/"})
        assert payload(failed)["error"]["code"] == "NAVIGATION_FAILED"
        await client.call_tool("wait_for", {"time_ms": 300})
    assert [m.level for m in messages if m.data.get("event") == "navigation_failed"] == ["error"]
    token = mcp_server.session.fence.token  # the page's console text comes fenced
    texts = [(m.level, m.data.get("text") or "") for m in messages if isinstance(m.data, dict)]
    texts = [
        (level, text.removeprefix(f"[page {token}]\n").removesuffix(f"\n[/page {token}]")) for level, text in texts
    ]
    assert ("error", "boom") in texts and ("warning", "careful") in texts
    assert all(text not in ("quiet", "boom-before") for _, text in texts)
    assert all(m.logger == "ocnb.browser" for m in messages)


async def test_a_screenshot_links_a_resource_that_reads_back_as_the_same_png(mcp_server: McpHandle) -> None:
    session = mcp_server.session
    async with http_client(mcp_server, mode="legacy") as client:
        result = await client.call_tool("page_screenshot", {})
        data = payload(result)["data"]
        links = [c for c in result.content if isinstance(c, types.ResourceLink)]
        assert [link.mime_type for link in links] == ["image/png"]
        assert links[0].uri.startswith(f"ocnb://screenshots/{session.id}/")
        read = await client.read_resource(links[0].uri)
        blob = read.contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == Path(data["path"]).read_bytes()

        listed = await client.list_resources()
        uris = {r.uri for r in listed.resources}
        assert {"ocnb://capability-map", f"ocnb://journal/{session.id}", links[0].uri} <= uris
        templates = await client.list_resource_templates()
        assert "ocnb://skills/{skill_id}" in {t.uri_template for t in templates.resource_templates}
        capmap = await client.read_resource("ocnb://capability-map")
        assert "navigate" in capmap.contents[0].text  # type: ignore[union-attr]
        entries = await client.read_resource(f"ocnb://journal/{session.id}")
        lines = [json.loads(x) for x in entries.contents[0].text.splitlines()]  # type: ignore[union-attr]
        assert lines[-1]["tool"] == "page_screenshot"

        bundle = await client.call_tool("oc_evidence_bundle", {"reason": "resource links"})
        folder = Path(payload(bundle)["data"]["path"])
        linked = {c.name: c.uri for c in bundle.content if isinstance(c, types.ResourceLink)}
        assert set(linked) == {p.name for p in folder.iterdir() if p.is_file()} and linked
        assert all(uri.startswith(f"ocnb://evidence/{folder.name}/") for uri in linked.values())
        manifest = await client.read_resource(linked["bundle.json"])
        assert json.loads(manifest.contents[0].text)  # type: ignore[union-attr]

        escape = session.home / "escape-link"
        if not escape.exists():
            escape.symlink_to("/etc")
        for outside in (
            "ocnb://files/../../../etc/passwd",
            "ocnb://files/%2e%2e/%2e%2e/etc/hostname",
            "ocnb://files/escape-link/hostname",
            "file:///etc/passwd",
        ):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(outside)
            assert refused.value.error.code == -32002, outside


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_an_ambiguous_target_is_asked_through_elicitation(mcp_server: McpHandle, answer: str) -> None:
    session = mcp_server.session
    session.configure(handoff=True)
    asked: list[types.ElicitRequestParams] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        options = params.requested_schema["properties"]["ref"]["oneOf"]  # type: ignore[union-attr]
        return types.ElicitResult(action="accept", content={"ref": options[1]["const"]})

    try:
        async with http_client(mcp_server, mode="legacy", elicitation_callback=on_elicit) as client:
            await client.call_tool("navigate", {"url": TWO_BUTTONS})
            before = max((e["seq"] for e in journal(session)), default=0)
            result = payload(await client.call_tool("interact", {"query": "Go"}))
            title = payload(await client.call_tool("javascript_tool", {"expression": "document.title"}))
    finally:
        session.configure(handoff=False)
    assert len(asked) == 1 and "Which element" in asked[0].message
    clicks = [e for e in journal(session, tool="interact") if e["seq"] > before]
    if answer == "accept":
        assert result["ok"] is True
        assert title["data"]["result"] == "second"
        assert [e["error_code"] for e in clicks] == ["NEEDS_HUMAN", None]
    else:
        assert result["error"]["code"] == "NEEDS_HUMAN"
        assert title["data"]["result"] == ""
        assert [e["error_code"] for e in clicks] == ["NEEDS_HUMAN"]


async def test_a_client_without_elicitation_gets_needs_human(mcp_server: McpHandle) -> None:
    session = mcp_server.session
    session.configure(handoff=True)
    try:
        async with http_client(mcp_server, mode="legacy") as client:
            await client.call_tool("navigate", {"url": TWO_BUTTONS})
            result = payload(await client.call_tool("interact", {"query": "Go"}))
    finally:
        session.configure(handoff=False)
    assert result["error"]["code"] == "NEEDS_HUMAN"
    assert len(result["error"]["details"]["candidates"]) == 2


async def test_a_replay_sends_progress_per_step(mcp_server: McpHandle, site: Any) -> None:
    session = mcp_server.session
    session.navigate(url=site.page("form.html"), capture_artifact=True)
    assert session.interact(query="Full name", action="fill", value="${who}", capture_artifact=True).ok
    assert session.interact(query='button "Sign up"', action="click", capture_artifact=True).ok
    recorded = session.oc_skill_record(name="signup-progress", description="Sign up (progress test)")
    assert recorded.ok, recorded
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with http_client(mcp_server, mode="legacy") as client:
        args = {"skill_id": recorded.data["skill_id"], "params": {"who": "Ada"}}
        result = payload(await client.call_tool("oc_skill_replay", args, progress_callback=on_progress))
        assert result["ok"] is True, result
        skill = await client.read_resource(f"ocnb://skills/{recorded.data['skill_id']}")
        assert json.loads(skill.contents[0].text)["name"] == "signup-progress"  # type: ignore[union-attr]
    assert seen == [(1, 3, "navigate"), (2, 3, "fill"), (3, 3, "click")]
