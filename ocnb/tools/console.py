"""Console: console_messages, the tab's console and page errors as a list (group ``network``).

The entries come from :class:`~ocnb.browser.Tab`'s bounded ``console`` log. Console entries and requests
share one sequence of ids, so a ``mark`` from either list says "after this" to both. This module also
holds the paging both lists use (:func:`window`, :func:`parse_since`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..registry import tool

__all__ = ["LEVELS", "SINCE_SCHEMA", "console_messages", "parse_since", "window"]

T = TypeVar("T")

#: A console type's level; ``level`` keeps entries at that level or more severe.
LEVELS = ("debug", "info", "warning", "error")
_TYPE_LEVEL = {"error": 3, "pageerror": 3, "assert": 3, "warning": 2, "debug": 0}
SINCE_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "minLength": 1}],
    "description": "After this id (a mark), oldest first; or at/after an ISO timestamp.",
}
LIMIT_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": 500, "description": "Default 50."}


def parse_since(value: Any) -> tuple[int | None, float | None]:
    """``since`` as ``(after_id, at_or_after_ts)``: an id (int or digits) or an ISO-8601 timestamp."""
    if value is None:
        return None, None
    if isinstance(value, int):
        return value, None
    text = str(value).strip()
    if text.isdigit():
        return int(text), None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(f"since must be an id or an ISO-8601 timestamp, not {text[:60]!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return None, when.timestamp()


def window(items: Sequence[T], args: dict[str, Any], key: Any, *, ts: Any) -> tuple[list[T], dict[str, Any]]:
    """One page of ``items`` (oldest first, each with ``key(item)`` its id and ``ts(item)`` its time).

    Without ``since``: the newest ``limit`` and how many older ones were ``skipped``. With ``since``: the
    first ``limit`` after it, and ``next`` (the ``since`` of the following page) when more remain.
    """
    limit = int(args.get("limit", 50))
    after, at = parse_since(args.get("since"))
    if after is None and at is None:
        page = list(items[len(items) - limit :]) if limit else []
        return page, ({"skipped": len(items) - len(page)} if len(page) < len(items) else {})
    rest = [i for i in items if (after is None or key(i) > after) and (at is None or (ts(i) or 0) >= at)]
    page = rest[:limit]
    return page, ({"next": key(page[-1]) if page else after or 0} if len(rest) > len(page) else {})


def _level(kind: str) -> int:
    return _TYPE_LEVEL.get(kind, 1)


@tool(
    name="console_messages",
    page_text=("messages",),
    examples=(
        "show me the errors in the browser console",
        "did the page log any JavaScript errors",
        "what did the page print to the console",
    ),
    category="console",
    group="network",
    description=(
        "List the tab's console messages and page errors. "
        "level keeps that level and above (error, warning, info, debug). Newest `limit` by default; "
        "since=<mark> lists what came after, oldest first, with next for the following page. "
        "limit=0 returns only the mark."
    ),
    properties={
        "level": {"type": "string", "enum": list(LEVELS)},
        "since": SINCE_SCHEMA,
        "limit": LIMIT_SCHEMA,
    },
)
async def console_messages(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    tab = ctx.tab(args.get("tab_id"))
    floor = LEVELS.index(args.get("level", "debug"))
    kept = [e for e in tab.console if _level(e["type"]) >= floor]
    page, paging = window(kept, args, lambda e: e["id"], ts=lambda e: e.get("ts"))
    messages = [{k: e[k] for k in ("id", "type", "text", "url") if k in e} for e in page]
    return {
        "messages": messages,
        "count": len(messages),
        **paging,
        "dropped": tab.console.dropped,
        "mark": ctx.browser.last_seq,
    }
