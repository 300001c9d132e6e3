"""What the server tells clients unasked: log messages from the browser, and that the tool list changed.

- Logging: ``logging/setLevel`` turns on ``notifications/message`` for that client (none before): the
  page's console errors and warnings, uncaught page errors, crashes and failed navigations, secrets
  masked, each text from the page fenced like a result's. Handshake-era protocol versions only (2026
  drops connection-wide logging). A message rides the stream of the call running on that connection,
  which every transport has, else the connection's own channel.
- Live tool list: when the registry changes, handshake-era clients (2025 protocol versions) get
  ``notifications/tools/list_changed`` on their connection; 2026-era clients get the same event on
  their ``subscriptions/listen`` stream.

Both are keyed on the client's ``Connection``, which the SDK reaches only through a private name
(:func:`ocnb.mcp.sdk_seams.connection_of`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .sdk_seams import connection_of

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["LOG_LEVELS", "ClientLog", "ToolListChanges", "event_level"]

log = logging.getLogger("ocnb.mcp")

#: The server's event loop while it runs (None before and after): where the browser thread hands work.
LoopOf = Callable[[], asyncio.AbstractEventLoop | None]

#: MCP log levels, least severe first (RFC 5424).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_CONSOLE_LEVELS = {"error": "error", "pageerror": "error", "assert": "error", "warning": "warning"}


def event_level(kind: str, body: dict[str, Any]) -> str | None:
    """The log level of a session event, or None for events that are not worth a message."""
    if kind == "console":
        return _CONSOLE_LEVELS.get(str(body.get("type")), "debug")
    if kind in ("page_crash", "browser_crashed"):
        return "critical"
    if kind in ("dialog", "download", "browser_relaunched"):
        return "info"
    return None


def _soon(loop_of: LoopOf, make: Callable[[], Any]) -> None:
    """Start the coroutine ``make()`` on the server's loop, from any thread; nothing once it stopped."""
    loop = loop_of()
    if loop is None or loop.is_closed():
        return
    with contextlib.suppress(RuntimeError):  # the loop is shutting down
        loop.call_soon_threadsafe(lambda: loop.create_task(make()))


class ClientLog:
    """The levels clients set with ``logging/setLevel`` and the messages sent to them."""

    def __init__(self, session: Session, loop_of: LoopOf) -> None:
        self.session = session
        self.loop_of = loop_of
        #: The level each client set (by connection); no entry, no messages.
        self.levels: dict[Any, str] = {}
        #: The tools/call running on a connection (its SDK session and request id).
        self.active: dict[Any, tuple[Any, Any]] = {}

    async def set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        """The ``logging/setLevel`` handler."""
        connection = connection_of(ctx.session)
        # 2026-era connections opt in per request (SEP-2577): connection-wide messages are not theirs
        if connection is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            if connection not in self.levels:
                connection.exit_stack.callback(self.levels.pop, connection, None)
            self.levels[connection] = params.level
        return types.EmptyResult()

    @contextlib.contextmanager
    def riding(self, peer: Any, request_id: Any) -> Iterator[None]:
        """While a call runs, its connection's messages ride that call's stream."""
        connection = connection_of(peer)
        if connection is not None:
            self.active[connection] = (peer, request_id)
        try:
            yield
        finally:
            if connection is not None and self.active.get(connection, (None,))[0] is peer:
                del self.active[connection]

    def browser_event(self, kind: str, body: dict[str, Any]) -> None:
        """Listener on the session's events (browser thread): the ones worth a log message."""
        level = event_level(kind, body)
        if level is not None:
            self.send(level, self.session.fence.event(kind, body))  # the page's texts fenced

    def send(self, level: str, data: dict[str, Any]) -> None:
        """Send ``data`` at ``level`` to every client that asked for it (any thread)."""
        if self.levels:
            _soon(self.loop_of, lambda: self._deliver(level, data))

    async def _deliver(self, level: str, data: dict[str, Any]) -> None:
        rank = LOG_LEVELS.index(level)
        for connection, threshold in list(self.levels.items()):
            if rank < LOG_LEVELS.index(threshold):
                continue
            note = types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(level=level, data=data, logger="ocnb.browser")  # type: ignore[arg-type]
            )
            try:
                with anyio.move_on_after(5):
                    active = self.active.get(connection)
                    if active is not None:  # on the running call's stream
                        await active[0].send_notification(note, related_request_id=active[1])
                    else:
                        await connection.notify(
                            "notifications/message", note.params.model_dump(mode="json", exclude_none=True)
                        )
            except Exception:  # noqa: BLE001 - one broken client must not stop the others
                log.debug("could not send a log message", exc_info=True)


class ToolListChanges:
    """``tools/list_changed`` for both protocol eras: handshake-era connections with a back-channel
    get it directly, 2026-era clients on their ``subscriptions/listen`` stream."""

    def __init__(self, loop_of: LoopOf) -> None:
        self.loop_of = loop_of
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        #: Handshake-era connections with a back-channel (they get list_changed directly).
        self.connections: set[Any] = set()

    async def track(self, ctx: Any, call_next: Any) -> Any:
        """Middleware: remember handshake-era connections that can receive server notifications."""
        connection = connection_of(ctx.session)  # ctx.session: the SDK's session with this client
        if (
            connection is not None
            and connection not in self.connections
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and connection.has_standalone_channel
        ):
            self.connections.add(connection)
            connection.exit_stack.callback(self.connections.discard, connection)
        return await call_next(ctx)

    def changed(self) -> None:
        """Announce that the tool list changed (any thread)."""
        _soon(self.loop_of, self._broadcast)

    async def _broadcast(self) -> None:
        await self.bus.publish(ToolsListChanged())
        for connection in list(self.connections):
            try:
                with anyio.move_on_after(5):
                    await connection.send_tool_list_changed()
            except Exception:  # noqa: BLE001 - one broken client must not stop the others
                log.debug("could not notify a client of the tool list change", exc_info=True)
