"""Deterministic replay of a recorded skill from its selector chains — no LLM, no read_page, no find.

A replay is a :class:`ReplayRun`, the :class:`~ocnb.skills.walk.StepWalk` plans share, in named phases: ``preflight`` (the steps, parameters, secrets,
approval of risky steps and the start page, all checked before anything runs), then for each step
``act`` (one call of the internal ``replay_step`` tool through :meth:`ToolContext.dispatch`, source
``replay``: it resolves the step's selector chain, verifies the element against the step's fingerprint
and acts, so the secrets, the origin policy, dialogs, error codes, the journal and the trace apply to
it as to every call), ``verify`` (still on the skill's origins; the step's post-assert contract) and
``record`` (a typed :class:`ReplayStepResult`, the trace event, progress). Where the chain's first entry
singles out an agreeing element, resolving, verifying and acting are one Playwright call (``fused``).

The replay hands control back with a precise code when the page has changed: ``ARTIFACT_MISSING``,
``RISKY_STEP_BLOCKED``, ``PAGE_MISMATCH`` (checked before anything runs), ``ARTIFACT_RESOLUTION_FAILED``
(with the differing fields, the refused candidate and candidates), ``STEP_TIMEOUT``,
``TARGET_NAVIGATED_AWAY``, ``CONTRACT_FAILED``. A risky step asks the session's approver first
(:mod:`ocnb.audit.approval`: ``APPROVAL_DENIED``, or ``RISKY_STEP_BLOCKED`` with nobody to ask and
``allow_risky`` false; ``allow_risky`` skips asking only with ``confirm="never"``). A failed replay's
result data is :func:`envelope`: ``{ok: false, failure: {code, step_index, detail, evidence_bundle_path?}, …}``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..dispatch import ToolContext
from ..errors import InvalidArgument, MissingSecret, OcnbError, error_class
from ..files import allowed_files
from ..perception.selectors import tolerated_fields
from ..placeholders import fill_params, require_params
from ..results import ToolError, ToolResult
from .walk import StepResult, StepWalk, Stop

__all__ = [
    "CommitHook",
    "ReplayOutcome",
    "ReplayRun",
    "ReplayStepResult",
    "StepResult",
    "envelope",
    "failure_envelope",
    "flatten",
    "replay_skill",
]

#: The internal tool a replay acts through (:mod:`ocnb.tools.skills`), one dispatched call a step.
STEP_TOOL = "replay_step"


@dataclass(frozen=True)
class CommitHook:
    """What a batch puts in a session's extensions around one row's replay: ``call()`` runs (off the
    event loop) just before low-level step ``step`` acts, so the row's ledger records that the row
    reached its commit step (:mod:`ocnb.batch.ledger`) before the site can have it."""

    step: int
    call: Callable[[], None]


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}" if p.netloc else p.scheme


def _origin_path(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}{p.path}"


def upload_step(step: dict[str, Any], root: Any, index: int | None = None) -> dict[str, Any]:
    """An upload step with its ``paths`` (a ``${file_…}`` parameter filled in: a path or a list of
    paths) resolved under the upload root (:func:`ocnb.files.allowed_files`); bad ones refused."""
    paths = step.get("args", {}).get("paths")
    if isinstance(paths, str):
        paths = [paths]
    which = "an upload step" if index is None else f"step {index} (upload)"
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
        raise InvalidArgument(f"{which} needs a file path or a list of them; got {paths!r}")
    return {**step, "args": {**step["args"], "paths": allowed_files(paths, root)}}


class ReplayFailed(Stop):
    """A phase's verdict that the replay stops here: ``failure`` becomes the report's ``failure``."""

    def __init__(self, code: str, index: int, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.failure: dict[str, Any] = {"code": code, "step_index": index, "detail": detail, **extra}


@dataclass
class ReplayStepResult(StepResult):
    """What one replayed step did: an entry of the report's ``step_results``."""

    resolved_via: str | None = None
    selector_attempts: int = 0
    verified: bool | None = None
    #: None for a fused step: it resolves, verifies and acts in one call (no separate resolve time)
    resolve_ms: float | None = 0.0
    fused: bool = False
    #: The recorded dialog answer of the step (a demonstration): answered, changed or not shown.
    dialog: str | None = None
    #: The page's URL after the step (not in the report: :meth:`ReplayRun.verify` reads it).
    url: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            **({"dialog": self.dialog} if self.dialog is not None else {}),
            "index": self.index,
            "kind": self.kind,
            "resolved_via": self.resolved_via,
            "selector_attempts": self.selector_attempts,
            "verified": self.verified,
            "resolve_ms": self.resolve_ms,
            "fused": self.fused,
            "elapsed_ms": self.elapsed_ms,
            "ok": self.ok,
        }


