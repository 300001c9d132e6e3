"""The bundled demo site: static fixture pages plus a few dynamic endpoints, served on loopback.

Tests, notebooks and benchmarks need real pages to drive without touching the internet. This module
serves the folder returned by :func:`site_root` on ``127.0.0.1`` from two ports at once, so the site
has a main origin and a second origin (for cross-origin iframes). Both origins serve the same files
and endpoints:

``/slow?ms=N``                      sleep N ms (at most 30 s), then an HTML page
``/echo``                           GET query or POST form (urlencoded or multipart) -> HTML list
``/set-cookie?name=&value=``        sets a cookie (``Path=/``) and says so
``/status/<code>``                  an empty-ish page with that HTTP status (200-599)
``/redirect?to=<path>[&code=302]``  a redirect to a path on the same origin
``/config.js``                      ``window.OCNB_MAIN_ORIGIN`` / ``_CROSS_ORIGIN`` / ``_CROSS_SITE``
``/api/items``                      JSON items (GET), or the JSON body echoed back (POST, 201)

Use it as a context manager::

    with serve() as site:
        page.goto(site.page("form.html"))

or from a shell: ``python -m ocnb.commands.demosite --port 8000``.
"""

from __future__ import annotations

import argparse
import email.parser
import email.policy
import html
import json
import signal
import socket
import sys
import threading
import time
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

__all__ = ["DemoSite", "main", "serve", "site_root"]

HOST = "127.0.0.1"
MAX_SLOW_MS = 30_000
MAX_BODY_BYTES = 20 * 1024 * 1024

ITEMS: list[dict[str, Any]] = [
    {"id": 1, "name": "Apple", "price": 1.25, "in_stock": True},
    {"id": 2, "name": "Banana", "price": 0.5, "in_stock": True},
    {"id": 3, "name": "Cherry", "price": 4.0, "in_stock": False},
]


def site_root() -> Path:
    """The folder holding the demo pages.

    Installed from a wheel, the pages live next to this module as ``ocnb/_site``; in a source checkout
    they are the repository's ``tests/fixtures/sites/demo``.
    """
    here = Path(__file__).resolve().parents[1]  # the ocnb package
    for candidate in (here / "_site", here.parent / "tests" / "fixtures" / "sites" / "demo"):
        if (candidate / "index.html").is_file():
            return candidate
    raise FileNotFoundError(
        f"ocnb demo site not found: looked for index.html in {here / '_site'} "
        f"and {here.parent / 'tests' / 'fixtures' / 'sites' / 'demo'}"
    )


def _page(title: str, body: str) -> bytes:
    """A minimal, valid HTML page with a <title> and an <h1> of the same text."""
    t = html.escape(title)
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{t}</title></head>\n'
        f"<body><h1>{t}</h1>\n{body}\n"
        '<p><a href="/index.html">Back to the demo site</a></p></body></html>\n'
    ).encode()


