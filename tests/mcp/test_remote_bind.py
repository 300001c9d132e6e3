"""Binding the MCP server beyond loopback is refused unless asked for (issue 16, defect 9)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ocnb
from ocnb.mcp import McpRemoteBindError, McpSecurityWarning, serve
from ocnb.mcp.cli import build_parser


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.com"])
def test_serve_refuses_a_non_loopback_bind_without_allow_remote(shared_session: ocnb.Session, host: str) -> None:
    with pytest.raises(McpRemoteBindError, match="allow-remote"):
        serve(shared_session, host=host, quiet=True)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
def test_loopback_binds_need_nothing(shared_session: ocnb.Session, host: str) -> None:
    handle = serve(shared_session, host=host, quiet=True)
    try:
        assert handle.running
    finally:
        handle.stop()


def test_allow_remote_serves_and_warns(shared_session: ocnb.Session, monkeypatch: pytest.MonkeyPatch) -> None:
    import ocnb.mcp.http as mcp_http

    real_bind = mcp_http._bind
    monkeypatch.setattr(mcp_http, "_bind", lambda host, port: real_bind("127.0.0.1", port))
    with pytest.warns(McpSecurityWarning, match="not loopback"):
        handle = serve(shared_session, host="0.0.0.0", quiet=True, allow_remote=True)
    try:
        assert handle.running and handle.token  # the token is still required
    finally:
        handle.stop()


def test_cli_has_allow_remote() -> None:
    assert build_parser().parse_args([]).allow_remote is False
    assert build_parser().parse_args(["--http", "0", "--host", "::", "--allow-remote"]).allow_remote is True


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_cli_refuses_a_non_loopback_bind_before_starting(tmp_path: Path, host: str) -> None:
    env = {**os.environ, "OCNB_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "ocnb.mcp.cli", "--http", "0", "--host", host],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "not a loopback address" in proc.stderr and "--allow-remote" in proc.stderr
    assert "Bearer" not in proc.stdout  # nothing was served
    assert not (tmp_path / "journal").exists()  # no session was started
