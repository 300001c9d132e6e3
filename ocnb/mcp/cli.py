"""``ocnb mcp``: a stand-alone MCP server over stdio (desktop clients) or streamable HTTP (``--http``).

Examples::

    ocnb mcp                              # stdio; e.g. `claude mcp add ocnb -- ocnb mcp`
    ocnb mcp --all-tools                  # list every tool, not the essentials + discover_capabilities
    ocnb mcp --http 8765                  # HTTP on 127.0.0.1:8765 with a bearer token
    ocnb mcp --http 8765 --isolated       # each client its own browser context (tabs, cookies)
    ocnb mcp --http 8765 --token-file ~/.ocnb/mcp-token   # the same token after every restart
    ocnb mcp --headed --home ./.ocnb --secrets .env
    ocnb mcp --cdp-endpoint http://127.0.0.1:9222   # attach to a running Chrome: its tabs, its logins
    ocnb mcp --storage-state github           # start logged in (OCNB_HOME/state/github.json)
    ocnb mcp --user-data-dir ~/.ocnb/profile  # a persistent profile: logins survive restarts

In stdio mode stdout carries the protocol only; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from collections.abc import Mapping
from typing import Any, TextIO

from ..errors import OcnbError
from ..settings import SessionOptions
from .listing import Listing

__all__ = ["build_parser", "main"]


TOKEN_HELP = """\
stdio (the default) needs no token: the client starts the server itself, e.g.
  {"mcpServers": {"ocnb": {"command": "ocnb", "args": ["mcp"]}}}

HTTP (--http PORT) needs a bearer token on every request: clients send the header
  Authorization: Bearer <token>
Where the token is: printed at start (first lines on stdout, with ready-to-paste client
configuration). Without --token-file it is new at every start; with --token-file PATH it is
kept in PATH (reused when the file exists, else created with mode 0600), so a saved client
configuration keeps working after a restart. OCNB_MCP_TOKEN=<token> sets the token itself
(at least 16 characters; with --token-file it must match the file, or seeds a new one).
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ocnb mcp",
        description="Serve the ocnb browser tools over MCP.",
        epilog=TOKEN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on PORT (0 = any) instead of stdio")
    p.add_argument(
        "--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1; others need --allow-remote)"
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --host be a non-loopback address: other machines with the token can drive the browser",
    )
    p.add_argument("--no-auth", action="store_true", help="HTTP without the bearer token (warns)")
    p.add_argument(
        "--token-file",
        metavar="PATH",
        help="keep the HTTP bearer token in PATH: reused if it exists, else created (mode 0600)",
    )
    p.add_argument("--caps", metavar="GROUPS", help="opt-in capability groups of tools to serve too, comma-separated")
    listing = p.add_mutually_exclusive_group()
    listing.add_argument(
        "--discovery", action="store_true", help="start tools/list with discover_capabilities only; it grows"
    )
    listing.add_argument(
        "--all-tools",
        action="store_true",
        help="list every tool in tools/list (default: the essentials and discover_capabilities, which lists "
        "the others when a task needs them; every tool is callable either way)",
    )
    p.add_argument(
        "--isolated",
        action="store_true",
        help="give each client its own browser context (tabs, cookies, storage), closed when it disconnects",
    )
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument(
        "--dialogs",
        choices=("accept", "dismiss", "manual"),
        help="how page dialogs are answered (default accept, or OCNB_DIALOG_POLICY); "
        "manual: they wait for dialog_answer",
    )
    p.add_argument(
        "--allowed-origins",
        metavar="ORIGINS",
        help="origins the browser may reach, ;-separated (https://example.com;https://*.example.org;http://localhost:*); "
        "every request is checked in the browser",
    )
    p.add_argument(
        "--blocked-origins",
        metavar="ORIGINS",
        help="origins the browser may not reach, ;-separated (wins over allowed)",
    )
    p.add_argument(
        "--confirm",
        choices=("never", "risky", "acting"),
        help="which of the agent's calls need a person's approval, asked through MCP elicitation (default risky, "
        "or OCNB_AGENT_CONFIRM): risky = names like Delete/Buy/Send, forms posting to another origin, file_upload; "
        "acting = every acting call",
    )
    p.add_argument(
        "--approval-timeout",
        metavar="SECONDS",
        help="how long a call held for approval waits for the answer before it ends APPROVAL_TIMEOUT "
        "(default 120, or OCNB_APPROVAL_TIMEOUT)",
    )
    p.add_argument(
        "--secrets",
        metavar="FILE",
        help="dotenv file of secrets usable as ${SECRET:NAME}; NAME.origins=https://a.example; https://*.b.example "
        "binds NAME to those origins",
    )
    p.add_argument("--home", metavar="DIR", help="storage root (default OCNB_HOME or ~/.ocnb)")
    p.add_argument("--chromium", metavar="PATH", help="Chromium/Chrome executable (default: OCNB_CHROMIUM, ...)")
    remote = p.add_mutually_exclusive_group()
    remote.add_argument(
        "--cdp-endpoint",
        metavar="URL",
        help="attach to a running Chrome/Chromium over CDP (e.g. http://127.0.0.1:9222) instead of launching; "
        "its open tabs become the session's tabs",
    )
    remote.add_argument(
        "--connect", metavar="WS", help="use a Playwright server (ws://…, `playwright run-server`) instead of launching"
    )
    p.add_argument(
        "--storage-state",
        metavar="NAME|PATH",
        help="start logged in from a saved state: a NAME is OCNB_HOME/state/NAME.json; a PATH must lie under "
        "OCNB_HOME/state or the working directory (write ./file.json for one there)",
    )
    p.add_argument(
        "--user-data-dir", metavar="DIR", help="a persistent browser profile: cookies and logins survive restarts"
    )
    return p


