"""A running MCP HTTP server as the user holds it: its URL, token, banner, client configurations, status, stop."""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

from .listing import Listing, listed
from .server import McpBridge

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["McpHandle", "policy_line", "tools_line"]

_CONFIRM_WORDS = {
    "never": "never asks a person before acting",
    "risky": "asks a person before risky acts (Pay, Delete, Send…, a form to another origin, file_upload)",
    "acting": "asks a person before every acting call",
}


def policy_line(session: Any) -> str:
    """The agent's authority in one line: its confirm policy and the origin policy."""
    config = session.settings
    allowed, blocked = config.allowed_origins, config.blocked_origins
    if allowed:
        origins = "only " + "; ".join(allowed[:4]) + (" …" if len(allowed) > 4 else "")
    else:
        origins = "any origin"
    if blocked:
        origins += ", except " + "; ".join(blocked[:4]) + (" …" if len(blocked) > 4 else "")
    return (
        f"Agent policy: confirm={config.agent_confirm} ({_CONFIRM_WORDS[config.agent_confirm]}; "
        f"waits {config.approval_timeout_s:g} s for an answer) · origins: {origins}"
    )


def tools_line(session: Any, listing: bool | Listing) -> str:
    """How many tools a client sees in ``tools/list``, for a start-up banner, under ``listing``
    (``True``: discovery mode, ``False``: every tool, as before listings had names); counted by
    :func:`~ocnb.mcp.listing.listed`, the code ``tools/list`` answers with."""
    if isinstance(listing, bool):
        listing = "discovery" if listing else "all"
    n = len(session.registry)
    start = [t.name for t in listed(session.registry, listing)]
    if listing == "all":
        return f"tools/list shows all {len(start)} tools"
    if listing == "essentials":
        return (
            f"tools/list shows {len(start)} of {n} tools, the essentials; discover_capabilities lists the "
            "others when a task needs them (--all-tools: every tool)"
        )
    return (
        f"discovery mode: tools/list starts with {len(start)} tool{'' if len(start) == 1 else 's'} of {n}, "
        f"{', '.join(start)}, and grows with what it finds"
    )


