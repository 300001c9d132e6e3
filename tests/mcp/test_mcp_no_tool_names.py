"""The MCP server is a face with no tool names in it: discovery mode reads ToolDef.reveals, not a name."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ocnb.mcp import content, elicitation, guard, handle, http, notify, progress, sdk_seams, server
from ocnb.mcp.server import McpBridge, discovery_tools
from ocnb.registry import ToolDef, all_tooldefs
from ocnb.tools.discovery import tools_found

FACES = [server, http, content, elicitation, guard, handle, notify, progress, sdk_seams]


@pytest.mark.parametrize("module", FACES, ids=[m.__name__.rpartition(".")[2] for m in FACES])
def test_no_tool_name_is_spelled_in_the_mcp_faces(module: Any) -> None:
    source = Path(module.__file__).read_text(encoding="utf-8")
    spelled = [t.name for t in all_tooldefs() if f'"{t.name}"' in source or f"'{t.name}'" in source]
    assert spelled == []


def test_discovery_mode_starts_with_the_tools_that_reveal_others() -> None:
    assert [t.name for t in discovery_tools(all_tooldefs())] == ["discover_capabilities"]


class FakeRegistry:
    def __init__(self, tools: list[ToolDef]) -> None:
        self.tools = {t.name: t for t in tools}

    def __iter__(self) -> Any:
        return iter(self.tools[k] for k in sorted(self.tools))

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def get(self, name: str) -> ToolDef | None:
        return self.tools.get(name)

    def on_change(self, listener: Any) -> Any:
        return lambda: None


def test_any_tool_that_reveals_others_drives_discovery_mode() -> None:
    base = next(t for t in all_tooldefs() if t.name == "tabs_context")
    finder = replace(base, name="my_finder", reveals=lambda data: data["found"])
    plain = [replace(base, name=n) for n in ("alpha", "beta", "gamma")]
    session: Any = SimpleNamespace(
        registry=FakeRegistry([finder, *plain]), configure=lambda **changes: None, settings=SimpleNamespace(caps=())
    )
    bridge = McpBridge(session, discovery=True)
    assert [t.name for t in bridge.visible_tools()] == ["my_finder"]
    assert http.tools_line(session, True).startswith("discovery mode: tools/list starts with 1 tool of 4, my_finder,")
    assert finder.reveals is not None
    bridge._learn(finder.reveals({"found": ["beta", "not_a_tool"]}))
    assert [t.name for t in bridge.visible_tools()] == ["beta", "my_finder"]
    assert [t.name for t in McpBridge(session, listing="all").visible_tools()] == [
        "alpha",
        "beta",
        "gamma",
        "my_finder",
    ]
    assert [t.name for t in McpBridge(session).visible_tools()] == ["my_finder"]  # none is an essential


def test_discovery_results_reveal_their_registry_tools_best_first() -> None:
    data = {"results": [{"id": "tool:navigate"}, {"id": "skill:x"}, {"id": "tool:find"}, "junk"]}
    assert tools_found(data) == ["navigate", "find"]
    assert tools_found(None) == [] and tools_found({"results": None}) == []
