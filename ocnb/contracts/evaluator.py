"""The task-signature evaluator: where a task stands, decided from its inputs alone, without any LLM.

This module is the one place that defines the words the guards use:

**Observation tools** (:data:`OBSERVATION_TOOLS`) read the page or the session and change nothing
a user would see: ``read_page``, ``find``, ``query_dom``, ``page_screenshot``, ``tabs_context``,
``oc_journal``, ``oc_assert``, … An agent that calls only these is looking, not acting.

**Control tools** (:data:`CONTROL_TOOLS`: ``oc_task_start``, ``oc_task_finish``,
``workflow_status``) manage the bound task itself. They are always allowed and never counted
against budgets or guards.

**Progress** (:func:`is_progress`) is any of, for one call:

1. the page URL changed (``url_before != url_after``, both known);
2. an acting (non-observation) tool reported a DOM change (``changes.dom_changed`` in its result);
3. an assertion passed (``oc_assert`` returned ``verdict: "pass"``).

**Loop guards** count within the last ``window`` calls (all calls when no window) and trip when the
count **exceeds** ``limit``:

- ``max_same_tool``: calls to any one tool;
- ``max_observation_calls``: observation calls since the last progress;
- ``max_non_progress_calls``: calls since the last progress.

:func:`evaluate_signature` is pure: the page part arrives as :class:`PageState` (assertion outcomes
computed by :func:`observe_page_state`, or made up in a unit test). Precedence, first match wins:
``failure`` (a ``failureWhen`` assertion passed) → ``success`` → ``stop`` (a ``stopWhen`` assertion
passed) → ``budget_exhausted`` → ``stop`` (a loop guard tripped) → ``continue``.

:func:`guard_call` is the live check made *before* a call runs (a session with a bound signature).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ocnb.errors import BudgetExhausted, DisallowedTool, OcnbError

from .assertions import AssertionOutcome, PageObservations, describe_assertion, evaluate
from .signatures import BrowserTaskSignature, LoopGuard

if TYPE_CHECKING:  # pragma: no cover - typing only
    from playwright.async_api import Page

__all__ = [
    "CONTROL_TOOLS",
    "OBSERVATION_TOOLS",
    "CallInfo",
    "Evaluation",
    "PageState",
    "Refusal",
    "Status",
    "evaluate_signature",
    "evaluate_signature_on_page",
    "guard_call",
    "guard_status",
    "is_observation",
    "is_progress",
    "observe_page_state",
    "preflight",
]

#: Tools that only read the page or the session (see the module docstring).
OBSERVATION_TOOLS: frozenset[str] = frozenset(
    {
        "read_page",
        "find",
        "query_dom",
        "page_screenshot",
        "tabs_context",
        "oc_connection_health",
        "expand_tools",
        "discover_capabilities",
        "oc_journal",
        "oc_assert",
        "oc_evidence_bundle",
        "oc_skill_recall",
    }
)
#: Tools that manage the bound task: always allowed, never counted.
CONTROL_TOOLS: frozenset[str] = frozenset({"oc_task_start", "oc_task_finish", "workflow_status"})

Status = Literal["continue", "success", "stop", "failure", "budget_exhausted"]


def is_observation(tool: str) -> bool:
    """Whether ``tool`` is an observation tool."""
    return tool in OBSERVATION_TOOLS


@dataclass(frozen=True)
class CallInfo:
    """What the evaluator needs to know about one finished tool call."""

    tool: str
    ok: bool = True
    url_before: str | None = None
    url_after: str | None = None
    #: The acting tool's result said the DOM changed (``changes.dom_changed``).
    dom_changed: bool = False
    #: The call was an assertion (``oc_assert``) whose verdict was pass.
    assertion_passed: bool = False

    @classmethod
    def from_result(
        cls, tool: str, ok: bool, data: Any, *, url_before: str | None = None, url_after: str | None = None
    ) -> CallInfo:
        """Build from a tool's result ``data``: reads ``changes.dom_changed`` and ``verdict``."""
        dom_changed = False
        passed = False
        if ok and isinstance(data, Mapping):
            changes = data.get("changes")
            dom_changed = isinstance(changes, Mapping) and changes.get("dom_changed") is True
            passed = data.get("verdict") == "pass"
        return cls(tool, ok, url_before, url_after, dom_changed, passed)

    @property
    def progress(self) -> bool:
        return is_progress(self)


def is_progress(call: CallInfo) -> bool:
    """The definition of progress (module docstring): URL change, acting DOM change, passed assertion."""
    if call.url_before is not None and call.url_after is not None and call.url_before != call.url_after:
        return True
    if call.dom_changed and not is_observation(call.tool):
        return True
    return call.assertion_passed


@dataclass(frozen=True)
class PageState:
    """Outcomes of the signature's assertions on the page now (same order as in the signature)."""

    success: AssertionOutcome
    stop_when: tuple[AssertionOutcome, ...] = ()
    failure_when: tuple[AssertionOutcome, ...] = ()
    url: str | None = None


