"""The seams of ocnb.mcp.sdk_seams: every private name of the ``mcp`` SDK ocnb uses, held to its shape.

Each test fails loudly when the SDK drops or reshapes a name the seam reads (so an SDK upgrade is
noticed here, not as a silently missing notification), and where it can, shows through the SDK itself
that the correction is still needed. The last tests hold the rule that no other module of
``ocnb/mcp`` reads a private SDK name.
"""

from __future__ import annotations

import ast
import contextvars
import inspect
import json
import re
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ocnb.mcp import McpHandle, sdk_seams
from ocnb.mcp.sdk_seams import (
    BATCH_MESSAGE,
    NO_METHOD_MESSAGE,
    NOT_OBJECT_MESSAGE,
    PARSE_MESSAGE,
    SDK_VERSION,
    UNPARSED_MESSAGE,
    connection_of,
    context_streams,
    http_transports,
    nonstrict,
    refusal,
    silence_cancelled_requests,
)

ROOT = Path(__file__).resolve().parents[2]
MCP_DIR = ROOT / "ocnb" / "mcp"
SEAMS = MCP_DIR / "sdk_seams.py"

pytestmark = pytest.mark.anyio


def test_the_seams_name_the_sdk_version_the_project_pins() -> None:
    pin = re.search(r"^mcp==(\S+)$", (ROOT / "scripts" / "constraints.txt").read_text(encoding="utf-8"), re.M)
    assert pin is not None and pin.group(1) == SDK_VERSION, "re-check every seam in ocnb/mcp/sdk_seams.py"


# -- seam 1: mcp.shared._context_streams -------------------------------------------------------------
async def test_context_streams_carry_the_senders_context() -> None:
    """The SDK's dispatcher restores a handler's contextvars from the read stream's ``last_context``."""
    import mcp.server.stdio

    assert mcp.server.stdio.create_context_streams is sdk_seams.create_context_streams  # the transport's kind
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="reader")
    send, receive = context_streams()

    async def sender() -> None:
        var.set("sender")
        await send.send("item")

    async with send, receive, anyio.create_task_group() as tg:
        tg.start_soon(sender)
        assert await receive.receive() == "item"
        context = receive.last_context
    assert isinstance(context, contextvars.Context) and context.run(var.get) == "sender"


