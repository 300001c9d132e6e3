"""Form tools: form_input, fill_form and file_upload.

Targets are resolved as for :mod:`ocnb.tools.interact` (a ref or a plain-words query, nothing acts on
an unresolved target); the result names the element and what changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..audit.secret_origins import check_target
from ..dispatch import ToolContext
from ..errors import InContext, InvalidArgument
from ..files import allowed_files
from ..perception.actions import checked, perform
from ..perception.fills import Field, field_of, prepare, restore
from ..perception.sliders import set_slider
from ..perception.targets import Resolved, resolve_target
from ..registry import tool
from .targeting import (
    CAPTURE,
    TARGET_PROPS,
    action_timeout,
    capture_if_asked,
    element_result,
    target_args,
    target_spec,
    watch_changes,
)

__all__ = ["allowed_files", "file_upload", "fill_form", "form_input"]


async def _set_value(r: Resolved, value: Any, timeout: int) -> tuple[str, dict[str, str] | None]:
    """Set an input, textarea, select, checkbox, radio or contenteditable; fires input/change. Returns the
    action taken and ``{from, to}`` when the value was put into the field's format. The field is read
    back afterwards (:mod:`ocnb.perception.fills`): a value it did not take is ``INVALID_VALUE``."""
    el = r.element
    kind = await el.evaluate(
        "e => ({tag: e.tagName.toLowerCase(), type: (e.type || '').toLowerCase(), editable: e.isContentEditable})"
    )
    if kind["tag"] == "select":
        chosen = [str(v) for v in value] if isinstance(value, list) else str(value)
        return "select", await perform(el, "select", value=chosen, timeout=timeout)
    if kind["type"] in ("checkbox", "radio") or r.role in ("checkbox", "radio", "switch"):
        try:
            want = checked(value)
        except ValueError as exc:
            raise InvalidArgument(str(exc), details=r.describe()) from None
        if kind["type"] == "radio" and not want:
            raise InvalidArgument("a radio button cannot be unchecked; choose another option instead")
        action = "check" if want else "uncheck"
        return action, await perform(el, action, timeout=timeout)
    if r.role == "slider" and kind["tag"] != "input":  # a slider drawn by script: its arrow keys, read back
        await set_slider(el, value, timeout)
        return "slide", None
    if kind["type"] == "file":
        raise InvalidArgument("this is a file input; use file_upload")
    if kind["tag"] in ("input", "textarea") or kind["editable"]:
        converted = await perform(el, "fill", value="" if value is None else str(value), timeout=timeout)
        await el.evaluate("e => e.dispatchEvent(new Event('change', {bubbles: true}))")
        return "fill", converted
    raise InvalidArgument(f"{r.ref} ({r.role} {r.name!r}) is not a form field", details=r.describe())


async def _precheck(r: Resolved, value: Any) -> Field:
    """``INVALID_VALUE`` for a value the field cannot take (a date it cannot read, an option it lacks),
    before anything is set; else the field as it is (to put back if a later field is refused)."""
    f = await field_of(r.element)
    if f.tag == "select":
        prepare(f, "select", [str(v) for v in value] if isinstance(value, list) else str(value))
    elif f.textlike and f.type not in ("checkbox", "radio", "file"):
        prepare(f, "fill", "" if value is None else str(value))
    return f


#: ``anyOf`` rather than a ``type`` array: some MCP clients accept one type per schema only.
VALUE_SCHEMA = {
    "anyOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "string"}},
    ]
}


@tool(
    name="form_input",
    page_text=("element", "fields", "changes", "url", "title", "error.message", "error.details"),
    examples=(
        "set the quantity field to 3",
        "type my email into the email box",
        "change the value of this input",
    ),
    category="forms",
    side_effects=True,
    intent=True,
    description="Set one form field. "
    "It fires input/change events. The field is a ref or a query. Works on text inputs, textareas, selects (value or label), checkboxes and radios (true/false).",
    properties={**TARGET_PROPS, "value": VALUE_SCHEMA, "capture_artifact": CAPTURE},
    required=["value"],
)
async def form_input(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ref, query = target_args(args)
    page = await ctx.page(args.get("tab_id"))
    r = await resolve_target(page, ref=ref, query=query, action="set")
    await check_target(ctx.session.secrets, page, r, args)
    await ctx.session.approvals.check(ctx.call, page, r, action="fill")
    chain = await capture_if_asked(args, page, r)
    async with watch_changes(ctx, page, r.frame) as watch:
        how, converted = await _set_value(r, args["value"], action_timeout(ctx))
        changes = await watch.changes()
    extra = {"converted": converted} if converted else {}
    return await element_result(ctx, page, r, changes, chain, action=how, via=r.via, **extra)


@tool(
    name="fill_form",
    page_text=("fields", "changes", "error.message", "error.details"),
    examples=(
        "fill in the signup form with my details",
        "enter name, email and address at once",
        "complete all the shipping fields",
    ),
    category="forms",
    side_effects=True,
    intent=True,
    description="Fill several fields at once. fields maps a label, name or ref to a value. Every field is resolved "
    "first (nothing is filled if one fails); the result says which element each field resolved to.",
    properties={
        "fields": {"type": "object", "minProperties": 1, "additionalProperties": VALUE_SCHEMA},
        "capture_artifact": CAPTURE,
    },
    required=["fields"],
)
async def fill_form(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    page = await ctx.page(args.get("tab_id"))
    resolved: list[tuple[str, Any, Resolved]] = []
    for key, value in args["fields"].items():
        try:
            resolved.append((key, value, await resolve_target(page, **target_spec(key), action="set")))
            await check_target(ctx.session.secrets, page, resolved[-1][2], (key, value))
        except Exception as exc:  # noqa: BLE001 - named after its field (below)
            raise _field_error(exc, key) from None
    before: list[Field] = []
    for key, value, r in resolved:  # every value checked before any field is set
        try:
            before.append(await _precheck(r, value))
        except Exception as exc:  # noqa: BLE001 - named after its field (below)
            raise _field_error(exc, key) from None
    await ctx.session.approvals.check(ctx.call, page, None, action="fill")
    report: list[dict[str, Any]] = []
    frame = resolved[0][2].frame
    async with watch_changes(ctx, page, frame) as watch:
        for key, value, r in resolved:
            chain = await capture_if_asked(args, page, r)
            try:
                how, converted = await _set_value(r, value, action_timeout(ctx))
            except Exception as exc:  # noqa: BLE001 - named after its field (below)
                # the fields set before it are put back: a refused form_fill leaves the form as it was
                for (_k, _v, done), was in reversed(list(zip(resolved[: len(report)], before, strict=False))):
                    await restore(done.element, was)
                raise _field_error(
                    exc, key, filled_before=[f["field"] for f in report], put_back=bool(report)
                ) from None
            item = {
                "field": key,
                **r.describe(),
                "via": r.via,
                "action": how,
                "value": value,
                "frame_ordinal": r.frame_ordinal,
            }
            if converted:
                item["converted"] = converted
            if chain is not None:
                item.update(chain)
            report.append(item)
        changes = await watch.changes()
    tab = ctx.browser.tab_of(page)
    return {"fields": report, "changes": changes, "tab_id": tab.id if tab else None}


def _field_error(exc: Exception, key: str, **details: Any) -> InContext:
    """A fill_form failure named after its field: dispatch translates it as any other (by its code)
    and puts the field's name into its message and details."""
    return InContext(exc, f"field {key!r}", field=key, **details)


