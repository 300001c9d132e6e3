"""Deterministic replay of a recorded skill from its selector chains — no LLM, no read_page, no find.

Before a step acts, its element is resolved and vouched for by :func:`ocnb.perception.selectors.resolve`:
an entry of the chain singles it out, and it agrees with the fingerprint recorded with the step
(role, name, tag, type, name/autocomplete attributes, label, frame) and is visible (``resolved_via``
names the entry). Where the chain's first entry singles out such an element, resolving, verifying and
acting are one Playwright call (``fused``: the ``ocnb-verified`` selector engine runs the same in-page
check inside Playwright's actionability loop); otherwise the engine declines before acting and the
step is resolved on its own first. The replay hands control back with a precise code when the page has changed:
``ARTIFACT_MISSING``, ``RISKY_STEP_BLOCKED``, ``PAGE_MISMATCH`` (checked before anything runs),
``ARTIFACT_RESOLUTION_FAILED`` (with the differing fields, the refused candidate and candidates),
``STEP_TIMEOUT``, ``TARGET_NAVIGATED_AWAY``, ``CONTRACT_FAILED``. A risky step asks the session's approver
first (:mod:`ocnb.audit.approval`: ``APPROVAL_DENIED``, or ``RISKY_STEP_BLOCKED`` with nobody to ask and
``allow_risky`` false; ``allow_risky`` skips asking only with ``confirm="never"``). A failed replay's result data is
:func:`envelope`: ``{ok: false, failure: {code, step_index, detail, evidence_bundle_path?}, …}``.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..audit.secret_origins import check_step
from ..dispatch import ToolContext
from ..errors import ArtifactResolutionFailed, InvalidArgument, MissingSecret, OcnbError, Timeout, from_playwright
from ..files import allowed_files
from ..perception.actions import check_key, checked, perform
from ..perception.fills import plain_text
from ..perception.selectors import (
    ChainRefused,
    engine_declined,
    register_engine,
    step_fingerprint,
    stored_chain,
    tolerated_fields,
    verified_locator,
)
from ..perception.selectors import resolve as resolve_chain
from ..placeholders import fill_params, require_params
from ..urls import check_url

__all__ = ["CommitHook", "envelope", "envelope_hook", "flatten", "replay_skill"]


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


async def _act(page: Any, element: Any, step: dict[str, Any], timeout_ms: int, read_back: Any = None) -> None:
    kind = step["kind"]
    args = step.get("args", {})
    action = args.get("action", "")
    value = args.get("value")
    if kind == "navigate":
        await page.goto(check_url(str(args["url"])), timeout=timeout_ms)
        return
    if kind == "press":
        try:  # a key from a ${param} or a hand-edited skill: refused before anything is pressed
            check_key(args.get("key"))
        except ValueError as exc:
            raise InvalidArgument(f"step key: {exc}") from None
    if kind == "press" and element is None:
        await page.keyboard.press(str(args["key"]))
        return
    if element is None:
        raise ArtifactResolutionFailed("step has no element")
    if kind == "upload":  # paths checked against the upload root before any step ran (_upload_paths)
        await element.set_input_files(list(args["paths"]), timeout=timeout_ms)
        return
    if kind == "fill" and action != "type":
        action = await _fill_action(element, step)
    elif kind in ("press", "scroll", "select", "submit"):
        action = {"press": "press", "scroll": "scroll_into_view", "select": "select", "submit": "click"}[kind]
    elif kind != "fill" and action not in ("double_click", "check", "uncheck", "hover"):
        action = "click"
    await perform(
        element,
        action,
        value=value,
        key=args.get("key"),
        timeout=timeout_ms,
        read_back=read_back if action == "fill" else None,
    )


def _upload_paths(step: dict[str, Any], index: int, root: Any) -> dict[str, Any]:
    """An upload step with its ``paths`` (a ``${file_…}`` parameter filled in: a path or a list of
    paths) resolved under the upload root (:func:`ocnb.files.allowed_files`); bad ones refused."""
    paths = step.get("args", {}).get("paths")
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
        raise InvalidArgument(
            f"step {index} (upload) needs a file path or a list of them; got {paths!r}", details={"step_index": index}
        )
    return {**step, "args": {**step["args"], "paths": allowed_files(paths, root)}}


def _plain_fill(step: dict[str, Any]) -> bool:
    """Whether the step fills a field its fingerprint records as a plain text field (a textarea or a
    text-like input): its fused locator then also vouches that the field is enabled and editable."""
    fp = step.get("fingerprint") or {}
    return (
        step["kind"] == "fill"
        and step.get("args", {}).get("action") != "type"
        and plain_text(fp.get("tag"), fp.get("type"))
    )


async def _fill_action(element: Any, step: dict[str, Any]) -> str:
    """What "fill" means for this element: fill a text field, choose an option, or (un)check a box."""
    fp = step.get("fingerprint") or step.get("target") or {}
    if fp.get("role") in ("textbox", "searchbox"):
        return "fill"  # known from the recording (and verified): no need to ask the page
    if fp.get("tag"):
        tag, kind = fp["tag"], fp.get("type", "")
    else:
        tag, kind = await element.evaluate("e => [e.tagName.toLowerCase(), (e.type || '').toLowerCase()]")
    if tag == "select":
        return "select"
    if kind in ("checkbox", "radio"):
        try:  # one rule with form_input: a word that is neither yes nor no is refused, never "uncheck"
            return "check" if checked(step.get("args", {}).get("value")) else "uncheck"
        except ValueError as exc:
            raise InvalidArgument(f"step value: {exc}") from None
    return "fill"


def envelope(report: dict[str, Any]) -> dict[str, Any]:
    """A failed replay's result data: ``ok`` and ``failure`` first, then the rest of the report."""
    return {
        "ok": False,
        "failure": report["failure"],
        "steps_executed": 0,
        "step_results": [],
        **{k: v for k, v in report.items() if k not in ("ok", "failure")},
    }


