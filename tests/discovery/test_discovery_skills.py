"""Recorded skills reach capability discovery through the session's skill store."""

from __future__ import annotations

import asyncio

import ocnb
from ocnb.skills.store import SkillStore
from ocnb.tools.discovery import discover_capabilities, engine_for


def test_recorded_skill_is_discoverable_and_requires_replay(ocnb_home) -> None:
    steps = [{"tool": "navigate", "args": {"url": "https://shop.example/"}, "replay_artifact": None}]
    SkillStore(ocnb_home).record(
        "shop.example", "reorder coffee beans", steps, description="Reorder the usual coffee beans from the shop."
    )
    s = ocnb.Session(home=ocnb_home)
    try:
        engine = engine_for(s)
        version = engine.index_version
        skill = next(d for d in engine.descriptors.values() if d.kind == "skill")
        assert "tool:oc_skill_replay" in skill.required_tools and "tool:navigate" in skill.required_tools
        assert engine_for(s).index_version == version  # no re-index when nothing changed

        class Ctx:
            session = s

        out = asyncio.run(discover_capabilities(Ctx(), {"query": "buy coffee again", "kind": "skill"}))
        assert out["results"][0]["id"] == skill.id
    finally:
        s.close()
