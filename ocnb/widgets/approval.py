"""An ``APPROVAL_REQUIRED`` result in a notebook: what the widget shows and what Approve / Deny do.

A call the ``confirm`` setting holds for approval (:mod:`ocnb.audit.approval`) fails, with nobody to
ask, as ``APPROVAL_REQUIRED``; its details are the request (tool, masked arguments, the element's role,
name and ref, the page, the intent, the reason) with an ``approval_id``. :class:`~ocnb.widgets.HumanHandoff`
shows it with *Approve* and *Deny*: either settles the request (decided by ``widget``) and runs the
same call again through dispatch (``source="widget"``), which then acts (approved) or ends
``APPROVAL_DENIED`` — both journaled with ``approval: … by widget``.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import OcnbError
from ..results import ToolError, ToolResult
from .caller import Caller

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["Settle", "approval_lines", "approval_request", "decide", "is_approval_request", "session_settle"]

#: ``settle(approval_id, approved) -> (tool, args)``: record the person's answer, get the call to run again.
Settle = Callable[[str, bool], "tuple[str, dict[str, Any]]"]


def is_approval_request(result: ToolResult | dict[str, Any]) -> bool:
    """Whether ``result`` is an ``APPROVAL_REQUIRED`` result (or its request)."""
    if isinstance(result, dict):
        return isinstance(result.get("approval_id"), str) and "reason" in result
    return not result.ok and result.error is not None and result.error.code == "APPROVAL_REQUIRED"


def approval_request(result: ToolResult | dict[str, Any]) -> dict[str, Any]:
    """The request of an ``APPROVAL_REQUIRED`` result (or the request itself)."""
    if isinstance(result, dict):
        return dict(result)
    assert result.error is not None
    return dict(result.error.details)


def session_settle(session: Session) -> Settle:
    """Settle through the session's approval layer, as decided by the notebook widget."""
    return lambda approval_id, approved: session.approvals.settle(approval_id, approved, by="widget")


def decide(call: Caller, settle: Settle, request: dict[str, Any], approved: bool) -> ToolResult:
    """Settle the request with the person's answer and run the call again (it acts only if approved)."""
    try:
        tool, args = settle(str(request.get("approval_id")), approved)
    except OcnbError as exc:  # already settled, or forgotten
        return ToolResult(ok=False, tool=str(request.get("tool")), error=ToolError.from_exception(exc))
    return call(tool, args)


def approval_lines(request: dict[str, Any]) -> list[str]:
    """The request as the person reads it (HTML lines, escaped)."""
    esc = lambda v: html.escape(str(v))  # noqa: E731 - a local shorthand
    element = " ".join(
        f"“{esc(request[k])}”" if k == "name" else esc(request[k]) for k in ("role", "name") if request.get(k)
    )
    ref = f" ({esc(request['ref'])})" if request.get("ref") else ""
    lines = [
        f"<b>{esc(request.get('tool') or 'a tool')}</b> needs your approval"
        + (f" to act on {element}{ref}" if element else "")
    ]
    if request.get("url"):
        lines.append(f"page: <code>{esc(request['url'])}</code>")
    if request.get("intent"):
        lines.append(f"intent: <i>{esc(request['intent'])}</i>")
    lines.append(f"why: {esc(request.get('reason') or '')}")
    args = request.get("args")
    if args:
        lines.append(
            "arguments: <code>" + esc(", ".join(f"{k}={v!r}" for k, v in dict(args).items()))[:300] + "</code>"
        )
    return lines