def envelope_hook(call: Any, result: Any) -> Any:
    """After-hook: an ``oc_skill_replay`` failure without a report (DISABLED, INVALID_ARGUMENT, an
    unknown skill …) still carries ``{ok: false, failure: {code, step_index: null, detail}}`` as data."""
    if result.ok or call.name != "oc_skill_replay" or result.data is not None or result.error is None:
        return None
    from ..results import ToolResult

    skill_id = call.args.get("skill_id") if isinstance(call.args, dict) else None
    failure = {"code": result.error.code, "step_index": None, "detail": result.error.message}
    return ToolResult(
        ok=False, tool=result.tool, data=envelope({"skill_id": skill_id, "failure": failure}), error=result.error
    )


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
    report: dict[str, Any] = {
        "ok": False,
        "skill_id": skill["id"],
        "steps_executed": 0,
        "steps_total": 0,
        "step_results": [],
    }
    try:
        return await _replay(
            ctx,
            skill,
            report,
            params=params,
            step_range=step_range,
            stop_on_contract_failure=stop_on_contract_failure,
            step_timeout_ms=step_timeout_ms,
            allow_risky=allow_risky,
            tolerate=tolerate,
        )
    except Exception as exc:  # noqa: BLE001 - translated here as dispatch would, to carry the report
        err = exc if isinstance(exc, OcnbError) else from_playwright(exc)
        if err.data is None and report["step_results"]:  # interrupted in (or after) a step: say which
            index = report["step_results"][-1]["index"]
            err.data = envelope({**report, "failure": {"code": err.code, "step_index": index, "detail": err.message}})
        if err is exc:
            raise
        raise err from exc


