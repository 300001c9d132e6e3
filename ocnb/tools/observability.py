"""Observability: oc_journal (what this session, or an earlier one, did), oc_secrets_load and oc_connection_health."""

from __future__ import annotations

from typing import Any

from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..registry import tool

__all__ = ["oc_connection_health", "oc_journal", "oc_secrets_load"]


@tool(
    name="oc_journal",
    page_text=("entries", "summary"),
    examples=(
        "what did I do so far",
        "show the audit log of recent calls",
        "summarize the actions taken in this session",
    ),
    category="observability",
    uses_page=False,
    description=(
        "Read the audit journal. It gives recent calls or a summary. "
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
            "anyOf": [{"type": "string"}, {"type": "integer"}],
            "description": "Only calls after this seq number, or at/after this ISO-8601 timestamp.",
        },
        "session_id": {"type": "string", "description": "Another session's journal (read from disk)."},
    },
)
async def oc_journal(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    journal = ctx.session.journal
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


@tool(
    name="oc_secrets_load",
    examples=(
        "load my passwords from the .env file",
        "use the credentials file for login",
        "read secrets without showing them",
    ),
    category="observability",
    uses_page=False,
    side_effects=True,
    description="Load secrets from a dotenv file, for use as ${SECRET:NAME}. "
    "Returns only the names; values never appear in results, logs or files.",
    properties={"path": {"type": "string", "minLength": 1}},
    required=["path"],
)
async def oc_secrets_load(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    from pathlib import Path

    from ..errors import FileNotAllowed

    path = Path(args["path"]).expanduser().resolve()
    roots = [Path(ctx.home).resolve(), Path(ctx.config.upload_root).resolve()]
    if not any(path.is_relative_to(r) for r in roots):
        raise FileNotAllowed(f"{path} is outside the working folder and OCNB_HOME")
    if not path.is_file():
        raise InvalidArgument(f"no file {path}")
    store = ctx.session.secrets
    names = store.load_dotenv(path)
    out: dict[str, Any] = {"loaded": sorted(names), "count": len(store)}
    bound = {name: store.origins(name) for name in store.bound}
    if bound:  # NAME.origins lines: where each bound secret may go (patterns, never values)
        out["bound"] = bound
    return out


@tool(
    name="oc_connection_health",
    page_text=("pages",),
    examples=(
        "is the browser still connected",
        "check the browser is alive",
        "which pages are open right now",
    ),
    category="observability",
    uses_page=False,
    description="Report the browser connection and open pages. "
    "Includes the version, and the executable or the remote endpoint. "
    "relaunch: true starts a new browser if this one died (after BROWSER_CRASHED the next call does it anyway).",
    properties={"relaunch": {"type": "boolean", "description": "if the browser died, start a new one now"}},
)
async def oc_connection_health(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    relaunched = None
    if args.get("relaunch"):
        # Only a dead browser is replaced: on a live one this stays a read-only report.
        done = ctx.session.crash_watch.relaunched  # this call already relaunched a browser whose crash was reported
        b = ctx.browser
        if done:
            relaunched = {"after_crash": True, "lost_tabs": done["lost_tabs"]}
        elif b.crashes.current is not None or not b.connected:
            relaunched = await ctx.session.relaunch_browser()
    b = ctx.browser
    out: dict[str, Any] = {
        "connected": bool(b.connected) and b.crashes.current is None,
        "version": await b.version() if b.connected and b.crashes.current is None else None,
        "executable": b.executable,
        "remote": b.remote,
        "pages": len(b.tabs),
        "active_tab": b.active_id,
        "session_id": ctx.session.id,
        "crashes": len(ctx.session.crashes) + (1 if b.crashes.current is not None else 0),
    }
    if b.crashes.current is not None:
        out["crashed"] = {"lost_tabs": b.crashes.current["lost_tabs"], "relaunch": "next call"}
        b.crashes.reported = True  # reported here: the next call relaunches
    if relaunched is not None:
        out["relaunched"] = relaunched
    return out
