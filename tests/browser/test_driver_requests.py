"""A tab's requests stay bounded in Playwright's client: ``driver_requests.js`` lowers the driver's limit.

Playwright's driver keeps a ``Request`` and a ``Response`` for its client per request of an open page
(the Python client holds each in ``Connection._objects``, about 14 KB apiece) until 10,000 of a kind,
then disposes the oldest tenth. ``ocnb/browser/driver.py`` starts the driver with
``driver_requests.js``, which makes that disposal start at ``REQUESTS_KEPT`` for those two kinds.
These tests notice if Playwright's driver stops exporting what that file uses, if the correction stops
being needed, or if a tab's requests stop being bounded while the network tools keep working.
"""

from __future__ import annotations

import gc
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from playwright._impl._driver import compute_driver_executable

import ocnb
from ocnb.browser import driver
from ocnb.commands.demosite import DemoSite, serve

pytestmark = pytest.mark.browser

SUBRESOURCES = 30
#: ocnb's own ring of requests per tab in these tests: larger than the driver's bound in the last test.
RING = 100


@pytest.fixture(scope="module")
def busy_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoSite]:
    """A page with 30 subresources (stylesheets, scripts, a fetch), a form page, and the demo endpoints."""
    root = tmp_path_factory.mktemp("busy-site")
    links = []
    for i in range(SUBRESOURCES - 1):
        if i % 2:
            (root / f"s{i}.css").write_text(f".c{i} {{ color: #{i:06x}; }}\n")
            links.append(f'<link rel="stylesheet" href="s{i}.css">')
        else:
            (root / f"s{i}.js").write_text(f"window.loaded{i} = true;\n")
            links.append(f'<script src="s{i}.js"></script>')
    (root / "data.json").write_text('{"items": [1, 2, 3]}')
    script = (
        "<p id=items></p><script>fetch('data.json').then(r => r.json())"
        ".then(d => { document.getElementById('items').textContent = 'items: ' + d.items.join(','); });</script>"
    )
    (root / "busy.html").write_text(f"<!doctype html><title>busy</title>{''.join(links)}<h1>Busy page</h1>{script}")
    with serve(root=root) as s:
        yield s


def _live(kind: str) -> int:
    """Playwright client objects of ``kind`` alive in this process (held by its connection or by ocnb)."""
    gc.collect()
    return sum(
        1 for o in gc.get_objects() if type(o).__name__ == kind and type(o).__module__ == "playwright._impl.network"
    )


def _busy_session(home: Path) -> ocnb.Session:
    s = ocnb.Session(headless=True, home=home, caps=["network"], network_buffer=RING, network_bodies=10)
    s.start()
    return s


def test_the_driver_still_exports_what_the_preloads_use() -> None:
    """Shape: the names of Playwright's bundle the preloads use (for its own tests, not public API):
    two for ``driver_requests.js``, one for ``driver_guard.js``."""
    node, cli = compute_driver_executable()
    script = (
        "const s = require(process.argv[1]).server;"
        "const p = s.DispatcherConnection && s.DispatcherConnection.prototype;"
        "console.log(typeof s.setMaxDispatchersForTest, typeof (p && p.maybeDisposeStaleDispatchers),"
        " typeof (p && p.registerDispatcher))"
    )
    bundle = Path(cli).parent / "lib" / "coreBundle.js"
    out = subprocess.run([node, "-e", script, str(bundle)], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["function", "function", "function"]


def _cmdline(process: psutil.Process) -> str:
    """A process's command line; empty for one that ended, or a zombie not yet reaped (another test's)."""
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):  # ZombieProcess is a NoSuchProcess
        return ""


