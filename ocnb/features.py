"""Optional layers that plug into a session's pipeline (audit, secrets, guards, capture …).

Each layer is installed here, in one place, so the order of hooks is explicit:

    before: trace tool_call → secrets in → task-signature guards → (handler)
    after:  replay failure envelope → human hand-off → secrets out → journal + trace → guard bookkeeping → skill capture → results
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dispatch import CallContext
    from .results import ToolResult
    from .session import Session

__all__ = ["RECENT_RESULTS", "install"]

#: How many recent results a session keeps in memory (for token accounting).
RECENT_RESULTS = 200


def install(session: Session, *, secrets: str | os.PathLike[str] | None = None) -> None:
    """Attach every layer's hooks to ``session.pipeline``."""
    from .audit.handoff import handoff_hook
    from .audit.hooks import install as install_audit
    from .skills.capture import capture_hook
    from .skills.replay import envelope_hook
    from .workflow import guard_after_hook, guard_before_hook

    session._on_close = []  # type: ignore[attr-defined]
    session.task = None  # type: ignore[attr-defined]  # a bound task signature (oc_task_start)
    session.recent_results = deque(maxlen=RECENT_RESULTS)  # type: ignore[attr-defined]
    install_audit(session, secrets=secrets)  # puts trace/secrets/journal hooks first
    session.pipeline.after.insert(0, handoff_hook)  # before masking and journaling: they see NEEDS_HUMAN
    session.pipeline.after.insert(0, envelope_hook)  # so is a replay failure's {ok, failure} data
    session.pipeline.before.append(guard_before_hook)
    session.pipeline.after.append(guard_after_hook)
    session.pipeline.after.append(capture_hook)
    session.pipeline.after.append(remember_result)


def remember_result(call: CallContext, result: ToolResult) -> None:
    """Keep the (masked) result's compact JSON of recent calls, for token accounting."""
    if not call.record:
        return
    text = json.dumps(result.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str)
    call.session.recent_results.append(
        {"seq": call.seq, "tool": call.name, "source": call.source, "ok": result.ok, "json": text}
    )  # type: ignore[attr-defined]


def trace_event(session: Any, kind: str, body: dict[str, Any]) -> None:
    """Write a non-call event (navigation, console, dialog, download, replay_step) to the trace."""
    trace = getattr(session, "trace", None)
    if trace is not None and not trace.closed:
        try:
            trace.emit(kind, body=body)
        except (OSError, ValueError):
            pass