# -- seam 2: ServerSession._connection ------------------------------------------------------------------
def _probe_server(seen: list[Any]) -> Server[Any]:
    """A bare low-level server whose one tool records what :func:`connection_of` finds."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="probe", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        seen.append((connection_of(ctx.session), ctx.protocol_version))
        return types.CallToolResult(content=[types.TextContent(text="ok")])

    return Server("probe", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # the handshake era, and 2026's per-request one
async def test_a_handlers_session_holds_its_connection(mode: str) -> None:
    """The per-request ``ServerSession`` keeps the client's ``Connection`` in ``_connection``, with the
    members ocnb uses on it (notify, send_tool_list_changed, exit_stack, has_standalone_channel)."""
    seen: list[Any] = []
    async with Client(_probe_server(seen), mode=mode) as client:
        await client.call_tool("probe", {})
        await client.call_tool("probe", {})
    (first, version), (second, _) = seen
    assert isinstance(first, Connection), f"ServerSession._connection is gone or reshaped: {first!r}"
    if version not in MODERN_PROTOCOL_VERSIONS:  # the handshake era, the only one ocnb keys on it
        assert first is second  # one Connection per client: log levels and list_changed are keyed on it
    assert isinstance(first.exit_stack, AsyncExitStack)
    assert isinstance(first.has_standalone_channel, bool)
    for name in ("notify", "send_tool_list_changed"):
        assert inspect.iscoroutinefunction(getattr(first, name)), name
    assert list(inspect.signature(first.notify).parameters)[:2] == ["method", "params"]


# -- seam 3: StreamableHTTPSessionManager._server_instances ------------------------------------------
def _initialize(handle: McpHandle) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {**handle.headers, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    return httpx.post(handle.url, json=body, headers=headers, timeout=30)


@pytest.mark.browser
def test_the_session_manager_keeps_its_transports_by_session_id(mcp_server: McpHandle) -> None:
    """A new HTTP client session shows up among :func:`http_transports`, as a transport that can be
    terminated (what ``McpHandle.stop`` does to end open SSE streams)."""
    assert http_transports(Server("never served over HTTP")) == []
    before = {t.mcp_session_id for t in http_transports(mcp_server.bridge.server)}
    response = _initialize(mcp_server)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    transports = {t.mcp_session_id: t for t in http_transports(mcp_server.bridge.server)}
    assert session_id not in before and session_id in transports, "_server_instances is gone or reshaped"
    assert isinstance(transports[session_id], StreamableHTTPServerTransport)
    assert inspect.iscoroutinefunction(transports[session_id].terminate)


# -- seam 4: _admit_session, _terminate_unanswered_request, _request_streams -------------------------
def _transport() -> StreamableHTTPServerTransport:
    return StreamableHTTPServerTransport(mcp_session_id="s", is_json_response_enabled=False)


async def test_the_sdk_still_answers_a_cancelled_request_with_32800() -> None:
    """Unpatched, the SDK's 2025-era HTTP transport ends a cancelled request's stream with a made-up
    ``-32800`` — the response the spec says not to send. When this fails, the SDK stopped doing it and
    :func:`silence_cancelled_requests` can go."""
    transport = _transport()
    write, written = anyio.create_memory_object_stream[SessionMessage](4)
    transport._write_stream = write  # type: ignore[assignment]  # what connect() sets
    await StreamableHTTPServerTransport._terminate_unanswered_request(transport, 7)
    message = written.receive_nowait().message
    assert isinstance(message, types.JSONRPCError) and message.id == 7
    assert message.error.code == -32800


async def test_silencing_wraps_each_admitted_transport() -> None:
    """Each transport the manager admits has its ``_terminate_unanswered_request`` replaced: the
    request's stream (in ``_request_streams``, by the id as text) just ends, and nothing is written."""
    server: Server[Any] = Server("probe")
    server.streamable_http_app()
    assert silence_cancelled_requests(server) is True, "_admit_session is gone"
    transport = server.session_manager._admit_session(None)
    assert transport is not None and transport in http_transports(server)
    assert isinstance(transport._request_streams, dict), "_request_streams is gone or reshaped"
    write, written = anyio.create_memory_object_stream[SessionMessage](4)
    transport._write_stream = write  # type: ignore[assignment]
    send, receive = anyio.create_memory_object_stream[Any](4)
    transport._request_streams["7"] = (send, receive)
    await transport._terminate_unanswered_request(7)
    with pytest.raises(anyio.EndOfStream):
        receive.receive_nowait()  # the stream ended
    with pytest.raises(anyio.WouldBlock):
        written.receive_nowait()  # and no -32800 was written


def test_silencing_says_so_when_the_sdk_layout_differs(caplog: pytest.LogCaptureFixture) -> None:
    assert silence_cancelled_requests(Server("never served over HTTP")) is False
    assert "cannot keep cancelled MCP requests unanswered" in caplog.text


# -- the strictness layer: the SDK parser's errors, read by refusal() --------------------------------
def _sdk_refuses(body: str) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        types.jsonrpc_message_adapter.validate_json(body, by_name=False)  # what the SDK's transports call
    return caught.value


@pytest.mark.parametrize(
    ("body", "code", "message", "rid"),
    [
        ("not json", types.PARSE_ERROR, PARSE_MESSAGE, None),
        ('{"jsonrpc":"2.0","id":3,"method":"x","params":{"s":"\\ud800"}}', types.PARSE_ERROR, UNPARSED_MESSAGE, 3),
        ('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', types.INVALID_REQUEST, BATCH_MESSAGE, None),
        ('{"jsonrpc":"2.0","id":1}', types.INVALID_REQUEST, NO_METHOD_MESSAGE, None),
        ("1", types.INVALID_REQUEST, NOT_OBJECT_MESSAGE, None),
        ('{"jsonrpc":"2.0","id":4,"method":"x","params":"no"}', types.INVALID_REQUEST, "Invalid Request: params:", 4),
    ],
)
def test_refusal_reads_the_sdk_parsers_errors(body: str, code: int, message: str, rid: Any) -> None:
    reply = refusal(_sdk_refuses(body))
    assert reply is not None, f"the SDK parser's errors for {body!r} changed shape"
    assert (reply.error.code, reply.id) == (code, rid)
    assert reply.error.message.startswith(message)
    assert len(reply.error.message) < 200  # short, unlike the validator's report the SDK would send


