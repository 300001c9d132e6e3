"""``ocnb mcp`` attached to a browser or a saved login (issue 23: 8), driven by the SDK's stdio client.

``--cdp-endpoint`` attaches to a Chromium this test started with ``--remote-debugging-port`` on
loopback and reads the tab that was already open; ``--storage-state`` starts logged in; a state file
outside the allowed folders stops the server before anything starts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client import Client
from mcp_shim_helpers import payload, server_params

import ocnb
from ocnb.browser import find_chromium, launch_args

pytestmark = [pytest.mark.browser, pytest.mark.anyio]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def running_chromium(site, tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The machine's Chromium, started by the test with a DevTools port on loopback and one tab open."""
    exe, tried = find_chromium(headless=False)
    if exe is None:
        pytest.skip(f"no Chromium: {tried}")
    port = _free_port()
    proc = subprocess.Popen(
        [
            exe,
            "--headless",
            f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={tmp_path / 'chrome-profile'}",
            *launch_args(),
            site.page("form.html"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while True:
            try:
                pages = json.load(urllib.request.urlopen(f"{endpoint}/json/list", timeout=1))
                if any(p.get("url") == site.page("form.html") for p in pages):
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.2)
        yield endpoint, proc
    finally:
        proc.kill()
        proc.wait(10)


async def test_cdp_endpoint_attaches_and_reads_the_open_tab(tmp_path: Path, site, running_chromium) -> None:
    endpoint, proc = running_chromium
    async with Client(server_params(tmp_path / "home", "--cdp-endpoint", endpoint)) as client:
        tabs = payload(await client.call_tool("tabs_context", {}))["data"]
        assert [t["url"] for t in tabs["tabs"]] == [site.page("form.html")]  # the tab the browser had
        page = payload(await client.call_tool("read_page", {"mode": "text"}))
        assert page["ok"] and "Sign up" in page["data"]["content"]
        health = payload(await client.call_tool("oc_connection_health", {}))["data"]
        assert health["remote"] == endpoint
    # The server went; the browser it attached to, and its tab, did not.
    time.sleep(0.5)
    assert proc.poll() is None
    pages = json.load(urllib.request.urlopen(f"{endpoint}/json/list", timeout=5))
    assert site.page("form.html") in [p.get("url") for p in pages]


async def test_storage_state_option_starts_logged_in(tmp_path: Path, site) -> None:
    home = tmp_path / "home"
    with ocnb.Session(home=home, caps=["storage"]) as s:
        assert s.navigate(url=site.page("persist.html")).ok
        assert s.fill_form(fields={"Username": "ada", "Password": "correct-horse"}).ok
        assert s.interact(query="Sign in", action="click").ok
        assert s.wait_for(text="Signed in as ada").ok
        assert s.storage_state(action="save", path="members").ok
    async with Client(server_params(home, "--storage-state", "members")) as client:
        assert payload(await client.call_tool("navigate", {"url": site.page("persist.html")}))["ok"]
        waited = payload(await client.call_tool("wait_for", {"text": "Signed in as ada", "timeout_ms": 5000}))
        assert waited["ok"], waited


def test_a_state_file_outside_the_allowed_folders_stops_the_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    outside = tmp_path / "auth.json"
    outside.write_text('{"cookies": [], "origins": []}')
    project = tmp_path / "project"  # the upload root (the working directory): auth.json is not in it
    project.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "ocnb.mcp.cli", "--storage-state", str(outside)],
        env={**os.environ, "OCNB_HOME": str(home)},
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("ocnb mcp: FILE_NOT_ALLOWED:") and len(done.stderr.splitlines()) == 1
    assert not home.exists()  # nothing started, nothing written