class _Handler(SimpleHTTPRequestHandler):
    """Static files from the site root, plus the dynamic endpoints listed in the module docstring."""

    server: _Server
    protocol_version = "HTTP/1.1"
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript; charset=utf-8",
        ".html": "text/html; charset=utf-8",
        ".css": "text/css; charset=utf-8",
    }

    # -- plumbing -------------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.site.log_requests:
            super().log_message(format, *args)

    def end_headers(self) -> None:
        # Fixture pages change between test runs; a cached copy would hide that.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def _send(
        self,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        no_body = status in (204, 304) or self.command == "HEAD"
        self.send_header("Content-Length", "0" if status in (204, 304) else str(len(body)))
        self.end_headers()
        if not no_body:
            self.wfile.write(body)

    def _query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            raise ValueError("request body too large")
        return self.rfile.read(length) if length > 0 else b""

    # -- routing --------------------------------------------------------------------------------

    def _route(self) -> bool:
        """Serve a dynamic endpoint if the path names one; False means "serve a static file"."""
        path = urlsplit(self.path).path
        if path == "/slow":
            self._slow()
        elif path == "/echo":
            self._echo()
        elif path == "/set-cookie":
            self._set_cookie()
        elif path.startswith("/status/"):
            self._status(path.removeprefix("/status/"))
        elif path == "/redirect":
            self._redirect()
        elif path == "/config.js":
            self._config_js()
        elif path == "/api/items":
            self._items()
        else:
            return False
        return True

    def do_GET(self) -> None:
        if not self._route():
            super().do_GET()

    def do_HEAD(self) -> None:
        if not self._route():
            super().do_HEAD()

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path in ("/echo", "/api/items") or path.startswith("/status/"):
            self._route()
        else:
            self._read_body()
            self._send(_page("Method not allowed", "<p>POST goes to /echo.</p>"), status=405)

    # -- endpoints ------------------------------------------------------------------------------

    def _slow(self) -> None:
        try:
            ms = max(0, min(int(self._query().get("ms", "1000")), MAX_SLOW_MS))
        except ValueError:
            self._send(_page("Bad request", "<p>ms must be an integer.</p>"), status=400)
            return
        time.sleep(ms / 1000)
        self._send(_page("Slow page", f'<p id="slow-ms">This page took {ms} ms to load.</p>'))

    def _echo(self) -> None:
        fields: list[tuple[str, str]] = list(parse_qsl(urlsplit(self.path).query, True))
        if self.command == "POST":
            body = self._read_body()
            ctype = self.headers.get("Content-Type", "")
            if ctype.startswith("multipart/form-data"):
                fields += _parse_multipart(ctype, body)
            else:
                fields += parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        rows = "\n".join(
            f'<li><span class="name">{html.escape(k)}</span>: <span class="value">{html.escape(v)}</span></li>'
            for k, v in fields
        )
        body_html = (
            f'<p id="echo-method">Method: {self.command}</p>\n'
            f'<p id="echo-count">Received {len(fields)} field(s)</p>\n'
            f'<ul id="fields" aria-label="Received fields">\n{rows}\n</ul>'
        )
        self._send(_page("Echo", body_html))

    def _set_cookie(self) -> None:
        q = self._query()
        name, value = q.get("name", "demo"), q.get("value", "1")
        if not name or any(c in name for c in "=;, \t\r\n") or any(c in value for c in ";\r\n"):
            self._send(_page("Bad request", "<p>Invalid cookie name or value.</p>"), status=400)
            return
        text = html.escape(f"{name}={value}")
        self._send(
            _page("Cookie set", f'<p id="cookie">Cookie set: {text}</p>'),
            headers={"Set-Cookie": f"{name}={value}; Path=/; SameSite=Lax"},
        )

    def _status(self, raw: str) -> None:
        if not (raw.isdigit() and 200 <= int(raw) <= 599):
            self._send(_page("Bad request", "<p>Status must be 200-599.</p>"), status=400)
            return
        code = int(raw)
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = ""
        if self.command == "POST":
            self._read_body()
        self._send(_page(f"Status {code}", f"<p>{html.escape(phrase)}</p>"), status=code)

    def _redirect(self) -> None:
        q = self._query()
        target = q.get("to", "/index.html")
        code = int(q["code"]) if q.get("code", "").isdigit() else 302
        # Only paths on this origin: the demo server must not become an open redirector.
        if not target.startswith("/") or target.startswith("//") or code not in (301, 302, 303, 307, 308):
            self._send(_page("Bad request", "<p>to must be a path such as /form.html.</p>"), status=400)
            return
        self._send(
            _page("Redirecting", f'<p>Redirecting to <a href="{html.escape(target)}">it</a>.</p>'),
            status=code,
            headers={"Location": target},
        )

    def _config_js(self) -> None:
        site = self.server.site
        js = (
            f"window.OCNB_MAIN_ORIGIN = {json.dumps(site.url)};\n"
            f"window.OCNB_CROSS_ORIGIN = {json.dumps(site.cross_origin_url)};\n"
            f"window.OCNB_CROSS_SITE = {json.dumps(site.cross_site_url)};\n"
        )
        self._send(js.encode(), content_type="text/javascript; charset=utf-8")

    def _items(self) -> None:
        cors = {"Access-Control-Allow-Origin": "*"}
        if self.command == "POST":
            raw = self._read_body()
            try:
                received = json.loads(raw or b"null")
            except ValueError:
                payload = json.dumps({"error": "body is not JSON"}).encode()
                self._send(payload, status=400, content_type="application/json", headers=cors)
                return
            payload = json.dumps({"received": received}).encode()
            self._send(payload, status=201, content_type="application/json", headers=cors)
            return
        payload = json.dumps({"items": ITEMS, "count": len(ITEMS)}).encode()
        self._send(payload, content_type="application/json", headers=cors)


