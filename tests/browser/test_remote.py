"""Session(connect=...) against a Playwright server on loopback; a dropped server → TARGET_CLOSED."""

from __future__ import annotations

import shutil

import pytest

import ocnb
from ocnb.browser import find_chromium
from ocnb.browser.remote import PlaywrightServer
from tests.conftest import alive, chromium_children

pytestmark = pytest.mark.browser


def test_connect_to_playwright_server_and_reconnect(site, ocnb_home) -> None:
    exe = shutil.which("chromium") or shutil.which("google-chrome")
    with PlaywrightServer() as server:
        s = ocnb.Session(connect=server.ws_url, executable_path=exe, home=ocnb_home)
        try:
            r = s.navigate(url=site.page("form.html"))
            assert r.ok and r.data["status"] == 200
            health = s.oc_connection_health().data
            assert health["remote"] == server.ws_url and health["connected"]
            server.kill()
            dropped = s.navigate(url=site.page("index.html"))
            assert not dropped.ok and dropped.error.code == "BROWSER_CRASHED"
            assert "remote browser dropped" in dropped.error.message
            assert dropped.error.details["lost_tabs"][0]["url"] == site.page("form.html")
        finally:
            pass
    with PlaywrightServer(port=server.port) as again:
        assert again.ws_url == server.ws_url
        s.reconnect()
        assert s.navigate(url=site.page("index.html")).ok
        s.close()


def test_closing_the_server_closes_its_browsers_and_exits_by_itself(ocnb_home) -> None:
    """``close()`` asks the server to stop (SIGINT): it closes the browsers it launched and exits, rather
    than ignoring the signal until it is killed 10 s later with its browsers orphaned (its SIGTERM)."""
    exe, _ = find_chromium()
    before = set(chromium_children())
    server = PlaywrightServer()
    s = ocnb.Session(connect=server.ws_url, executable_path=exe, home=ocnb_home)
    try:
        assert s.navigate(url="data:text/html,<p>served</p>").ok
        launched = set(chromium_children()) - before  # the server's browser, under this process
        assert launched
        server.close()
        assert server.proc.returncode == 130, server.proc.returncode  # exited on the signal, not killed (-9)
        left = [pid for pid in launched if alive(pid)]
        assert left == [], "the server's browser outlived it"
    finally:
        s.close()
        server.close()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_cdp_chrome(port: int, profile) -> object:
    import json
    import subprocess
    import time
    import urllib.request

    from ocnb.browser import launch_args

    exe = shutil.which("chromium") or shutil.which("google-chrome")
    proc = subprocess.Popen(
        [
            exe,
            "--headless",
            f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}",
            *launch_args(),
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=1))
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("Chrome did not open its DevTools port")


def test_cdp_endpoint_tools_journal_and_reconnect(site, ocnb_home, tmp_path) -> None:
    port = _free_port()
    chrome = _start_cdp_chrome(port, tmp_path / "profile")
    s = ocnb.Session(cdp=f"http://127.0.0.1:{port}", home=ocnb_home)
    try:
        assert s.navigate(url=site.page("form.html")).data["title"] == "Sign up"
        assert s.oc_connection_health().data["remote"] == f"http://127.0.0.1:{port}"
        chrome.kill()
        chrome.wait(10)
        assert s.navigate(url=site.page("index.html")).error.code == "BROWSER_CRASHED"
        chrome = _start_cdp_chrome(port, tmp_path / "profile2")
        assert s.navigate(url=site.page("index.html")).ok  # the next call connects again by itself
        s.reconnect()
        assert s.navigate(url=site.page("index.html")).ok
        assert list(s.journal_df()["ok"]) == [True, True, False, True, True]
    finally:
        s.close()
        chrome.kill()
