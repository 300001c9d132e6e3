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


def assert_same_rows(local: Any, remote: Any, cols: list[str]) -> None:
    """``remote``'s result rows equal ``local``'s in ``cols``; when not, the message shows both sides'
    differing rows whole (failure code, step reached, elapsed time, worker), not only the first column."""
    import pandas as pd

    try:
        pd.testing.assert_frame_equal(local[cols], remote[cols])
    except AssertionError as e:
        if len(local) != len(remote):
            raise
        differ = (local[cols].astype(str) != remote[cols].astype(str)).any(axis=1)
        shown = [
            c
            for c in ("row", "ok", "outcome", "failure_code", "step_reached", "elapsed_ms", "worker", "browser")
            if c in remote
        ]
        raise AssertionError(
            f"{e}\nlocal rows that differ:\n{local.loc[differ, shown].to_string()}"
            f"\nremote rows that differ:\n{remote.loc[differ, shown].to_string()}"
        ) from None
