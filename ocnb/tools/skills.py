"""Skill memory tools: oc_skill_record, oc_skill_recall, oc_skill_replay, oc_skill_export."""

from __future__ import annotations

from typing import Any

from ..dispatch import ToolContext
from ..errors import Disabled, FileNotAllowed, InvalidArgument, error_class
from ..perception.selectors import TOLERABLE
from ..registry import tool
from ..skills.capture import to_skill_steps
from ..skills.export import write_script
from ..skills.replay import envelope, replay_skill
from ..skills.store import SkillStore, domain_of

__all__ = ["oc_skill_export", "oc_skill_recall", "oc_skill_record", "oc_skill_replay"]


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
    captured = list(tab.capture)
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
        tab.capture.clear()
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
    # (ocnb.skills.replay.envelope_hook adds it to failures raised before a replay report exists).
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
