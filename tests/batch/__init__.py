"""Helpers shared by the scale tests: a local site served on a thread, its quiet request handler, and a
local Dask cluster."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest


@contextmanager
def serving(server: Any) -> Iterator[Any]:
    """``server`` (a ``socketserver`` server) answering on a daemon thread until the block ends."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class SiteHandler(BaseHTTPRequestHandler):
    """A test site's handler: quiet, and ``_send`` answers 200 with an HTML body (and a cookie)."""

    def _send(self, body: bytes, cookie: str | None = None, name: str = "srv") -> None:
        with contextlib.suppress(OSError):  # the browser may be gone (killed by the test), or have given up
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            if cookie:
                self.send_header("Set-Cookie", f"{name}={cookie}; Path=/")
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass


@contextmanager
def dask_client(n_workers: int = 2, *, processes: bool = True) -> Iterator[Any]:
    """A client of a local cluster of ``n_workers`` one-thread workers (skips without distributed).

    The dashboard gets a free port: ``dashboard_address=None`` still means 8787 in this distributed,
    and a busy 8787 (another cluster on the machine) is a warning, which the tests turn into an error.
    """
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=processes, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
