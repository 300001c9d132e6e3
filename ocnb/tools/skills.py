"""Skill memory tools: oc_skill_record, oc_skill_recall, oc_skill_replay, oc_skill_export; the
opt-in ``record`` group: record_start, record_status, record_stop (a person's demonstration as a skill);
and ``replay_step``, the internal tool (offered by no face) through which a replay acts, one call a step."""

from __future__ import annotations

import asyncio
import functools
import time
from pathlib import Path
from secrets import token_hex
from typing import Any

from ..audit.secret_origins import check_step
from ..dispatch import ToolContext
from ..errors import ArtifactResolutionFailed, Disabled, FileNotAllowed, InvalidArgument, StepTimeout, error_class
from ..perception.actions import check_key, checked, perform
from ..perception.fills import ReadBack, plain_text
from ..perception.selectors import (
    TOLERABLE,
    ChainRefused,
    engine_declined,
    register_engine,
    step_fingerprint,
    stored_chain,
    tolerated_fields,
    verified_locator,
)
from ..perception.selectors import resolve as resolve_chain
from ..placeholders import param_names, secret_names
from ..registry import tool
from ..skills.capture import capture_buffer, to_skill_steps
from ..skills.demonstration import demonstration_of
from ..skills.export import write_script
from ..skills.replay import envelope, failure_envelope, replay_skill, upload_step
from ..skills.schema import STEP_KINDS
from ..skills.store import SkillStore, domain_of
from ..urls import check_url

__all__ = [
    "oc_skill_export",
    "oc_skill_recall",
    "oc_skill_record",
    "oc_skill_replay",
    "record_start",
    "record_status",
    "record_stop",
    "replay_step",
]


