"""What the workers' WebSocket gate (``ocnb/browser/ws_guard.py``) costs: a page that starts workers,
with an allow-list policy against none, as ratios measured in one run.

Three sessions on the same Chromium build: one with ``allowed_origins=["http://127.0.0.1:*"]`` (every
request of the page is allowed: the difference is the cost of checking, not of refusing), one with
none, and one with the same policy but the worker gate switched off (``gate_off``), to tell the
gate's own cost (``gate_ratio``) from the rest of the origin guard's. A loopback server serves
``/plain`` (no worker) and ``/workers`` (a dedicated, a ``blob:`` and a nested worker, each pinging
the server as its first line). Taking turns ``--runs`` times (each session first in turn): the page
load (``navigate``), the time from ``navigate`` to the last worker's ping (each held worker costs
round trips to Python: hold, breakpoint, gate, let go), and the Python process's CPU time during
both (``time.process_time``). Medians; ratios policy / none and policy / policy without the gate.

Run: ``.venv/bin/python bench/bench_worker_gate.py [--runs 15]``; writes ``bench/results/worker_gate.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ocnb  # noqa: E402
from bench.common import save  # noqa: E402
from ocnb.browser import ws_guard  # noqa: E402

POLICY = {"allowed_origins": ["http://127.0.0.1:*"]}
PAGES = {
    "/plain": ("text/html", "<title>plain</title><p>no worker"),
    "/workers": (
        "text/html",
        "<title>workers</title><script>const r=location.search;new Worker('/w/a.js'+r);"
        "new Worker(URL.createObjectURL(new Blob([`fetch('${location.origin}/ping/b${r}')`])));"
        "new Worker('/w/outer.js'+r)</script>",
    ),
    "/w/a.js": ("text/javascript", "fetch('/ping/a'+location.search)"),
    "/w/outer.js": ("text/javascript", "new Worker('/w/c.js'+location.search)"),
    "/w/c.js": ("text/javascript", "fetch('/ping/c'+location.search)"),
}
WORKERS = ("a", "b", "c")


def serve() -> tuple[ThreadingHTTPServer, dict[str, float]]:
    pings: dict[str, float] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path, _, query = self.path.partition("?")
            if path.startswith("/ping/"):
                pings[path[len("/ping/") :] + "?" + query] = time.perf_counter()
            kind, body = PAGES.get(path, ("text/plain", "ok"))
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, pings


class _NoGate(ws_guard.ContextWatch):
    """The worker gate switched off, to tell its cost from the rest of the origin guard's."""

    async def install(self, context: Any) -> None:
        pass

    async def before_document(self, cdp: Any, frame_id: str | None) -> None:
        pass

    async def watch_shared_workers(self, cdp: Any) -> None:
        pass


@contextlib.contextmanager
def gate_off() -> Iterator[None]:
    """While a session's browser starts: its origin guard gets no worker gate."""
    real = ws_guard.watch_context

    async def none(context: Any, policy: Any, refuse: Any) -> ws_guard.ContextWatch:
        return _NoGate(policy, refuse)

    ws_guard.watch_context = none  # type: ignore[assignment]
    try:
        yield
    finally:
        ws_guard.watch_context = real  # type: ignore[assignment]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    opts = ap.parse_args()
    server, pings = serve()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    sessions = {"none": ocnb.Session(), "policy": ocnb.Session(**POLICY), "no_gate": ocnb.Session(**POLICY)}
    got: dict[str, dict[str, list[float]]] = {k: {"load_ms": [], "workers_ms": [], "cpu_ms": []} for k in sessions}
    try:
        for label, s in sessions.items():
            with gate_off() if label == "no_gate" else contextlib.nullcontext():
                s.call("navigate", url=f"{base}/plain")  # browsers up alike
        for i in range(opts.runs):
            order = list(sessions.items())
            order = order[i % 3 :] + order[: i % 3]  # each session first in turn
            for label, s in order:
                cpu0, t0 = time.process_time(), time.perf_counter()
                s.call("navigate", url=f"{base}/plain?{label}{i}")
                got[label]["load_ms"].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                s.call("navigate", url=f"{base}/workers?{label}{i}")
                keys = [f"{w}?{label}{i}" for w in WORKERS]
                end = time.monotonic() + 20
                while time.monotonic() < end and not all(k in pings for k in keys):
                    time.sleep(0.005)
                if not all(k in pings for k in keys):
                    raise RuntimeError(f"{label}: the workers of run {i} did not all run")
                got[label]["workers_ms"].append((max(pings[k] for k in keys) - t0) * 1000)
                got[label]["cpu_ms"].append((time.process_time() - cpu0) * 1000)
    finally:
        for s in sessions.values():
            s.close()
        server.shutdown()
    out: dict[str, Any] = {"runs": opts.runs, "policy": POLICY}
    for key in ("load_ms", "workers_ms", "cpu_ms"):
        none, policy, no_gate = (statistics.median(got[k][key]) for k in ("none", "policy", "no_gate"))
        out[key] = {
            "none": round(none, 1),
            "policy": round(policy, 1),
            "policy_without_gate": round(no_gate, 1),
            "ratio": round(policy / none, 3),
            "gate_ratio": round(policy / no_gate, 3),
        }
        print(
            f"{key:11} none {none:8.1f}  policy {policy:8.1f} (×{policy / none:5.2f})"
            f"  policy without the gate {no_gate:8.1f}  gate ×{policy / no_gate:5.2f}"
        )
    print(f"wrote {save('worker_gate', out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
