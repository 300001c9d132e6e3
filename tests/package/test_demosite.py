"""The demo site serves its pages and endpoints over plain HTTP on two loopback origins."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import HTTPRedirectHandler, Request, build_opener, urlopen

import pytest

from ocnb.commands.demosite import DemoSite, main, serve, site_root

PAGES = [
    "index.html",
    "form.html",
    "search.html",
    "login.html",
    "dynamic.html",
    "popup.html",
    "popup-child.html",
    "storage.html",
    "frames.html",
    "frame-child.html",
    "shadow.html",
    "dragdrop.html",
    "drag-points.html",
    "upload.html",
    "dialogs.html",
    "device.html",
    "ambiguous.html",
    "checkout.html",
    "slow.html",
    "long.html",
    "network.html",
    "downloads.html",
    "download-begins.html",
    "persist.html",
]


@pytest.fixture(scope="module")
def site() -> Iterator[DemoSite]:
    with serve() as s:
        yield s


def get(url: str, data: bytes | None = None, headers: dict[str, str] | None = None):
    """(status, headers, text) of a request; HTTP errors are answers too."""
    try:
        with urlopen(Request(url, data=data, headers=headers or {}), timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except HTTPError as e:
        with e:
            return e.code, e.headers, e.read().decode()


def test_site_root_holds_every_page() -> None:
    root = site_root()
    assert sorted(p.name for p in root.glob("*.html")) == sorted(PAGES)


@pytest.mark.parametrize("name", PAGES)
def test_page_is_served_with_title_and_h1(site: DemoSite, name: str) -> None:
    status, headers, text = get(site.page(name))
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    assert re.search(r"<title>[^<]+</title>", text)
    assert re.search(r"<h1[^>]*>[^<]+</h1>", text)
    # Self-contained: no external scripts, styles or images.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)


def test_index_links_to_every_page(site: DemoSite) -> None:
    _, _, text = get(site.url)
    linked = set(re.findall(r'href="([\w-]+\.html)"', text))
    assert linked == set(PAGES) - {"index.html", "popup-child.html", "frame-child.html"}


def test_page_builds_full_urls(site: DemoSite) -> None:
    assert site.url.startswith("http://127.0.0.1:") and site.url.endswith("/")
    assert site.page("form.html") == site.url + "form.html"
    assert site.page("/form.html?variant=renamed") == site.url + "form.html?variant=renamed"
    assert site.cross_origin_page("frame-child.html") == site.cross_origin_url + "frame-child.html"


def test_two_origins_differ_and_both_serve(site: DemoSite) -> None:
    assert site.url != site.cross_origin_url
    assert site.port != site.cross_origin_port
    assert get(site.cross_origin_page("frame-child.html"))[0] == 200
    assert get(site.cross_origin_url + "api/items")[0] == 200


def test_config_js_names_both_origins(site: DemoSite) -> None:
    for base in (site.url, site.cross_origin_url):
        status, headers, text = get(base + "config.js")
        assert status == 200
        assert "javascript" in headers["Content-Type"]
        assert f'window.OCNB_CROSS_ORIGIN = "{site.cross_origin_url}";' in text
        assert f'window.OCNB_MAIN_ORIGIN = "{site.url}";' in text
        assert f'window.OCNB_CROSS_SITE = "http://localhost:{site.cross_origin_port}/";' in text


def test_slow_waits_about_as_long_as_asked(site: DemoSite) -> None:
    started = time.monotonic()
    status, _, text = get(site.url + "slow?ms=300")
    elapsed = time.monotonic() - started
    assert status == 200 and "took 300 ms" in text
    assert 0.3 <= elapsed < 3
    assert get(site.url + "slow?ms=abc")[0] == 400


def test_slow_request_does_not_block_others(site: DemoSite) -> None:
    t = threading.Thread(target=get, args=(site.url + "slow?ms=1500",))
    t.start()
    started = time.monotonic()
    assert get(site.page("index.html"))[0] == 200
    assert time.monotonic() - started < 1
    t.join()


def test_echo_lists_get_and_post_fields(site: DemoSite) -> None:
    _, _, text = get(site.url + "echo?" + urlencode({"q": "cats & dogs"}))
    assert "Method: GET" in text
    assert '<span class="name">q</span>: <span class="value">cats &amp; dogs</span>' in text

    body = urlencode({"full_name": "Ada Lovelace", "plan": "Pro"}).encode()
    status, _, text = get(site.url + "echo", data=body)
    assert status == 200
    assert "Method: POST" in text and "Received 2 field(s)" in text
    assert '<span class="value">Ada Lovelace</span>' in text


def test_echo_reports_uploaded_files(site: DemoSite) -> None:
    boundary = "ocnbBoundary"
    body = (
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="note"\r\n\r\nhello\r\n'
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="attachment"; filename="a.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n12345\r\n"
        f"--{boundary}--\r\n"
    ).encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    _, _, text = get(site.url + "echo", data=body, headers=headers)
    assert '<span class="value">hello</span>' in text
    assert '<span class="value">a.txt (5 bytes)</span>' in text


def test_set_cookie_sets_it(site: DemoSite) -> None:
    status, headers, text = get(site.url + "set-cookie?" + urlencode({"name": "flavour", "value": "oat"}))
    assert status == 200
    assert headers["Set-Cookie"].startswith("flavour=oat; Path=/")
    assert "Cookie set: flavour=oat" in text
    assert get(site.url + "set-cookie?name=bad%3Bname&value=1")[0] == 400


@pytest.mark.parametrize("code", [200, 201, 404, 418, 500, 503])
def test_status_answers_with_that_code(site: DemoSite, code: int) -> None:
    status, _, text = get(site.url + f"status/{code}")
    assert status == code
    assert f"Status {code}" in text


def test_status_refuses_nonsense(site: DemoSite) -> None:
    assert get(site.url + "status/abc")[0] == 400
    assert get(site.url + "status/99")[0] == 400


def test_redirect_goes_to_a_path_on_the_same_origin(site: DemoSite) -> None:
    with urlopen(site.url + "redirect?to=/login.html", timeout=10) as r:
        assert r.url == site.page("login.html")
        assert "<title>Log in</title>" in r.read().decode()

    class NoFollow(HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return None

    with pytest.raises(HTTPError) as info:
        build_opener(NoFollow).open(site.url + "redirect?to=/form.html&code=301", timeout=10)
    with info.value as e:
        assert e.code == 301 and e.headers["Location"] == "/form.html"
    assert get(site.url + "redirect?to=https://example.com/")[0] == 400
    assert get(site.url + "redirect?to=//example.com/")[0] == 400


def test_api_items_is_json(site: DemoSite) -> None:
    status, headers, text = get(site.url + "api/items")
    assert status == 200 and headers["Content-Type"] == "application/json"
    data = json.loads(text)
    assert data["count"] == 3 and [i["name"] for i in data["items"]] == ["Apple", "Banana", "Cherry"]

    body = json.dumps({"name": "Date"}).encode()
    status, _, text = get(site.url + "api/items", data=body, headers={"Content-Type": "application/json"})
    assert status == 201 and json.loads(text) == {"received": {"name": "Date"}}
    assert get(site.url + "api/items", data=b"{nope")[0] == 400


def test_missing_file_is_404_and_traversal_is_contained(site: DemoSite) -> None:
    assert get(site.page("nope.html"))[0] == 404
    status, _, text = get(site.url + "../../ocnb/demosite.py")
    assert status == 404 or "DemoSite" not in text


def test_requests_are_not_logged_by_default(site: DemoSite, capfd: pytest.CaptureFixture[str]) -> None:
    get(site.page("index.html"))
    get(site.page("nope.html"))
    assert capfd.readouterr().err == ""


def test_requests_are_logged_when_asked(capfd: pytest.CaptureFixture[str]) -> None:
    with serve(log_requests=True) as s:
        get(s.page("form.html"))
    assert '"GET /form.html HTTP/1.1" 200' in capfd.readouterr().err


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_close_releases_both_ports_and_is_idempotent() -> None:
    s = serve()
    ports = (s.port, s.cross_origin_port)
    assert get(s.url)[0] == 200
    assert not _port_is_free(ports[0])
    s.close()
    s.close()
    assert s.closed
    assert all(_port_is_free(p) for p in ports)
    with DemoSite(ports[0], cross_origin_port=ports[1]) as again:  # the same ports again
        assert get(again.url)[0] == 200


def test_close_ends_keep_alive_connections() -> None:
    s = serve()
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
    try:
        conn.request("GET", "/index.html")
        with conn.getresponse() as r:
            assert r.status == 200 and r.getheader("Connection") != "close"
            r.read()
        s.close()
        with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
            conn.request("GET", "/form.html")
            conn.getresponse()
    finally:
        conn.close()
        s.close()


def test_serve_accepts_another_root(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<title>Mine</title><h1>Mine</h1>")
    with serve(root=tmp_path) as s:
        assert "Mine" in get(s.url)[2]
        assert get(s.url + "api/items")[0] == 200  # endpoints come along


def test_main_rejects_a_busy_port(site: DemoSite, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--port", str(site.port)]) == 1
    assert "cannot start" in capsys.readouterr().err


def test_module_runs_until_interrupted() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ocnb.commands.demosite", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split()[-1]
        assert url.startswith("http://127.0.0.1:")
        assert get(url + "form.html")[0] == 200
        proc.send_signal(2)  # SIGINT, as Ctrl-C
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
