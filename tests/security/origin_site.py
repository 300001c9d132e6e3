"""A loopback site that answers as two origins and logs every request with its ``Host``.

``127.0.0.1:P`` and ``localhost:P`` are one server but two origins: tests allow one and refuse the
other, then read :attr:`OriginSite.log` — what reached the server, not what ocnb reports.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Hit:
    host: str
    method: str
    path: str


@dataclass
class OriginSite:
    """``allowed`` is ``http://127.0.0.1:P``, ``refused`` ``http://localhost:P``; ``pages`` maps a path to
    ``(content type, body)`` where ``{A}`` and ``{B}`` stand for the two origins."""

    server: ThreadingHTTPServer
    pages: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Response headers a page is sent with, by path (``{A}`` and ``{B}`` as in :attr:`pages`).
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    log: list[Hit] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def allowed(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def refused(self) -> str:
        return f"http://localhost:{self.port}"

    def fill(self, text: str) -> str:
        """``text`` with ``{A}`` and ``{B}`` standing for the two origins."""
        return text.replace("{A}", self.allowed).replace("{B}", self.refused)

    def hits(self, host_prefix: str, marker: str) -> list[Hit]:
        return [h for h in list(self.log) if h.host.startswith(host_prefix) and marker in h.path]

    def refused_hits(self, marker: str) -> list[Hit]:
        """Requests that reached the refused origin (``localhost``) whose path holds ``marker``."""
        return self.hits("localhost:", marker)

    def wait_for(self, host_prefix: str, marker: str, timeout: float = 8.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.hits(host_prefix, marker):
                return True
            time.sleep(0.05)
        return False


def serve_origin_site() -> OriginSite:
    site: OriginSite

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            site.log.append(Hit(self.headers.get("Host", ""), self.command, self.path))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            if parts.path == "/r302":
                self._send(302, "text/plain", "", {"Location": query["to"][0]})
                return
            page = site.pages.get(parts.path)
            if page is not None:
                kind, body = page
                extra = {k: site.fill(v) for k, v in site.headers.get(parts.path, {}).items()}
                self._send(200, kind, site.fill(body), extra)
                return
            extra = {"Access-Control-Allow-Origin": "*"}
            if parts.path.endswith("/dl"):
                extra["Content-Disposition"] = 'attachment; filename="x.bin"'
            if parts.path.startswith("/cached/"):
                extra["Cache-Control"] = "max-age=3600"
            self._send(200, "text/plain", "ok", extra)

        def _send(self, status: int, kind: str, body: str, headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the page went away first (a vector's window closed): nothing to answer

        do_GET = do_POST = do_HEAD = do_PUT = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    site = OriginSite(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return site
