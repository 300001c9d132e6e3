"""Descriptors are built deterministically from tools, skills and manifests."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ocnb.discovery.descriptors import (
    ManifestError,
    embedding_text,
    from_manifest,
    from_skills,
    from_tooldefs,
)


@dataclass
class FakeToolDef:
    name: str
    description: str
    category: str
    input_schema: dict = field(default_factory=dict)
    tier: str = "core"
    side_effects: bool = False


TOOLS = [
    FakeToolDef(
        "navigate",
        "Open a URL in the tab.  Waits for the load event.",
        "navigation",
        {"type": "object", "properties": {"url": {"type": "string"}, "tab_id": {"type": "string"}}},
        side_effects=True,
    ),
    FakeToolDef("read_page", "Read the page as text with refs.", "dom"),
]
SKILLS = [
    {
        "id": "ex-login",
        "domain": "example.com",
        "name": "login",
        "steps": [{"kind": "navigate", "url": "https://example.com"}, {"kind": "click"}],
    }
]


def test_building_is_deterministic_whatever_the_input_order() -> None:
    shuffled = TOOLS[:]
    random.Random(1).shuffle(shuffled)
    assert from_tooldefs(TOOLS) == from_tooldefs(shuffled) == from_tooldefs(reversed(TOOLS))
    assert [d.id for d in from_tooldefs(TOOLS)] == ["tool:navigate", "tool:read_page"]
    assert from_skills(SKILLS) == from_skills(list(SKILLS))
    texts = {embedding_text(d) for _ in range(3) for d in from_tooldefs(TOOLS)}
    assert len(texts) == 2


def test_tool_descriptor_fields_and_index_text() -> None:
    nav = from_tooldefs(TOOLS)[0]
    assert (nav.kind, nav.name, nav.category, nav.has_side_effects) == (
        "tool",
        "navigate",
        "navigation",
        True,
    )
    assert nav.description == "Open a URL in the tab. Waits for the load event."
    assert nav.full_schema == TOOLS[0].input_schema
    text = embedding_text(nav)
    assert "url" in text and "tab id" in text and "Open a URL" in text
    assert '"type"' not in text  # never the full schema


def test_skill_required_tools_come_from_step_kinds() -> None:
    (skill,) = from_skills(SKILLS)
    assert skill.id == "skill:ex-login" and skill.kind == "skill"
    assert skill.required_tools == ("tool:click", "tool:navigate", "tool:oc_skill_replay")
    assert "example.com" in skill.description
    assert '"kind":"navigate"' in (skill.full_content or "")


def test_manifest_with_lazy_schema_and_content(tmp_path: Path) -> None:
    folder = tmp_path / "weather"
    folder.mkdir()
    (folder / "CAPABILITY.yaml").write_text(
        "name: weather\nkind: tool\ndescription: Forecast for a city.\n"
        "tags: [forecast, travel]\nrequired_secrets: [WEATHER_KEY]\n"
        "required_tools: [navigate]\nparameters: [city]\n"
    )
    d = from_manifest(folder)
    assert d.id == "tool:weather" and d.tags == ("forecast", "travel")
    assert d.required_tools == ("tool:navigate",) and d.required_secrets == ("WEATHER_KEY",)
    # schema.json and SKILL.md written after building are still seen: they load lazily
    (folder / "schema.json").write_text('{"type": "object"}')
    (folder / "SKILL.md").write_text("# Weather\nAsk for a city.")
    assert d.full_schema == {"type": "object"}
    assert d.full_content == "# Weather\nAsk for a city."
    assert from_manifest(folder) == d


@pytest.mark.parametrize(
    ("yaml_text", "problem"),
    [
        ("name: x\nkind: tool\n", "missing required field(s): description"),
        ("name: [x\n", "invalid YAML"),
        ("- a\n- b\n", "top level must be a mapping"),
        ("name: x\nkind: tool\ndescription: d\ntags: 3\n", "'tags' must be"),
        ("!!python/object:os.system\n", "invalid YAML"),
    ],
)
def test_invalid_manifest_raises_naming_the_problem(tmp_path: Path, yaml_text: str, problem: str) -> None:
    (tmp_path / "CAPABILITY.yaml").write_text(yaml_text)
    with pytest.raises(ManifestError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        from_manifest(tmp_path)