@dataclass(frozen=True)
class ReplayOutcome:
    """An ``oc_skill_replay`` result as a batch row reads it: how far the replay got and where it stopped."""

    ok: bool
    #: the failure's code (None when ok)
    code: str | None
    steps_executed: int
    steps_total: int
    #: the step the replay stopped in (None: before the first step began, or after the last)
    stopped_at: int | None
    evidence: str | None

    @classmethod
    def of(cls, result: ToolResult) -> ReplayOutcome:
        """Read from the result's report (its data, or a failure's details when it has no data)."""
        if isinstance(result.data, dict):
            report = result.data
        else:
            details = result.error.details if result.error is not None else None
            report = details if isinstance(details, dict) else {}
        failure = report.get("failure") or {}
        stopped_at = failure.get("step_index")
        return cls(
            ok=result.ok,
            code=None if result.ok or result.error is None else result.error.code,
            steps_executed=int(report.get("steps_executed", 0)),
            steps_total=int(report.get("steps_total", 0)),
            stopped_at=None if stopped_at is None else int(stopped_at),
            evidence=failure.get("evidence_bundle_path"),
        )


def envelope(report: dict[str, Any]) -> dict[str, Any]:
    """A failed replay's result data: ``ok`` and ``failure`` first, then the rest of the report."""
    return {
        "ok": False,
        "failure": report["failure"],
        "steps_executed": 0,
        "step_results": [],
        **{k: v for k, v in report.items() if k not in ("ok", "failure")},
    }


def failure_envelope(args: dict[str, Any], error: ToolError) -> dict[str, Any]:
    """The data of an ``oc_skill_replay`` failure without a report (DISABLED, INVALID_ARGUMENT, an
    unknown skill …): ``{ok: false, failure: {code, step_index: null, detail}}`` (the tool's
    ``failure_data``, which dispatch applies to that tool's calls only)."""
    failure = {"code": error.code, "step_index": None, "detail": error.message}
    return envelope({"skill_id": args.get("skill_id"), "failure": failure})


def flatten(skill: dict[str, Any]) -> list[dict[str, Any]] | None:
    """All low-level steps of a skill, or None when any step lacks a replay artifact."""
    out: list[dict[str, Any]] = []
    for st in skill.get("steps", []):
        art = st.get("replay_artifact")
        if not art or not art.get("steps"):
            return None
        for low in art["steps"]:
            out.append({**low, "url": art.get("url"), "post_assert": low.get("post_assert")})
    return out


async def replay_skill(
    ctx: ToolContext,
    skill: dict[str, Any],
    *,
    params: dict[str, Any] | None = None,
    step_range: dict[str, int] | None = None,
    stop_on_contract_failure: bool = True,
    step_timeout_ms: int = 5000,
    allow_risky: bool = False,
    tolerate: list[str] | None = None,
) -> dict[str, Any]:
    """Replay ``skill`` on the active tab; returns the report (never raises for a replay failure).

    Before a step acts, its element is resolved and verified against the step's fingerprint
    (:func:`ocnb.perception.selectors.resolve`); ``tolerate`` relaxes named fingerprint fields.
    An error that does escape (the browser gone mid-step: ``TARGET_CLOSED`` …) carries the report so
    far as its ``data`` (:func:`envelope`), with the step it interrupted as ``failure.step_index``, so
    a batch can tell whether the row got as far as a step that acts on the site.
    """
    run = ReplayRun(
        ctx,
        skill,
        params=params or {},
        step_range=step_range,
        stop_on_contract_failure=stop_on_contract_failure,
        step_timeout_ms=step_timeout_ms,
        allow_risky=allow_risky,
        tolerate=tolerate,
    )
    try:
        return await run.run()
    except OcnbError as err:
        if err.data is None and run.report["step_results"]:  # interrupted in (or after) a step: say which
            index = run.report["step_results"][-1]["index"]
            failure = {"code": err.code, "step_index": index, "detail": err.message}
            err.data = envelope({**run.report, "failure": failure})
        raise