def _parse_multipart(content_type: str, body: bytes) -> list[tuple[str, str]]:
    """Form fields of a multipart body; a file field reads ``name (N bytes)``."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    fields: list[tuple[str, str]] = []
    for part in message.iter_parts() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition") or ""
        filename = part.get_filename()
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        if filename is not None:
            fields.append((str(name), f"{filename} ({len(data)} bytes)"))
        else:
            charset = part.get_content_charset() or "utf-8"
            fields.append((str(name), data.decode(charset, "replace")))
    return fields


class _Server(ThreadingHTTPServer):
    """Threaded server that remembers its open connections, so closing it also ends keep-alives."""

    daemon_threads = True
    site: DemoSite

    def server_bind(self) -> None:
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().server_bind()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """End every open connection (idle keep-alives included); their handler threads then exit."""
        with self.connections_lock:
            open_now = list(self.connections)
        for conn in open_now:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Browsers abort requests all the time (navigation away from /slow, closed contexts);
        # a traceback per abort would drown test output. Shown only when requests are logged.
        if self.site.log_requests:
            super().handle_error(request, client_address)


class DemoSite:
    """The demo site running on two loopback ports: :attr:`url` and :attr:`cross_origin_url`.

    :attr:`cross_site_url` is the second port reached as ``localhost``: a different site as well as
    a different origin, so Chromium isolates its frames in another process (``127.0.0.1`` on
    another port is cross-origin but same-site, and stays in the page's process).

    Starts serving when created; :meth:`close` (or leaving the ``with`` block) stops both servers
    and releases their ports. Closing twice is harmless.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        root: Path | None = None,
        cross_origin_port: int = 0,
        log_requests: bool = False,
    ) -> None:
        self.root = Path(root) if root is not None else site_root()
        if not self.root.is_dir():
            raise FileNotFoundError(f"demo site root is not a folder: {self.root}")
        self.log_requests = log_requests
        self._closed = False
        self._lock = threading.Lock()
        handler = partial(_Handler, directory=str(self.root))
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []
        try:
            for p in (port, cross_origin_port):
                server = _Server((HOST, p), handler)
                server.site = self
                self._servers.append(server)
        except OSError:
            for server in self._servers:
                server.server_close()
            raise
        self.url = f"http://{HOST}:{self._servers[0].server_address[1]}/"
        self.cross_origin_url = f"http://{HOST}:{self._servers[1].server_address[1]}/"
        # Same server as cross_origin_url, but another *site* (localhost vs 127.0.0.1): Chromium puts
        # a frame from here in its own renderer process (an out-of-process iframe).
        self.cross_site_url = f"http://localhost:{self._servers[1].server_address[1]}/"
        for server in self._servers:
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.1},
                name=f"ocnb-demosite-{server.server_address[1]}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    @property
    def port(self) -> int:
        """The main origin's port."""
        return int(self._servers[0].server_address[1])

    @property
    def cross_origin_port(self) -> int:
        """The second origin's port."""
        return int(self._servers[1].server_address[1])

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._closed

    def page(self, name: str) -> str:
        """Full URL of a page on the main origin, e.g. ``site.page("form.html?variant=renamed")``."""
        return urljoin(self.url, name.lstrip("/"))

    def cross_origin_page(self, name: str) -> str:
        """Full URL of a page on the second origin."""
        return urljoin(self.cross_origin_url, name.lstrip("/"))

    def close(self) -> None:
        """Stop both servers and release their ports; safe to call more than once."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for server in self._servers:
            server.shutdown()
            server.server_close()
            server.drop_connections()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> DemoSite:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "serving"
        return f"<DemoSite {state} {self.url} cross-origin {self.cross_origin_url}>"


def serve(
    port: int = 0,
    *,
    root: Path | None = None,
    cross_origin_port: int = 0,
    log_requests: bool = False,
) -> DemoSite:
    """Start the demo site on ``127.0.0.1:port`` (0 = any free port) and return it, already serving.

    ``root`` serves another folder (the endpoints come along); ``log_requests`` prints one line per
    request to stderr, as ``http.server`` does.
    """
    return DemoSite(port, root=root, cross_origin_port=cross_origin_port, log_requests=log_requests)


def main(argv: list[str] | None = None) -> int:
    """``python -m ocnb.commands.demosite``: serve the demo site until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="python -m ocnb.commands.demosite", description="Serve the ocnb demo site on 127.0.0.1."
    )
    parser.add_argument("--port", type=int, default=8000, help="main port (0 = any free port)")
    parser.add_argument("--cross-origin-port", type=int, default=0, help="second origin's port (0 = any free port)")
    parser.add_argument("--root", type=Path, default=None, help="folder to serve instead of the demo")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each request to stderr")
    args = parser.parse_args(argv)
    try:
        site = DemoSite(
            args.port,
            root=args.root,
            cross_origin_port=args.cross_origin_port,
            log_requests=args.verbose,
        )
    except OSError as exc:
        print(f"ocnb demo site: cannot start: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    previous = _on_stop_signals(stop)
    try:
        with site:
            print(f"ocnb demo site: {site.url}", flush=True)
            print(f"cross-origin:   {site.cross_origin_url}", flush=True)
            print(f"cross-site:     {site.cross_site_url}", flush=True)
            print("Press Ctrl-C to stop.", flush=True)
            while not stop.wait(0.5):
                pass
    except KeyboardInterrupt:  # Ctrl-C before the handlers were in place
        pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


def _on_stop_signals(stop: threading.Event) -> dict[int, Any]:
    """Make Ctrl-C and SIGTERM set ``stop`` (even where the shell started us with SIGINT ignored)."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, lambda *_: stop.set())
    return previous


if __name__ == "__main__":
    raise SystemExit(main())
