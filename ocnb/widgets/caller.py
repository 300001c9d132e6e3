"""The seam between widgets and tools: a *caller* runs one tool and returns a :class:`ToolResult`.

Widgets never touch Playwright; every action goes through :func:`ocnb.dispatch` with
``source="widget"``, so it is journaled like any other call. Calls a widget makes only to show
the page (screenshots, the tab list, the element under the pointer) are made *quiet*: they run
through the same pipeline but are marked ``record=False`` so they do not flood the journal and do
not trigger another refresh. Tests swap in a :class:`ScriptedCaller` to check a widget's logic in
pure Python.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..dispatch import dispatch
from ..results import ToolResult

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["Caller", "Call", "ScriptedCaller", "SessionCaller"]


class Caller(Protocol):
    """Runs one tool for a widget."""

    def __call__(self, tool: str, args: dict[str, Any] | None = None, *, quiet: bool = False) -> ToolResult: ...

    def has_tool(self, name: str) -> bool: ...


class SessionCaller:
    """The real caller: ``dispatch(session, tool, args, source="widget")``."""

    def __init__(self, session: Session) -> None:
        from .watch import watcher_for  # its hooks refresh the widgets after recorded calls

        self.session = session
        watcher_for(session)

    def __call__(self, tool: str, args: dict[str, Any] | None = None, *, quiet: bool = False) -> ToolResult:
        return dispatch(self.session, tool, dict(args or {}), source="widget", record=not quiet)

    def has_tool(self, name: str) -> bool:
        return name in self.session.registry


@dataclass
class Call:
    """One call a :class:`ScriptedCaller` received."""

    tool: str
    args: dict[str, Any]
    quiet: bool


Responder = Callable[[dict[str, Any]], Any]


@dataclass
class ScriptedCaller:
    """An in-memory caller for tests: answers from ``responses`` and records every call.

    ``responses`` maps a tool name to a :class:`ToolResult`, to a callable ``f(args)`` returning a
    ToolResult or plain data (wrapped as a success), or to plain data. Unknown tools fail with
    ``UNKNOWN_TOOL`` just as dispatch would.
    """

    responses: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)

    def __call__(self, tool: str, args: dict[str, Any] | None = None, *, quiet: bool = False) -> ToolResult:
        args = dict(args or {})
        self.calls.append(Call(tool, args, quiet))
        if tool not in self.responses:
            return ToolResult.failure(tool, "UNKNOWN_TOOL", f"no tool {tool!r}")
        answer = self.responses[tool]
        if callable(answer):
            answer = answer(args)
        if isinstance(answer, ToolResult):
            return answer
        return ToolResult.success(tool, answer)

    def has_tool(self, name: str) -> bool:
        return name in self.responses

    def tools_called(self, *, quiet: bool | None = None) -> list[str]:
        """Names of the tools called, in order (only quiet or only recorded ones when asked)."""
        return [c.tool for c in self.calls if quiet is None or c.quiet is quiet]