def test_refusal_leaves_other_exceptions_alone() -> None:
    assert refusal(ValueError("x")) is None


def test_the_sdk_parser_still_takes_nan() -> None:
    """The correction is still needed: the SDK's parser reads ``NaN``, which strict JSON has not."""
    message = types.jsonrpc_message_adapter.validate_json(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":NaN}}}', by_name=False
    )
    assert nonstrict(message)
    assert not nonstrict(
        types.jsonrpc_message_adapter.validate_json(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    )


# -- the rule: no private SDK name outside sdk_seams.py -----------------------------------------------
def _sdk_private_names() -> set[str]:
    """Every single-underscore name the SDK's own source defines or reads as an attribute."""
    names: set[str] = set()
    for package in (Path(mcp.__file__).parent, Path(types.__file__).parent):
        for path in package.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                name = None
                if isinstance(node, ast.Attribute):
                    name = node.attr
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    name = node.name
                if name and name.startswith("_") and not name.startswith("__"):
                    names.add(name)
    return names


def _own_names(tree: ast.AST) -> set[str]:
    """The private names a module of ours defines itself: ``def _x``, ``class _X``, ``self._x = …`` and
    annotated class fields ``_x: T`` (a dataclass's)."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                own.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    return own


def private_sdk_uses(source: str, sdk_private: set[str]) -> list[str]:
    """Where ``source`` reads a private name of the SDK: an import from a private SDK module
    (``mcp.shared._context_streams``), ``x._name`` or ``getattr/setattr/hasattr(x, "_name")`` for a
    ``_name`` the SDK defines, unless this module defines it itself (its own state, its own helpers)."""
    tree = ast.parse(source)
    own = _own_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("mcp", "mcp_types"):
            if any(part.startswith("_") for part in node.module.split(".")):
                found.append(f"line {node.lineno}: from {node.module} import …")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in ("mcp", "mcp_types") and any(p.startswith("_") for p in parts):
                    found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr in sdk_private and node.attr not in own:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value in sdk_private
            and node.args[1].value not in own
        ):
            found.append(f"line {node.lineno}: {node.func.id}(…, {node.args[1].value!r})")
    return found


def test_no_private_sdk_name_outside_the_seams_module() -> None:
    sdk_private = _sdk_private_names()
    assert {"_connection", "_admit_session", "_server_instances", "_request_streams"} <= sdk_private
    wrong = {
        path.name: uses
        for path in sorted(MCP_DIR.glob("*.py"))
        if path != SEAMS and (uses := private_sdk_uses(path.read_text(encoding="utf-8"), sdk_private))
    }
    assert not wrong, f"private mcp SDK names belong in ocnb/mcp/sdk_seams.py: {wrong}"
    assert private_sdk_uses(SEAMS.read_text(encoding="utf-8"), sdk_private)  # the seams are where they are


@pytest.mark.parametrize(
    "source",
    [
        "connection = peer._connection",
        "connection = getattr(peer, '_connection', None)",
        "server._session_manager._admit_session = admitting",
        "from mcp.shared._context_streams import create_context_streams",
        "import mcp.shared._context_streams",
    ],
)
def test_the_rule_catches_a_private_access(source: str) -> None:
    assert private_sdk_uses(source, _sdk_private_names())


def test_the_rule_lets_a_module_use_its_own_private_names() -> None:
    source = "class A:\n    def __init__(self):\n        self._connections = set()\n    def f(self):\n        return self._connections\n"
    # even a name the SDK also uses (as here, by fiat) is ours where we define it
    assert private_sdk_uses(source, _sdk_private_names() | {"_connections"}) == []


def test_every_test_the_seams_module_names_exists() -> None:
    """sdk_seams.py names, for each seam, the test that notices an SDK change: those tests exist."""
    named = set(re.findall(r"``(test_\w+)``", SEAMS.read_text(encoding="utf-8")))
    assert len(named) >= 10
    defined = {
        match
        for path in (ROOT / "tests").rglob("test_*.py")
        if ".node" not in path.parts
        for match in re.findall(r"^(?:async )?def (test_\w+)\(", path.read_text(encoding="utf-8"), re.M)
    }
    assert named <= defined, f"named in sdk_seams.py but not defined: {sorted(named - defined)}"
