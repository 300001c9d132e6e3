"""javascript_tool: evaluate JavaScript in the page (can be disabled by configuration)."""

from __future__ import annotations

import json
from typing import Any

from ..audit.secret_origins import check_page
from ..dispatch import ToolContext
from ..errors import Disabled, ScriptError, from_playwright
from ..jsonsafe import strict_dumps
from ..registry import tool
from .evidence import TO_FILE, output_to_file

__all__ = ["javascript_tool"]


@tool(
    name="javascript_tool",
    page_text=("result", "file", "error.message"),
    examples=(
        "run some JavaScript on the page",
        "evaluate document.title in the browser",
        "execute a script to read a variable",
    ),
    category="js",
    side_effects=True,
    description="Evaluate JavaScript in the page. It returns the JSON-able result. "
    "A function expression is called. Disabled when the configuration turns it off.",
    properties={"expression": {"type": "string", "minLength": 1}, "to_file": TO_FILE},
    required=["expression"],
)
async def javascript_tool(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if not ctx.config.allow_javascript:
        raise Disabled("javascript_tool is disabled by configuration (allow_javascript=False / OCNB_JAVASCRIPT=0)")
    page = await ctx.page(args.get("tab_id"))
    await check_page(ctx.session.secrets, page, args)
    try:
        value = await page.evaluate(args["expression"])
    except Exception as exc:  # noqa: BLE001
        err = from_playwright(exc)
        if err.code == "INTERNAL":
            first = str(exc).splitlines()[0]
            raise ScriptError(first.removeprefix("Page.evaluate: ")) from None
        raise err from None
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        value = repr(value)
    if args.get("to_file"):  # the value by reference: a (strict) JSON file, its path and a preview
        return {"file": output_to_file(ctx, "javascript_tool", strict_dumps(value, ensure_ascii=False), "json")}
    return {"result": value}
