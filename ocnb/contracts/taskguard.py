"""Live task guards: a task signature bound to a session fences every call from every face.

``oc_task_start`` binds a :class:`~ocnb.contracts.BrowserTaskSignature`; from then on a pipeline
before-hook refuses calls outside ``allowedTools`` (``DISALLOWED_TOOL``), past a budget or a tripped
loop guard (``BUDGET_EXHAUSTED`` naming the guard), and an after-hook records each call for the
evaluator. ``oc_task_finish`` unbinds it. Secret inputs are added to the session's masker so their
values never reach a result, the journal or the trace. :class:`TaskGuard` is the session's layer that
holds the binding and the two hooks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..calls import CallContext, Host
from ..results import ToolResult
from . import BrowserTaskSignature, CallInfo, Evaluation, Refusal, guard_call, guard_status

__all__ = ["GuardedCall", "TaskBinding", "TaskGuard", "page_url"]


@dataclass
class GuardedCall:
    """The task guard's state of one call it fenced: the page URL before the call ran, and whether
    the guard refused it (a refused call is not recorded for the evaluator)."""

    url_before: str | None = None
    refused: bool = False


@dataclass
class TaskBinding:
    """A signature bound to a session: its inputs (redacted), the calls so far, the last evaluation."""

    signature: BrowserTaskSignature
    inputs: dict[str, Any]
    started: float = field(default_factory=time.monotonic)
    calls: list[CallInfo] = field(default_factory=list)
    refused: int = 0
    last_evaluation: Evaluation | None = None
    #: The latest refusal, until the next call runs: a tripped loop guard or a spent budget ends the
    #: task's ``continue`` even though the refused call itself was never recorded.
    last_refusal: Refusal | None = None

    @property
    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000

    def status(self) -> dict[str, Any]:
        sig = self.signature
        counted = [c for c in self.calls if c.tool not in ("oc_task_start", "oc_task_finish", "workflow_status")]
        status = self.last_evaluation.status if self.last_evaluation else "continue"
        refusal = self.last_refusal
        if status == "continue" and refusal is not None and refusal.code == "BUDGET_EXHAUSTED":
            status = "stop" if refusal.guard else "budget_exhausted"
        return {
            "signature_id": sig.id,
            "description": sig.description,
            "status": status,
            "calls_used": len(counted),
            "max_tool_calls": sig.budgets.max_tool_calls,
            "elapsed_ms": round(self.elapsed_ms, 1),
            "max_wall_ms": sig.budgets.max_wall_ms,
            "refused": self.refused,
            "last_refusal": None
            if refusal is None
            else {"code": refusal.code, "reason": refusal.reason, "guard": refusal.guard},
            "guards": guard_status(sig, self.calls),
            "inputs": self.inputs,
            "last_evaluation": self.last_evaluation.to_dict() if self.last_evaluation else None,
        }


def page_url(session: Host) -> str | None:
    """The active tab's URL, if the browser runs (read on the browser thread)."""
    state = session.state
    if state is None or state.active_id not in state.tabs:
        return None
    try:
        return str(state.tabs[state.active_id].page.url)
    except Exception:  # noqa: BLE001
        return None


class TaskGuard:
    """The task signature bound to a session (``task``, None when unbound) and the hooks that fence calls."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.task: TaskBinding | None = None

    def bind(self, binding: TaskBinding) -> None:
        """Fence every later call with ``binding`` (replacing any bound before)."""
        self.task = binding

    def unbind(self) -> TaskBinding | None:
        """Stop fencing calls; returns the binding that was bound, if any."""
        binding, self.task = self.task, None
        return binding

    def before(self, call: CallContext) -> None:
        """Before-hook: refuse a call the bound signature does not allow (raises the refusal's OcnbError)."""
        binding = self.task
        if binding is None:
            return
        mine = call.slot(GuardedCall)
        mine.url_before = page_url(self.host)
        refusal = guard_call(binding.signature, call.name, binding.calls, binding.elapsed_ms)
        if refusal is not None:
            binding.refused += 1
            binding.last_refusal = refusal
            mine.refused = True
            raise refusal.to_error()

    def after(self, call: CallContext, result: ToolResult) -> None:
        """After-hook: record a finished call (not a refused one) for the bound signature's evaluator."""
        binding = self.task
        mine = call.peek(GuardedCall)
        if binding is None or call.tooldef is None or (mine is not None and mine.refused):
            return
        if call.name == "oc_task_start":
            return
        if call.name not in ("workflow_status", "oc_task_finish"):
            binding.last_refusal = None
        url_after = page_url(self.host)
        binding.calls.append(
            CallInfo.from_result(
                call.name, result.ok, result.data, url_before=mine.url_before if mine else None, url_after=url_after
            )
        )
