"""Workflow tools: execute_plan, and the live task guards oc_task_start / workflow_status / oc_task_finish."""

from __future__ import annotations

import asyncio
import time
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
from ..errors import InvalidArgument
from ..placeholders import fill_params, require_params
from ..registry import tool

__all__ = ["execute_plan", "oc_task_finish", "oc_task_start", "workflow_status"]

SIGNATURE_SCHEMA = {
    "anyOf": [{"type": "string"}, {"type": "object"}],
    "description": "a stored signature id, or an inline signature object",
}


def _load_signature(ctx: Any, value: Any) -> Any:
    return load_signature(value, home=ctx.home, known_tools=ctx.session.registry.names())


async def _evaluate(ctx: Any, sig: Any, calls: list[CallInfo], elapsed_ms: float) -> Evaluation:
    """The signature judged on the active tab now (its assertions, observations, calls and time)."""
    page = await ctx.page()
    tab = ctx.browser.tab_of(page)
    observations = PageObservations.from_tab(tab) if tab else None
    return await evaluate_signature_on_page(sig, page, observations, calls=calls, elapsed_ms=elapsed_ms)


def _mask_secret_inputs(ctx: Any, sig: Any, inputs: dict[str, Any]) -> None:
    """Make the session's masker scrub the literal values of secret inputs from every output."""
    masks = secret_input_masks(sig, inputs)
    if masks:
        ctx.session.secrets.update(masks)


@tool(
    name="execute_plan",
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
async def execute_plan(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    steps = args["steps"]
    params = args.get("params") or {}
    require_params([st.get("args", {}) for st in steps], params)
    unknown = [f"step {i}: {st['tool']!r}" for i, st in enumerate(steps) if st["tool"] not in ctx.session.registry]
    if unknown:
        raise InvalidArgument(f"unknown tool(s): {'; '.join(unknown)}")
    sig = _load_signature(ctx, args["signature"]) if "signature" in args else None
    out: dict[str, Any] = {"status": "completed", "steps_total": len(steps), "steps_executed": 0, "steps": []}
    if sig is not None:
        if sig.inputs:
            require_inputs(sig, params, what="params")
        _mask_secret_inputs(ctx, sig, params)
        reasons = preflight(sig, [st["tool"] for st in steps])
        if reasons:
            out["status"] = "failure"
            out["taskSignature"] = {"status": "failure", "reasons": reasons}
            return out
    started = time.monotonic()
    calls: list[CallInfo] = []
    for i, st in enumerate(steps):
        step_args = fill_params(st.get("args", {}), params)
        before = page_url(ctx.session)
        attempts = st.get("retries", 0) + 1
        t0 = time.perf_counter()
        for attempt in range(attempts):
            try:
                result = (
                    await asyncio.wait_for(ctx.dispatch(st["tool"], step_args, source="plan"), st["timeout_ms"] / 1000)
                    if "timeout_ms" in st
                    else await ctx.dispatch(st["tool"], step_args, source="plan")
                )
            except asyncio.TimeoutError:
                from ..results import ToolResult

                result = ToolResult.failure(
                    st["tool"], "TIMEOUT", f"step {i} did not finish within {st['timeout_ms']} ms"
                )
            if result.ok or attempt == attempts - 1:
                break
        record = {
            "index": i,
            "tool": st["tool"],
            "ok": result.ok,
            "attempts": attempt + 1,
            "duration_ms": round((time.perf_counter() - t0) * 1000, 1),
        }
        if not result.ok:
            record["error_code"] = result.error.code
            record["error"] = result.error.message
        out["steps"].append(record)
        out["steps_executed"] += 1
        ctx.progress(i + 1, len(steps), st["tool"])
        calls.append(
            CallInfo.from_result(st["tool"], result.ok, result.data, url_before=before, url_after=page_url(ctx.session))
        )
        if sig is not None:
            evaluation = await _evaluate(ctx, sig, calls, (time.monotonic() - started) * 1000)
            if evaluation.done:
                out["status"] = evaluation.status
                out["taskSignature"] = evaluation.to_dict()
                return out
        if not result.ok:
            out["status"] = "failed"
            break
    if sig is not None:
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
async def oc_task_start(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
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
async def workflow_status(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
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
async def oc_task_finish(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    binding: TaskBinding | None = ctx.session.guard.unbind()
    if binding is None:
        return {"bound": False}
    final = binding.status()
    return {"bound": False, "finished": final}
