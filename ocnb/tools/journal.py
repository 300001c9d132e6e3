"""Observability tool oc_journal: what this session (or an earlier one) did, as recent calls or a summary."""

from __future__ import annotations

from typing import Any

from ..errors import Disabled, InvalidArgument
from ..registry import tool

__all__ = ["oc_journal"]


@tool(
    name="oc_journal",
    category="observability",
    uses_page=False,
    description=(
        "Read the audit journal: recent calls, or a summary of calls and failures. "
        "kind=summary gives calls per tool, failures by code, the last successful step and repeated identical failures. "
        "Filter by tool, since (ISO timestamp or seq number) and session_id (default: this session)."
    ),
    properties={
        "kind": {"type": "string", "enum": ["recent", "summary"], "default": "recent"},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 2000,
            "description": "recent: how many calls (default 20); summary: summarize only the last N calls.",
        },
        "tool": {"type": "string", "description": "Only calls of this tool."},
        "since": {
            "type": ["string", "integer"],
            "description": "Only calls after this seq number, or at/after this ISO-8601 timestamp.",
        },
        "session_id": {"type": "string", "description": "Another session's journal (read from disk)."},
    },
)
async def oc_journal(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    journal = getattr(ctx.session, "journal", None)
    if journal is None:
        raise Disabled("the journal is not enabled in this session")
    kind = args.get("kind", "recent")
    limit = int(args.get("limit", 20))
    session_id = args.get("session_id")
    if session_id == ctx.session.id:
        session_id = None  # this session: served from memory
    try:
        if kind == "summary":
            window = int(args["limit"]) if "limit" in args else None  # default: every call kept
            out = journal.summary(limit=window, tool=args.get("tool"), since=args.get("since"), session_id=session_id)
        else:
            entries = journal.recent(limit, tool=args.get("tool"), since=args.get("since"), session_id=session_id)
            out = {"entries": entries, "count": len(entries)}
    except ValueError as exc:  # a malformed since
        raise InvalidArgument(str(exc)) from None
    out["session_id"] = session_id or ctx.session.id
    return out