@tool(
    name="oc_skill_record",
    page_text=("*",),
    examples=(
        "save these steps as a reusable skill",
        "record what I just did so it can be replayed",
        "remember this workflow under a name",
    ),
    category="skills",
    side_effects=True,
    description="Save captured steps as a named skill. "
    "Re-recording the same name keeps the skill id and replaces its steps; the capture buffer is cleared.",
    properties={
        "domain": {"type": "string", "minLength": 1, "description": "default: the active tab's host"},
        "name": {"type": "string", "minLength": 1, "maxLength": 120},
        "description": {"type": "string"},
        "steps": {
            "type": "array",
            "items": {"type": "object"},
            "description": "explicit steps instead of the capture buffer",
        },
        "contract_id": {"type": "string"},
    },
    required=["name"],
)
async def oc_skill_record(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    # What is stored is what the caller gave: ${SECRET:…} placeholders, never the substituted values.
    args = {**args, **{k: v for k, v in ctx.call.args.items() if k in ("name", "description", "steps", "domain")}}
    tab = ctx.tab(args.get("tab_id"))
    captured = list(capture_buffer(tab))
    steps = args.get("steps") or to_skill_steps(captured, artifacts=bool(ctx.config.skill_replay))
    if not steps:
        raise InvalidArgument(
            "nothing to record: call interact/form_input/fill_form/navigate with capture_artifact: true first"
        )
    start_url = next((e["url"] for e in captured), None) if not args.get("steps") else None
    if captured and captured[0]["tool"] in ("navigate", "tabs_create"):
        start_url = captured[0]["args"].get("url")
    domain = args.get("domain") or domain_of(start_url or tab.page.url)
    if args.get("contract_id"):
        from ..contracts import ContractStore

        ContractStore(ctx.home).get(args["contract_id"])  # an unknown contract is refused now, not at replay
    skill = SkillStore(ctx.home).record(
        domain,
        args["name"],
        steps,
        description=args.get("description"),
        contract_id=args.get("contract_id"),
        start_url=start_url,
    )
    if not args.get("steps"):
        capture_buffer(tab).clear()
    return {
        "skill_id": skill["id"],
        "domain": domain,
        "name": skill["name"],
        "steps": len(steps),
        "with_artifacts": all(s.get("replay_artifact") for s in steps),
    }


@tool(
    name="oc_skill_recall",
    page_text=("skills",),
    examples=(
        "which skills have I recorded",
        "list my saved workflows",
        "is there a skill for this site already",
    ),
    category="skills",
    uses_page=False,
    description="List recorded skills, newest first. Filter by domain, exact name or query words.",
    properties={
        "domain": {"type": "string"},
        "name": {"type": "string"},
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
    },
)
async def oc_skill_recall(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    store = SkillStore(ctx.home)
    skills = store.recall(args.get("domain"), args.get("name"), args.get("query"), args.get("limit", 10))
    out: dict[str, Any] = {"skills": skills, "count": len(skills)}
    if store.problems:  # unreadable files / invalid skills of other domains: listed, not fatal
        out["problems"] = store.problems
    return out


@tool(
    name="oc_skill_replay",
    page_text=("*", "error.details"),
    examples=(
        "do the login workflow again",
        "replay the saved checkout steps",
        "run my recorded skill",
    ),
    category="skills",
    side_effects=True,
    intent=True,  # the request it served: learned as an example of the skill (discovery_learn)
    failure_data=failure_envelope,  # {ok: false, failure} even when refused before a report exists
    description="Replay a skill from its selector chains. It never reads the page. "
    "Each step's element is checked against its recorded fingerprint before acting; "
    "fails with a precise code when the page has changed; risky steps need allow_risky.",
    properties={
        "skill_id": {"type": "string", "minLength": 1},
        "step_range": {
            "type": "object",
            "properties": {"from": {"type": "integer", "minimum": 0}, "to": {"type": "integer", "minimum": 0}},
            "additionalProperties": False,
        },
        "params": {"type": "object", "description": "values for ${var} placeholders"},
        "stop_on_contract_failure": {"type": "boolean", "default": True},
        "step_timeout_ms": {"type": "integer", "minimum": 100, "maximum": 120000, "default": 5000},
        "allow_risky": {"type": "boolean", "default": False},
        "tolerate": {
            "type": "array",
            "items": {"enum": list(TOLERABLE)},
            "uniqueItems": True,
            "description": "fingerprint fields that may differ, e.g. [name] accepts a renamed label",
        },
    },
    required=["skill_id"],
)
async def oc_skill_replay(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    # A failure of any code carries {ok: false, failure: {code, step_index, detail}} as data
    # (its failure_data, ocnb.skills.replay.failure_envelope, to failures raised before a report exists).
    if not ctx.config.skill_replay:
        raise Disabled("skill replay is switched off (OCNB_SKILL_REPLAY=0)")
    skill = SkillStore(ctx.home).get(args["skill_id"])
    if args.get("tab_id"):
        ctx.browser.active_id = ctx.tab(args["tab_id"]).id
    report = await replay_skill(
        ctx,
        skill,
        params=args.get("params"),
        step_range=args.get("step_range"),
        stop_on_contract_failure=args.get("stop_on_contract_failure", True),
        step_timeout_ms=args.get("step_timeout_ms", 5000),
        allow_risky=args.get("allow_risky", False),
        tolerate=args.get("tolerate"),
    )
    if not report["ok"]:
        f = report["failure"]
        data = envelope(report)
        raise error_class(f["code"])(f"step {f['step_index']}: {f['detail']}", details=data, data=data)
    return report


@tool(
    name="oc_skill_export",
    examples=(
        "turn this skill into a Playwright script",
        "export the recorded steps as Python code",
        "give me a standalone script of this workflow",
    ),
    category="skills",
    uses_page=False,
    description="Export a skill as a Playwright script. The script is standalone and runs without ocnb; "
    "an existing file is kept unless overwrite is true.",
    properties={
        "skill_id": {"type": "string", "minLength": 1},
        "path": {"type": "string", "description": "where to write the .py file"},
        "overwrite": {"type": "boolean", "default": False, "description": "replace an existing file"},
    },
    required=["skill_id"],
)
async def oc_skill_export(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    skill = SkillStore(ctx.home).get(args["skill_id"])
    from pathlib import Path

    target = Path(args.get("path") or (ctx.home / "exports" / f"{skill['id']}.py")).expanduser().resolve()
    roots = [Path(ctx.home).resolve(), Path(ctx.config.upload_root).resolve()]
    if not any(target.is_relative_to(r) for r in roots):
        raise FileNotAllowed(f"{target} is outside OCNB_HOME and the working folder; choose a path under one of them")
    return write_script(skill, target, overwrite=args.get("overwrite", False))


_FIELD_MAP = {
    "type": "object",
    "additionalProperties": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
}


@tool(
    name="record_start",
    group="record",
    examples=(
        "let me show you how to do it",
        "record what I do in the browser",
        "watch my clicks and typing and make a skill of them",
    ),
    category="skills",
    side_effects=True,
    description="Record what the person does in the page until record_stop. "
    "Their own clicks, typing, choices, keys and typed addresses; a password field is kept as ${SECRET:NAME}.",
    properties={
        "secret_fields": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "fields (name, label or id) whose value is a secret too",
        },
    },
)
async def record_start(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if args.get("tab_id"):
        ctx.browser.active_id = ctx.tab(args["tab_id"]).id
    return await demonstration_of(ctx.browser).start(args.get("secret_fields") or ())


@tool(
    name="record_status",
    group="record",
    page_text=("steps",),
    examples=(
        "what have I shown so far",
        "list the steps recorded from my demonstration",
        "is my demonstration still being recorded",
    ),
    category="skills",
    uses_page=False,
    description="The steps recorded so far from the person, with their intents.",
    properties={},
)
async def record_status(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    demo = demonstration_of(ctx.browser)
    return {"recording": demo.active, "steps": demo.summary(), "refused": demo.refused, "skipped": demo.skipped}


@tool(
    name="record_stop",
    group="record",
    page_text=("steps",),
    examples=(
        "stop recording and save it as a skill",
        "I'm done showing you, save the skill",
        "turn what I just demonstrated into a replayable workflow",
    ),
    category="skills",
    side_effects=True,
    uses_page=False,
    description="Stop recording the person; with a name, save what they did as a skill. "
    "Same chains, fingerprints and replay checks as a recorded interact. Without a name the steps are kept "
    "for a later call; params turns fields into ${var}; discard drops them.",
    properties={
        "name": {"type": "string", "minLength": 1, "maxLength": 120},
        "description": {"type": "string"},
        "domain": {"type": "string", "minLength": 1, "description": "default: the first step's host"},
        "params": {**_FIELD_MAP, "description": "field (name, label or id) -> parameter name"},
        "secrets": {**_FIELD_MAP, "description": "field -> secret name: its typed value is not kept"},
        "labels": {
            "type": "object",
            "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 120},
            "description": "step index -> intent, replacing the inferred one",
        },
        "contract_id": {"type": "string", "description": "the outcome contract replay checks at the end"},
        "discard": {"type": "boolean", "default": False},
    },
)
async def record_stop(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    demo = demonstration_of(ctx.browser)
    if not demo.active and not demo.steps:
        raise InvalidArgument("no demonstration is being recorded: call record_start first")
    labels: dict[int, str] = {}
    for key, text in (args.get("labels") or {}).items():
        if not str(key).isdigit() or int(key) >= len(demo.steps):
            raise InvalidArgument(f"labels: no step {key!r}; steps are 0..{len(demo.steps) - 1}")
        labels[int(key)] = text
    # built before anything stops: an unknown field in params refuses the call and the recording goes on
    entries = demo.entries(
        params=args.get("params"), secrets_=args.get("secrets"), labels=labels, risky_words=ctx.config.risky_words
    )
    if args.get("name") and not args.get("discard") and not entries:
        raise InvalidArgument("nothing was recorded yet: act in the page, then call record_stop")
    if args.get("contract_id"):
        from ..contracts import ContractStore

        ContractStore(ctx.home).get(args["contract_id"])  # an unknown contract is refused now, not at replay
    if demo.active:
        await demo.stop()
    out: dict[str, Any] = {"recording": False, "steps": demo.summary(), "refused": demo.refused}
    if demo.skipped:
        out["skipped"] = demo.skipped
    if demo.dropped:
        out["dropped"] = demo.dropped  # past MAX_STEPS
    if args.get("discard"):
        demo.clear()
        return {**out, "discarded": True}
    if not args.get("name"):
        return {**out, "held": True}  # stopped; a later record_stop with a name saves these steps
    steps = to_skill_steps(entries)
    start_url = next((e["args"]["url"] for e in entries if e["tool"] in ("navigate", "tabs_create")), None)
    domain = args.get("domain") or domain_of(start_url or entries[0]["url"])
    skill = SkillStore(ctx.home).record(
        domain,
        args["name"],
        steps,
        description=args.get("description"),
        contract_id=args.get("contract_id"),
        start_url=start_url,
    )
    demo.clear()
    names = [s.get("args") for s in steps] + [low.get("args") for e in entries for low in e["steps"]]
    out.update(
        skill_id=skill["id"],
        domain=domain,
        name=skill["name"],
        signature={"params": sorted(param_names(names)), "secrets": sorted(secret_names(names))},
        risky=[i for i, e in enumerate(entries) if any(low.get("risky") for low in e["steps"])],
    )
    return out


# ---- one replay step, acted through dispatch ---------------------------------------------------------
async def _step_act(
    page: Any, element: Any, step: dict[str, Any], timeout_ms: int, read_back: ReadBack | None = None
) -> None:
    """Run one stored step's action on its resolved ``element`` (None: a navigate, or a press on the page)."""
    kind = step["kind"]
    args = step.get("args", {})
    action = args.get("action", "")
    if kind == "navigate":
        await page.goto(check_url(str(args["url"])), timeout=timeout_ms)
        return
    if kind == "press" and element is None:
        await page.keyboard.press(str(args["key"]))
        return
    if kind == "upload":  # paths resolved under the upload root (upload_step)
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
        value=args.get("value"),
        key=args.get("key"),
        timeout=timeout_ms,
        read_back=read_back if action == "fill" else None,
    )


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


async def _fused(ctx: ToolContext, page: Any, step: dict[str, Any], tolerate: list[str], ms: int) -> dict | None:
    """Resolve, verify and act in one Playwright call when the chain's first entry singles out an
    agreeing element (the ``ocnb-verified`` engine); None when the engine declined before acting."""
    if not await register_engine(getattr(ctx.browser, "playwright", None)):
        return None
    at = functools.partial(
        verified_locator,
        page,
        step["selectors"],
        step_fingerprint(step),
        frame_ordinal=int(step.get("frame_ordinal", 0) or 0),
        tolerate=tolerate,
    )
    plain = _plain_fill(step)
    key = token_hex(8) if plain else None  # the fill's locator keeps the field's value under it
    locator = at(fillable=plain, keep=key)
    if locator is None:
        return None
    read_back = ReadBack(at(read=key, valid=True), at(read=key), at(read=key, undo=True)) if plain else None
    try:
        await _timed(_step_act(page, locator, step, ms, read_back), ms)
    except StepTimeout:
        raise
    except Exception as exc:  # noqa: BLE001 - declined before acting: the slow path resolves the step
        if engine_declined(exc):
            return None
        raise  # dispatch translates it
    via = stored_chain(step["selectors"])[0]["type"]
    verified = any(k != "frame" for k in step_fingerprint(step))
    return {"resolved_via": via, "selector_attempts": 1, "verified": verified, "resolve_ms": None, "fused": True}


async def _resolved(page: Any, step: dict[str, Any], tolerate: list[str], ms: int) -> tuple[Any, dict[str, Any]]:
    """The step's element (None for a navigate or a press on the page) and how it was found."""
    how: dict[str, Any] = {"resolved_via": None, "selector_attempts": 0, "verified": None, "resolve_ms": 0.0}
    if step["kind"] == "navigate" or (step["kind"] == "press" and not step.get("selectors")):
        return None, {**how, "fused": False}
    if not step.get("selectors"):
        raise ArtifactResolutionFailed("the step has an empty selector chain")
    t0 = time.perf_counter()
    try:
        found = await resolve_chain(
            page,
            step["selectors"],
            step_fingerprint(step),
            frame_ordinal=int(step.get("frame_ordinal", 0) or 0),
            timeout_ms=ms,
            tolerate=tolerate,
        )
    except ChainRefused as refused:
        raise ArtifactResolutionFailed(refused.message, details=refused.details) from None
    how = {"resolved_via": found.via, "selector_attempts": found.attempts, "verified": found.verified}
    return found.element, {**how, "resolve_ms": round((time.perf_counter() - t0) * 1000, 2), "fused": False}


async def _one_step(ctx: ToolContext, page: Any, step: dict[str, Any], tolerate: list[str], ms: int) -> dict:
    """Act one step: fused when it can be (and no bound secret needs the element's frame first)."""
    secrets = ctx.session.secrets
    if not secrets.bound and step["kind"] != "navigate" and step.get("selectors"):
        done = await _fused(ctx, page, step, tolerate, ms)
        if done is not None:
            return done
    element, how = await _resolved(page, step, tolerate, ms)
    await check_step(secrets, page, element, step)  # a bound secret only where it may go
    await _timed(_step_act(page, element, step, ms), ms)
    return how


async def _timed(act: Any, ms: int) -> None:
    """An action that must finish within the step timeout (resolving polls for its own time). In the
    step's own task (``asyncio.timeout``), not a task of its own (``asyncio.wait_for``): loop turns less
    per step."""
    try:
        async with asyncio.timeout(ms / 1000):
            await act
    except TimeoutError:
        raise StepTimeout(f"did not finish within {ms} ms") from None


@tool(
    name="replay_step",
    internal=True,  # offered by no face: oc_skill_replay dispatches it, one call per step
    category="skills",
    side_effects=True,
    description="Act one recorded skill step: resolve its selector chain, verify the element against the "
    "step's fingerprint, act. Fails ARTIFACT_RESOLUTION_FAILED when nothing agrees, STEP_TIMEOUT when slow.",
    properties={
        "step": {
            "type": "object",
            "properties": {
                "kind": {"enum": list(STEP_KINDS)},
                "args": {"type": "object"},
                "selectors": {"type": "array"},
                "fingerprint": {"type": "object"},
                "frame_ordinal": {"type": "integer", "minimum": 0},
            },
            "required": ["kind"],
        },
        "tolerate": {"type": "array", "items": {"enum": list(TOLERABLE)}, "uniqueItems": True},
        "timeout_ms": {"type": "integer", "minimum": 100, "maximum": 120000, "default": 5000},
    },
    required=["step"],
)
async def replay_step(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """One step of :func:`ocnb.skills.replay.replay_skill`, through the pipeline every call goes through
    (secrets filled in and masked, origin policy, dialogs, error codes, journal, trace)."""
    step = args["step"]
    ms = int(args.get("timeout_ms", 5000))
    if step["kind"] == "press":
        try:  # a key from a ${param} or a hand-edited skill: refused before anything is pressed
            check_key(step.get("args", {}).get("key"))
        except ValueError as exc:
            raise InvalidArgument(f"step key: {exc}") from None
    if step["kind"] == "upload":  # the upload root rule of file_upload, at the act as at preflight
        step = upload_step(step, getattr(ctx.config, "upload_root", None) or Path.cwd())
    page = await ctx.page(args.get("tab_id"))
    tolerate = tolerated_fields(args.get("tolerate"))
    how = await _one_step(ctx, page, step, tolerate, ms)
    return {**how, "url": page.url}
