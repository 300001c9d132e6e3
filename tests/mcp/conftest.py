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
    # Every tool listed: these tests hold the shim to the registry. The default listing (the
    # essentials) is tested in test_default_listing.py.
    handle = serve(shared_session, quiet=True, all_tools=True)
    yield handle
    handle.stop()
