"""A loopback site with irreversible actions, answering as two origins (127.0.0.1 and localhost), that
logs every request it receives (method, Host, path, body): the approval tests read what reached it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PAGE = """<!doctype html><html><head><title>Account</title></head><body>
<h1>Your account</h1>
<form action="/delete" method="post"><input type="hidden" name="id" value="42">
  <button type="submit">Delete account</button></form>
<form action="/buy" method="post"><button type="submit">Buy now</button></form>
<form action="/pay" method="post"><input type="hidden" name="amount" value="120.00">
  <span>Invoice 1001 — Acme Corp — 120.00 EUR</span> <button type="submit">Pay now</button></form>
<form action="/delete-invoice" method="post"><button type="submit">Delete invoice 1001</button></form>
<form action="/save" method="post"><button type="submit">Save settings</button></form>
<form action="http://localhost:{port}/collect" method="post">
  <label>Email <input name="email" value="ada@example.com"></label>
  <button type="submit">Subscribe</button></form>
<label>Attachment <input type="file" name="f"
  onchange="fetch('/uploaded?name=' + encodeURIComponent(this.files[0].name))"></label>
<button type="button" onclick="fetch('/nuked', {{method: 'POST'}})">Nuke the archive</button>
</body></html>"""


@dataclass
class ApprovalSite:
    """The running site: ``url`` of its page and ``log``, every request it received."""

    port: int
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def received(self, method: str, path: str) -> list[dict[str, Any]]:
        """The requests with this method whose path (less its query) is ``path``."""
        return [r for r in self.log if r["method"] == method and r["path"].split("?")[0] == path]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _record(self, body: bytes = b"") -> None:
        self.server.site.log.append(
            {"method": self.command, "host": self.headers.get("Host"), "path": self.path, "body": body.decode()}
        )

    def do_GET(self) -> None:
        self._record()
        if self.path == "/":
            self._answer(PAGE.format(port=self.server.site.port).encode())
        else:
            self._answer(b"<title>done</title><p>done</p>")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._record(body)
        self._answer(b"<title>done</title><p>done</p>")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: ApprovalSite


@contextmanager
def serve() -> Iterator[ApprovalSite]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.site = ApprovalSite(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.site
    finally:
        server.shutdown()
        server.server_close()
