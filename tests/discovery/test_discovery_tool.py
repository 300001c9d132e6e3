"""The discover_capabilities meta-tool over a session's registry and manifests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from ocnb import registry
from ocnb.registry import Registry
from tests.fakes import FakeSession


@pytest.fixture
def discovery_tool() -> Iterator[object]:
    was_registered = "discover_capabilities" in registry._ALL
    from ocnb.tools import discovery

    yield discovery
    if not was_registered:  # leave the registry as other tests expect it
        registry._ALL.pop("discover_capabilities", None)


def call(session: object, **args: object) -> dict:
    from ocnb.tools.discovery import discover_capabilities

    return asyncio.run(discover_capabilities(SimpleNamespace(session=session), args))


def test_finds_registry_tools_and_manifests_with_relevance(discovery_tool, tmp_path: Path) -> None:
    folder = tmp_path / "capabilities" / "invoice_pdf"
    folder.mkdir(parents=True)
    (folder / "CAPABILITY.yaml").write_text(
        "name: invoice_pdf\nkind: skill\ndescription: Download the monthly invoice as a PDF file.\n"
    )
    session = FakeSession(tmp_path)
    out = call(session, query="go to a url")
    json.dumps(out)  # JSON-able, as a tool result must be
    ids = [r["id"] for r in out["results"]]
    assert ids[0] == "tool:navigate"
    assert all(0 < r["relevance"] for r in out["results"])
    assert "tool:expand_tools" not in ids and "tool:discover_capabilities" not in ids
    assert out["tokens"]["tier1"] <= 300

    skills = call(session, query="get my invoice pdf", kind="skill")["results"]
    assert [r["id"] for r in skills] == ["skill:invoice_pdf"]


def test_engine_follows_the_registry(discovery_tool, tmp_path: Path) -> None:
    session = FakeSession(tmp_path)
    engine = discovery_tool.engine_for(session)
    assert engine is discovery_tool.engine_for(session)
    assert engine.descriptors["tool:navigate"].available
    session.registry = [t for t in Registry() if t.name != "navigate"]  # a tool the session does not offer
    assert not discovery_tool.engine_for(session).descriptors["tool:navigate"].available
