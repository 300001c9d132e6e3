"""A person asked through the client (``elicitation/create``): a hand-off's candidate, an approval.

- Hand-off: a ``NEEDS_HUMAN`` result, for a client that declared ``elicitation``, becomes a question
  asking the person to pick among the candidates; the chosen ref resumes the call through dispatch
  (journaled, like the widget's path). Declined or cancelled: nothing acts, and the client gets the
  ``NEEDS_HUMAN`` result as it is.
- Approval (:mod:`ocnb.audit.approval`): while an agent's call waits at the approval desk, a client
  that declared ``elicitation`` is asked too (:func:`approval_asker`: the action, its element, the page,
  the intent, why). The first answer wins — the client's (``approval: … by mcp-client``) or the
  person's at the notebook — and the same call goes on, once: approved, it acts; declined or cancelled,
  it ends ``APPROVAL_DENIED``. A question the desk answered first is withdrawn (its task cancelled) and
  a late answer is ignored. A client without elicitation, with nobody at the desk, gets
  ``APPROVAL_REQUIRED``: nothing acts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types

from ..calls import AskFn
from ..errors import OcnbError
from ..results import ToolError, ToolResult

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["approval_asker", "approval_message", "candidate_title", "hand_off"]

log = logging.getLogger("ocnb.mcp")

#: How a settled question's call runs again: the bridge's call through dispatch.
Rerun = Callable[[str, Any], Awaitable[ToolResult]]

_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())


def candidate_title(candidate: dict[str, Any]) -> str:
    """How a person sees a candidate element: role, name and ref."""
    role = candidate.get("role") or candidate.get("tag") or "element"
    name = candidate.get("name") or candidate.get("label") or candidate.get("text") or ""
    return f"{role} {str(name)[:80]!r} ({candidate['ref']})" if name else f"{role} ({candidate['ref']})"


def approval_message(request: dict[str, Any]) -> str:
    """What the person is asked: the action, its element, the page, the intent and why it asks."""
    element = " ".join(str(request[k]) for k in ("role", "name") if request.get(k))
    lines = [f"Approve {request.get('tool')}" + (f" on {element[:120]}" if element else "") + "?"]
    if request.get("url"):
        lines.append(f"page: {str(request['url'])[:200]}")
    if request.get("intent"):
        lines.append(f"intent: {request['intent']}")
    lines.append(f"why asked: {request.get('reason')}")
    return "\n".join(lines)


async def hand_off(ctx: Any, result: ToolResult, session: Session, rerun: Rerun) -> ToolResult:
    """Ask the person through the client which candidate a ``NEEDS_HUMAN`` call meant, and resume it on
    that ref through dispatch. Without elicitation, a refusal, or no candidates: ``result`` as it is
    (and nothing acts)."""
    peer = ctx.session  # the MCP SDK's session with this client
    payload = result.error.details if result.error is not None else {}
    candidates = [c for c in payload.get("candidates") or [] if isinstance(c, dict) and c.get("ref")]
    if not candidates or not peer.check_client_capability(_ELICITATION):
        return result
    options = [{"const": str(c["ref"]), "title": candidate_title(c)} for c in candidates]
    schema = {
        "type": "object",
        "properties": {"ref": {"type": "string", "title": "Element", "oneOf": options}},
        "required": ["ref"],
    }
    intent = f" to {payload['intent']}" if payload.get("intent") else ""
    message = f"{payload.get('tool')}{intent}: {payload.get('message')}. Which element is meant?"
    try:
        answer = await peer.elicit_form(message, schema, related_request_id=ctx.request_id)
    except Exception:  # noqa: BLE001 - the client could not ask: today's result
        log.debug("elicitation failed", exc_info=True)
        return result
    ref = (answer.content or {}).get("ref") if answer.action == "accept" else None
    if not isinstance(ref, str) or ref not in {o["const"] for o in options}:
        return result
    try:
        tool, args = session.handoffs.take(str(payload["handoff_id"]), ref)
    except OcnbError as exc:
        return ToolResult(ok=False, tool=result.tool, error=ToolError.from_exception(exc))
    return await rerun(tool, args)


def approval_asker(ctx: Any) -> AskFn | None:
    """How the desk asks this call's client (``elicitation/create``), or None when it cannot."""
    peer = ctx.session  # the MCP SDK's session with this client
    if not peer.check_client_capability(_ELICITATION):
        return None
    loop = asyncio.get_running_loop()

    def ask(request: dict[str, Any], answer: Callable[[bool], None]) -> Callable[[], None]:
        question = asyncio.run_coroutine_threadsafe(_ask(peer, ctx.request_id, request, answer), loop)

        def withdraw() -> None:  # answered at the desk, or the wait ended
            question.cancel()

        return withdraw

    return ask


async def _ask(peer: Any, request_id: Any, request: dict[str, Any], answer: Callable[[bool], None]) -> None:
    schema = {
        "type": "object",
        "properties": {"approve": {"type": "boolean", "title": "Approve", "default": False}},
        "required": ["approve"],
    }
    try:
        reply = await peer.elicit_form(approval_message(request), schema, related_request_id=request_id)
    except Exception:  # noqa: BLE001 - the client could not ask: the desk still can
        log.debug("elicitation failed", exc_info=True)
        return
    answer(reply.action == "accept" and (reply.content or {}).get("approve") is True)