@dataclass
class Evaluation:
    """Where the task stands. ``reasons`` explain every status but ``success``, which has ``evidence``."""

    status: Status
    reasons: list[str] = field(default_factory=list)
    evidence: dict[str, Any] | None = None
    calls_used: int = 0
    elapsed_ms: float = 0

    def to_dict(self) -> dict[str, Any]:
        """``{status, evidence}`` on success, ``{status, reasons}`` otherwise (the spec's shape)."""
        if self.status == "success":
            return {"status": self.status, "evidence": self.evidence or {}}
        return {"status": self.status, "reasons": list(self.reasons)}

    @property
    def done(self) -> bool:
        """Whether the task has ended (any status but ``continue``)."""
        return self.status != "continue"


@dataclass(frozen=True)
class Refusal:
    """Why :func:`guard_call` refuses a call: a stable ``code``, a ``reason``, the ``guard`` if one tripped.

    Loop guards refuse with ``BUDGET_EXHAUSTED`` (a guard is a budget on one kind of call) and name
    themselves in ``guard`` and at the start of ``reason``.
    """

    code: Literal["DISALLOWED_TOOL", "BUDGET_EXHAUSTED"]
    reason: str
    guard: str | None = None

    def to_error(self) -> OcnbError:
        """The matching :class:`~ocnb.errors.OcnbError`, with ``guard`` in its details when set."""
        details = {"guard": self.guard} if self.guard else {}
        cls = DisallowedTool if self.code == "DISALLOWED_TOOL" else BudgetExhausted
        return cls(self.reason, details=details)


# --------------------------------------------------------------------------------------------
# Counting


def _counted(calls: Sequence[CallInfo]) -> list[CallInfo]:
    return [c for c in calls if c.tool not in CONTROL_TOOLS]


def _since_progress(calls: Sequence[CallInfo]) -> list[CallInfo]:
    for i in range(len(calls) - 1, -1, -1):
        if is_progress(calls[i]):
            return list(calls[i + 1 :])
    return list(calls)


def _measure(guard: LoopGuard, calls: Sequence[CallInfo], window: int | None) -> tuple[int, str]:
    """The count a guard watches over the last ``window`` calls, and what it counted, in words."""
    scope = list(calls[-window:]) if window else list(calls)
    if guard.kind == "max_same_tool":
        counts = Counter(c.tool for c in scope)
        if not counts:
            return 0, "no calls"
        tool, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return n, f"{n} calls to {tool!r}"
    since = _since_progress(scope)
    if guard.kind == "max_observation_calls":
        n = sum(is_observation(c.tool) for c in since)
        return n, f"{n} observation calls since the last progress"
    return len(since), f"{len(since)} calls since the last progress"


def _guard_text(guard: LoopGuard, what: str) -> str:
    window = f", window {guard.window}" if guard.window else ""
    return f"{guard.kind}: {what} (limit {guard.limit}{window})"


def guard_status(sig: BrowserTaskSignature, calls: Sequence[CallInfo]) -> list[dict[str, Any]]:
    """Each loop guard's current count and whether it has tripped (for ``workflow_status``)."""
    counted = _counted(calls)
    out = []
    for guard in sig.loop_guards:
        n, _ = _measure(guard, counted, guard.window)
        out.append({**guard.to_dict(), "count": n, "tripped": n > guard.limit})
    return out


def _budget_reasons(sig: BrowserTaskSignature, n_calls: int, elapsed_ms: float) -> list[str]:
    reasons = []
    if n_calls >= sig.budgets.max_tool_calls:
        reasons.append(f"maxToolCalls: {n_calls} of {sig.budgets.max_tool_calls} calls used")
    if elapsed_ms >= sig.budgets.max_wall_ms:
        reasons.append(f"maxWallMs: {elapsed_ms:.0f} of {sig.budgets.max_wall_ms} ms used")
    return reasons


# --------------------------------------------------------------------------------------------
# Evaluation


def _first_failure(outcome: AssertionOutcome) -> str:
    if not outcome.failures:
        return ""
    f = outcome.failures[0]
    return f"; expected {f['expected']}, got {f['actual']!r}"


