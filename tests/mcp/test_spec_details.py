"""MCP spec details (issue 24: 7), with the SDK's client and raw requests over HTTP and stdio: an unknown
tool is a protocol error (-32602) that the journal still records; a batch or a message without
``method`` is -32600 with a short message; a cancelled request gets no reply; a line that is not JSON
is answered -32700; OAuth discovery finds nothing (404), so a client asks for the bearer token."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_shim_helpers import RawSession, http_client, sse_messages

import ocnb
from ocnb.audit.journal import read_journal
from ocnb.mcp import McpHandle

pytestmark = [pytest.mark.browser, pytest.mark.anyio]

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def journal(session: ocnb.Session) -> list[dict[str, Any]]:
    return read_journal(session.home, session_id=session.id)


def last_seq(session: ocnb.Session) -> int:
    return max((e["seq"] for e in journal(session)), default=0)


# -- an unknown tool ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_unknown_tool_is_invalid_params_and_still_journaled(mcp_server: McpHandle, mode: str) -> None:
    session = mcp_server.session
    before = last_seq(session)
    async with http_client(mcp_server, mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {"x": 1})
        assert caught.value.error.code == -32602
        assert caught.value.error.message == "Unknown tool: no_such_tool"
        assert (caught.value.error.data or {})["code"] == "UNKNOWN_TOOL"
        assert (await client.call_tool("tabs_context", {})).is_error is False  # the session goes on
    lines = [e for e in journal(session) if e["seq"] > before]
    assert [(e["tool"], e["source"], e["ok"], e.get("error_code")) for e in lines] == [
        ("no_such_tool", "mcp", False, "UNKNOWN_TOOL"),
        ("tabs_context", "mcp", True, None),
    ]


def test_an_unknown_tool_over_raw_http_names_it(mcp_server: McpHandle) -> None:
    with httpx.Client(timeout=30) as http:
        raw = RawSession(mcp_server, http)
        reply = raw.request("tools/call", {"name": "navgate", "arguments": {}}, id=3)
    assert reply["error"]["code"] == -32602 and reply["error"]["message"] == "Unknown tool: navgate"
    assert "result" not in reply


# -- batches and messages without a method -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], "batches are not supported"),
        ([], "batches are not supported"),
        ({"jsonrpc": "2.0", "id": 4}, "no method"),
        ({"jsonrpc": "2.0"}, "no method"),
        ("ping", "a JSON-RPC message is a JSON object"),
        ({"jsonrpc": "2.0", "id": 4, "method": 7}, "method"),
    ],
)
def test_not_a_message_is_invalid_request_with_a_short_message(mcp_server: McpHandle, body: Any, message: str) -> None:
    with httpx.Client(timeout=30) as http:
        raw = RawSession(mcp_server, http)
        response = raw.post(body)
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32600 and error["message"].startswith("Invalid Request: ")
        assert message in error["message"] and len(error["message"]) < 100, error
        assert raw.request("ping", id=5)["result"] == {}  # the session still serves


def test_a_batch_before_initialize_is_refused_too(mcp_server: McpHandle) -> None:
    headers = {**mcp_server.headers, "Accept": "application/json, text/event-stream"}
    response = httpx.post(mcp_server.url, json=[INIT], headers=headers, timeout=30)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32600


def test_malformed_json_over_http_is_still_a_parse_error(mcp_server: McpHandle) -> None:
    with httpx.Client(timeout=30) as http:
        raw = RawSession(mcp_server, http)
        response = raw.post(b'{"jsonrpc": "2.0", "id": 1, "method": ', raw=True)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32700


# -- a cancelled request -----------------------------------------------------------------------------


def test_a_cancelled_request_gets_no_reply_over_http(mcp_server: McpHandle) -> None:
    session = mcp_server.session
    before = last_seq(session)
    call = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "wait_for", "arguments": {"selector": "#never-there", "timeout_ms": 20000}},
    }
    with httpx.Client(timeout=30) as http:
        raw = RawSession(mcp_server, http)
        out: dict[str, httpx.Response] = {}
        caller = threading.Thread(target=lambda: out.setdefault("call", raw.post(call)))
        started = time.monotonic()
        caller.start()
        time.sleep(1.5)  # the call is on the browser thread, waiting
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "t"}}
        assert raw.post(cancel).status_code == 202
        caller.join(20)
        assert not caller.is_alive()
        elapsed = time.monotonic() - started
        response = out["call"]
        assert response.status_code == 200
        assert [m for m in sse_messages(response) if m.get("id") == 9] == []  # no reply for that id
        assert elapsed < 15  # the stream ended at the cancel, not at the tool's own timeout
        assert raw.request("ping", id=10)["result"] == {}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = [e for e in journal(session) if e["seq"] > before and e["tool"] == "wait_for"]
        if lines:
            break
        time.sleep(0.1)
    assert [e.get("error_code") for e in lines] == ["CANCELLED"]


async def test_the_sdk_client_cancels_and_carries_on(mcp_server: McpHandle) -> None:
    session = mcp_server.session
    before = last_seq(session)
    async with http_client(mcp_server, mode="legacy") as client:
        with pytest.raises(MCPError):
            await client.call_tool(
                "wait_for", {"selector": "#never-there", "timeout_ms": 20000}, read_timeout_seconds=1.0
            )
        assert (await client.call_tool("tabs_context", {})).is_error is False
        for _ in range(100):
            if any(e.get("error_code") == "CANCELLED" for e in journal(session) if e["seq"] > before):
                break
            await asyncio.sleep(0.1)
    codes = [(e["tool"], e.get("error_code")) for e in journal(session) if e["seq"] > before]
    assert codes == [("wait_for", "CANCELLED"), ("tabs_context", None)]


# -- OAuth discovery ---------------------------------------------------------------------------------

DISCOVERY = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/mcp",
    "/mcp/.well-known/openid-configuration",
    "/register",
    "/authorize",
    "/token",
]


@pytest.mark.parametrize("path", DISCOVERY)
def test_oauth_discovery_finds_nothing_with_or_without_the_token(mcp_server: McpHandle, path: str) -> None:
    url = mcp_server.url.removesuffix("/mcp") + path
    for headers in ({}, mcp_server.headers):
        for method in ("GET", "POST"):
            response = httpx.request(method, url, headers=headers, timeout=30)
            assert response.status_code == 404, (method, headers, response.text)
            assert "www-authenticate" not in response.headers
            assert "bearer token" in response.text


def test_the_mcp_endpoint_still_wants_the_token(mcp_server: McpHandle) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    refused = httpx.post(mcp_server.url, json=INIT, headers=headers, timeout=30)
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    wrong_host = httpx.get(
        mcp_server.url.removesuffix("/mcp") + "/.well-known/oauth-protected-resource",
        headers={"Host": "evil.example:80"},
        timeout=30,
    )
    assert wrong_host.status_code == 421  # Host and Origin checks come first, as for every path


async def test_an_oauth_client_finds_no_authorization_server(mcp_server: McpHandle) -> None:
    """The SDK's OAuth client, given no token: its discovery meets only 404s and nothing sends the
    person to an authorization page (the server wants its printed bearer token)."""
    from mcp.client import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

    class Memory:
        async def get_tokens(self) -> OAuthToken | None:
            return None

        async def set_tokens(self, tokens: OAuthToken) -> None:
            pass

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return None

        async def set_client_info(self, info: OAuthClientInformationFull) -> None:
            pass

    redirected: list[str] = []

    async def redirect(url: str) -> None:
        redirected.append(url)

    seen: list[tuple[str, str, int]] = []

    async def record(response: Any) -> None:
        seen.append((response.request.method, response.request.url.path, response.status_code))

    auth = OAuthClientProvider(
        mcp_server.url,
        OAuthClientMetadata(redirect_uris=["http://127.0.0.1:1/callback"], client_name="t"),  # type: ignore[list-item]
        Memory(),  # type: ignore[arg-type]
        redirect_handler=redirect,
    )
    async with create_mcp_http_client(auth=auth) as http:
        http.event_hooks["response"].append(record)
        with pytest.raises(BaseException):  # noqa: B017, PT011 - the SDK's error for a failed flow
            async with Client(streamable_http_client(mcp_server.url, http_client=http), mode="legacy") as client:
                await client.list_tools()
    assert redirected == []
    assert seen[0] == ("POST", "/mcp", 401)
    discovery = [(m, path, code) for m, path, code in seen if path != "/mcp"]
    assert discovery and all(code == 404 for _, _, code in discovery), seen
    assert any(path.startswith("/.well-known/oauth-protected-resource") for _, path, _ in discovery)
    assert any(path.startswith("/.well-known/oauth-authorization-server") for _, path, _ in discovery)


# -- stdio ---------------------------------------------------------------------------------------


def _stdio(home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "OCNB_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "ocnb.mcp.cli"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _send(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()


def _read(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the server closed stdout"
    return json.loads(line)


def test_stdio_answers_lines_that_are_not_messages(tmp_path: Path) -> None:
    proc = _stdio(tmp_path)
    try:
        _send(proc, json.dumps(INIT))
        assert _read(proc)["id"] == 0
        _send(proc, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        sent = [
            ('{"jsonrpc": "2.0", "id": 1, "method": ', -32700, None),
            ("not json at all", -32700, None),
            ("", None, None),  # a blank line is skipped, not answered
            ('[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]', -32600, None),
            ('{"jsonrpc": "2.0", "id": 3}', -32600, None),
            ('{"jsonrpc": "2.0", "id": 4, "method": ["ping"]}', -32600, 4),
            (json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope"}}), -32602, 5),
            ('{"jsonrpc": "2.0", "id": 6, "method": "ping"}', None, 6),
        ]
        for line, _, _ in sent:
            _send(proc, line)
        replies = [_read(proc) for _, code, rid in sent if code is not None or rid is not None]
        unanswerable = [r for r in replies if r["id"] is None]  # in the order sent
        by_id = {r["id"]: r for r in replies if r["id"] is not None}  # a call may finish after a ping
        assert [r["error"]["code"] for r in unanswerable] == [-32700, -32700, -32600, -32600], replies
        assert unanswerable[0]["error"]["message"] == "Parse error: not valid JSON text"
        assert "batches are not supported" in unanswerable[2]["error"]["message"]
        assert unanswerable[3]["error"]["message"] == "Invalid Request: no method"
        assert sorted(by_id) == [4, 5, 6]
        assert by_id[4]["error"]["code"] == -32600 and by_id[4]["error"]["message"].startswith(
            "Invalid Request: method"
        )
        assert by_id[5]["error"] == {
            "code": -32602,
            "message": "Unknown tool: nope",
            "data": {
                "code": "UNKNOWN_TOOL",
                "message": by_id[5]["error"]["data"]["message"],
                "details": {"tool": "nope"},
            },
        }
        assert by_id[6]["result"] == {}
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    lines = read_journal(tmp_path)
    assert [(e["tool"], e["source"], e.get("error_code")) for e in lines] == [("nope", "mcp", "UNKNOWN_TOOL")]