def test_the_driver_runs_with_the_preload_and_its_bound(fresh_session: ocnb.Session) -> None:
    """The driver ocnb starts is Node.js with ``--require driver_requests.js`` and ``REQUESTS_KEPT`` set."""
    fresh_session.start()
    nodes = [p for p in psutil.Process().children(recursive=True) if "driver_requests.js" in _cmdline(p)]
    assert len(nodes) == 1
    assert nodes[0].environ().get(driver.REQUESTS_KEPT_VAR) == str(driver.REQUESTS_KEPT)


def test_without_the_preload_playwright_keeps_every_request(
    busy_site: DemoSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The correction is still needed: with the preload switched off (0), the client keeps one ``Request``
    per request of the open tab, far past ocnb's own ring (``RING``)."""
    monkeypatch.setenv(driver.REQUESTS_KEPT_VAR, "0")
    s = _busy_session(tmp_path)
    try:
        before = _live("Request")
        for _ in range(10):
            assert s.navigate(url=busy_site.page("busy.html")).ok
        assert _live("Request") - before >= 10 * (SUBRESOURCES + 1) - 5
    finally:
        s.close()


def test_a_tabs_requests_stay_bounded_and_the_network_tools_still_work(
    busy_site: DemoSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100 navigations of a page with 30 subresources, redirects among them, a mocked route: Playwright's
    live requests and responses stay under the bound, every navigation reports its status, and the
    network tools list and open the newest requests (an old one still answers, its body said gone)."""
    kept = 40
    monkeypatch.setenv(driver.REQUESTS_KEPT_VAR, str(kept))
    s = _busy_session(tmp_path)
    try:
        busy = busy_site.page("busy.html")
        first = s.navigate(url=busy).raise_for_error()
        assert first["status"] == 200
        old_id = s.call("network_requests", url="**/data.json").raise_for_error()["requests"][-1]["id"]
        s.call("network_route", url="**/data.json", action="mock", body={"items": [7]}).raise_for_error()
        for i in range(100):
            if i % 20 == 0:  # a redirect chain: its first request is one of the objects the driver may dispose
                r = s.navigate(url=busy_site.page(f"redirect?to=/busy.html&n={i}")).raise_for_error()
            else:
                r = s.navigate(url=busy).raise_for_error()
            assert r["status"] == 200, (i, r)
        # bounded: ocnb's ring (whose older entries the driver has let go) and the driver's newest, at most,
        # against 3,100 requests made
        assert _live("Request") <= kept + RING
        assert _live("Response") <= kept + RING
        s.call("wait_for", text="items: 7").raise_for_error()  # the mocked fetch answered (the route still works)
        listed = s.call("network_requests", limit=40).raise_for_error()["requests"]
        assert {r["url"].rsplit("/", 1)[-1] for r in listed} >= {"busy.html", "data.json", "s1.css", "s28.js"}
        assert all(r.get("status") == 200 for r in listed), listed
        newest = s.call("network_requests", url="**/data.json").raise_for_error()["requests"][-1]
        opened = s.call("network_request", id=newest["id"]).raise_for_error()
        assert opened["response"]["status"] == 200 and '"items": [7]' in opened["response"]["body"]["text"]
        old = s.call("network_request", id=old_id)
        assert old.error is not None and old.error.code == "NOT_FOUND"  # rolled off ocnb's ring, said so
        # the oldest request of ocnb's ring: the driver disposed its objects, ocnb still shows what it saw
        oldest = s.call("network_requests", limit=RING).raise_for_error()["requests"][0]
        shown = s.call("network_request", id=oldest["id"]).raise_for_error()
        assert shown["request"]["headers"] and shown["response"]["status"] == 200
        assert "body" not in shown["response"] and shown["response"]["body_unavailable"]
        # a tab closed and a new one: the driver still disposes the closed page's requests
        tab_id = s.call("tabs_create", url=busy).raise_for_error()["tab_id"]
        assert s.call("tabs_close", tab_id=tab_id).ok
        assert s.navigate(url=busy).raise_for_error()["status"] == 200
        assert _live("Request") <= kept + RING
    finally:
        s.close()
