"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``, pinned) against
``ocnb mcp --http PORT --no-auth``, with the expected failures of ``conformance-baseline.yml``.

The suite needs Node >= 22 (``fs.globSync``); the ``node`` npm package ships such a binary, so both are
installed (pinned) into ``tests/mcp/.node/conformance/`` on first use. Without npm the test is skipped.
The suite exits non-zero on a failure not in the baseline *and* on a baseline entry that passes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONFORMANCE_VERSION = "0.1.16"
NODE_VERSION = "22.23.3"
HERE = Path(__file__).parent
PREFIX = HERE / ".node" / "conformance"
BASELINE = HERE / "conformance-baseline.yml"


def _installed(package: str, version: str) -> bool:
    manifest = PREFIX / "node_modules" / package / "package.json"
    return manifest.is_file() and json.loads(manifest.read_text()).get("version") == version


@pytest.fixture(scope="module")
def conformance() -> tuple[Path, Path]:
    """``(node, suite entry point)``: Node 22 and the suite, installed once (pinned) with npm."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed; the MCP conformance suite (and the Node 22 it needs) come from npm")
    wanted = {"@modelcontextprotocol/conformance": CONFORMANCE_VERSION, "node": NODE_VERSION}
    if not all(_installed(p, v) for p, v in wanted.items()):
        PREFIX.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", "--save-exact",
             *(f"{p}@{v}" for p, v in wanted.items())],
            check=True, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    node = PREFIX / "node_modules" / ".bin" / "node"
    suite = PREFIX / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    assert node.exists() and suite.is_file()
    return node, suite


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"ocnb mcp exited early: {proc.communicate()[1][-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"ocnb mcp did not answer on port {port} within {timeout:.0f} s")


def test_the_official_conformance_suite_passes_with_its_baseline(
    conformance: tuple[Path, Path], tmp_path: Path
) -> None:
    node, suite = conformance
    port = _free_port()
    env = {**os.environ, "OCNB_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "ocnb.mcp.cli", "--http", str(port), "--no-auth"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        _wait_for_port(port, server)
        run = subprocess.run(
            [str(node), str(suite), "server", "--url", f"http://127.0.0.1:{port}/mcp",
             "--expected-failures", str(BASELINE), "-o", str(tmp_path / "results")],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
            env={**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"},
        )  # fmt: skip
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
    summary = run.stdout[run.stdout.find("=== SUMMARY ===") :]
    assert run.returncode == 0, summary + run.stderr[-3000:]
    for scenario in ("server-initialize", "ping", "logging-set-level", "resources-list", "tools-list"):
        assert f"✓ {scenario}:" in summary, summary
