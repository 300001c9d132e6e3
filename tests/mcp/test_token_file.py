"""`ocnb mcp --http --token-file`: the SDK client gets in with the file's token, and only with it, across restarts."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_shim_helpers import read_banner

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


@contextmanager
def cli_server(home: Path, token_file: Path, **env: str) -> Iterator[tuple[str, str]]:
    """``python -m ocnb.mcp.cli --http 0 --token-file …`` until the block ends: (url, banner)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ocnb.mcp.cli", "--http", "0", "--token-file", str(token_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OCNB_HOME": str(home), "PYTHONUNBUFFERED": "1", **env},
    )
    try:
        banner = read_banner(proc, "Clients send it")
        yield re.search(r"http://127\.0\.0\.1:\d+/mcp", banner).group(0), banner
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def tool_names(url: str, token: str) -> list[str]:
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return [t.name for t in (await client.list_tools()).tools]


async def test_token_file_is_0600_accepted_alone_and_survives_a_restart(tmp_path: Path) -> None:
    token_file = tmp_path / "secrets" / "mcp-token"
    with cli_server(tmp_path / "home", token_file) as (url, banner):
        token = token_file.read_text(encoding="utf-8").strip()
        if os.name == "posix":
            assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert f"Bearer token: {token}" in banner and str(token_file) in banner
        assert "navigate" in await tool_names(url, token)
        with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as its own error type
            await tool_names(url, "another-token-of-enough-length")
        refused = httpx.post(url, json={}, headers={"Authorization": "Bearer another-token-of-enough-length"})
        assert refused.status_code == 401
    with cli_server(tmp_path / "home", token_file) as (url2, _):
        assert token_file.read_text(encoding="utf-8").strip() == token
        assert "navigate" in await tool_names(url2, token)


async def test_env_token_seeds_the_file(tmp_path: Path) -> None:
    token_file = tmp_path / "mcp-token"
    chosen = "my-own-token-0123456789"
    with cli_server(tmp_path / "home", token_file, OCNB_MCP_TOKEN=chosen) as (url, _):
        assert token_file.read_text(encoding="utf-8").strip() == chosen
        assert "navigate" in await tool_names(url, chosen)


def readme_configs() -> list[dict]:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Connecting an MCP client", 1)[1].split("\n## ", 1)[0]
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, re.S)]


def test_readme_stdio_config_names_the_installed_command() -> None:
    stdio = next(c for c in readme_configs() if "command" in c["mcpServers"]["ocnb"])
    entry = stdio["mcpServers"]["ocnb"]
    assert entry == {"command": "ocnb", "args": ["mcp"]}
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'ocnb = "ocnb.commands:main"' in pyproject  # `ocnb` is the console script pip installs


async def test_readme_http_config_works_with_the_token_file(tmp_path: Path) -> None:
    http = next(c for c in readme_configs() if "url" in c["mcpServers"]["ocnb"])
    entry = http["mcpServers"]["ocnb"]
    assert entry["type"] == "http" and entry["headers"] == {"Authorization": "Bearer <token>"}
    token_file = tmp_path / "mcp-token"
    with cli_server(tmp_path / "home", token_file) as (url, _):
        token = token_file.read_text(encoding="utf-8").strip()
        port = url.rsplit(":", 1)[1].split("/")[0]
        headers = {k: v.replace("<token>", token) for k, v in entry["headers"].items()}
        live_url = entry["url"].replace(":8765/", f":{port}/")  # the README's port, here a free one
        assert live_url == url
        async with create_mcp_http_client(headers=headers) as client_http:
            async with Client(streamable_http_client(live_url, http_client=client_http)) as client:
                assert "navigate" in [t.name for t in (await client.list_tools()).tools]
