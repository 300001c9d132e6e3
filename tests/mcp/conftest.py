"""Fixtures for the MCP shim: an HTTP server on the module's session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import ocnb
from ocnb.mcp import McpHandle, serve


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def mcp_server(shared_session: ocnb.Session) -> Iterator[McpHandle]:
    """The module's session served over streamable HTTP on loopback (with a bearer token)."""
    handle = serve(shared_session, quiet=True)
    yield handle
    handle.stop()
