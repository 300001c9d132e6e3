"""``%oc mcp start|status|stop|pause|resume``: an MCP server over HTTP on the notebook's own session.

The token lives in a file of mode 0600 (:data:`MCP_TOKEN_FILE` under the session's home unless
``--token-file`` says otherwise), and the cell shows its path: a saved notebook holds no token.

The agent acts with its own authority (``--confirm``, default ``risky``: ``Settings.agent_confirm``)
and its calls held for approval wait at the session's approval desk (``--approval-timeout`` seconds),
which the cell shows with the agent's policy, *Pause agent* and the agent's calls as they land
(:class:`~ocnb.widgets.AgentPanel`). ``pause`` / ``resume`` do what the button does.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._extras import extra

with extra("notebook"):
    from IPython.core.error import UsageError

from ..errors import OcnbError
from ..settings import check_setting
from .lines import split_tokens

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["MCP_SUBCOMMANDS", "MCP_TOKEN_FILE", "mcp_command"]

MCP_SUBCOMMANDS = ("start", "status", "stop", "pause", "resume")
_START_USAGE = (
    "usage: %oc mcp start [--port N] [--token-file PATH] [--confirm never|risky|acting] [--approval-timeout SECONDS]"
    " [--isolated]"
)
#: ``%oc mcp start`` flags that are settings of the session, and the setting each one sets.
_START_SETTINGS = {"confirm": "agent_confirm", "approval_timeout": "approval_timeout_s"}
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
        raise UsageError(f"{_START_USAGE} | status | stop | pause | resume")
    if sub in ("pause", "resume"):
        _pause(sub == "pause", running, session)
        return None, running
    try:
        from .. import mcp as ocnb_mcp
    except ImportError as exc:  # says which extra to install
        raise UsageError(str(exc)) from None
    if sub == "start":
        _, flags = split_tokens(words[1:])
        opts = dict(flags)
        if set(opts) - {"port", "host", "token_file", "isolated", *_START_SETTINGS}:
            raise UsageError(_START_USAGE)
        if running is not None:
            raise UsageError("an MCP server is already running here; %oc mcp stop first")
        changes = {}
        for flag, name in _START_SETTINGS.items():  # checked before anything starts: a bad value changes nothing
            if flag in opts:
                try:
                    changes[name] = check_setting(name, opts[flag], "--" + flag.replace("_", "-"))
                except OcnbError as exc:
                    raise UsageError(exc.message) from None
        if opts.get("isolated") is not None:  # a bare flag: `--isolated 8765` is a mistake, not a port
            raise UsageError("--isolated takes no value: %oc mcp start --isolated [--port N]")
        isolated = "isolated" in opts
        port = int(opts.get("port") or 0)
        s = session()
        # the token lives in a 0600 file, and the cell shows its path: a saved notebook holds no token
        token_file = opts.get("token_file") or s.home / MCP_TOKEN_FILE
        before = {name: getattr(s.settings, name) for name in changes}
        s.configure(**changes)
        try:
            running = ocnb_mcp.serve(s, port=port, token_file=token_file, quiet=True, isolated=isolated)
        except ocnb_mcp.McpTokenError as exc:
            s.configure(**before)
            raise UsageError(str(exc)) from None
        running.attend_desk()  # the person is here: an agent's approval waits for them
        running.panel = _panel(running)
        return running, running  # shown as its panel (McpHandle._ipython_display_), or the safe banner
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


def _panel(running: Any) -> Any:
    """The :class:`~ocnb.widgets.AgentPanel` for ``running``, or None without ipywidgets."""
    try:
        from ..mcp.handle import policy_line
        from ..widgets.desk import AgentPanel
    except ImportError:
        return None
    return AgentPanel(running.session, running.safe_banner(), policy_line(running.session), running.bridge.clients)


def _pause(pause: bool, running: Any, session: Callable[[], Session]) -> None:
    """``%oc mcp pause`` / ``resume``: the agent's calls end ``PAUSED`` meanwhile; the person's go on."""
    approvals = (running.session if running is not None else session()).approvals
    if pause:
        approvals.pause()
        print("agent paused: its calls end PAUSED, nothing done, until %oc mcp resume (your own calls go on)")
    else:
        approvals.resume()
        print("agent resumed: its calls run again")
