"""Human hand-off: when a target cannot be resolved, a person picks the element and the action resumes.

With ``Settings.handoff`` on, an acting tool whose target is not found or ambiguous returns
``NEEDS_HUMAN`` with a payload (``handoff_id``, ``tool``, ``target``, ``candidates``, ``screenshot``
path, and ``intent`` when given). :class:`Handoffs` is the session's layer that makes that payload and
keeps the open hand-offs; :meth:`ocnb.Session.resume_handoff` re-runs the same call with the element
the person chose (a ref from the candidates), through dispatch — so the resumed action is journaled too.
"""

from __future__ import annotations

import itertools
from typing import Any, cast

from ..calls import CallContext, Host
from ..errors import InvalidArgument
from ..files import atomic_write_bytes
from ..perception.context import place_candidates
from ..results import ToolError, ToolResult
from .notes import note

__all__ = ["HANDOFF_CODES", "Handoffs"]

#: Failures a person can settle by pointing at the element.
HANDOFF_CODES = ("ELEMENT_NOT_FOUND", "AMBIGUOUS_TARGET")
_ids = itertools.count(1)


#: Open hand-offs a session keeps (the newest); an older one reads as "no open hand-off".
PENDING_KEPT = 100


class Handoffs:
    """A session's open hand-offs (``pending``, by id) and the after-hook that opens them."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.pending: dict[str, dict[str, Any]] = {}

    async def after(self, call: CallContext, result: ToolResult) -> ToolResult | None:
        """After-hook: turn an unresolved target into ``NEEDS_HUMAN`` when hand-off is enabled."""
        host = self.host
        if result.ok or result.error is None or result.error.code not in HANDOFF_CODES or not host.config.handoff:
            return None
        if call.tooldef is None or not call.tooldef.side_effects or call.source == "replay":
            return None
        details = result.error.details or {}
        handoff_id = f"h{next(_ids)}"
        payload: dict[str, Any] = {
            "handoff_id": handoff_id,
            "tool": call.name,
            "target": {k: call.args[k] for k in ("ref", "query", "source", "target") if k in call.args},
            "reason": result.error.code,
            "message": result.error.message,
            "candidates": details.get("candidates", []),
            "screenshot": None,
        }
        if call.intent:
            payload["intent"] = call.intent
        try:
            page = await host.browser_state().page(call.tab_id)
            # each candidate with the row or form around it and its box on the screenshot
            payload["candidates"] = await place_candidates(page, list(payload["candidates"]))
            path = host.home / "screenshots" / host.id / f"handoff-{handoff_id}.png"
            atomic_write_bytes(path, await page.screenshot(type="png"))  # 0600, in folders 0700
            payload["screenshot"] = str(path)
        except Exception:  # noqa: BLE001 - the payload is useful without a picture
            pass
        self.pending[handoff_id] = {"tool": call.name, "args": dict(call.args), "tab_id": call.tab_id}
        while len(self.pending) > PENDING_KEPT:  # nobody answered the oldest: let it go
            del self.pending[next(iter(self.pending))]
        needs = ToolResult(
            ok=False,
            tool=call.name,
            error=ToolError("NEEDS_HUMAN", f"a person has to pick the element ({result.error.message})", payload),
        )
        approvals = getattr(host, "approvals", None)
        if approvals is None or call.parent is not None or not call.agent or not approvals.attended:
            return needs
        if not any(isinstance(c, dict) and c.get("ref") for c in payload["candidates"]):
            return needs
        return await self._at_desk(call, approvals, payload, needs)

    async def _at_desk(
        self, call: CallContext, approvals: Any, payload: dict[str, Any], needs: ToolResult
    ) -> ToolResult:
        """An agent's hand-off with a person at the desk: wait for the first pick (the desk, or the
        client's elicitation), then run the call once on the picked element, nested — its journal
        line is this call's. Nobody picked in time: ``NEEDS_HUMAN`` as it was, marked ``asked``."""
        handoff_id = str(payload["handoff_id"])
        picked = await approvals.wait_pick(call, payload)
        payload["asked"] = True  # the desk and the client were asked already: no second question
        if picked is None:
            note(call, "hand-off: nobody picked in time")
            return needs
        ref, by = picked
        try:
            tool, args = self.take(handoff_id, ref)
        except InvalidArgument:  # resumed meanwhile by another face
            return needs
        note(call, f"hand-off: {ref} picked by {by}")
        from ..dispatch import dispatch_async  # noqa: PLC0415 - dispatch runs this hook

        result = await dispatch_async(cast(Any, self.host), tool, args, source=call.source, record=False)
        return result

    def take(self, handoff_id: str, ref: str) -> tuple[str, dict[str, Any]]:
        """Close the hand-off: the tool and the arguments that re-run it on the element ``ref``."""
        entry = self.pending.pop(handoff_id, None)
        if entry is None:
            raise InvalidArgument(f"no open hand-off {handoff_id!r}")
        args = {k: v for k, v in entry["args"].items() if k not in ("query",)}
        args["ref"] = ref
        return entry["tool"], args
