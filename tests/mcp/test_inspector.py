"""An independent client nobody on this project wrote: the MCP Inspector CLI (npm), over HTTP."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ocnb.audit.fence import unfence
from ocnb.mcp import McpHandle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INSPECTOR_VERSION = "2.12.0"
NODE_DIR = Path(__file__).parent / ".node"


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The Inspector CLI, installed once (pinned) into tests/mcp/.node/ with npm."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("npm/node are not installed; the Inspector CLI test needs them")
    binary = NODE_DIR / "node_modules" / ".bin" / "inspector"
    package = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "package.json"
    installed = package.is_file() and json.loads(package.read_text()).get("version") == INSPECTOR_VERSION
    if not installed:
        NODE_DIR.mkdir(exist_ok=True)
        subprocess.run(
            [npm, "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", "--save-exact",
             f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"],
            check=True, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    assert binary.exists()
    return binary


def run_inspector(binary: Path, handle: McpHandle, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json")}
    return subprocess.run(
        [str(binary), "--cli", handle.url, "--transport", "http", *args],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_inspector_lists_and_calls_tools(inspector: Path, mcp_server: McpHandle, tmp_path: Path) -> None:
    auth = ["--header", f"Authorization: Bearer {mcp_server.token}"]
    listed = run_inspector(inspector, mcp_server, tmp_path, *auth, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    tools = json.loads(listed.stdout)["tools"]
    assert [t["name"] for t in tools] == mcp_server.session.registry.names()
    # a read-only tool says so; an acting one leaves the spec's defaults (not read-only, destructive)
    by_name = {t.name: t for t in mcp_server.session.registry}
    for t in tools:
        expected = {} if by_name[t["name"]].side_effects else {"readOnlyHint": True}
        assert t.get("annotations", {}) == expected, t

    called = run_inspector(
        inspector, mcp_server, tmp_path, *auth,
        "--method", "tools/call", "--tool-name", "javascript_tool", "--tool-arg", "expression=6*7",
    )  # fmt: skip
    assert called.returncode == 0, called.stderr
    result = json.loads(called.stdout)
    assert result["isError"] is False
    texts = [c["text"] for c in result["content"] if c.get("type") == "text"]
    assert unfence(texts)["data"]["result"] == 42  # the page's value comes fenced

    refused_before = mcp_server.status()["refused"]
    refused = run_inspector(inspector, mcp_server, tmp_path, "--stored-auth-only", "--method", "tools/list")
    assert refused.returncode != 0 and "auth_required" in refused.stderr
    assert mcp_server.status()["refused"] > refused_before
