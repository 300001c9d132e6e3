"""Isolated mode (``--isolated``): each MCP client gets a browser context of its own.

Each client session — the streamable-HTTP session (``Mcp-Session-Id``), or the one client of a
stdio server — is served by a :class:`~ocnb.session.Session` of its own whose browser context is
opened in the served session's browser (:class:`~ocnb.browser.shared.HostedBrowser`): its own tabs,
cookies and storage, the served session's settings (its origin policy, confirm policy, caps) and
secrets, the same journal on disk (each line naming the client). Its agent calls wait at the served
session's approval desk (:class:`~ocnb.audit.approval.Desk`): they appear in the served session's
``approvals.pending()`` and desk widget with the client's name, the person's answer there settles them
(the first answer wins, against the client's own elicitation too), the served session's pause stops
them, and its ``agent_confirm`` / ``approval_timeout_s`` apply. It is closed when the client goes:
its HTTP session is deleted or ends, the stdio pipe closes, or the server stops.

A 2026-era client sends each request on its own with no session to key a context on; in isolated
mode it is told so (a JSON-RPC error on ``server/discover``), and the SDK's ``mode="auto"`` falls back
to the handshake, which opens a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..browser.shared import HostedBrowser
from .sdk_seams import connection_of

if TYPE_CHECKING:
    from ..audit.journal import Journal
    from ..calls import CallContext
    from ..results import ToolResult
    from ..session import Session

__all__ = ["ClientSessions", "client_name"]

log = logging.getLogger("ocnb.mcp")

#: The key of the one client a stdio server has.
STDIO = "stdio"
#: How many clients' journals (the open ones and the last closed) the agent's live feed keeps reading.
JOURNALS_KEPT = 20
_NAME_RE = re.compile(r"[^\w.\- ]+")


def client_name(connection: Any) -> str | None:
    """The name the client gave for itself (``clientInfo.name``), cut to 100 plain characters; None without one."""
    params = getattr(connection, "client_params", None)
    name = getattr(getattr(params, "client_info", None), "name", None)
    if not isinstance(name, str) or not name.strip():
        return None
    return _NAME_RE.sub("_", name.strip())[:100]


class ClientSessions:
    """The per-client sessions of an isolated MCP server over ``session`` (the one it serves)."""

    def __init__(self, session: Session, *, stdio: bool = False) -> None:
        self.session = session
        self.stdio = stdio
        self.browser = HostedBrowser(session.runtime, session.settings, session.ensure_browser)
        #: The open client sessions, by client key (HTTP session id, or ``stdio``).
        self.open: dict[str, Session] = {}
        #: Each open client's name (its ``clientInfo.name``), by client key.
        self.names: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self._closed = False
        #: The clients' journals (in memory) with their session ids, newest last: the live feed's rows.
        self._journals: deque[tuple[Journal, str]] = deque(maxlen=JOURNALS_KEPT)
        self._call_listeners: list[Callable[[], None]] = []

    def key(self, peer: Any) -> str | None:
        """The client a request comes from (``ctx.session``): its HTTP session id, ``stdio``, or None."""
        if self.stdio:
            return STDIO
        connection = connection_of(peer)
        session_id = getattr(connection, "session_id", None)
        return session_id if isinstance(session_id, str) and session_id else None

    async def refuse_sessionless(self, ctx: Any, call_next: Any) -> Any:
        """Middleware: a request with no client session to key a context on gets a JSON-RPC error."""
        if not self.stdio and self.key(ctx.session) is None:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="this ocnb server is --isolated: each client needs a session of its own "
                "(connect with the initialize handshake, e.g. mcp.Client(..., mode='legacy'))",
            )
        return await call_next(ctx)

    def session_for(self, peer: Any) -> Session:
        """The session of the client behind ``peer`` (``ctx.session``), created at its first call."""
        from ..session import Session

        key = self.key(peer)
        if key is None:  # refused by the middleware first; here for a caller that skipped it
            raise MCPError(code=types.INVALID_REQUEST, message="no client session")
        with self._lock:
            if self._closed:
                raise MCPError(code=types.INTERNAL_ERROR, message="the server is stopping")
            found = self.open.get(key)
            if found is not None and not found.closed:
                return found
            parent = self.session
            mine = Session(
                settings=parent.settings,
                shared_browser=self.browser,
                approve=parent.approvals.approve,
                desk=parent.approvals.desk,  # the person's desk, pause and agent policy reach this client
            )
            secrets = parent.secrets
            mine.secrets.update({name: secrets.value_of(name) for name in secrets.names})
            for name in secrets.bound:
                origins = secrets.origins(name)
                if origins:
                    mine.secrets.bind(name, origins)
            self.open[key] = mine
            self._journals.append((mine.journal, mine.id))
            mine.pipeline.outer_after.append(self._landed)
            connection = connection_of(peer)
            self.names[key] = client_name(connection)
        if not self.stdio and connection is not None:  # closed when the client's HTTP session ends
            connection.exit_stack.push_async_callback(self.close_client, key)
        log.info("isolated MCP client %s (%s): session %s", key, self.names[key], mine.id)
        return mine

    def entries(self) -> list[dict[str, Any]]:
        """The clients' journal entries (in memory; closed clients' too, the last :data:`JOURNALS_KEPT`), oldest first."""
        with self._lock:
            journals = list(self._journals)
        out = [e for journal, sid in journals for e in journal.entries if e.get("session_id") in (None, sid)]
        return sorted(out, key=lambda e: str(e.get("ts") or ""))

    def on_call(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` (on the browser thread: keep it quick) after each recorded call of any client;
        returns the function that stops it."""
        self._call_listeners.append(fn)
        return lambda: self._call_listeners.remove(fn) if fn in self._call_listeners else None

    def _landed(self, call: CallContext, result: ToolResult) -> None:
        if not call.record:
            return
        for fn in list(self._call_listeners):
            with contextlib.suppress(Exception):  # a display never fails a call
                fn()

    def named(self, name: str | None = None) -> Session:
        """The open session of the client called ``name``; without a name, the only one open."""
        with self._lock:
            found = [s for key, s in self.open.items() if name is None or self.names.get(key) == name]
            connected = sorted(str(n) for n in self.names.values())
        if len(found) == 1:
            return found[0]
        if found:
            raise LookupError(f"{len(found)} clients are connected ({', '.join(connected)}): name one")
        who = f"called {name!r} " if name is not None else ""
        raise LookupError(f"no client {who}is connected (connected: {', '.join(connected) or 'none'})")

    async def close_client(self, key: str) -> None:
        """Close the session (and browser context) of client ``key``, off this event loop."""
        with self._lock:
            mine = self.open.pop(key, None)
            self.names.pop(key, None)
        if mine is not None:
            await asyncio.to_thread(mine.close)

    def close_all(self) -> list[str]:
        """Close every client's session (the server stops); returns their session ids. Idempotent."""
        with self._lock:
            self._closed = True
            sessions, self.open = list(self.open.values()), {}
            self.names.clear()
        for mine in sessions:
            with contextlib.suppress(Exception):
                mine.close()
        return [s.id for s in sessions]

    def describe(self) -> list[dict[str, Any]]:
        """The open client sessions: ``client`` (its name), ``session_id`` and ``tabs``, for status and the live view."""
        with self._lock:
            items = list(self.open.items())
        out = []
        for key, mine in items:
            state = mine.state
            out.append(
                {
                    "client": self.names.get(key),
                    "session_id": mine.id,
                    "tabs": len(state.tabs) if state is not None else 0,
                }
            )
        return out
