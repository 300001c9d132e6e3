"""What the acting tools share (interact, forms, vision): how a call names its target, the action
timeout, the change watch around an action, and the result that names the element acted on.

Not a category: it declares no tool (the catalogue, :data:`ocnb.tools.CATALOGUE`, leaves it out).
"""

from __future__ import annotations

from typing import Any

from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..perception.changes import ChangeWatch
from ..perception.refs import REF_PATTERN
from ..perception.selectors import capture_element
from ..perception.targets import Resolved

__all__ = [
    "CAPTURE",
    "TARGET_PROPS",
    "action_timeout",
    "capture_if_asked",
    "element_result",
    "target_args",
    "target_spec",
    "watch_changes",
]

#: The ``capture_artifact`` property: record the step (with its element's chain) for a skill.
CAPTURE: dict[str, Any] = {"type": "boolean", "description": "record the step for a skill"}

#: The two ways a call names its element: a ref or a plain-words query (exactly one of them).
TARGET_PROPS: dict[str, Any] = {
    "ref": {"type": "string", "description": "from read_page/find, e.g. ax_12"},
    "query": {"type": "string", "minLength": 1, "description": "name, label, placeholder or text"},
}


def target_args(args: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(ref, query)`` of a call; ``INVALID_ARGUMENT`` unless exactly one is given."""
    ref, query = args.get("ref"), args.get("query")
    if (ref is None) == (query is None):
        raise InvalidArgument("give exactly one of ref or query", details={"ref": ref, "query": query})
    return ref, query


def target_spec(target: str) -> dict[str, str]:
    """A drag/drop or fill_form key: a ref when it looks like one, else a query."""
    return {"ref": target.strip()} if REF_PATTERN.match(target.strip()) else {"query": target}


def action_timeout(ctx: ToolContext) -> int:
    """Milliseconds one action may take: the session default, at most 10 s."""
    return min(int(ctx.config.default_timeout_ms), 10_000)


def watch_changes(ctx: ToolContext, page: Any, frame: Any, element: Any = None) -> ChangeWatch:
    """The change watch around one action of this call (see :class:`~ocnb.perception.changes.ChangeWatch`)."""
    return ChangeWatch(ctx.browser, page, frame, element, timeout_ms=action_timeout(ctx))


async def element_result(
    ctx: ToolContext, page: Any, r: Resolved, changes: dict[str, Any], chain: dict | None, **extra: Any
) -> dict[str, Any]:
    """An acting tool's result: the element, ``extra``, the changes, the frame and tab, the chain if captured."""
    tab = ctx.browser.tab_of(page)
    out: dict[str, Any] = {"element": r.describe(), **extra, "changes": changes, "frame_ordinal": r.frame_ordinal}
    out["tab_id"] = tab.id if tab else None
    if chain is not None:
        out.update(chain)
    return out


async def capture_if_asked(args: dict[str, Any], page: Any, r: Resolved) -> dict | None:
    """``selector_chain`` and ``fingerprint``, taken before acting: after a click the element may be gone."""
    if not args.get("capture_artifact"):
        return None
    return await capture_element(page, r.element, r.frame)