def evaluate_signature(
    sig: BrowserTaskSignature, *, page_state: PageState, calls: Sequence[CallInfo], elapsed_ms: float
) -> Evaluation:
    """Where the task stands; deterministic from its inputs (see the module docstring for the order)."""
    if len(page_state.stop_when) != len(sig.stop_when) or len(page_state.failure_when) != len(sig.failure_when):
        raise ValueError("page_state must hold one outcome per stopWhen and failureWhen assertion")
    counted = _counted(calls)

    def result(status: Status, reasons: list[str], evidence: dict[str, Any] | None = None) -> Evaluation:
        return Evaluation(status, reasons, evidence, calls_used=len(counted), elapsed_ms=elapsed_ms)

    failed = [
        f"failureWhen[{i}]: {describe_assertion(a)}"
        for i, (a, o) in enumerate(zip(sig.failure_when, page_state.failure_when, strict=True))
        if o.passed
    ]
    if failed:
        return result("failure", failed)
    if page_state.success.passed:
        evidence = {
            "success": describe_assertion(sig.success),
            "url": page_state.url,
            "calls_used": len(counted),
            "elapsed_ms": elapsed_ms,
        }
        return result("success", [], evidence)
    stopped = [
        f"stopWhen[{i}]: {describe_assertion(a)}"
        for i, (a, o) in enumerate(zip(sig.stop_when, page_state.stop_when, strict=True))
        if o.passed
    ]
    if stopped:
        return result("stop", stopped)
    spent = _budget_reasons(sig, len(counted), elapsed_ms)
    if spent:
        return result("budget_exhausted", spent)
    tripped = []
    for guard in sig.loop_guards:
        n, what = _measure(guard, counted, guard.window)
        if n > guard.limit:
            tripped.append(_guard_text(guard, what))
    if tripped:
        return result("stop", tripped)
    pending = f"success not met yet: {describe_assertion(sig.success)}{_first_failure(page_state.success)}"
    return result("continue", [pending])


async def observe_page_state(
    sig: BrowserTaskSignature, page: Page, observations: PageObservations | None = None
) -> PageState:
    """Evaluate the signature's success, stopWhen and failureWhen assertions on the page now."""
    success = await evaluate(sig.success, page, observations)
    stop = tuple([await evaluate(a, page, observations) for a in sig.stop_when])
    fail = tuple([await evaluate(a, page, observations) for a in sig.failure_when])
    return PageState(success, stop, fail, page.url)


async def evaluate_signature_on_page(
    sig: BrowserTaskSignature,
    page: Page,
    observations: PageObservations | None = None,
    *,
    calls: Sequence[CallInfo],
    elapsed_ms: float,
) -> Evaluation:
    """:func:`observe_page_state` then :func:`evaluate_signature`."""
    state = await observe_page_state(sig, page, observations)
    return evaluate_signature(sig, page_state=state, calls=calls, elapsed_ms=elapsed_ms)


# --------------------------------------------------------------------------------------------
# Live guards


def preflight(sig: BrowserTaskSignature, tools: Sequence[str]) -> list[str]:
    """One reason per step whose tool the signature does not allow (``[]`` when all are allowed)."""
    return [
        f"step {i}: tool {tool!r} is not allowed by signature {sig.id!r}"
        for i, tool in enumerate(tools)
        if tool not in CONTROL_TOOLS and not sig.allows(tool)
    ]


def guard_call(sig: BrowserTaskSignature, tool: str, calls: Sequence[CallInfo], elapsed_ms: float) -> Refusal | None:
    """Whether a call to ``tool`` may run now, given the calls made so far; ``None`` lets it run.

    Order: a tool outside ``allowedTools`` → ``DISALLOWED_TOOL``; a spent budget →
    ``BUDGET_EXHAUSTED``; a loop guard that this call would trip → ``BUDGET_EXHAUSTED`` naming the
    guard. The new call is assumed to make no progress when it is an observation tool; an acting
    call gets the benefit of the doubt and is refused only once the guard has already tripped.
    """
    if tool in CONTROL_TOOLS:
        return None
    if not sig.allows(tool):
        allowed = ", ".join(sig.allowed_tools)
        return Refusal("DISALLOWED_TOOL", f"tool {tool!r} is not allowed by signature {sig.id!r} (allowed: {allowed})")
    counted = _counted(calls)
    spent = _budget_reasons(sig, len(counted), elapsed_ms)
    if spent:
        return Refusal("BUDGET_EXHAUSTED", f"signature {sig.id!r}: {spent[0]}")
    observation = is_observation(tool)
    for guard in sig.loop_guards:
        before = guard.window - 1 if guard.window else None
        if guard.kind == "max_same_tool":
            scope = counted[-before:] if before else counted
            n = sum(c.tool == tool for c in scope) + 1
            if n > guard.limit:
                return _loop_refusal(sig, guard, f"this would be call {n} to {tool!r}")
        elif observation:
            n, what = _measure(guard, counted, before)
            if n + 1 > guard.limit:
                return _loop_refusal(sig, guard, f"{what}, this would be one more")
        else:
            n, what = _measure(guard, counted, guard.window)
            if n > guard.limit:
                return _loop_refusal(sig, guard, what)
    return None


def _loop_refusal(sig: BrowserTaskSignature, guard: LoopGuard, what: str) -> Refusal:
    return Refusal("BUDGET_EXHAUSTED", f"{_guard_text(guard, what)}; signature {sig.id!r}", guard.kind)
