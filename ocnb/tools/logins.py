"""storage_state: save the browser's logins to a file, or load one into it (capability group ``storage``).

A state file (cookies, localStorage, IndexedDB) holds live credentials: it is written 0600 under
``OCNB_HOME/state`` and its content never reaches a result, the journal or the trace — the result is
the path and counts. Where a file may be read or written is :func:`ocnb.browser.saved_logins.state_path`'s rule.
``Session(storage_state=...)`` / ``ocnb mcp --storage-state`` start a browser logged in.
"""

from __future__ import annotations

from typing import Any

from ..browser.saved_logins import load_state, restore_state, save_state, state_path, summary
from ..dispatch import ToolContext
from ..registry import tool

__all__ = ["storage_state"]


@tool(
    name="storage_state",
    page_text=("*",),
    examples=(
        "save my login so I do not have to sign in again",
        "load the saved session cookies",
        "keep this logged-in state for later",
    ),
    category="logins",
    group="storage",
    side_effects=True,
    uses_page=False,
    description="Save the cookies and storage (a login) to a file, or load one. "
    "path: a name (OCNB_HOME/state/NAME.json) or a path; load replaces the current cookies and storage. "
    "Returns counts, never values.",
    properties={
        "action": {"type": "string", "enum": ["save", "load"]},
        "path": {"type": "string", "minLength": 1},
    },
    required=["action", "path"],
)
async def storage_state(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    save = args["action"] == "save"
    path = state_path(args["path"], ctx.config, write=save)  # FILE_NOT_ALLOWED before any file is touched
    context = ctx.browser.live_context()
    if save:
        state = await save_state(context, path)
    else:
        state = load_state(path)
        await restore_state(context, state)
    return {"action": args["action"], **summary(path, state)}