async def _replay(
    ctx: ToolContext,
    skill: dict[str, Any],
    report: dict[str, Any],
    *,
    params: dict[str, Any] | None,
    step_range: dict[str, int] | None,
    stop_on_contract_failure: bool,
    step_timeout_ms: int,
    allow_risky: bool,
    tolerate: list[str] | None,
) -> dict[str, Any]:
    from ..contracts import ContractStore, PageObservations, create_bundle, evaluate_until

    params = params or {}
    tolerated = tolerated_fields(tolerate)
    steps = flatten(skill)
    if steps is None:
        report["failure"] = {
            "code": "ARTIFACT_MISSING",
            "step_index": 0,
            "detail": "the skill was recorded without replay artifacts; re-record it with capture_artifact: true",
        }
        return report
    lo = (step_range or {}).get("from", 0)
    hi = (step_range or {}).get("to", len(steps) - 1)
    if not (0 <= lo <= hi < len(steps)):
        raise InvalidArgument(f"step_range must satisfy 0 ≤ from ≤ to < {len(steps)}")
    steps = steps[lo : hi + 1]
    report["steps_total"] = len(steps)
    require_params([s.get("args") for s in steps], params)
    # ${param} in, with each param's JSON type kept (as execute_plan does); ${SECRET:…} only as a step runs.
    steps = [{**s, "args": fill_params(s.get("args", {}), params)} for s in steps]
    root = getattr(ctx.config, "upload_root", None) or Path.cwd()
    steps = [_upload_paths(s, lo + i, root) if s["kind"] == "upload" else s for i, s in enumerate(steps)]
    secrets = ctx.session.secrets
    bound = bool(secrets.bound)  # secrets bound to origins: each step checked first (check_step)
    unknown = secrets.missing([s.get("args") for s in steps])
    if unknown:
        raise MissingSecret(f"unknown secret(s): {', '.join(unknown)}")
    # A risky step asks the session's approver (ocnb.audit.approval), before any step runs.
    approvals = ctx.session.approvals
    risky = approvals.risky_steps(steps, lo)
    if not await approvals.replay_approved(ctx.call, risky, allow_risky=allow_risky):
        index, s = risky[0]
        name = (s.get("target") or {}).get("name")
        report["failure"] = {
            "code": "RISKY_STEP_BLOCKED",
            "step_index": index,
            "detail": f"step {index} ({s['kind']} {name!r}) is risky; pass allow_risky: true to run it",
        }
        return report
    page = await ctx.page()
    tab = ctx.browser.tab_of(page)
    home = ctx.home
    origins = {_origin(s["url"]) for s in steps if s.get("url")} | {
        _origin(str(s["args"]["url"])) for s in steps if s["kind"] == "navigate"
    }
    first = steps[0]
    if first["kind"] != "navigate" and first.get("url") and _origin_path(page.url) != _origin_path(first["url"]):
        report["failure"] = {
            "code": "PAGE_MISMATCH",
            "step_index": lo,
            "detail": f"the tab is at {page.url} but the skill starts at {first['url']}",
        }
        return report

    async def check_contract(contract_id: str) -> tuple[Any, Any]:
        """The stored contract and its outcome on the tab (polled up to the step timeout)."""
        contract = contracts.get(contract_id)
        outcome = await evaluate_until(
            _with_secrets(contract.assertion, secrets),
            page,
            lambda: PageObservations.from_tab(tab),
            timeout_ms=step_timeout_ms,
        )
        return contract, outcome

    async def evidence(reason: str, extra: dict[str, Any]) -> str | None:
        try:
            obs = PageObservations.from_tab(tab) if tab is not None else None
            path = await create_bundle(
                page,
                obs,
                home=home,
                reason=reason,
                secrets=secrets,
                extra=extra,
                screenshot=ctx.session.config.evidence_screenshots,
            )
            return str(path)
        except Exception:  # noqa: BLE001 - evidence is best effort; the failure code stands
            return None

    def fail(code: str, index: int, detail: str, bundle: str | None = None) -> dict[str, Any]:
        report["failure"] = {"code": code, "step_index": index, "detail": detail}
        if bundle:
            report["failure"]["evidence_bundle_path"] = bundle
        return report

    contracts = ContractStore(home)
    trace = ctx.session.trace_event
    # The selector engine that lets a step resolve, verify and act in one Playwright call (see below).
    engine = await register_engine(getattr(ctx.browser, "playwright", None))

    async def act(
        element: Any, step: dict[str, Any], index: int, fused: bool = False, read_back: Any = None
    ) -> dict[str, Any] | bool:
        """Run the step's action: True when done; the failure report when it failed or timed out;
        False when a fused call was declined before acting (then the slow path resolves the step).
        ``read_back``: ``element`` is a fused locator that vouches for a plain text field (``fillable``),
        and this is the same locator without that condition, to read the fill back from."""
        if bound:
            await check_step(secrets, page, element, step)
        try:
            await asyncio.wait_for(_act(page, element, step, step_timeout_ms, read_back), step_timeout_ms / 1000)
        except TimeoutError:
            return fail(
                "STEP_TIMEOUT", index, f"step {index} ({step['kind']}) did not finish within {step_timeout_ms} ms"
            )
        except OcnbError:
            raise
        except Exception as exc:  # noqa: BLE001 - translated at the one seam
            if fused and engine_declined(exc):
                return False
            error = from_playwright(exc)
            if isinstance(error, Timeout):
                return fail("STEP_TIMEOUT", index, error.message)
            raise error from exc
        return True

    hook = ctx.session.extensions.get(CommitHook)  # a batch's, around one row (never a tool argument)
    for i, step in enumerate(steps):
        index = lo + i
        if hook is not None and index == hook.step:
            await asyncio.to_thread(hook.call)
        t0 = time.perf_counter()
        resolved_via, attempts, verify_ms, verified, fused = None, 0, 0.0, None, False
        shown_args = step["args"]  # what the trace records: params filled in, secrets still placeholders
        if secrets is not None:
            step = {**step, "args": secrets.substitute(shown_args)}
        ok = False
        # the answer the recording gave the dialog this step opens (a demonstration): armed while it runs
        answer = step["args"].get("dialog")
        slot = ctx.browser.dialogs.arm(tab, answer) if isinstance(answer, dict) and tab is not None else None
        try:
            element = None
            locator = None
            # A bound secret needs the element's frame before acting: no fused resolve-and-act then.
            # A fill of a plain text field: the locator also vouches that it is enabled and editable, so
            # the fill needs no field read before it (the engine declines otherwise: resolve() below).
            read_back = None
            if engine and not bound and step["kind"] != "navigate" and step.get("selectors"):
                fused_at = functools.partial(
                    verified_locator,
                    page,
                    step["selectors"],
                    step_fingerprint(step),
                    frame_ordinal=int(step.get("frame_ordinal", 0) or 0),
                    tolerate=tolerated,
                )
                locator = fused_at(fillable=_plain_fill(step))
                read_back = fused_at() if _plain_fill(step) else None
            if locator is not None:
                # Resolve, verify and act in one call when the chain's first entry singles out an agreeing
                # element; otherwise the engine declines before acting and resolve() below takes over.
                done = await act(locator, step, index, fused=True, read_back=read_back)
                if isinstance(done, dict):
                    return done
                fused = done
                if fused:
                    resolved_via, attempts = stored_chain(step["selectors"])[0]["type"], 1
                    verified = any(k != "frame" for k in step_fingerprint(step))
            if not fused and step["kind"] != "navigate" and step.get("selectors"):
                t_resolve = time.perf_counter()
                try:
                    found = await resolve_chain(
                        page,
                        step["selectors"],
                        step_fingerprint(step),
                        frame_ordinal=int(step.get("frame_ordinal", 0) or 0),
                        timeout_ms=step_timeout_ms,
                        tolerate=tolerated,
                    )
                except ChainRefused as refused:
                    bundle = await evidence(
                        f"replay step {index}: {refused.message}",
                        {"skill_id": skill["id"], "step_index": index, "selectors": step["selectors"]},
                    )
                    fail("ARTIFACT_RESOLUTION_FAILED", index, refused.message, bundle)
                    report["failure"].update(refused.details)
                    return report
                element, resolved_via, attempts, verified = found.element, found.via, found.attempts, found.verified
                verify_ms = (time.perf_counter() - t_resolve) * 1000
            elif not fused and step["kind"] != "navigate" and step["kind"] != "press":
                return fail("ARTIFACT_RESOLUTION_FAILED", index, "the step has an empty selector chain")
            if not fused and isinstance(done := await act(element, step, index), dict):
                return done
            if origins and _origin(page.url) not in origins and not page.url.startswith(("about:", "data:")):
                return fail(
                    "TARGET_NAVIGATED_AWAY", index, f"the page went to {page.url}, outside {', '.join(sorted(origins))}"
                )
            post = step.get("post_assert")
            if post and post.get("contract_id"):
                contract, outcome = await check_contract(post["contract_id"])
                if not outcome.passed and stop_on_contract_failure:
                    bundle = await evidence(
                        f"contract {contract.id} failed after step {index}", {"failures": outcome.failures}
                    )
                    return fail(
                        "CONTRACT_FAILED", index, f"post-assert {contract.id} failed: {outcome.failures[:3]}", bundle
                    )
            ok = True
        finally:
            if slot is not None:
                ctx.browser.dialogs.disarm(tab)
            elapsed = round((time.perf_counter() - t0) * 1000, 2)
            report["step_results"].append(
                {
                    **({"dialog": slot["outcome"]} if slot is not None else {}),
                    "index": index,
                    "kind": step["kind"],
                    "resolved_via": resolved_via,
                    "selector_attempts": attempts,
                    "verified": verified,
                    # a fused step resolves, verifies and acts in one call: no separate resolve time
                    "resolve_ms": None if fused else round(verify_ms, 2),
                    "fused": fused,
                    "elapsed_ms": elapsed,
                    "ok": ok,
                }
            )
            if ok:
                report["steps_executed"] += 1
            if callable(getattr(ctx, "progress", None)):  # a face listening to the steps (MCP progress)
                ctx.progress(i + 1, len(steps), step["kind"])
            if callable(trace):
                trace(
                    "replay_step",
                    {
                        "skill_id": skill["id"],
                        "step_index": index,
                        "args": shown_args,
                        "resolved_via": resolved_via,
                        "selector_attempts": attempts,
                        "elapsed_ms": elapsed,
                        "ok": ok,
                    },
                )
    if skill.get("contract_id") and hi == len(flatten(skill) or []) - 1:
        contract, outcome = await check_contract(skill["contract_id"])
        if not outcome.passed:
            bundle = await evidence(f"skill contract {contract.id} failed", {"failures": outcome.failures})
            return fail("CONTRACT_FAILED", hi, f"skill contract {contract.id} failed: {outcome.failures[:3]}", bundle)
    report["ok"] = True
    return report


def _with_secrets(assertion: Any, secrets: Any) -> Any:
    """A stored contract's assertion with its ``${SECRET:…}`` placeholders filled in (only to check it)."""
    return secrets.substitute(assertion) if secrets is not None else assertion
