"""``%oc close``: close the notebook's session (and the MCP server on it), and say what was closed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["close_command"]


async def _tabs(session: Session) -> list[str]:
    state = session.state
    return [f"{tab.id} {tab.page.url}" for tab in state.tabs.values()] if state is not None else []


def close_command(session: Session | None, server: Any) -> str:
    """Stop ``server`` (an :class:`~ocnb.mcp.McpHandle`, or None) and close ``session`` (or None);
    returns one line saying what was closed: the session id, its tabs, the MCP server and the
    isolated clients' contexts it had."""
    parts: list[str] = []
    if session is not None and not session.closed:
        tabs: list[str] = []
        if session.state is not None:
            try:
                tabs = session.run(_tabs(session), timeout=10)
            except Exception:  # noqa: BLE001 - a dead browser: there is still a session to close
                tabs = []
        if session.state is None:
            parts.append(f"closed session {session.id} (its browser had not started)")
        else:
            listed = "; ".join(tabs)
            parts.append(
                f"closed session {session.id}: {len(tabs)} tab{'' if len(tabs) == 1 else 's'}"
                + (f" ({listed})" if listed else "")
            )
    if server is not None and server.running:
        clients = server.status().get("clients", [])
        server.stop()
        stopped = f"MCP server stopped ({server.url})"
        if clients:
            names = ", ".join(str(c.get("client") or "unnamed") for c in clients)
            stopped += f", with {len(clients)} isolated client context{'' if len(clients) == 1 else 's'} ({names})"
        parts.append(stopped)
    if session is not None and not session.closed:
        session.close()
    return "; ".join(parts) if parts else "nothing to close: no session is open"
