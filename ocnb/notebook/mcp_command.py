"""``%oc mcp start|status|stop``: an MCP server over HTTP on the notebook's own session.

The token lives in a file of mode 0600 (:data:`MCP_TOKEN_FILE` under the session's home unless
``--token-file`` says otherwise), and the cell shows its path: a saved notebook holds no token.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._extras import extra

with extra("notebook"):
    from IPython.core.error import UsageError

from .lines import split_tokens

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["MCP_SUBCOMMANDS", "MCP_TOKEN_FILE", "mcp_command"]

MCP_SUBCOMMANDS = ("start", "status", "stop")
#: Where ``%oc mcp start`` keeps the server's token (under the session's home, mode 0600), unless
#: ``--token-file`` says otherwise; the same token after a restart.
MCP_TOKEN_FILE = "mcp/token"


def mcp_command(rest: str, running: Any, session: Callable[[], Session]) -> tuple[Any, Any]:
    """Run ``%oc mcp REST`` given the server ``running`` here (or None) and the notebook's ``session``.

    Returns what the cell shows and the server running afterwards (or None).
    """
    words = shlex.split(rest)
    sub = words[0] if words else "status"
    if sub not in MCP_SUBCOMMANDS:
        raise UsageError("usage: %oc mcp start [--port N] [--token-file PATH] [--isolated] | status | stop")
    try:
        from .. import mcp as ocnb_mcp
    except ImportError as exc:  # says which extra to install
        raise UsageError(str(exc)) from None
    if sub == "start":
        _, flags = split_tokens(words[1:])
        opts = dict(flags)
        if set(opts) - {"port", "host", "token_file", "isolated"}:
            raise UsageError("usage: %oc mcp start [--port N] [--token-file PATH] [--isolated]")
        if running is not None:
            raise UsageError("an MCP server is already running here; %oc mcp stop first")
        if opts.get("isolated") is not None:  # a bare flag: `--isolated 8765` is a mistake, not a port
            raise UsageError("--isolated takes no value: %oc mcp start --isolated [--port N]")
        isolated = "isolated" in opts
        port = int(opts.get("port") or 0)
        s = session()
        # the token lives in a 0600 file, and the cell shows its path: a saved notebook holds no token
        token_file = opts.get("token_file") or s.home / MCP_TOKEN_FILE
        try:
            running = ocnb_mcp.serve(s, port=port, token_file=token_file, quiet=True, isolated=isolated)
        except ocnb_mcp.McpTokenError as exc:
            raise UsageError(str(exc)) from None
        return running, running  # shown through McpHandle._repr_pretty_: the safe banner
    if sub == "status":
        if running is None:
            print("no MCP server running (%oc mcp start [--port N])")
        else:
            print(json.dumps(running.status(), indent=2))
        return None, running
    if running is None:
        print("no MCP server running")
        return None, None
    running.stop()
    print(f"MCP server stopped ({running.url})")
    return None, None
