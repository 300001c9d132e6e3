"""Malformed and random JSON-RPC traffic never crashes the HTTP server, which keeps answering."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_shim_helpers import RawSession

from ocnb.mcp import McpHandle

pytestmark = pytest.mark.browser

METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "prompts/get",
    "logging/setLevel",
    "server/discover",
    "completion/complete",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
tool_call_params = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(max_size=16) | st.integers() | st.none(),
        "arguments": json_values,
        "_meta": json_values,
    },
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2, None])},
    optional={
        "method": st.sampled_from(METHODS) | st.text(max_size=24) | st.integers(),
        "id": st.integers() | st.text(max_size=6) | st.none() | st.floats(allow_nan=False),
        "params": tool_call_params | json_values,
        "result": json_values,
        "error": json_values,
    },
)
bodies = st.one_of(
    st.binary(max_size=256),
    json_values.map(json.dumps),
    messages.map(json.dumps),
    st.lists(messages, min_size=0, max_size=4).map(json.dumps),
    messages.map(lambda m: json.dumps(m)[: max(1, len(json.dumps(m)) // 2)]),  # truncated
)


@pytest.fixture(scope="module")
def raw(mcp_server: McpHandle) -> Any:
    with httpx.Client(timeout=20) as client:
        yield RawSession(mcp_server, client)


@settings(
    max_examples=500,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=bodies,
    with_session=st.booleans(),
    content_type=st.sampled_from(["application/json", "application/json", "text/plain", "application/json; x=1"]),
)
def test_random_bodies_never_crash_the_server(
    raw: RawSession, body: str | bytes, with_session: bool, content_type: str
) -> None:
    headers = {"Content-Type": content_type}
    if not with_session:
        headers["mcp-session-id"] = "0" * 32  # an unknown session
    response = raw.post(body, raw=True, **headers)
    assert response.status_code < 500, (response.status_code, response.text[:300])


def test_server_still_answers_after_the_fuzz_run(raw: RawSession, mcp_server: McpHandle) -> None:
    listed = raw.request("tools/list", id=99)
    assert [t["name"] for t in listed["result"]["tools"]] == mcp_server.session.registry.names()
    with httpx.Client(timeout=20) as client:
        fresh = RawSession(mcp_server, client)
        assert fresh.request("tools/call", {"name": "tabs_context", "arguments": {}})["result"]["isError"] is False
    assert mcp_server.running
