"""Workflow tools: execute_plan, and the live task guards oc_task_start / workflow_status / oc_task_finish."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ..contracts import (
    CallInfo,
    Evaluation,
    PageObservations,
    evaluate_signature_on_page,
    load_signature,
    preflight,
    redact_inputs,
    require_inputs,
    secret_input_masks,
)
from ..contracts.taskguard import TaskBinding, page_url
from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..placeholders import fill_params, require_params
from ..registry import tool
from ..results import ToolResult
from ..skills.walk import StepResult, StepWalk, Stop

__all__ = ["execute_plan", "oc_task_finish", "oc_task_start", "workflow_status"]

SIGNATURE_SCHEMA = {
    "anyOf": [{"type": "string"}, {"type": "object"}],
    "description": "a stored signature id, or an inline signature object",
}


def _load_signature(ctx: ToolContext, value: Any) -> Any:
    return load_signature(value, home=ctx.home, known_tools=ctx.session.registry.names())


async def _evaluate(ctx: ToolContext, sig: Any, calls: list[CallInfo], elapsed_ms: float) -> Evaluation:
    """The signature judged on the active tab now (its assertions, observations, calls and time)."""
    page = await ctx.page()
    tab = ctx.browser.tab_of(page)
    observations = PageObservations.from_tab(tab) if tab else None
    return await evaluate_signature_on_page(sig, page, observations, calls=calls, elapsed_ms=elapsed_ms)


def _mask_secret_inputs(ctx: ToolContext, sig: Any, inputs: dict[str, Any]) -> None:
    """Make the session's masker scrub the literal values of secret inputs from every output."""
    masks = secret_input_masks(sig, inputs)
    if masks:
        ctx.session.secrets.update(masks)


