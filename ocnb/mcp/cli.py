"""``ocnb mcp``: a stand-alone MCP server over stdio (desktop clients) or streamable HTTP (``--http``).

Examples::

    ocnb mcp                              # stdio; e.g. `claude mcp add ocnb -- ocnb mcp`
    ocnb mcp --http 8765                  # HTTP on 127.0.0.1:8765 with a bearer token
    ocnb mcp --pilot --headed --home ./.ocnb --secrets .env

In stdio mode stdout carries the protocol only; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from typing import Any

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ocnb mcp", description="Serve the ocnb browser tools over MCP.")
    p.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on PORT (0 = any) instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1; others warn)")
    p.add_argument("--no-auth", action="store_true", help="HTTP without the bearer token (warns)")
    p.add_argument("--pilot", action="store_true", help="also serve the pilot tier of tools")
    p.add_argument(
        "--discovery", action="store_true", help="start tools/list with discover_capabilities only; it grows"
    )
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument("--secrets", metavar="FILE", help="dotenv file of secrets usable as ${SECRET:NAME}")
    p.add_argument("--home", metavar="DIR", help="storage root (default OCNB_HOME or ~/.ocnb)")
    p.add_argument("--chromium", metavar="PATH", help="Chromium/Chrome executable (default: OCNB_CHROMIUM, ...)")
    return p


def _session(opts: argparse.Namespace) -> Any:
    from ..session import Session

    if opts.home:
        os.environ["OCNB_HOME"] = os.path.abspath(opts.home)
    return Session(
        headless=not opts.headed,
        pilot=True if opts.pilot else None,
        home=opts.home,
        secrets=opts.secrets,
        executable_path=opts.chromium,
    )


def _serve_http(session: Any, opts: argparse.Namespace) -> int:
    from .http import serve

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _print_warning  # type: ignore[assignment]
        handle = serve(session, opts.http, auth=not opts.no_auth, host=opts.host, discovery=opts.discovery)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            if not handle.running:
                return 1
    finally:
        handle.stop()
    return 0


def _print_warning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run ``ocnb mcp`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    opts = build_parser().parse_args(argv)
    session = _session(opts)
    try:
        if opts.http is not None:
            return _serve_http(session, opts)
        import anyio

        from .server import run_stdio

        print(f"ocnb MCP server on stdio (session {session.id}, {len(session.registry)} tools)", file=sys.stderr)
        anyio.run(lambda: run_stdio(session, discovery=opts.discovery))
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        session.close()


if __name__ == "__main__":
    sys.exit(main())
