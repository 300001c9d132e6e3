"""The stand-alone stdio server (`python -m ocnb.mcp.cli`), driven by the SDK's stdio client."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_shim_helpers import payload, read_banner, server_params

from ocnb.mcp.cli import build_parser
from ocnb.mcp.listing import listed
from ocnb.registry import Registry

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_session_end_to_end(tmp_path: Path, site, mode: str) -> None:
    home = tmp_path / "home"
    async with Client(server_params(home), mode=mode) as client:
        tools = (await client.list_tools()).tools
        registry = listed(Registry(), "essentials")  # the default listing (test_default_listing.py)
        assert [t.name for t in tools] == [t.name for t in registry]
        assert [t.input_schema for t in tools] == [t.input_schema for t in registry]

        url = site.page("dynamic.html")
        nav = await client.call_tool("navigate", {"url": url})
        assert nav.is_error is False and payload(nav)["data"] == {"title": "Dynamic list"}  # the URL: as asked
        clicked = await client.call_tool(
            "javascript_tool",
            {"expression": "() => { const b = document.getElementById('counter'); b.click(); return b.textContent; }"},
        )
        assert payload(clicked)["data"]["result"] == "Clicked 1 times"

        shot = await client.call_tool("page_screenshot", {})
        images = [c for c in shot.content if isinstance(c, types.ImageContent)]
        assert len(images) == 1 and base64.b64decode(images[0].data).startswith(b"\x89PNG")
        assert Path(payload(shot)["data"]["path"]).is_relative_to(home)  # --home via OCNB_HOME

        bad = await client.call_tool("navigate", {"url": 5})
        assert bad.is_error is True and payload(bad)["error"]["code"] == "INVALID_ARGUMENT"
        with pytest.raises(MCPError) as unknown:  # the spec's protocol error for an unknown tool
            await client.call_tool("no_such_tool", {})
        assert unknown.value.error.code == -32602 and (unknown.value.error.data or {})["code"] == "UNKNOWN_TOOL"

    from ocnb.audit.telemetry import journal_df

    journal = journal_df(home=home)
    if len(journal):  # the journal layer is installed: every call is there, as source "mcp"
        assert set(journal["source"]) == {"mcp"}
        assert list(journal["tool"])[-2:] == ["navigate", "no_such_tool"]


async def test_stdio_secrets_flag(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.env"
    secrets.write_text("DEMO_PW=hunter2secret\n")
    async with Client(server_params(tmp_path, "--secrets", str(secrets)), mode="legacy") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        length = await client.call_tool("javascript_tool", {"expression": "'${SECRET:DEMO_PW}'.length"})
        echoed = await client.call_tool("javascript_tool", {"expression": "'${SECRET:DEMO_PW}'"})
    assert names == [t.name for t in listed(Registry(), "essentials")]
    assert payload(length)["data"]["result"] == len("hunter2secret")  # the secret reached the page
    assert "hunter2secret" not in echoed.content[0].text  # and never the agent
    assert payload(echoed)["data"]["result"] == "${SECRET:DEMO_PW}"


def test_an_unknown_capability_group_is_one_line_before_any_browser(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "ocnb.mcp", "--caps", "nosuch", "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("ocnb mcp: INVALID_ARGUMENT: unknown capability group 'nosuch'; groups: "), (
        done.stderr
    )
    assert "Traceback" not in done.stderr


def test_cli_options() -> None:
    opts = build_parser().parse_args(["--http", "0", "--caps", "a,b", "--headed", "--secrets", "s.env", "--home", "h"])
    assert (opts.http, opts.caps, opts.headed, opts.secrets, opts.home) == (0, "a,b", True, "s.env", "h")
    assert build_parser().parse_args(["--dialogs", "manual"]).dialogs == "manual"
    defaults = build_parser().parse_args([])
    assert defaults.http is None and defaults.host == "127.0.0.1" and not defaults.no_auth


def test_cli_http_mode_serves_until_terminated(tmp_path: Path) -> None:
    import re
    import signal
    import subprocess

    import httpx

    env = {**os.environ, "OCNB_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ocnb.mcp.cli", "--http", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        banner = read_banner(proc, "Bearer token:")
        url = re.search(r"http://127\.0\.0\.1:\d+/mcp", banner).group(0)
        token = re.search(r"Bearer token: (\S+)", banner).group(1)
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
        assert httpx.post(url, json=init, headers=headers, timeout=30).status_code == 200
        assert (
            httpx.post(url, json=init, headers={**headers, "Authorization": "Bearer no"}, timeout=30).status_code == 401
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