@dataclass
class McpHandle:
    """A running MCP HTTP server: ``url``, ``token``, :meth:`status`, :meth:`stop` (idempotent)."""

    url: str
    token: str | None = field(repr=False)  # never in a repr: a notebook saves what it shows
    host: str
    port: int
    bridge: McpBridge
    _server: uvicorn.Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    _sock: socket.socket = field(repr=False)
    _stats: dict[str, int] = field(repr=False)
    started_at: float = field(default_factory=time.time)
    _stopped: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Cancels the stop this server is registered for when its session closes.
    _cancel_on_close: Callable[[], None] = field(default=lambda: None, repr=False)
    #: Where the token is kept across restarts (``token_file=``), or ``None`` for a per-start token.
    token_file: Path | None = None
    #: What a notebook shows for this server (``%oc mcp start``'s :class:`~ocnb.widgets.AgentPanel`), if any.
    panel: Any = field(default=None, repr=False)
    #: Says the person left the approval desk (:meth:`attend_desk`); called by :meth:`stop`.
    _leave_desk: Callable[[], None] = field(default=lambda: None, repr=False)

    @property
    def session(self) -> Session:
        return self.bridge.session

    def client_session(self, name: str | None = None) -> Session:
        """An isolated client's own session (its browser context), by the name the client gave
        (``clientInfo.name``); without a name, the only one connected. ``BrowserView.watch`` shows it.

        Raises ``LookupError`` when the server is not ``--isolated`` or no such client is connected."""
        if self.bridge.clients is None:
            raise LookupError("this MCP server is not --isolated: its clients drive the session itself")
        return self.bridge.clients.named(name)

    @property
    def running(self) -> bool:
        return not self._stopped and self._thread.is_alive()

    @property
    def headers(self) -> dict[str, str]:
        """HTTP headers a client must send (the bearer token), empty without auth."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def claude_code_command(self) -> str:
        """The ``claude mcp add`` line that registers this server with Claude Code."""
        header = f' --header "Authorization: Bearer {self.token}"' if self.token else ""
        return f"claude mcp add --transport http ocnb {self.url}{header}"

    def client_config(self) -> dict[str, Any]:
        """``mcpServers`` JSON for clients that speak streamable HTTP (Cursor, VS Code, .mcp.json)."""
        entry: dict[str, Any] = {"type": "http", "url": self.url}
        if self.token:
            entry["headers"] = self.headers
        return {"mcpServers": {"ocnb": entry}}

    def desktop_config(self) -> dict[str, Any]:
        """``mcpServers`` JSON for Claude Desktop, which reaches HTTP servers through ``mcp-remote``."""
        args = ["-y", "mcp-remote", self.url]
        entry: dict[str, Any] = {"command": "npx", "args": args}
        if self.token:
            args += ["--header", "Authorization:${OCNB_MCP_AUTH}"]
            entry["env"] = {"OCNB_MCP_AUTH": f"Bearer {self.token}"}
        return {"mcpServers": {"ocnb": entry}}

    def banner(self) -> str:
        """What :func:`serve` prints: URL, token and client configuration."""
        lines = [
            f"ocnb MCP server: {self.url}  (session {self.session.id}, {tools_line(self.session, self.bridge.listing)})",
            policy_line(self.session),
            *self._mode_lines(),
        ]
        if not self.token:
            lines.append("Auth: OFF (anyone who can reach the port)")
        elif self.token_file is not None:
            lines.append(f"Bearer token: {self.token}  (kept in {self.token_file}; the same after a restart)")
        else:
            lines.append(f"Bearer token: {self.token}  (new at every start; --token-file PATH keeps one)")
        if self.token:
            lines.append("Clients send it as the HTTP header  Authorization: Bearer <token>")
        lines += ["", "Claude Code:", f"  {self.claude_code_command()}", ""]
        lines += ["Cursor / VS Code / .mcp.json:", json.dumps(self.client_config(), indent=2), ""]
        lines += ["Claude Desktop (claude_desktop_config.json, via mcp-remote):"]
        lines.append(json.dumps(self.desktop_config(), indent=2))
        return "\n".join(lines)

    def _mode_lines(self) -> list[str]:
        if self.bridge.clients is None:
            return []
        return ["Isolated: each client gets its own browser context (tabs, cookies), closed when it disconnects"]

    def masked_token(self) -> str:
        """The token's first characters only (``abcd…``): enough to tell two tokens apart."""
        return f"{self.token[:4]}… ({len(self.token)} characters)" if self.token else "none (auth off)"

    def safe_banner(self) -> str:
        """The banner without the token itself, for output that is saved (a notebook's cell).

        The token is named by its 0600 file (``$(cat FILE)`` in a shell) or, without one, by
        ``handle.token``; the client configurations say where to put it.
        """
        lines = [
            f"ocnb MCP server: {self.url}  (session {self.session.id}, {tools_line(self.session, self.bridge.listing)})",
            policy_line(self.session),
            *self._mode_lines(),
        ]
        if not self.token:
            lines.append("Auth: OFF (anyone who can reach the port)")
            lines += ["", "Claude Code:", f"  {self.claude_code_command()}"]
            return "\n".join(lines)
        where = f"the file {self.token_file} (mode 0600)" if self.token_file is not None else "handle.token"
        lines.append(f"Bearer token: {self.masked_token()}, in {where}; not shown here, so a saved notebook holds none")
        source = f"$(cat {self.token_file})" if self.token_file is not None else "<handle.token>"
        stand_in = f"<the token in {self.token_file}>" if self.token_file is not None else "<handle.token>"
        header = f' --header "Authorization: Bearer {source}"'
        lines += ["", "Claude Code:", f"  claude mcp add --transport http ocnb {self.url}{header}", ""]
        client = {
            "mcpServers": {
                "ocnb": {"type": "http", "url": self.url, "headers": {"Authorization": f"Bearer {stand_in}"}}
            }
        }
        lines += ["Cursor / VS Code / .mcp.json:", json.dumps(client, indent=2), ""]
        desktop = self.desktop_config()
        desktop["mcpServers"]["ocnb"]["env"] = {"OCNB_MCP_AUTH": f"Bearer {stand_in}"}
        lines += ["Claude Desktop (claude_desktop_config.json, via mcp-remote):", json.dumps(desktop, indent=2)]
        return "\n".join(lines)

    def attend_desk(self) -> None:
        """Say a person is at the session's approval desk while this server runs (``%oc mcp start``):
        an agent's call held for approval then waits for the answer (or ``approval_timeout_s``)."""
        self._leave_desk()
        self._leave_desk = self.session.approvals.attend()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """In a notebook: its panel (whose text/plain is the safe banner), else the safe banner."""
        if self.panel is not None:
            bundle = self.panel._repr_mimebundle_(**kwargs)
            if isinstance(bundle, dict):
                return bundle
        return {"text/plain": self.safe_banner()}

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.safe_banner() if not cycle else f"McpHandle({self.url!r})")

    def status(self) -> dict[str, Any]:
        """A JSON-able snapshot: running, url, port, auth, session, tools, traffic, uptime."""
        return {
            "running": self.running,
            "url": self.url,
            "host": self.host,
            "port": self.port,
            "auth": self.token is not None,
            "token_file": str(self.token_file) if self.token_file is not None else None,
            "session_id": self.session.id,
            "tools": len(self.session.registry),
            "tools_listed": len(self.bridge.visible_tools()),
            "discovery": self.bridge.discovery,
            "listing": self.bridge.listing,
            "caps": sorted(self.session.registry.caps),
            "connections": self.bridge.connections,
            "agent_confirm": self.session.settings.agent_confirm,
            "approval_timeout_s": self.session.settings.approval_timeout_s,
            "paused": self.session.approvals.paused,
            "pending_approvals": len(self.session.approvals.pending()),
            "isolated": self.bridge.clients is not None,
            "clients": self.bridge.clients.describe() if self.bridge.clients is not None else [],
            "tool_calls": self.bridge.calls,
            "requests": self._stats["requests"],
            "refused": self._stats["refused"],
            "started_at": _dt.datetime.fromtimestamp(self.started_at, _dt.UTC).isoformat(),
            "uptime_s": round(time.time() - self.started_at, 1) if self.running else 0.0,
        }

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down, close client streams and release the port. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        loop = self.bridge.loop
        if loop is not None and self._thread.is_alive() and threading.current_thread() is not self._thread:
            try:
                asyncio.run_coroutine_threadsafe(self.bridge.close_streams(), loop).result(timeout / 4)
            except Exception:  # noqa: BLE001 - the loop is gone or slow; shut down regardless
                pass
        self._server.should_exit = True
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout / 2)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(timeout / 2)
        self._sock.close()
        self._cancel_on_close()
        self._leave_desk()
        if self.panel is not None:
            try:
                self.panel.close()
            except Exception:  # noqa: BLE001 - a display never fails a stop
                pass
        self.bridge.release()

    def stop_with_session(self) -> None:
        """Stop this server when its session closes (the registration :meth:`stop` undoes)."""
        self._cancel_on_close = self.session.on_close(self.stop)

    def __enter__(self) -> McpHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<ocnb.mcp server {self.url} {state}, auth {'on' if self.token else 'OFF'}>"