@tool(
    name="execute_plan",
    page_text=("*", "error.details"),
    examples=(
        "run these steps one after another",
        "execute a list of tool calls with parameters",
        "do the whole sequence in one go",
    ),
    category="workflow",
    side_effects=True,
    uses_page=False,
    description="Run tool calls in order, with ${param} placeholders. "
    "With a task signature, disallowed tools fail before any step runs and the signature is evaluated after each step.",
    properties={
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": 200,
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "args": {"type": "object"},
                    "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 300000},
                    "retries": {"type": "integer", "minimum": 0, "maximum": 5},
                },
                "required": ["tool"],
                "additionalProperties": False,
            },
        },
        "params": {"type": "object"},
        "signature": SIGNATURE_SCHEMA,
    },
    required=["steps"],
)
async def execute_plan(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    run = PlanRun(ctx, args)
    stopped = await run.walk()
    if isinstance(stopped, PlanStopped):
        run.out.update(stopped.out)
        if stopped.verdict:
            return run.out
    return run.ended()


@dataclass
class PlanStepResult(StepResult):
    """What one step of a plan did: an entry of the result's ``steps``."""

    attempts: int = 1
    #: the time its call took (all attempts), not counting the signature's evaluation
    duration_ms: float = 0.0
    error_code: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        entry = {"index": self.index, "tool": self.kind, "ok": self.ok, "attempts": self.attempts}
        entry["duration_ms"] = self.duration_ms
        if self.error_code is not None:
            entry.update(error_code=self.error_code, error=self.error)
        return entry


class PlanStopped(Stop):
    """The plan ends early; ``out`` is what its result says about it (``status``, ``taskSignature``).
    A ``verdict`` (the signature's) is the whole answer; else the plan ends as after its last step."""

    def __init__(self, *, verdict: bool = True, **out: Any) -> None:
        super().__init__(out.get("status"))
        self.verdict = verdict
        self.out = out


class PlanRun(StepWalk[PlanStepResult]):
    """``execute_plan`` as a :class:`~ocnb.skills.walk.StepWalk`: each step one tool call through
    :meth:`ToolContext.dispatch` (source ``plan``), retried as the step says; with a signature, the
    task is judged after each step. ``out`` is the tool's result."""

    def __init__(self, ctx: ToolContext, args: dict[str, Any]) -> None:
        self.ctx = ctx
        self.args = args
        self.steps = args["steps"]
        self.params: dict[str, Any] = args.get("params") or {}
        self.sig: Any = None
        self.out: dict[str, Any] = {
            "status": "completed",
            "steps_total": len(self.steps),
            "steps_executed": 0,
            "steps": [],
        }
        self.calls: list[CallInfo] = []
        self.started = time.monotonic()
        self.last: ToolResult | None = None

    async def preflight(self) -> None:
        """Params, tools and the signature's inputs and allowed tools, checked before any step runs."""
        ctx, steps = self.ctx, self.steps
        require_params([st.get("args", {}) for st in steps], self.params)
        unknown = [f"step {i}: {st['tool']!r}" for i, st in enumerate(steps) if st["tool"] not in ctx.session.registry]
        if unknown:
            raise InvalidArgument(f"unknown tool(s): {'; '.join(unknown)}")
        self.sig = _load_signature(ctx, self.args["signature"]) if "signature" in self.args else None
        if self.sig is not None:
            if self.sig.inputs:
                require_inputs(self.sig, self.params, what="params")
            _mask_secret_inputs(ctx, self.sig, self.params)
            reasons = preflight(self.sig, [st["tool"] for st in steps])
            if reasons:
                raise PlanStopped(status="failure", taskSignature={"status": "failure", "reasons": reasons})
        self.started = time.monotonic()

    async def begin(self, i: int, step: dict[str, Any]) -> PlanStepResult:
        return PlanStepResult(index=i, kind=step["tool"])

    async def act(self, i: int, step: dict[str, Any], result: PlanStepResult) -> None:
        """The step's call, tried up to ``retries`` + 1 times, each within its ``timeout_ms``."""
        step_args = fill_params(step.get("args", {}), self.params)
        before = page_url(self.ctx.session)
        attempts = step.get("retries", 0) + 1
        t0 = time.perf_counter()
        for attempt in range(attempts):
            got = await self._call(i, step, step_args)
            if got.ok or attempt == attempts - 1:
                break
        result.duration_ms = round((time.perf_counter() - t0) * 1000, 1)
        result.ok, result.attempts, self.last = got.ok, attempt + 1, got
        if got.error is not None:
            result.error_code, result.error = got.error.code, got.error.message
        after = page_url(self.ctx.session)
        self.calls.append(CallInfo.from_result(step["tool"], got.ok, got.data, url_before=before, url_after=after))

    async def _call(self, i: int, step: dict[str, Any], step_args: dict[str, Any]) -> ToolResult:
        if "timeout_ms" not in step:
            return await self.ctx.dispatch(step["tool"], step_args, source="plan")
        try:
            return await asyncio.wait_for(
                self.ctx.dispatch(step["tool"], step_args, source="plan"), step["timeout_ms"] / 1000
            )
        except TimeoutError:
            return ToolResult.failure(
                step["tool"], "TIMEOUT", f"step {i} did not finish within {step['timeout_ms']} ms"
            )

    async def verify(self, i: int, step: dict[str, Any], result: PlanStepResult) -> None:
        """The signature judged after the step (it may end the plan either way); a failed step ends it."""
        if self.sig is not None:
            evaluation = await _evaluate(self.ctx, self.sig, self.calls, (time.monotonic() - self.started) * 1000)
            if evaluation.done:
                raise PlanStopped(status=evaluation.status, taskSignature=evaluation.to_dict())
        if not result.ok:
            raise PlanStopped(status="failed", verdict=False)

    def record(self, i: int, step: dict[str, Any], result: PlanStepResult) -> None:
        self.out["steps"].append(result.to_dict())
        self.out["steps_executed"] += 1
        self.ctx.progress(i + 1, len(self.steps), step["tool"])

    def ended(self) -> dict[str, Any]:
        """The result of a plan that ran to its end or to a failed step: a last extract's rows, and
        the signature's verdict (the plan ended before it was met)."""
        out, last = self.out, self.last
        if last is not None and last.ok and isinstance(last.data, dict) and last.data.get("format") == "csv":
            # a plan ending with extract: its rows are the plan's (ToolResult.df, a CSV block over MCP)
            out.update({k: last.data[k] for k in ("format", "rows", "columns", "content", "file") if k in last.data})
        if self.sig is not None:
            out["taskSignature"] = {
                "status": "continue" if out["status"] == "completed" else "failure",
                "reasons": ["the plan ended before the success condition was met"],
            }
            if out["status"] == "completed":
                out["status"] = "incomplete"
        return out


@tool(
    name="oc_task_start",
    examples=(
        "start a task that only allows this site",
        "bind a task signature before acting",
        "guard the next steps with a task budget",
    ),
    category="workflow",
    side_effects=True,
    uses_page=False,
    description="Bind a task signature that checks every later call. "
    "Calls outside allowedTools, past a budget or a loop guard are refused.",
    properties={"signature": SIGNATURE_SCHEMA, "inputs": {"type": "object"}},
    required=["signature"],
)
async def oc_task_start(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    sig = _load_signature(ctx, args["signature"])
    inputs = args.get("inputs") or {}
    require_inputs(sig, inputs)
    _mask_secret_inputs(ctx, sig, inputs)
    ctx.session.guard.bind(TaskBinding(sig, redact_inputs(sig, inputs)))
    return {"bound": sig.id, "allowedTools": list(sig.allowed_tools), "budgets": sig.budgets.to_dict()}


@tool(
    name="workflow_status",
    examples=(
        "how is the current task going",
        "what budget is left for the task",
        "show the task status",
    ),
    category="workflow",
    uses_page=False,
    description="Report the bound task's status. Includes calls used, guards and the last evaluation.",
    properties={},
)
async def workflow_status(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    binding: TaskBinding | None = ctx.session.task
    if binding is None:
        return {"bound": False}
    if ctx.session.state is not None and ctx.browser.tabs:
        binding.last_evaluation = await _evaluate(ctx, binding.signature, binding.calls, binding.elapsed_ms)
    return {"bound": True, **binding.status()}


@tool(
    name="oc_task_finish",
    examples=(
        "I am done with the task",
        "end the task and tell me if it succeeded",
        "finish the bound task",
    ),
    category="workflow",
    side_effects=True,
    uses_page=False,
    description="Unbind the task signature and return its final status.",
    properties={},
)
async def oc_task_finish(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    binding: TaskBinding | None = ctx.session.guard.unbind()
    if binding is None:
        return {"bound": False}
    final = binding.status()
    return {"bound": False, "finished": final}
