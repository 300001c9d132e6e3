"""The token-cost report: figures from the live registry, the map and a session's results."""

from __future__ import annotations

import pytest

import ocnb
from ocnb.commands.token_report import token_report
from ocnb.registry import Registry, capability_groups
from ocnb.tokens import count_tools


def test_report_counts_the_registry_and_the_map() -> None:
    report = token_report(capability_map="# map\n- navigate(url:string) — Open a URL.\n")
    full = report.summary.set_index("item").loc["full tool list (MCP schemas)"]
    assert full["tokens"] == count_tools([t.to_mcp() for t in Registry(caps=capability_groups())])
    assert report.summary.set_index("item").loc["capability map (preamble)", "tools"] == 1
    assert report.per_tool["tokens"].is_monotonic_decreasing
    assert set(report.per_tool["tool"]) == set(Registry(caps=capability_groups()).names())
    html = report.to_html()
    assert "Tool schemas" in html and "estimates" in html


@pytest.mark.browser
def test_results_by_tool_come_from_the_session() -> None:
    s = ocnb.Session()
    try:
        s.call("expand_tools")
        s.call("expand_tools", category="tabs")
        s.call("navigate", url="file:///x")  # refused: still a result an agent reads
        report = token_report(s)
    finally:
        s.close()
    by_tool = report.results.set_index("tool")
    assert by_tool.loc["expand_tools", "calls"] == 2
    assert by_tool.loc["expand_tools", "tokens_max"] > by_tool.loc["navigate", "tokens_max"] > 0
