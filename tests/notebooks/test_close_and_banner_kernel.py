"""In a real kernel: the MCP banner counts the tools a client's ``tools/list`` shows, and ``%oc close``
says what it closed (the session, its tabs, the MCP server and the isolated clients it had)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytest.importorskip("ocnb.mcp")
pytestmark = pytest.mark.browser

CLIENT = """
import httpx2, mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"})
agent = Client(streamable_http_client(server.url, http_client=auth),
               client_info=mcp_types.Implementation(name="kernel-agent", version="1"))
await agent.__aenter__()
listed = await agent.list_tools()
page = await agent.call_tool("navigate", {"url": "data:text/html,agent"})
print("tools/list:", len(listed.tools), "error:", page.is_error)
"""


def outputs(cell: dict) -> str:
    return "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", []))


def test_the_banner_counts_what_tools_list_shows_and_close_says_what_it_closed(tmp_path: Path, ocnb_home: Path) -> None:
    cells = [
        "%load_ext ocnb.magics",
        "%oc navigate data:text/html,person",
        "%oc mcp start --isolated",
        "server = _",
        CLIENT,
        "%oc close",
        "try:\n    await agent.__aexit__(None, None, None)\nexcept Exception:\n    pass  # the server is gone",
        "%oc close",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()

    banner = outputs(nb.cells[2])
    shown = re.search(r"tools/list shows (\d+) of (\d+) tools", banner)
    assert shown is not None, banner
    assert "Isolated: each client gets its own browser context" in banner
    listed = re.search(r"tools/list: (\d+) error: False", outputs(nb.cells[4]))
    assert listed is not None, outputs(nb.cells[4])
    assert int(shown.group(1)) == int(listed.group(1)) < int(shown.group(2))

    closed = outputs(nb.cells[5])
    session_id = re.search(r"session (s\d{8}-\d{6}-[0-9a-f]{6})", banner)
    assert session_id is not None
    assert f"closed session {session_id.group(1)}: 1 tab (t1 data:text/html,person)" in closed, closed
    assert re.search(r"MCP server stopped \(http://127\.0\.0\.1:\d+/mcp\)", closed), closed
    assert "with 1 isolated client context (kernel-agent)" in closed, closed
    assert outputs(nb.cells[7]).strip() == "nothing to close: no session is open"
