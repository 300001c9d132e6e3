"""Session(connect=...) against a Playwright server on loopback; a dropped server → TARGET_CLOSED."""

from __future__ import annotations

import shutil

import pytest

import ocnb
from ocnb.remote import PlaywrightServer

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
            assert not dropped.ok and dropped.error.code == "TARGET_CLOSED"
        finally:
            pass
    with PlaywrightServer(port=server.port) as again:
        assert again.ws_url == server.ws_url
        s.reconnect()
        assert s.navigate(url=site.page("index.html")).ok
        s.close()
