"""discover_capabilities finds the tools of every capability group; one the session lacks says which group."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

import ocnb
from ocnb.tools.discovery import discover_capabilities


def _discover(session: ocnb.Session, query: str) -> dict:
    return asyncio.run(discover_capabilities(SimpleNamespace(session=session), {"query": query, "kind": "tool"}))


@pytest.mark.slow
def test_an_opt_in_tool_is_found_and_names_its_group(tmp_path: Path, probe_group: str) -> None:
    s = ocnb.Session(home=tmp_path)
    try:
        found = {e["name"]: e for e in _discover(s, "probe")["results"]}
        assert found["zz_probe"]["needs_caps"] == probe_group  # not offered: say which group to ask for
        offered = set(s.registry.names())  # only a tool the session does not offer names a group
        assert all((e["needs_caps"] is None) == (n in offered) for n, e in found.items() if n != "zz_probe")
        s.configure(caps=[probe_group])
        found = {e["name"]: e for e in _discover(s, "probe")["results"]}
        assert found["zz_probe"]["needs_caps"] is None  # offered now
    finally:
        s.close()


def test_the_real_groups_answer_everyday_requests(tmp_path: Path) -> None:
    s = ocnb.Session(home=tmp_path)
    try:
        cases = {
            "print the page to a PDF file": ("page_pdf", "pdf"),
            "show the failed network requests of the page": ("network_requests", "network"),
        }
        for query, (name, group) in cases.items():
            top = {e["name"]: e for e in _discover(s, query)["results"][:5]}
            assert name in top, (query, list(top))
            assert top[name]["needs_caps"] == group
    finally:
        s.close()
