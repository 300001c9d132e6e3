"""Which tools MCP ``tools/list`` shows: the essentials (the default), all of them, or discovery's start.

Every tool of the session's registry is callable whatever the listing; the listing decides what an
agent carries in its context before it asks. ``tools/list`` is read once per conversation and sits in
the agent's context for every turn, so its size is paid on every task, while a task used a handful of
tools (measured in ``bench/bench_agent_tasks.py``: MiniWoB++ episodes need ``read_page`` and
``interact`` only).

- ``essentials`` (the default): :data:`ESSENTIALS` — open a page, read it, find and act on elements,
  fill forms, take its data out as rows (``extract``), wait, run a script, take a screenshot, manage tabs — plus the tools that find other tools
  (``discover_capabilities``) and the tools of every opt-in group the session was given
  (``--caps network``: asked for, so listed). A discovery result's tools join the list for that turn (announced with
  ``notifications/tools/list_changed``), so the rest of the toolbox is one discovery call away.
- ``all``: every tool of the registry (``ocnb mcp --all-tools``, ``serve(all_tools=True)``).
- ``discovery``: the tools that find other tools alone, then what each discovery found
  (``ocnb mcp --discovery``).

The Python API and the magics are not concerned: they keep every tool.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ..registry import ToolDef

__all__ = ["ESSENTIALS", "LISTINGS", "Listing", "finders", "listed"]

Listing = Literal["essentials", "all", "discovery"]
LISTINGS: tuple[Listing, ...] = ("essentials", "all", "discovery")

#: The tools ``tools/list`` shows by default (with the finders). Chosen by what a browsing agent
#: needs before it knows the task: Playwright MCP's default covers the same ground in 25 tools.
ESSENTIALS = frozenset(
    {
        "navigate",
        "read_page",
        "find",
        "interact",
        "form_input",
        "fill_form",
        "wait_for",
        "javascript_tool",
        "page_screenshot",
        "tabs_context",
        "tabs_create",
        "tabs_close",
        "extract",  # a page's data as rows: the first thing most people ask of a page
    }
)


def finders(tools: Iterable[ToolDef]) -> list[ToolDef]:
    """The tools that find other tools (``ToolDef.reveals``): discovery mode's whole start."""
    return [t for t in tools if t.reveals is not None]


def listed(tools: Iterable[ToolDef], listing: Listing, discovered: Iterable[str] = ()) -> list[ToolDef]:
    """The tools ``tools/list`` shows under ``listing``, given the tools the latest discovery named."""
    tools = list(tools)
    if listing == "all":
        return tools
    shown = {t.name for t in finders(tools)} | set(discovered)
    if listing == "essentials":  # and the opt-in groups the person asked for (--caps network)
        shown |= ESSENTIALS | {t.name for t in tools if t.group != "core"}
    return [t for t in tools if t.name in shown]
