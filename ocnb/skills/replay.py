"""Deterministic replay of a recorded skill from its selector chains — no LLM, no read_page, no find.

Each step's chain is tried in order (most robust first); the first selector that matches exactly
one element wins (``resolved_via``). The replay hands control back with a precise code when the page
has changed: ``ARTIFACT_MISSING``, ``RISKY_STEP_BLOCKED``, ``PAGE_MISMATCH`` (checked before anything
runs), ``ARTIFACT_RESOLUTION_FAILED``, ``STEP_TIMEOUT``, ``TARGET_NAVIGATED_AWAY``, ``CONTRACT_FAILED``.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any
from urllib.parse import urlsplit

from ..errors import InvalidArgument, OcnbError
from ..perception.actions import perform
from ..urls import check_url

__all__ = ["replay_skill", "resolve_selectors", "substitute_params"]

_VAR = re.compile(r"\$\{(?!SECRET:)([A-Za-z_][A-Za-z0-9_]*)\}")
RESOLVE_POLL_S = 0.1
RESOLVE_WAIT_MAX_MS = 3000


def substitute_params(value: Any, params: dict[str, Any]) -> Any:
    """Replace ``${var}`` placeholders (not ``${SECRET:…}``) from ``params``, recursively."""
    if isinstance(value, str):
        return _VAR.sub(lambda m: str(params[m.group(1)]), value)
    if isinstance(value, dict):
        return {k: substitute_params(v, params) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_params(v, params) for v in value]
    return value


def _needed_params(value: Any, found: set[str]) -> set[str]:
    if isinstance(value, str):
        found.update(_VAR.findall(value))
    elif isinstance(value, dict):
        for v in value.values():
            _needed_params(v, found)
    elif isinstance(value, list):
        for v in value:
            _needed_params(v, found)
    return found


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}" if p.netloc else p.scheme


def _origin_path(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}{p.path}"


def _locator(frame: Any, sel: dict[str, Any]) -> Any:
    kind = sel.get("type")
    if kind == "role_name":
        return frame.get_by_role(sel["role"], name=sel.get("name") or None, exact=True)
    if kind == "accessible_name":
        return frame.get_by_label(sel["value"], exact=True)
    if kind == "css":
        return frame.locator(sel["value"])
    if kind == "xpath":
        return frame.locator("xpath=" + sel["value"])
    if kind == "text":
        return frame.get_by_text(sel["value"], exact=True)
    return None


async def _try(frame: Any, page: Any, sel: dict[str, Any]) -> Any:
    """The one element ``sel`` matches, or None (none, several, or a stale ref)."""
    if sel.get("type") == "node_ref":
        try:
            from ..perception.refs import resolve_ref

            _, handle = await resolve_ref(page, sel["value"])
            return handle
        except Exception:  # noqa: BLE001 - a stale or unknown ref is just a failed attempt
            return None
    loc = _locator(frame, sel)
    if loc is None:
        return None
    try:
        n = await loc.count()
        if n > 1:
            loc = loc.filter(visible=True)
            n = await loc.count()
    except Exception:  # noqa: BLE001 - an invalid selector is a failed attempt
        return None
    return loc if n == 1 else None


async def resolve_selectors(
    page: Any, selectors: list[dict[str, Any]], frame_ordinal: int = 0, wait_ms: int = 0
) -> tuple[Any, str | None, int]:
    """Try the chain in order until one selector matches exactly one element.

    Returns ``(element, resolved_via, attempts)``; ``element`` is None when nothing resolved within
    ``wait_ms`` (the chain is retried while the page may still be rendering).
    """
    deadline = time.monotonic() + wait_ms / 1000
    attempts = 0
    while True:
        frames = page.frames
        frame = frames[frame_ordinal] if 0 <= frame_ordinal < len(frames) else None
        if frame is not None:
            for sel in selectors:
                attempts += 1
                element = await _try(frame, page, sel)
                if element is not None:
                    return element, str(sel.get("type")), attempts
        if time.monotonic() >= deadline:
            return None, None, attempts
        await asyncio.sleep(RESOLVE_POLL_S)


async def _act(page: Any, element: Any, step: dict[str, Any], timeout_ms: int) -> None:
    kind = step["kind"]
    args = step.get("args", {})
    action = args.get("action", "")
    value = args.get("value")
    if kind == "navigate":
        await page.goto(check_url(str(args["url"])), timeout=timeout_ms)
        return
    if kind == "press" and element is None:
        await page.keyboard.press(args["key"])
        return
    if element is None:
        raise OcnbError("step has no element", code="ARTIFACT_RESOLUTION_FAILED")
    if kind == "fill" and action != "type":
        action = await _fill_action(element, step)
    elif kind in ("press", "scroll", "select", "submit"):
        action = {"press": "press", "scroll": "scroll_into_view", "select": "select", "submit": "click"}[kind]
    elif kind != "fill" and action not in ("double_click", "check", "uncheck", "hover"):
        action = "click"
    await perform(element, action, value=value, key=args.get("key"), timeout=timeout_ms)


async def _fill_action(element: Any, step: dict[str, Any]) -> str:
    """What "fill" means for this element: fill a text field, choose an option, or (un)check a box."""
    if (step.get("target") or {}).get("role") in ("textbox", "searchbox"):
        return "fill"  # known from the recording: no need to ask the page
    tag, kind = await element.evaluate("e => [e.tagName.toLowerCase(), (e.type || '').toLowerCase()]")
    if tag == "select":
        return "select"
    if kind in ("checkbox", "radio"):
        value = step.get("args", {}).get("value")
        return "check" if value not in (False, "false", "0", "", None) else "uncheck"
    return "fill"


def _flatten(skill: dict[str, Any]) -> list[dict[str, Any]] | None:
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
    ctx: Any,
    skill: dict[str, Any],
    *,
    params: dict[str, Any] | None = None,
    step_range: dict[str, int] | None = None,
    stop_on_contract_failure: bool = True,
    step_timeout_ms: int = 5000,
    allow_risky: bool = False,
) -> dict[str, Any]:
    """Replay ``skill`` on the active tab; returns the report (never raises for a replay failure)."""
    from ..contracts import ContractStore, PageObservations, create_bundle, evaluate_until

    params = params or {}
    report: dict[str, Any] = {
        "ok": False,
        "skill_id": skill["id"],
        "steps_executed": 0,
        "steps_total": 0,
        "step_results": [],
    }
    steps = _flatten(skill)
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
    missing = sorted(_needed_params([s.get("args") for s in steps], set()) - set(params))
    if missing:
        raise InvalidArgument(
            f"missing params for ${{…}} placeholders: {', '.join(missing)}", details={"missing": missing}
        )
    secrets = getattr(ctx.session, "secrets", None)
    if secrets is not None:
        unknown = secrets.missing([s.get("args") for s in steps])
        if unknown:
            raise OcnbError(f"unknown secret(s): {', '.join(unknown)}", code="MISSING_SECRET")
    if not allow_risky:
        for i, s in enumerate(steps):
            if s.get("risky"):
                name = (s.get("target") or {}).get("name")
                report["failure"] = {
                    "code": "RISKY_STEP_BLOCKED",
                    "step_index": lo + i,
                    "detail": f"step {lo + i} ({s['kind']} {name!r}) is risky; pass allow_risky: true to run it",
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

    async def evidence(reason: str, extra: dict[str, Any]) -> str | None:
        try:
            obs = PageObservations.from_tab(tab) if tab is not None else None
            path = await create_bundle(page, obs, home=home, reason=reason, secrets=secrets, extra=extra)
            return str(path)
        except Exception:  # noqa: BLE001 - evidence is best effort; the failure code stands
            return None

    def fail(code: str, index: int, detail: str, bundle: str | None = None) -> dict[str, Any]:
        report["failure"] = {"code": code, "step_index": index, "detail": detail}
        if bundle:
            report["failure"]["evidence_bundle_path"] = bundle
        return report

    contracts = ContractStore(home)
    trace = getattr(ctx.session, "trace_event", None)
    for i, step in enumerate(steps):
        index = lo + i
        t0 = time.perf_counter()
        resolved_via, attempts = None, 0
        args = substitute_params(step.get("args", {}), params)
        if secrets is not None:
            args = secrets.substitute(args)
        step = {**step, "args": args}
        ok = False
        try:
            element = None
            if step["kind"] != "navigate" and step.get("selectors"):
                wait = min(step_timeout_ms, RESOLVE_WAIT_MAX_MS)
                element, resolved_via, attempts = await resolve_selectors(
                    page, step["selectors"], int(step.get("frame_ordinal", 0)), wait
                )
                if element is None:
                    tried = ", ".join(str(s.get("type")) for s in step["selectors"])
                    bundle = await evidence(
                        f"replay step {index}: no selector resolved",
                        {"skill_id": skill["id"], "step_index": index, "selectors": step["selectors"]},
                    )
                    return fail(
                        "ARTIFACT_RESOLUTION_FAILED",
                        index,
                        f"none of the {len(step['selectors'])} selectors ({tried}) matched exactly one element",
                        bundle,
                    )
            elif step["kind"] != "navigate" and step["kind"] != "press":
                return fail("ARTIFACT_RESOLUTION_FAILED", index, "the step has an empty selector chain")
            try:
                await asyncio.wait_for(_act(page, element, step, step_timeout_ms), step_timeout_ms / 1000)
            except (asyncio.TimeoutError, TimeoutError):
                return fail(
                    "STEP_TIMEOUT", index, f"step {index} ({step['kind']}) did not finish within {step_timeout_ms} ms"
                )
            except OcnbError:
                raise
            except Exception as exc:  # noqa: BLE001
                if "Timeout" in type(exc).__name__ or "Timeout" in str(exc).split("\n")[0]:
                    return fail("STEP_TIMEOUT", index, str(exc).splitlines()[0])
                raise
            if origins and _origin(page.url) not in origins and not page.url.startswith(("about:", "data:")):
                return fail(
                    "TARGET_NAVIGATED_AWAY", index, f"the page went to {page.url}, outside {', '.join(sorted(origins))}"
                )
            post = step.get("post_assert")
            if post and post.get("contract_id"):
                contract = contracts.get(post["contract_id"])
                outcome = await evaluate_until(
                    contract.assertion, page, lambda: PageObservations.from_tab(tab), timeout_ms=step_timeout_ms
                )
                if not outcome.passed and stop_on_contract_failure:
                    bundle = await evidence(
                        f"contract {contract.id} failed after step {index}", {"failures": outcome.failures}
                    )
                    return fail(
                        "CONTRACT_FAILED", index, f"post-assert {contract.id} failed: {outcome.failures[:3]}", bundle
                    )
            ok = True
        finally:
            elapsed = round((time.perf_counter() - t0) * 1000, 2)
            report["step_results"].append(
                {
                    "index": index,
                    "kind": step["kind"],
                    "resolved_via": resolved_via,
                    "selector_attempts": attempts,
                    "elapsed_ms": elapsed,
                    "ok": ok,
                }
            )
            if ok:
                report["steps_executed"] += 1
            if callable(trace):
                trace(
                    "replay_step",
                    {
                        "skill_id": skill["id"],
                        "step_index": index,
                        "resolved_via": resolved_via,
                        "selector_attempts": attempts,
                        "elapsed_ms": elapsed,
                        "ok": ok,
                    },
                )
    if skill.get("contract_id") and hi == len(_flatten(skill) or []) - 1:
        contract = contracts.get(skill["contract_id"])
        outcome = await evaluate_until(
            contract.assertion, page, lambda: PageObservations.from_tab(tab), timeout_ms=step_timeout_ms
        )
        if not outcome.passed:
            bundle = await evidence(f"skill contract {contract.id} failed", {"failures": outcome.failures})
            return fail("CONTRACT_FAILED", hi, f"skill contract {contract.id} failed: {outcome.failures[:3]}", bundle)
    report["ok"] = True
    return report