class ReplayRun(StepWalk[ReplayStepResult]):
    """One replay of one skill, a :class:`~ocnb.skills.walk.StepWalk`: :meth:`preflight`, then per step
    :meth:`act`, :meth:`verify` and :meth:`record`, then :meth:`finish` (the skill's own contract).
    ``report`` is what it returns."""

    def __init__(
        self,
        ctx: ToolContext,
        skill: dict[str, Any],
        *,
        params: dict[str, Any],
        step_range: dict[str, int] | None,
        stop_on_contract_failure: bool,
        step_timeout_ms: int,
        allow_risky: bool,
        tolerate: list[str] | None,
    ) -> None:
        self.ctx = ctx
        self.skill = skill
        self.params = params
        self.step_range = step_range or {}
        self.stop_on_contract_failure = stop_on_contract_failure
        self.timeout_ms = step_timeout_ms
        self.allow_risky = allow_risky
        self.tolerate = list(tolerate or [])
        self.report: dict[str, Any] = {
            "ok": False,
            "skill_id": skill["id"],
            "steps_executed": 0,
            "steps_total": 0,
            "step_results": [],
        }
        self.steps: list[dict[str, Any]] = []
        self.lo = self.hi = 0
        self.origins: set[str] = set()
        self.tab_id: str | None = None

    async def run(self) -> dict[str, Any]:
        """Every phase in order; a :class:`ReplayFailed` ends the run with its failure in the report."""
        stopped = await self.walk()
        if isinstance(stopped, ReplayFailed):
            self.report["failure"] = stopped.failure
        else:
            self.report["ok"] = True
        return self.report

    # -- preflight: nothing has run yet ----------------------------------------------------------------
    async def preflight(self) -> None:
        """The steps in range with their params filled in; unknown params and secrets, risky steps
        without approval and a tab on another page refused before any step runs."""
        tolerated_fields(self.tolerate)  # an unknown word: INVALID_ARGUMENT before anything runs
        steps = flatten(self.skill)
        if steps is None:
            detail = "the skill was recorded without replay artifacts; re-record it with capture_artifact: true"
            raise ReplayFailed("ARTIFACT_MISSING", 0, detail)
        self.lo = self.step_range.get("from", 0)
        self.hi = self.step_range.get("to", len(steps) - 1)
        if not (0 <= self.lo <= self.hi < len(steps)):
            raise InvalidArgument(f"step_range must satisfy 0 ≤ from ≤ to < {len(steps)}")
        steps = steps[self.lo : self.hi + 1]
        self.report["steps_total"] = len(steps)
        require_params([s.get("args") for s in steps], self.params)
        # ${param} in, with each param's JSON type kept (as execute_plan does); ${SECRET:…} stay
        # placeholders: dispatch fills them in for each step's call and masks them in what it records.
        self.steps = [{**s, "args": fill_params(s.get("args", {}), self.params)} for s in steps]
        root = getattr(self.ctx.config, "upload_root", None) or Path.cwd()
        for i, s in enumerate(self.steps):  # every file path under the upload root before any step runs
            if s["kind"] == "upload":
                upload_step(s, root, self.lo + i)
        unknown = self.ctx.session.secrets.missing([s.get("args") for s in self.steps])
        if unknown:
            raise MissingSecret(f"unknown secret(s): {', '.join(unknown)}")
        await self._approved()
        page = await self.ctx.page()
        tab = self.ctx.browser.tab_of(page)
        self.tab_id = tab.id if tab is not None else None
        self.origins = {_origin(s["url"]) for s in self.steps if s.get("url")}
        self.origins |= {_origin(str(s["args"]["url"])) for s in self.steps if s["kind"] == "navigate"}
        first = self.steps[0]
        if first["kind"] != "navigate" and first.get("url") and _origin_path(page.url) != _origin_path(first["url"]):
            detail = f"the tab is at {page.url} but the skill starts at {first['url']}"
            raise ReplayFailed("PAGE_MISMATCH", self.lo, detail)

    async def _approved(self) -> None:
        """A risky step asks the session's approver (ocnb.audit.approval) once, before any step runs."""
        approvals = self.ctx.session.approvals
        risky = approvals.risky_steps(self.steps, self.lo)
        if not await approvals.replay_approved(self.ctx.call, risky, allow_risky=self.allow_risky):
            index, s = risky[0]
            name = (s.get("target") or {}).get("name")
            detail = f"step {index} ({s['kind']} {name!r}) is risky; pass allow_risky: true to run it"
            raise ReplayFailed("RISKY_STEP_BLOCKED", index, detail)

    # -- one step: act, verify, record ---------------------------------------------------------------
    async def begin(self, i: int, step: dict[str, Any]) -> ReplayStepResult:
        """The step's result; a batch's commit hook is told first (before the step is timed)."""
        index = self.lo + i
        hook = self.ctx.session.extensions.get(CommitHook)  # a batch's, around one row (never a tool argument)
        if hook is not None and index == hook.step:
            await asyncio.to_thread(hook.call)
        return ReplayStepResult(index=index, kind=step["kind"])

    @contextlib.asynccontextmanager
    async def around(self, i: int, step: dict[str, Any], result: ReplayStepResult) -> AsyncIterator[None]:
        """The answer the recording gave the dialog this step opens (a demonstration), armed while it runs."""
        answer = step.get("args", {}).get("dialog")
        tab = self.ctx.browser.tabs.get(self.tab_id or "")
        slot = self.ctx.browser.dialogs.arm(tab, answer) if isinstance(answer, dict) and tab is not None else None
        try:
            yield
        finally:
            if slot is not None:
                self.ctx.browser.dialogs.disarm(tab)
                result.dialog = slot["outcome"]

    async def act(self, i: int, step: dict[str, Any], result: ReplayStepResult) -> None:
        """Resolve, verify against the fingerprint and act: one ``replay_step`` call through dispatch;
        ``result.url`` is the page's URL after the step."""
        keys = ("kind", "args", "selectors", "fingerprint", "target", "frame_ordinal")
        sent = {k: step[k] for k in keys if step.get(k) is not None}
        args: dict[str, Any] = {"step": sent, "timeout_ms": self.timeout_ms}
        if self.tolerate:
            args["tolerate"] = self.tolerate
        if self.tab_id is not None:
            args["tab_id"] = self.tab_id
        # record=False: the journal keeps one line for the replay (as a person reads it), the trace
        # its replay_step events; every other hook (secrets, origins, approvals, dialogs, errors) runs
        got = await self.ctx.dispatch(STEP_TOOL, args, source="replay", record=False)
        if not got.ok:
            await self._step_failed(result.index, step, got)
        data = got.data
        for key in ("resolved_via", "selector_attempts", "verified", "resolve_ms", "fused"):
            setattr(result, key, data[key])
        result.url = str(data["url"])

    async def _step_failed(self, index: int, step: dict[str, Any], got: ToolResult) -> None:
        """A failed step call as the replay's failure: resolution and timeouts by code, anything
        else raised with its own code (the report goes with it, see :func:`replay_skill`)."""
        err = got.error
        assert err is not None
        if err.code == "ARTIFACT_RESOLUTION_FAILED":
            details = dict(err.details or {})
            bundle = await self.evidence(
                f"replay step {index}: {err.message}",
                {"skill_id": self.skill["id"], "step_index": index, "selectors": step.get("selectors")},
            )
            extra = {"evidence_bundle_path": bundle} if bundle else {}
            raise ReplayFailed("ARTIFACT_RESOLUTION_FAILED", index, err.message, **extra, **details)
        if err.code == "STEP_TIMEOUT":
            raise ReplayFailed("STEP_TIMEOUT", index, f"step {index} ({step['kind']}) {err.message}")
        if err.code == "TIMEOUT":  # Playwright's own timeout inside the step
            raise ReplayFailed("STEP_TIMEOUT", index, err.message)
        raise error_class(err.code)(err.message, details=err.details)

    async def verify(self, i: int, step: dict[str, Any], result: ReplayStepResult) -> None:
        """After the step: the page is still on the skill's origins, and its post-assert holds."""
        index, url = result.index, result.url
        if self.origins and _origin(url) not in self.origins and not url.startswith(("about:", "data:")):
            detail = f"the page went to {url}, outside {', '.join(sorted(self.origins))}"
            raise ReplayFailed("TARGET_NAVIGATED_AWAY", index, detail)
        post = step.get("post_assert")
        if post and post.get("contract_id"):
            await self.post_assert(index, post["contract_id"])
        result.ok = True

    async def post_assert(self, index: int, contract_id: str) -> None:
        """The step's post-assert contract, polled up to the step timeout; a failure ends the replay
        unless ``stop_on_contract_failure`` is false."""
        contract, outcome = await self.check_contract(contract_id)
        if not outcome.passed and self.stop_on_contract_failure:
            bundle = await self.evidence(
                f"contract {contract.id} failed after step {index}", {"failures": outcome.failures}
            )
            detail = f"post-assert {contract.id} failed: {outcome.failures[:3]}"
            raise ReplayFailed("CONTRACT_FAILED", index, detail, **({"evidence_bundle_path": bundle} if bundle else {}))

    def record(self, i: int, step: dict[str, Any], result: ReplayStepResult) -> None:
        """The step's result in the report, its ``replay_step`` trace event, progress for a face."""
        self.report["step_results"].append(result.to_dict())
        if result.ok:
            self.report["steps_executed"] += 1
        self.ctx.progress(i + 1, len(self.steps), step["kind"])
        trace = self.ctx.session.trace_event
        if callable(trace):
            body = {
                "skill_id": self.skill["id"],
                "step_index": result.index,
                "args": step["args"],  # params filled in, secrets still placeholders
                "resolved_via": result.resolved_via,
                "selector_attempts": result.selector_attempts,
                "elapsed_ms": result.elapsed_ms,
                "ok": result.ok,
            }
            trace("replay_step", body)

    # -- the skill's contract, and what contracts and evidence need -------------------------------------
    async def finish(self) -> None:
        """The skill's own contract, when the run reached its last step."""
        if not self.skill.get("contract_id") or self.hi != len(flatten(self.skill) or []) - 1:
            return
        contract, outcome = await self.check_contract(self.skill["contract_id"])
        if not outcome.passed:
            bundle = await self.evidence(f"skill contract {contract.id} failed", {"failures": outcome.failures})
            detail = f"skill contract {contract.id} failed: {outcome.failures[:3]}"
            raise ReplayFailed(
                "CONTRACT_FAILED", self.hi, detail, **({"evidence_bundle_path": bundle} if bundle else {})
            )

    async def check_contract(self, contract_id: str) -> tuple[Any, Any]:
        """The stored contract and its outcome on the tab (polled up to the step timeout)."""
        from ..contracts import ContractStore, PageObservations, evaluate_until

        contract = ContractStore(self.ctx.home).get(contract_id)
        page = await self.ctx.page(self.tab_id)
        tab = self.ctx.browser.tab_of(page)
        outcome = await evaluate_until(
            _with_secrets(contract.assertion, self.ctx.session.secrets),
            page,
            lambda: PageObservations.from_tab(tab),
            timeout_ms=self.timeout_ms,
        )
        return contract, outcome

    async def evidence(self, reason: str, extra: dict[str, Any]) -> str | None:
        """An evidence bundle of the page as the replay failed (best effort: None when it cannot be made)."""
        from ..contracts import PageObservations, create_bundle

        try:
            page = await self.ctx.page(self.tab_id)
            tab = self.ctx.browser.tab_of(page)
            path = await create_bundle(
                page,
                PageObservations.from_tab(tab) if tab is not None else None,
                home=self.ctx.home,
                reason=reason,
                secrets=self.ctx.session.secrets,
                extra=extra,
                screenshot=self.ctx.session.config.evidence_screenshots,
            )
            return str(path)
        except Exception:  # noqa: BLE001 - evidence is best effort; the failure code stands
            return None


def _with_secrets(assertion: Any, secrets: Any) -> Any:
    """A stored contract's assertion with its ``${SECRET:…}`` placeholders filled in (only to check it)."""
    return secrets.substitute(assertion) if secrets is not None else assertion
