"""dialog_answer: answer a JavaScript dialog left open by ``dialog_policy="manual"`` (capability group ``dialogs``).

Under the ``manual`` policy a dialog waits instead of being answered at once (see
:meth:`ocnb.browser.dialogs.Dialogs.guard_call`): the call that opened it returns at once with
``completed: false`` and ``pending_dialog``, every later result shows ``pending_dialog``, and a
page-using call on that tab is ``DIALOG_OPEN`` until this tool answers it. The answer reports how the
interrupted calls ended (``resumed``).
"""

from __future__ import annotations

from typing import Any

from ..browser.dialogs import pending_on
from ..dispatch import ToolContext
from ..errors import InvalidArgument
from ..registry import tool

__all__ = ["dialog_answer"]


@tool(
    name="dialog_answer",
    page_text=("*",),
    examples=(
        "click OK on the popup alert",
        "answer the confirm dialog with cancel",
        "type a reply into the prompt box",
    ),
    category="dialogs",
    group="dialogs",
    side_effects=True,
    intent=True,
    description="Answer a waiting dialog (dialog_policy manual). "
    "accept (default) or dismiss it; text answers a prompt. Returns the dialog and how the calls it interrupted ended.",
    properties={"accept": {"type": "boolean", "default": True}, "text": {"type": "string"}},
)
async def dialog_answer(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    browser = ctx.browser
    tab_id = args.get("tab_id")
    tab = ctx.tab(tab_id)
    if pending_on(tab) is None and tab_id is None:
        waiting = [t for t in browser.tabs.values() if pending_on(t) is not None]
        if len(waiting) == 1:  # the one dialog there is, wherever it waits
            tab = waiting[0]
        elif waiting:
            ids = ", ".join(t.id for t in waiting)
            raise InvalidArgument(f"dialogs wait on tabs {ids}; give tab_id", details={"tabs": [t.id for t in waiting]})
    out: dict[str, Any] = await browser.dialogs.answer(
        tab, accept=bool(args.get("accept", True)), text=args.get("text")
    )
    return out