#: Each flag's setting (or :data:`~ocnb.settings.SESSION_ARGS` entry), and how the flag is spelt in an error.
FLAGS = {
    "headless": "--headed",
    "caps": "--caps",
    "home": "--home",
    "secrets": "--secrets",
    "executable_path": "--chromium",
    "cdp": "--cdp-endpoint",
    "connect": "--connect",
    "storage_state": "--storage-state",
    "user_data_dir": "--user-data-dir",
    "dialog_policy": "--dialogs",
    "agent_confirm": "--confirm",
    "approval_timeout_s": "--approval-timeout",
    "allowed_origins": "--allowed-origins",
    "blocked_origins": "--blocked-origins",
}
#: What this face does unless told otherwise (an agent's calls ask before risky actions by default:
#: ``Settings.agent_confirm``, which ``--confirm`` sets).
FACE_DEFAULTS: dict[str, Any] = {}


def session_options(opts: argparse.Namespace, environ: Mapping[str, str] | None = None) -> SessionOptions:
    """The flags as :class:`~ocnb.settings.SessionOptions` (over ``OCNB_*`` over :data:`FACE_DEFAULTS`);
    a malformed value is ``INVALID_ARGUMENT`` naming its flag."""
    given = {
        "headless": not opts.headed,
        "caps": opts.caps,
        "home": opts.home,
        "secrets": opts.secrets,
        "executable_path": opts.chromium,
        "cdp": opts.cdp_endpoint,
        "connect": opts.connect,
        "storage_state": opts.storage_state,
        "user_data_dir": opts.user_data_dir,
        "dialog_policy": opts.dialogs,
        "agent_confirm": opts.confirm,
        "approval_timeout_s": opts.approval_timeout,
        "allowed_origins": opts.allowed_origins,
        "blocked_origins": opts.blocked_origins,
    }
    return SessionOptions.resolve(given, environ=environ, defaults=FACE_DEFAULTS, labels=FLAGS)


def _session(opts: argparse.Namespace) -> Any:
    from ..session import build_session

    options = session_options(opts)  # every flag checked: one line, before anything starts
    if opts.home:
        os.environ["OCNB_HOME"] = os.path.abspath(opts.home)
    if opts.storage_state:  # a refused or unreadable state file: one line now, before anything starts
        from ..browser.saved_logins import load_state, state_path

        load_state(state_path(opts.storage_state, options.settings))
    return build_session(options)


def _serve_http(session: Any, opts: argparse.Namespace) -> int:
    from .http import serve

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _print_warning
        handle = serve(
            session,
            opts.http,
            auth=not opts.no_auth,
            host=opts.host,
            discovery=opts.discovery,
            all_tools=opts.all_tools,
            token_file=opts.token_file,
            allow_remote=opts.allow_remote,
            isolated=opts.isolated,
        )
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


def _print_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run ``ocnb mcp`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    opts = parser.parse_args(argv)
    if opts.token_file and opts.no_auth:
        parser.error("--token-file and --no-auth contradict each other")
    if opts.token_file and opts.http is None:
        parser.error("--token-file is for --http; stdio needs no token")
    if opts.user_data_dir and (opts.cdp_endpoint or opts.connect):
        parser.error("--user-data-dir is for a browser ocnb launches, not with --cdp-endpoint or --connect")
    if opts.http is not None and not opts.allow_remote:
        from .http import is_loopback, remote_bind_refusal

        if not is_loopback(opts.host):  # before the browser starts
            print(f"ocnb mcp: {remote_bind_refusal(opts.host)}", file=sys.stderr)
            return 2
    if opts.http is not None and not opts.no_auth:
        from ..settings import Settings
        from .http import TOKEN_ENV, McpTokenError, check_token, load_or_create_token

        given = Settings.from_env().mcp_token
        try:  # before the browser starts: a bad token (file) is a one-line error, not a traceback
            if opts.token_file:
                load_or_create_token(opts.token_file, given)
            elif given:
                check_token(given, f"${TOKEN_ENV}")
        except McpTokenError as exc:
            print(f"ocnb mcp: {exc}", file=sys.stderr)
            return 2
    try:  # an unknown --caps group or a bad OCNB_* value: one line, before any browser starts
        session = _session(opts)
    except (OcnbError, ValueError, TypeError) as exc:
        print(f"ocnb mcp: {exc}", file=sys.stderr)
        return 2
    try:
        if opts.http is not None:
            return _serve_http(session, opts)
        import anyio

        from .http import tools_line
        from .server import run_stdio

        listing: Listing = "discovery" if opts.discovery else "all" if opts.all_tools else "essentials"
        mode = ", isolated: the client gets its own browser context" if opts.isolated else ""
        print(f"ocnb MCP server on stdio (session {session.id}, {tools_line(session, listing)}{mode})", file=sys.stderr)
        anyio.run(lambda: run_stdio(session, listing=listing, isolated=opts.isolated))
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        session.close()


if __name__ == "__main__":
    sys.exit(main())