@tool(
    name="file_upload",
    page_text=("element", "changes", "url", "title", "error.details"),
    examples=(
        "attach my CV to the application form",
        "upload this photo",
        "choose a file for the file input",
    ),
    category="forms",
    side_effects=True,
    intent=True,
    description="Attach files to a file input (ref or query). "
    "A button that opens a file chooser works too. "
    "Only files under the upload root (the working directory unless configured) are allowed.",
    properties={
        **TARGET_PROPS,
        "paths": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    },
    required=["paths"],
)
async def file_upload(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    files = allowed_files(args["paths"], getattr(ctx.config, "upload_root", None) or Path.cwd())
    ref, query = target_args(args)
    page = await ctx.page(args.get("tab_id"))
    r = await resolve_target(page, ref=ref, query=query)
    await ctx.session.approvals.check(ctx.call, page, r, action="upload")
    timeout = action_timeout(ctx)
    async with watch_changes(ctx, page, r.frame) as watch:
        is_file = await r.element.evaluate("e => e.tagName === 'INPUT' && e.type === 'file'")
        if is_file:
            await r.element.set_input_files(files, timeout=timeout)
        else:
            async with page.expect_file_chooser(timeout=timeout) as chooser:
                await r.element.click(timeout=timeout)
            await (await chooser.value).set_files(files, timeout=timeout)
        changes = await watch.changes()
    return await element_result(ctx, page, r, changes, None, files=[Path(f).name for f in files])
